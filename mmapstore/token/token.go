// Package token owns logdex's token rule: the one definition of a "word" that
// the indexer writes into term dictionaries and that queries look up.
//
// A token is a maximal run of Unicode letters, Unicode decimal digits and '_'.
// Tokens are case-folded: every rune maps to one canonical member of its
// simple case-folding orbit (ASCII letters map to lower case), so that a
// regexp's (?i) and the index agree on which strings are "the same word".
// Bytes that are not valid UTF-8 separate tokens.
//
// It lives under mmapstore because the term dictionaries it defines are
// part of the index format, and both the indexer (writing them) and the
// query engine (looking words up, highlighting them) need the same rule;
// dependencies point only towards mmapstore.
package token

import (
	"bytes"
	"unicode"
	"unicode/utf8"
)

// class of an ASCII byte; bytes >= 0x80 are classified by decoding.
const (
	sep   = 0
	word  = 1 // a-z, 0-9, _
	upper = 2 // A-Z
	multi = 3 // first byte of a multi-byte sequence (or invalid)
)

var class [256]uint8

func init() {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			class[c] = word
		case c >= 'A' && c <= 'Z':
			class[c] = upper
		case c >= 0x80:
			class[c] = multi
		}
	}
}

// IsWordRune reports whether r belongs in a token.
func IsWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return class[r] == word || class[r] == upper
	}
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

// FoldRune maps r to the canonical member of its simple case-folding orbit
// (unicode.SimpleFold): the lower case of the orbit's smallest word rune
// when that lower case is in the orbit, else that smallest word rune. It
// depends only on the orbit, so two runes fold alike exactly when regexp's
// (?i) treats them alike: 'K' and the Kelvin sign fold to 'k', 'ſ' to 's',
// and 'İ', whose orbit holds only itself, stays 'İ'.
func FoldRune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	lo := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if fw, lw := IsWordRune(f), IsWordRune(lo); fw != lw && fw || fw == lw && f < lo {
			lo = f
		}
	}
	if l := unicode.ToLower(lo); l != lo && inOrbit(l, r) {
		return l
	}
	return lo
}

// inOrbit reports whether x folds like r.
func inOrbit(x, r rune) bool {
	for f := unicode.SimpleFold(r); ; f = unicode.SimpleFold(f) {
		if f == x {
			return true
		}
		if f == r {
			return false
		}
	}
}

// IsWordByte reports whether the ASCII byte c belongs in a token (letters,
// digits, '_'); bytes >= 0x80 need decoding and are never word bytes here.
func IsWordByte(c byte) bool { return class[c] == word || class[c] == upper }

// FoldSafe reports whether every rune that folds like r has r's word class.
// Only the Greek iota orbit mixes classes: it holds the combining mark
// U+0345, which a (?i) regexp matches but which separates tokens. Query
// planning must not assume a token boundary (or its absence) at such runes.
func FoldSafe(r rune) bool {
	if r < utf8.RuneSelf {
		return true
	}
	w := IsWordRune(r)
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if IsWordRune(f) != w {
			return false
		}
	}
	return true
}

// Fold appends the folded form of s (any bytes; only word runes are expected)
// to dst.
func Fold(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if class[c] == upper {
				c += 'a' - 'A'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, c)
		} else {
			dst = utf8.AppendRune(dst, FoldRune(r))
		}
		i += n
	}
	return dst
}

// Scanner walks the tokens of one line. The zero value is ready after Reset.
// It reuses an internal buffer, so a Term is valid until the next call.
type Scanner struct {
	s     []byte
	i     int
	buf   []byte
	start int
	end   int
	term  []byte
}

// Reset starts scanning line.
func (sc *Scanner) Reset(line []byte) {
	sc.s, sc.i = line, 0
}

// Next advances to the next token and reports whether there was one.
func (sc *Scanner) Next() bool {
	s := sc.s
	i := sc.i
	// Skip separators. The ASCII loop is the hot path of indexing.
	for i < len(s) {
		c := class[s[i]]
		if c == word || c == upper {
			break
		}
		if c == multi {
			r, n := utf8.DecodeRune(s[i:])
			if IsWordRune(r) {
				break
			}
			i += n
			continue
		}
		i++
	}
	if i >= len(s) {
		sc.i = i
		return false
	}
	start := i
	folded := false // whether term must be built in buf rather than sliced from s
	for i < len(s) {
		c := class[s[i]]
		if c == word {
			i++
			continue
		}
		if c == upper {
			folded = true
			i++
			continue
		}
		if c == multi {
			r, n := utf8.DecodeRune(s[i:])
			if !IsWordRune(r) {
				break
			}
			folded = true
			i += n
			continue
		}
		break
	}
	sc.start, sc.end, sc.i = start, i, i
	if folded {
		sc.buf = Fold(sc.buf[:0], s[start:i])
		sc.term = sc.buf
	} else {
		sc.term = s[start:i]
	}
	return true
}

// Term is the current token, case-folded. It aliases the line or an internal
// buffer and is valid until the next call to Next.
func (sc *Scanner) Term() []byte { return sc.term }

// Span is the current token's byte range [start, end) in the line.
func (sc *Scanner) Span() (start, end int) { return sc.start, sc.end }

// Terms returns the folded tokens of line, in order (duplicates kept).
func Terms(line []byte) []string {
	var sc Scanner
	sc.Reset(line)
	var out []string
	for sc.Next() {
		out = append(out, string(sc.Term()))
	}
	return out
}

// Compounds calls fn for every dotted number in line: a maximal run of at
// least three ASCII digit groups joined by single dots ("10.213.7.42",
// "1.2.3"). They are indexed as extra terms beside the word tokens (the
// dots keep them apart from any token), so that a search for an IP address
// or a version, whose digit groups are common words, finds its lines
// without reading every line holding those digits. Two groups ("1.1",
// the "07.123" of a timestamp) would cost a term on nearly every line and
// narrow little.
func Compounds(line []byte, fn func(term []byte)) {
	digit := func(c byte) bool { return c >= '0' && c <= '9' }
	n := len(line)
	// Jump from dot to dot (SIMD IndexByte): most bytes are not near one.
	for i := 0; i < n; {
		j := bytes.IndexByte(line[i:], '.')
		if j < 0 {
			return
		}
		d := i + j
		if d == 0 || d+1 >= n || !digit(line[d-1]) || !digit(line[d+1]) {
			i = d + 1
			continue
		}
		// A run starts at the digits before this dot (an earlier run
		// ended before i, on a byte that is not a digit).
		start := d - 1
		for start > i && digit(line[start-1]) {
			start--
		}
		end, dots := d, 0
		for k := d; k < n; {
			if digit(line[k]) {
				k++
				end = k
				continue
			}
			if line[k] == '.' && end == k && k+1 < n && digit(line[k+1]) {
				dots++
				k++
				continue
			}
			break
		}
		if dots >= 2 {
			fn(line[start:end])
		}
		i = end
	}
}
