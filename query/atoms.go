package query

import (
	"bytes"
	"unicode/utf8"

	"github.com/logdex/logdex/mmapstore/token"
)

// atomKind says how a token of a literal relates to the tokens of a line
// containing that literal: a token bounded by non-word characters inside
// the literal is a whole token of the line; one touching the literal's
// start may be the end of a longer token (a suffix), one touching its end
// may be the beginning of one (a prefix), one touching both may sit
// anywhere inside one (an infix).
type atomKind uint8

const (
	atomExact atomKind = iota
	atomPrefix
	atomSuffix
	atomInfix
)

func (k atomKind) String() string {
	return [...]string{"exact", "prefix", "suffix", "infix"}[k]
}

type atom struct {
	kind atomKind
	text []byte // folded
}

// literalAtoms lists the index lookups implied by "the line contains p".
// With unicodeFold, p stands for any string equal to it under simple case
// folding (regexp's (?i)); runes whose folding orbit mixes word and
// non-word characters then count as unknown.
func literalAtoms(p []byte, unicodeFold bool) []atom {
	n := len(p)
	// Leading continuation bytes may complete a character that starts
	// before the literal in the line; a trailing incomplete sequence may be
	// completed after it. Either could be a letter: unknown.
	lo := 0
	for lo < n && lo < 3 && p[lo]&0xC0 == 0x80 {
		lo++
	}
	hi := n
	for k := n - 1; k >= lo && k >= n-3; k-- {
		if c := p[k]; c >= 0xC0 {
			if !utf8.FullRune(p[k:]) {
				hi = k
			}
			break
		} else if c < 0x80 {
			break
		}
	}
	var atoms []atom
	start := -1         // start of the current token
	openLeft := false   // whether what precedes start may be a word character
	prevUnknown := true // at lo: the literal's start or unknown bytes
	flush := func(end int, openRight bool) {
		if start < 0 {
			return
		}
		k := atomExact
		switch {
		case openLeft && openRight:
			k = atomInfix
		case openLeft:
			k = atomSuffix
		case openRight:
			k = atomPrefix
		}
		atoms = append(atoms, atom{kind: k, text: token.Fold(nil, p[start:end])})
		start = -1
	}
	for i := lo; i < hi; {
		r, w := utf8.DecodeRune(p[i:])
		unknown := unicodeFold && !token.FoldSafe(r)
		word := !unknown && (r != utf8.RuneError || w > 1) && token.IsWordRune(r)
		switch {
		case word:
			if start < 0 {
				start = i
				openLeft = prevUnknown
			}
		default:
			flush(i, unknown)
		}
		prevUnknown = unknown
		i += w
	}
	flush(hi, true)
	return append(atoms, compoundAtoms(p)...)
}

func isDigitOrDot(c byte) bool { return c == '.' || c >= '0' && c <= '9' }

// compoundAtoms lists the dotted numbers of p (see token.Compounds; at
// least three digit groups) as
// atoms over the dictionary's compound terms: a run of p like 10.213.7.42
// lies inside one compound term of any line containing p, and is that
// whole term when p bounds it on both sides by other characters.
func compoundAtoms(p []byte) []atom {
	var atoms []atom
	for i := 0; i < len(p); {
		if !isDigitOrDot(p[i]) {
			i++
			continue
		}
		j := i
		for j < len(p) && isDigitOrDot(p[j]) {
			j++
		}
		// [i, j) is a maximal run of digits and dots; ".." splits it.
		for a := i; a < j; {
			b := a
			for b < j && !(p[b] == '.' && b+1 < j && p[b+1] == '.') {
				b++
			}
			if b < j {
				b++ // include the first dot of ".."; trimmed below
			}
			s, e := a, b
			for s < e && p[s] == '.' {
				s++
			}
			for e > s && p[e-1] == '.' {
				e--
			}
			if e-s >= 5 && bytes.Count(p[s:e], []byte{'.'}) >= 2 { // indexed: 3 groups or more
				leftClosed := s > 0 && !isDigitOrDot(p[s-1])
				rightClosed := e < len(p) && !isDigitOrDot(p[e])
				k := atomInfix
				switch {
				case leftClosed && rightClosed:
					k = atomExact
				case leftClosed:
					k = atomPrefix
				case rightClosed:
					k = atomSuffix
				}
				atoms = append(atoms, atom{kind: k, text: bytes.Clone(p[s:e])})
			}
			a = b
		}
		i = j
	}
	return atoms
}
