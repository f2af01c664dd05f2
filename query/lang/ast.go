// Package lang owns the query language: the syntax tree of a query (words,
// phrases, prefixes, literals, regular expressions and their boolean
// combinations), the modes a query text is read in (the query language,
// grep -F literals, grep -E and grep -G regexes, Go's RE2 syntax), the
// parser with its positioned errors, and the one translation of a regex
// into the Go expression that query matches and plans with. Evaluating a
// tree is package query's job.
package lang

import (
	"fmt"
	"regexp/syntax"
	"strings"
)

// Node is a parsed query: a boolean tree over atoms. The set of node types
// is closed (the unexported method seals it): every package that walks a
// tree handles exactly the types below.
type Node interface {
	String() string
	node()
}

func (*And) node()     {}
func (*Or) node()      {}
func (*Not) node()     {}
func (*Term) node()    {}
func (*Prefix) node()  {}
func (*Phrase) node()  {}
func (*Literal) node() {}
func (*Regex) node()   {}
func (*All) node()     {}

type (
	// And matches lines matching every Kid.
	And struct{ Kids []Node }
	// Or matches lines matching any Kid.
	Or struct{ Kids []Node }
	// Not matches lines not matching Kid.
	Not struct{ Kid Node }
	// Term matches lines holding the token (folded).
	Term struct{ Text string }
	// Prefix matches lines holding a token that starts with Text (folded).
	Prefix struct{ Text string }
	// Phrase matches lines whose token sequence holds Terms consecutively;
	// with LastPrefix the last one need only be a prefix.
	Phrase struct {
		Terms      []string
		LastPrefix bool
	}
	// Literal matches lines containing Text as bytes; Fold folds ASCII
	// letters only (grep -iF in the C locale).
	Literal struct {
		Text []byte
		Fold bool
	}
	// Regex matches lines matching Expr, read in Syntax (matched per
	// line, as grep). Build one with NewRegex, which translates it.
	Regex struct {
		Expr   string // as written
		Syntax Syntax
		Fold   bool // ASCII letters in ERE and BRE (grep -i, C locale); Unicode folding in RE2
		// Go is Expr as an equivalent Go regexp (RE2 syntax, Perl flags,
		// case folding written in) and Tree its parsed form: translated
		// once, when the query is parsed, for the matcher and the planner.
		Go   string
		Tree *syntax.Regexp
		// Bytewise, in ERE and BRE, is set when grep's byte reading (C
		// locale) can differ from Go's UTF-8 one: the pattern can match
		// a non-ASCII character ('.', a negated bracket, \W, \S) or
		// holds \B (true between the bytes of one character), or
		// holds a byte >= 0x80 and was then read widened (each byte the
		// rune of its value: Go and Tree are that reading). Lines holding
		// a byte >= 0x80 are then matched widened (scan.NewBytewise), and
		// the index narrows by Tree's literals turned back into bytes.
		Bytewise bool
		// RepeatsTest, in ERE and BRE: the pattern repeats a zero-width
		// test, as 'a\B*' (grepsyntax.Result.RepeatsTest), where grep's
		// -o contradicts its own choice of lines.
		RepeatsTest bool
	}
	// All matches every line.
	All struct{}
)

func (n *And) String() string { return join("AND", n.Kids) }
func (n *Or) String() string  { return join("OR", n.Kids) }
func (n *Not) String() string { return "NOT " + n.Kid.String() }
func (n *Term) String() string {
	return n.Text
}
func (n *Prefix) String() string { return n.Text + "*" }
func (n *Phrase) String() string {
	s := strings.Join(n.Terms, " ")
	if n.LastPrefix {
		s += "*"
	}
	return `"` + s + `"`
}
func (n *Literal) String() string {
	if n.Fold {
		return fmt.Sprintf("'%s'i", n.Text)
	}
	return fmt.Sprintf("'%s'", n.Text)
}
func (n *Regex) String() string {
	s := "/" + n.Expr + "/"
	if n.Syntax != SyntaxERE {
		s = strings.ToLower(n.Syntax.String()) + s
	}
	if n.Fold {
		s += "i"
	}
	return s
}
func (n *All) String() string { return "*ALL*" }

func join(op string, kids []Node) string {
	parts := make([]string, len(kids))
	for i, k := range kids {
		parts[i] = k.String()
	}
	return "(" + strings.Join(parts, " "+op+" ") + ")"
}
