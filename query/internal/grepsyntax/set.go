package grepsyntax

import "unicode/utf8"

// runeSet is a set of code points as sorted, disjoint, non-adjacent
// inclusive ranges [lo0, hi0, lo1, hi1, ...] — the form regexp/syntax keeps
// in a character class, so emitting it needs no conversion.
type runeSet []rune

const maxRune = utf8.MaxRune

func single(r rune) runeSet { return runeSet{r, r} }

func anySet() runeSet { return runeSet{0, maxRune} }

// add returns s with [lo, hi] added.
func (s runeSet) add(lo, hi rune) runeSet {
	if lo > hi {
		return s
	}
	out := make(runeSet, 0, len(s)+2)
	i := 0
	for ; i < len(s) && s[i+1] < lo-1; i += 2 {
		out = append(out, s[i], s[i+1])
	}
	for ; i < len(s) && s[i] <= hi+1; i += 2 {
		lo, hi = min(lo, s[i]), max(hi, s[i+1])
	}
	out = append(out, lo, hi)
	return append(out, s[i:]...)
}

func (s runeSet) union(t runeSet) runeSet {
	for i := 0; i < len(t); i += 2 {
		s = s.add(t[i], t[i+1])
	}
	return s
}

func (s runeSet) negate() runeSet {
	var out runeSet
	next := rune(0)
	for i := 0; i < len(s); i += 2 {
		if s[i] > next {
			out = append(out, next, s[i]-1)
		}
		next = s[i+1] + 1
	}
	if next <= maxRune {
		out = append(out, next, maxRune)
	}
	return out
}

func (s runeSet) intersect(t runeSet) runeSet {
	return s.negate().union(t.negate()).negate()
}

func (s runeSet) has(r rune) bool {
	for i := 0; i < len(s); i += 2 {
		if s[i] <= r && r <= s[i+1] {
			return true
		}
	}
	return false
}

func (s runeSet) equal(t runeSet) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

// foldASCII adds the other case of every ASCII letter in s: grep -i in the
// C locale folds exactly these 52 letters and nothing else.
func (s runeSet) foldASCII() runeSet {
	out := s
	for i := 0; i < len(s); i += 2 {
		if lo, hi := max(s[i], 'a'), min(s[i+1], 'z'); lo <= hi {
			out = out.add(lo-'a'+'A', hi-'a'+'A')
		}
		if lo, hi := max(s[i], 'A'), min(s[i+1], 'Z'); lo <= hi {
			out = out.add(lo-'A'+'a', hi-'A'+'a')
		}
	}
	return out
}

// The C locale's character classes (isalpha etc. over ASCII; no byte
// above 0x7f belongs to any class there).
var posixClasses = map[string]runeSet{
	"alpha":  {'A', 'Z', 'a', 'z'},
	"upper":  {'A', 'Z'},
	"lower":  {'a', 'z'},
	"digit":  {'0', '9'},
	"xdigit": {'0', '9', 'A', 'F', 'a', 'f'},
	"space":  {'\t', '\r', ' ', ' '},
	"punct":  {'!', '/', ':', '@', '[', '`', '{', '~'},
	"alnum":  {'0', '9', 'A', 'Z', 'a', 'z'},
	"print":  {' ', '~'},
	"graph":  {'!', '~'},
	"cntrl":  {0, 0x1f, 0x7f, 0x7f},
	"blank":  {'\t', '\t', ' ', ' '},
}

// wordSet is what \w, \b, \< and \> call a word character: [_[:alnum:]].
var wordSet = runeSet{'0', '9', 'A', 'Z', '_', '_', 'a', 'z'}
