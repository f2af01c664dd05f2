package lang

import (
	"errors"
	"regexp/syntax"
	"strings"

	"github.com/logdex/logdex/query/internal/grepsyntax"
)

// Syntax is how a Regex's expression reads.
type Syntax uint8

const (
	// SyntaxERE is POSIX extended syntax as GNU grep -E reads it in the C
	// locale (with \w \W \s \S \b \B \< \>); back-references are refused.
	SyntaxERE Syntax = iota
	// SyntaxBRE is POSIX basic syntax as GNU grep -G (grep's default)
	// reads it, with GNU's \? \+ \| and the escapes above.
	SyntaxBRE
	// SyntaxRE2 is Go's regexp syntax (RE2), the opt-in alternative.
	SyntaxRE2
)

func (s Syntax) String() string {
	switch s {
	case SyntaxBRE:
		return "BRE"
	case SyntaxRE2:
		return "RE2"
	}
	return "ERE"
}

// Warning is a message grep prints on standard error for a pattern it
// still accepts (such as "* at start of expression"). Pattern is the
// index of the pattern it concerns, Pos a character offset into it.
type Warning struct {
	Msg     string
	Pattern int
	Pos     int
}

// NewRegex translates expr, read in syn (fold: ignore case), into a Regex
// node. A rejected expression is a *ParseError whose Pos is a byte
// offset into expr; warnings carry byte offsets too (callers that embed
// expr in a longer text map both).
func NewRegex(expr string, syn Syntax, fold bool) (*Regex, []Warning, error) {
	if syn == SyntaxRE2 {
		return newRE2(expr, fold)
	}
	gs := grepsyntax.ERE
	if syn == SyntaxBRE {
		gs = grepsyntax.BRE
	}
	goExpr, tree, ws, err := grepsyntax.TranslateWarn(expr, gs, fold)
	if err != nil {
		var ge *grepsyntax.Error
		if errors.As(err, &ge) {
			return nil, nil, &ParseError{Msg: ge.Msg, Pos: min(max(ge.Pos, 0), len(expr))}
		}
		return nil, nil, &ParseError{Msg: err.Error()}
	}
	var warnings []Warning
	for _, w := range ws {
		warnings = append(warnings, Warning{Msg: w.Msg, Pos: w.Pos})
	}
	return &Regex{Expr: expr, Syntax: syn, Fold: fold, Go: goExpr, Tree: tree}, warnings, nil
}

// newRE2 validates an RE2 expression, with the position of the part
// regexp/syntax names.
func newRE2(expr string, fold bool) (*Regex, []Warning, error) {
	goExpr := expr
	if fold {
		goExpr = "(?i)" + expr
	}
	tree, err := syntax.Parse(goExpr, syntax.Perl)
	if err != nil {
		msg, pos := err.Error(), 0
		var se *syntax.Error
		if errors.As(err, &se) {
			msg = "invalid regex: " + se.Code.String()
			if se.Expr != "" {
				msg += ": `" + se.Expr + "`"
				if i := strings.Index(expr, se.Expr); i >= 0 {
					pos = i
				}
			}
		}
		return nil, nil, &ParseError{Msg: msg, Pos: pos}
	}
	return &Regex{Expr: expr, Syntax: SyntaxRE2, Fold: fold, Go: goExpr, Tree: tree}, nil, nil
}

// regexPatterns reads pattern as grep reads one -e argument in a regex
// mode: each of its lines is a pattern of its own. Positions in errors
// and warnings become character offsets into pattern.
func regexPatterns(pattern string, index int, syn Syntax, fold bool) ([]Node, []Warning, error) {
	var nodes []Node
	var warnings []Warning
	off := 0
	for _, line := range strings.Split(pattern, "\n") {
		n, ws, err := NewRegex(line, syn, fold)
		if pe, ok := err.(*ParseError); ok {
			return nil, nil, &ParseError{Msg: pe.Msg, Pattern: index, Pos: runePos(pattern, off+pe.Pos)}
		} else if err != nil {
			return nil, nil, err
		}
		for _, w := range ws {
			warnings = append(warnings, Warning{Msg: w.Msg, Pattern: index, Pos: runePos(pattern, off+w.Pos)})
		}
		nodes = append(nodes, n)
		off += len(line) + 1
	}
	return nodes, warnings, nil
}
