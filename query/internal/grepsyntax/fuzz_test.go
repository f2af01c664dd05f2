package grepsyntax

import (
	"errors"
	"regexp/syntax"
	"testing"
)

// FuzzTranslate: never panics; an accepted pattern gives an expression
// that regexp/syntax parses to the returned tree; a rejection is an *Error
// with a position inside the pattern.
func FuzzTranslate(f *testing.F) {
	for _, c := range cases {
		f.Add(c.pat, c.syn == BRE, c.fold)
	}
	f.Fuzz(func(t *testing.T, pattern string, bre, fold bool) {
		syn := ERE
		if bre {
			syn = BRE
		}
		expr, re, err := Translate(pattern, syn, fold)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: error %v is not an *Error", pattern, err)
			}
			if e.Pos < 0 || e.Pos > len(pattern) {
				t.Fatalf("%q: error position %d out of range", pattern, e.Pos)
			}
			return
		}
		got, perr := syntax.Parse(expr, syntax.Perl)
		if perr != nil {
			t.Fatalf("%q -> %q: %v", pattern, expr, perr)
		}
		if got.String() != re.String() {
			t.Fatalf("%q -> %q: returned tree %q differs", pattern, expr, re)
		}
	})
}
