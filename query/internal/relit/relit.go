// Package relit owns the translation of a regular expression into the
// literal substrings every matching line must contain. The query planner
// turns the literals of the resulting [Req] into index lookups to narrow
// candidate lines; each candidate is then verified with the real regexp,
// so a Req only has to be a necessary condition, never a sufficient one.
//
// Soundness is the one hard rule: if regexp matches a line (Go RE2 syntax,
// matched per line, invalid UTF-8 decoded as U+FFFD), Eval on that line is
// true. Everything else (literal length, set sizes) is best effort.
//
// The analysis follows google/codesearch's index/regexp.go, with literal
// strings in place of trigrams: every sub-expression is summarised either
// by its exact set of matching strings or by sets of possible prefixes and
// suffixes plus a condition on its interior, and these summaries are
// combined bottom-up.
package relit

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/logdex/logdex/mmapstore/token"
)

// Op is the kind of a Req node.
type Op uint8

const (
	OpAll  Op = iota // no constraint: always true
	OpNone           // no line can match: always false
	OpLit            // the line contains Lit
	OpAnd            // all of Sub hold
	OpOr             // at least one of Sub holds
)

// Req is a necessary condition: if a line matches the regexp it was
// computed from, Eval(line) is true. A nil *Req means OpAll.
//
// Fold literals are stored in canonical form: every rune is replaced by
// the representative of its unicode.SimpleFold orbit (the orbit's lower
// case member when it has one, e.g. "error" for (?i)ERROR, 'k' for K, k
// and the Kelvin sign U+212A, 's' for S, s and ſ U+017F). A Fold literal
// matches any text whose runes are, one by one, in the same orbits; this
// is exactly the equivalence regexp uses for (?i), so callers expanding a
// Fold literal into case variants must cover whole orbits, not only
// ASCII upper/lower case. Fold literals always contain at least one rune
// with a non-trivial orbit; otherwise Fold is false.
//
// Literals are valid UTF-8 and never contain U+FFFD, which regexp also
// matches against invalid bytes.
type Req struct {
	Op   Op
	Lit  string // OpLit: the substring the line must contain
	Fold bool   // OpLit: match Lit under simple case folding (see above)
	Sub  []*Req // OpAnd, OpOr
}

// Eval reports whether line satisfies r. It is the reference semantics of
// a Req: callers use it in tests and sanity checks, not as a fast filter.
func (r *Req) Eval(line []byte) bool {
	if r == nil {
		return true
	}
	switch r.Op {
	case OpAll:
		return true
	case OpNone:
		return false
	case OpLit:
		if r.Fold {
			return containsFold(line, r.Lit)
		}
		return bytes.Contains(line, []byte(r.Lit))
	case OpAnd:
		for _, s := range r.Sub {
			if !s.Eval(line) {
				return false
			}
		}
		return true
	case OpOr:
		for _, s := range r.Sub {
			if s.Eval(line) {
				return true
			}
		}
		return false
	}
	return true // unknown op: no constraint is the sound answer
}

// containsFold reports whether line contains lit (in canonical fold form)
// under simple case folding. It decodes line from the start exactly as
// regexp does (an invalid byte is one U+FFFD), so rune boundaries agree
// with the regexp's.
func containsFold(line []byte, lit string) bool {
	if lit == "" {
		return true
	}
	for i := 0; i < len(line); {
		if matchFoldAt(line[i:], lit) {
			return true
		}
		_, w := utf8.DecodeRune(line[i:])
		i += w
	}
	return false
}

func matchFoldAt(b []byte, lit string) bool {
	for _, lr := range lit {
		if len(b) == 0 {
			return false
		}
		r, w := utf8.DecodeRune(b)
		if token.FoldRune(r) != lr {
			return false
		}
		b = b[w:]
	}
	return true
}

// String renders r for debugging and tests, e.g.
// ("foo" AND ("bar" OR (?i)"baz")).
func (r *Req) String() string {
	var b strings.Builder
	r.write(&b)
	return b.String()
}

func (r *Req) write(b *strings.Builder) {
	if r == nil {
		b.WriteString("ALL")
		return
	}
	switch r.Op {
	case OpAll:
		b.WriteString("ALL")
	case OpNone:
		b.WriteString("NONE")
	case OpLit:
		if r.Fold {
			b.WriteString("(?i)")
		}
		b.WriteString(strconv.Quote(r.Lit))
	case OpAnd, OpOr:
		sep := " AND "
		if r.Op == OpOr {
			sep = " OR "
		}
		b.WriteByte('(')
		for i, s := range r.Sub {
			if i > 0 {
				b.WriteString(sep)
			}
			s.write(b)
		}
		b.WriteByte(')')
	default:
		b.WriteString("?")
	}
}
