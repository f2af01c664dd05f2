package relit

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldRune returns the canonical member of r's unicode.SimpleFold orbit:
// the lower case of the orbit's smallest rune if that is in the orbit,
// else the smallest rune. It depends only on the orbit, which is what
// makes fold comparison agree with regexp's (?i) matching.
func foldRune(r rune) rune {
	if r < utf8.RuneSelf {
		// ASCII letters' orbits have the ASCII upper case as minimum
		// (K and ſ are larger), so the canonical form is the lower case.
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	f := unicode.SimpleFold(r)
	if f == r {
		return r
	}
	m := r
	for ; f != r; f = unicode.SimpleFold(f) {
		m = min(m, f)
	}
	if l := unicode.ToLower(m); l != m && inOrbit(l, r) {
		return l
	}
	return m
}

func inOrbit(x, r rune) bool {
	f := r
	for {
		if f == x {
			return true
		}
		if f = unicode.SimpleFold(f); f == r {
			return false
		}
	}
}

// hasFold reports whether (?i) changes what r matches.
func hasFold(r rune) bool {
	if r < utf8.RuneSelf {
		return 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z'
	}
	return unicode.SimpleFold(r) != r
}

// usable reports whether a regexp rune can be part of a literal. U+FFFD is
// excluded because regexp also matches it against any invalid byte, which
// a byte-substring literal cannot express; surrogates and out-of-range
// values can never be decoded from input.
func usable(r rune) bool {
	return r != utf8.RuneError && utf8.ValidRune(r)
}

// canonString folds every rune of s and reports whether any of them is
// affected by case folding.
func canonString(s string) (string, bool) {
	cased := false
	for _, r := range s {
		if hasFold(r) {
			cased = true
			break
		}
	}
	if !cased {
		return s, false
	}
	return strings.Map(foldRune, s), true
}
