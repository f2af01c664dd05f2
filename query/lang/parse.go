package lang

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/logdex/logdex/mmapstore/token"
)

// ParseError is a malformed query: what is wrong and where (a 0-based
// character offset into the query text; with several patterns, into the
// one numbered Pattern).
type ParseError struct {
	Msg     string
	Pattern int
	Pos     int
	// rank orders the errors of several patterns as grep reports them
	// (see grepRank).
	rank int
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s (at character %d)", e.Msg, e.Pos+1) }

// Mode selects how a query text is read.
type Mode int

const (
	ModeQuery   Mode = iota // the query language (words, phrases, booleans, 'literal', /regex/)
	ModeLiteral             // the text is a byte string (grep -F)
	ModeRegex               // the text is a POSIX extended regex, as grep -E reads it
	ModeBRE                 // the text is a POSIX basic regex, as grep -G (grep's default) reads it
	ModeRE2                 // the text is a Go regexp (RE2 syntax)
)

// ModeERE is ModeRegex under its syntax's name.
const ModeERE = ModeRegex

// ParseMode reads a mode name as the API spells it; "regex" and "ere"
// both name grep -E's syntax.
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "query":
		return ModeQuery, nil
	case "literal":
		return ModeLiteral, nil
	case "regex", "ere":
		return ModeRegex, nil
	case "bre":
		return ModeBRE, nil
	case "re2":
		return ModeRE2, nil
	}
	return 0, fmt.Errorf("unknown mode %q (want query, literal, regex (or ere), bre or re2)", s)
}

func (m Mode) String() string {
	switch m {
	case ModeLiteral:
		return "literal"
	case ModeRegex:
		return "regex"
	case ModeBRE:
		return "bre"
	case ModeRE2:
		return "re2"
	}
	return "query"
}

// regexSyntax is the syntax of a regex mode's patterns.
func (m Mode) regexSyntax() (Syntax, bool) {
	switch m {
	case ModeRegex:
		return SyntaxERE, true
	case ModeBRE:
		return SyntaxBRE, true
	case ModeRE2:
		return SyntaxRE2, true
	}
	return 0, false
}

// Parse builds the tree for patterns in mode. Several patterns (grep's
// repeated -e) match a line when any does; in the literal and regex
// modes, as in grep, each line of a pattern is a pattern of its own.
// fold asks for case-insensitive literals and regexes; words are always
// case-insensitive.
func Parse(patterns []string, mode Mode, fold bool) (Node, error) {
	n, _, err := ParseWarn(patterns, mode, fold)
	return n, err
}

// ParseWarn is Parse that also returns the warnings grep prints for the
// patterns.
func ParseWarn(patterns []string, mode Mode, fold bool) (Node, []Warning, error) {
	if len(patterns) == 0 {
		return nil, nil, &ParseError{Msg: "empty query", Pos: 0}
	}
	if syn, ok := mode.regexSyntax(); ok {
		return regexPatterns(patterns, syn, fold)
	}
	var kids []Node
	var warnings []Warning
	for i, p := range patterns {
		if mode == ModeLiteral {
			for _, line := range strings.Split(p, "\n") {
				kids = append(kids, &Literal{Text: []byte(line), Fold: fold})
			}
			continue
		}
		n, ws, err := parseQuery(p, fold)
		if err != nil {
			if pe, ok := err.(*ParseError); ok {
				pe.Pattern = i
			}
			return nil, nil, err
		}
		for _, w := range ws {
			w.Pattern = i
			warnings = append(warnings, w)
		}
		kids = append(kids, n)
	}
	if len(kids) == 1 {
		return kids[0], warnings, nil
	}
	return &Or{Kids: kids}, warnings, nil
}

func runePos(s string, byteOff int) int {
	if byteOff > len(s) {
		byteOff = len(s)
	}
	return utf8.RuneCountInString(s[:byteOff])
}

type parser struct {
	q        string
	i        int
	fold     bool
	warnings []Warning
}

