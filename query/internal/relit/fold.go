package relit

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/logdex/logdex/mmapstore/token"
)

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
	return strings.Map(token.FoldRune, s), true
}