func parseQuery(q string, fold bool) (Node, []Warning, error) {
	p := &parser{q: q, fold: fold}
	p.space()
	if p.i == len(q) {
		return nil, nil, p.errAt(0, "empty query")
	}
	n, err := p.or()
	if err != nil {
		return nil, nil, err
	}
	p.space()
	if p.i < len(q) {
		if q[p.i] == ')' {
			return nil, nil, p.errAt(p.i, "unbalanced )")
		}
		return nil, nil, p.errAt(p.i, "unexpected text")
	}
	return n, p.warnings, nil
}

func (p *parser) errAt(byteOff int, format string, args ...any) error {
	return &ParseError{Msg: fmt.Sprintf(format, args...), Pos: runePos(p.q, byteOff)}
}

func (p *parser) space() {
	for p.i < len(p.q) && isSpace(p.q[p.i]) {
		p.i++
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// keyword reports whether the upper-case operator kw starts at p.i as a
// whole word. A dash after it joins it to the next word (NOT-FOUND is the
// phrase "not found", like any word with punctuation), not a negation.
func (p *parser) keyword(kw string) bool {
	if !strings.HasPrefix(p.q[p.i:], kw) {
		return false
	}
	j := p.i + len(kw)
	// ")" ends an operator as a space does: "(error OR)" is an OR missing
	// its right-hand side, not the word "or".
	return j == len(p.q) || isSpace(p.q[j]) || p.q[j] == '(' || p.q[j] == ')' || p.q[j] == '"' || p.q[j] == '\'' || p.q[j] == '/'
}

func (p *parser) or() (Node, error) {
	var kids []Node
	for {
		n, err := p.and()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
		p.space()
		if p.i < len(p.q) && p.keyword("OR") {
			at := p.i
			p.i += 2
			p.space()
			if p.i == len(p.q) || p.q[p.i] == ')' {
				return nil, p.errAt(at, "OR needs a right-hand side")
			}
			continue
		}
		break
	}
	if len(kids) == 1 {
		return kids[0], nil
	}
	return &Or{Kids: kids}, nil
}

func (p *parser) and() (Node, error) {
	var kids []Node
	for {
		p.space()
		if p.i == len(p.q) || p.q[p.i] == ')' || p.keyword("OR") {
			break
		}
		if p.keyword("AND") {
			at := p.i
			if len(kids) == 0 {
				return nil, p.errAt(at, "AND needs a left-hand side")
			}
			p.i += 3
			p.space()
			if p.i == len(p.q) || p.q[p.i] == ')' || p.keyword("OR") || p.keyword("AND") {
				return nil, p.errAt(at, "AND needs a right-hand side")
			}
		}
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		kids = append(kids, n)
	}
	switch len(kids) {
	case 0:
		if p.i < len(p.q) && p.keyword("OR") {
			return nil, p.errAt(p.i, "OR needs a left-hand side")
		}
		return nil, p.errAt(p.i, "expected a search term")
	case 1:
		return kids[0], nil
	}
	return &And{Kids: kids}, nil
}

func (p *parser) unary() (Node, error) {
	p.space()
	if p.keyword("NOT") {
		at := p.i
		p.i += 3
		p.space()
		if p.i == len(p.q) || p.q[p.i] == ')' || p.keyword("AND") || p.keyword("OR") {
			return nil, p.errAt(at, "NOT needs an operand")
		}
		n, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Not{Kid: n}, nil
	}
	if p.i < len(p.q) && p.q[p.i] == '-' {
		at := p.i
		p.i++
		if p.i == len(p.q) || isSpace(p.q[p.i]) || p.q[p.i] == ')' {
			return nil, p.errAt(at, "- needs a term right after it")
		}
		n, err := p.primary()
		if err != nil {
			return nil, err
		}
		return &Not{Kid: n}, nil
	}
	return p.primary()
}

func (p *parser) primary() (Node, error) {
	at := p.i
	switch p.q[p.i] {
	case '(':
		p.i++
		p.space()
		if p.i < len(p.q) && p.q[p.i] == ')' {
			return nil, p.errAt(at, "empty parentheses")
		}
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i == len(p.q) || p.q[p.i] != ')' {
			return nil, p.errAt(at, "unclosed (")
		}
		p.i++
		return n, nil
	case ')':
		return nil, p.errAt(at, "unbalanced )")
	case '"':
		s, err := p.quoted('"')
		if err != nil {
			return nil, err
		}
		prefix := strings.HasSuffix(s, "*")
		terms := token.Terms([]byte(strings.TrimSuffix(s, "*")))
		if len(terms) == 0 {
			return nil, p.errAt(at, "phrase has no words (use 'single quotes' to search for punctuation)")
		}
		return wordsNode(terms, prefix), nil
	case '\'':
		s, err := p.quoted('\'')
		if err != nil {
			return nil, err
		}
		if s == "" {
			return nil, p.errAt(at, "empty literal")
		}
		return &Literal{Text: []byte(s), Fold: p.fold}, nil
	case '/':
		expr, offs, err := p.regex()
		if err != nil {
			return nil, err
		}
		fold := p.fold
		if p.i < len(p.q) && p.q[p.i] == 'i' && (p.i+1 == len(p.q) || isSpace(p.q[p.i+1]) || p.q[p.i+1] == ')') {
			fold = true
			p.i++
		}
		// The atom reads as grep -E does (ERE).
		n, ws, err := NewRegex(expr, SyntaxERE, fold)
		if pe, ok := err.(*ParseError); ok {
			return nil, p.errAt(offs[pe.Pos], "%s", pe.Msg)
		} else if err != nil {
			return nil, err
		}
		for _, w := range ws {
			p.warnings = append(p.warnings, Warning{Msg: w.Msg, Pos: runePos(p.q, offs[w.Pos])})
		}
		return n, nil
	}
	// A bare word: up to white space, a parenthesis or a quote.
	j := p.i
	for j < len(p.q) && !isSpace(p.q[j]) && p.q[j] != '(' && p.q[j] != ')' && p.q[j] != '"' {
		j++
	}
	w := p.q[p.i:j]
	p.i = j
	prefix := strings.HasSuffix(w, "*")
	terms := token.Terms([]byte(strings.TrimSuffix(w, "*")))
	if len(terms) == 0 {
		return nil, p.errAt(at, "%q has no letters or digits to search for (use 'single quotes' for a literal)", w)
	}
	return wordsNode(terms, prefix), nil
}

// wordsNode turns the tokens of one bare word or phrase into a node: a
// word like dfs.DataNode is the phrase "dfs datanode", as the line it
// came from would tokenize.
func wordsNode(terms []string, prefix bool) Node {
	if len(terms) == 1 {
		if prefix {
			return &Prefix{Text: terms[0]}
		}
		return &Term{Text: terms[0]}
	}
	return &Phrase{Terms: terms, LastPrefix: prefix}
}

// quoted reads a string closed by q; backslash escapes q and itself.
func (p *parser) quoted(q byte) (string, error) {
	at := p.i
	p.i++
	var b strings.Builder
	for p.i < len(p.q) {
		c := p.q[p.i]
		switch {
		case c == '\\' && p.i+1 < len(p.q) && (p.q[p.i+1] == q || p.q[p.i+1] == '\\'):
			b.WriteByte(p.q[p.i+1])
			p.i += 2
		case c == q:
			p.i++
			return b.String(), nil
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", p.errAt(at, "unclosed %c", q)
}

// regex reads /expr/; `\/` stands for a slash, other escapes are kept for
// the regex parser. offs[i] is the byte offset in the query of the
// expression's byte i (offs[len(expr)]: its closing slash), to place the
// regex parser's errors.
func (p *parser) regex() (expr string, offs []int, err error) {
	at := p.i
	p.i++
	var b strings.Builder
	for p.i < len(p.q) {
		c := p.q[p.i]
		switch {
		case c == '\\' && p.i+1 < len(p.q):
			if p.q[p.i+1] == '/' {
				b.WriteByte('/')
				offs = append(offs, p.i)
			} else {
				b.WriteByte(c)
				b.WriteByte(p.q[p.i+1])
				offs = append(offs, p.i, p.i+1)
			}
			p.i += 2
		case c == '/':
			offs = append(offs, p.i)
			p.i++
			if b.Len() == 0 {
				return "", nil, p.errAt(at, "empty regex")
			}
			return b.String(), offs, nil
		default:
			b.WriteByte(c)
			offs = append(offs, p.i)
			p.i++
		}
	}
	return "", nil, p.errAt(at, "unclosed /")
}
