package lang

import (
	"errors"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/logdex/logdex/query/internal/grepsyntax"
	"github.com/logdex/logdex/query/internal/scan"
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
	results, wide := translateList([]string{expr}, syn, fold)
	n, ws, err := newTranslated(expr, syn, fold, results[0])
	if err == nil {
		setWide(n, wide)
	}
	return n, ws, err
}

// translateList translates a list of patterns as grep reads them. A list
// with a byte >= 0x80 in any pattern is read widened, byte by byte (each
// byte the rune of its value: wide), as grep in the C locale reads it
// (a widened ASCII pattern is itself); positions are the patterns' own.
func translateList(texts []string, syn Syntax, fold bool) (results []grepsyntax.Result, wide bool) {
	if !slices.ContainsFunc(texts, hasHighByte) {
		return grepsyntax.TranslateList(texts, grepSyntax(syn), fold), false
	}
	wt := make([]string, len(texts))
	for i, t := range texts {
		wt[i] = widen(t)
	}
	results = grepsyntax.TranslateList(wt, grepSyntax(syn), fold)
	for i := range results {
		var ge *grepsyntax.Error
		if errors.As(results[i].Err, &ge) {
			ge.Pos = unwidenPos(texts[i], ge.Pos)
		}
		for j := range results[i].Warnings {
			results[i].Warnings[j].Pos = unwidenPos(texts[i], results[i].Warnings[j].Pos)
		}
	}
	return results, true
}

// setWide makes n match byte by byte, as grep in the C locale, where that
// differs from Go's UTF-8 reading: n's pattern was read widened (wide: all
// its lines are matched widened, a widened ASCII line being itself), or
// it can match a non-ASCII character (lines holding a byte >= 0x80 are
// matched widened; its expression is the same either way, being ASCII).
func setWide(n *Regex, wide bool) {
	n.Bytewise = wide || matchesNonASCII(n.Tree)
}

func hasHighByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// unwidenPos is the offset in s of offset w of widen(s) (inside a widened
// byte: that byte's).
func unwidenPos(s string, w int) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			w--
		}
		if w--; w < 0 {
			return i
		}
	}
	return len(s)
}

// matchesNonASCII reports whether re can match a non-ASCII character, or
// holds \B, which matches between the bytes of one (two non-word bytes to
// grep, one character to Go).
func matchesNonASCII(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpNoWordBoundary:
		return true
	case syntax.OpLiteral:
		if slices.ContainsFunc(re.Rune, func(r rune) bool { return r >= utf8.RuneSelf }) {
			return true
		}
	case syntax.OpCharClass:
		for i := 1; i < len(re.Rune); i += 2 {
			if re.Rune[i] >= utf8.RuneSelf {
				return true
			}
		}
	}
	return slices.ContainsFunc(re.Sub, matchesNonASCII)
}

// widen makes every byte of s the rune of its value (Latin-1 read as
// UTF-8): the pattern grep in the C locale reads.
func widen(s string) string { return string(scan.Widen(nil, []byte(s))) }

func grepSyntax(syn Syntax) grepsyntax.Syntax {
	if syn == SyntaxBRE {
		return grepsyntax.BRE
	}
	return grepsyntax.ERE
}

// newTranslated builds the node of expr from its translation.
func newTranslated(expr string, syn Syntax, fold bool, r grepsyntax.Result) (*Regex, []Warning, error) {
	goExpr, tree, ws, err := r.Expr, r.Re, r.Warnings, r.Err
	if err != nil {
		var ge *grepsyntax.Error
		if errors.As(err, &ge) {
			return nil, nil, &ParseError{Msg: ge.Msg, Pos: min(max(ge.Pos, 0), len(expr)), rank: grepRank(ge)}
		}
		return nil, nil, &ParseError{Msg: err.Error()}
	}
	var warnings []Warning
	for _, w := range ws {
		warnings = append(warnings, Warning{Msg: w.Msg, Pos: w.Pos})
	}
	return &Regex{Expr: expr, Syntax: syn, Fold: fold, Go: goExpr, Tree: tree, RepeatsTest: r.RepeatsTest}, warnings, nil
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
				pos = re2ErrorPos(expr, se)
			}
		}
		return nil, nil, &ParseError{Msg: msg, Pos: pos}
	}
	return &Regex{Expr: expr, Syntax: SyntaxRE2, Fold: fold, Go: goExpr, Tree: tree}, nil, nil
}

// re2ErrorPos finds in expr the part a regexp/syntax error names, which
// it gives as text, not as a position: an unclosed bracket or group runs
// to the end of the expression; anything else is its first occurrence
// not escaped by a backslash (a\*b|*c fails at the second *, not the
// first). 0 when it is not found.
func re2ErrorPos(expr string, se *syntax.Error) int {
	e := strings.TrimPrefix(se.Expr, "(?i)") // (added for case folding)
	if e == "" {
		return 0
	}
	if (se.Code == syntax.ErrMissingBracket || se.Code == syntax.ErrMissingParen) && strings.HasSuffix(expr, e) {
		return len(expr) - len(e)
	}
	for i := 0; ; {
		j := strings.Index(expr[i:], e)
		if j < 0 {
			return 0
		}
		at := i + j
		n := 0
		for k := at - 1; k >= 0 && expr[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return at
		}
		i = at + 1
	}
}

// regexPatterns reads patterns as grep reads its -e arguments in a regex
// mode: each line of each is a pattern of its own. Positions in errors
// and warnings become character offsets into the pattern they are in.
func regexPatterns(patterns []string, syn Syntax, fold bool) (Node, []Warning, error) {
	type line struct {
		text       string
		index, off int
	}
	var lines []line
	for i, p := range patterns {
		off := 0
		for _, l := range strings.Split(p, "\n") {
			lines = append(lines, line{l, i, off})
			off += len(l) + 1
		}
	}
	if last := &lines[len(lines)-1]; len(lines) > 1 && syn != SyntaxRE2 && oddTrailingBackslashes(last.text) {
		// grep matches several patterns that are all fixed strings as
		// grep -F would, and that reading takes a backslash ending the
		// last one as a literal one (which the regex reading refuses).
		fixed := true
		for _, l := range lines {
			fixed = fixed && grepFixed(l.text, syn)
		}
		if fixed {
			last.text += `\`
		}
	}
	texts := make([]string, len(lines))
	for i, l := range lines {
		texts[i] = l.text
	}
	var results []grepsyntax.Result
	var wide bool
	if syn != SyntaxRE2 {
		results, wide = translateList(texts, syn, fold)
	}
	var kids []Node
	var warnings []Warning
	var first *ParseError // the error grep reports, of all the patterns'
	for i, l := range lines {
		p := patterns[l.index]
		var n *Regex
		var ws []Warning
		var err error
		if results != nil {
			if n, ws, err = newTranslated(l.text, syn, fold, results[i]); err == nil {
				setWide(n, wide)
			}
		} else {
			n, ws, err = newRE2(l.text, fold)
		}
		if pe, ok := err.(*ParseError); ok {
			if first == nil || pe.rank < first.rank {
				first = &ParseError{Msg: pe.Msg, Pattern: l.index, Pos: runePos(p, l.off+pe.Pos), rank: pe.rank}
			}
			continue
		} else if err != nil {
			return nil, nil, err
		}
		for _, w := range ws {
			warnings = append(warnings, Warning{Msg: w.Msg, Pattern: l.index, Pos: runePos(p, l.off+w.Pos)})
		}
		kids = append(kids, n)
	}
	if first != nil {
		return nil, nil, first
	}
	if len(kids) == 1 {
		return kids[0], warnings, nil
	}
	return &Or{Kids: kids}, warnings, nil
}

// grepRank orders the errors of a list of patterns as grep reports them:
// the first error of its first reading of every pattern, else the first
// of its second reading, else the first of logdex's refusals.
func grepRank(e *grepsyntax.Error) int {
	switch {
	case e.Late():
		return 1
	case e.Refusal():
		return 2
	}
	return 0
}

func oddTrailingBackslashes(s string) bool {
	n := len(s) - len(strings.TrimRight(s, `\`))
	return n%2 == 1
}

// grepFixed reports whether grep 3.8 reads p, one of several patterns, as
// a fixed string (its switch from -E or -G to -F; established by
// experiment): no operator, and no escape that is one.
func grepFixed(p string, syn Syntax) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '$', '*', '.', '[', '^':
			return false
		case '(', '+', '?', '{', '|':
			if syn == SyntaxERE {
				return false
			}
		case '\\':
			if i+1 == len(p) {
				break
			}
			i++
			switch c := p[i]; {
			case strings.IndexByte("BSW'<bsw`>", c) >= 0, '1' <= c && c <= '9':
				return false
			case syn == SyntaxBRE && strings.IndexByte("(+?{|)", c) >= 0:
				return false
			}
		}
	}
	return true
}

// Whole restricts every pattern of a tree parsed in ModeLiteral or a
// regex mode to whole lines (grep -x) or, with words, to matches that
// form whole words (grep -w: at the line's start or after a byte that is
// not a letter, digit or '_', and at its end or before one). A literal
// becomes the regex of its bytes (ASCII case folding written in).
func Whole(n Node, words bool) (Node, error) {
	switch n := n.(type) {
	case *Or:
		out := &Or{}
		for _, k := range n.Kids {
			w, err := Whole(k, words)
			if err != nil {
				return nil, err
			}
			out.Kids = append(out.Kids, w)
		}
		return out, nil
	case *Literal:
		g, wide := n.GoExpr()
		return wholeRegex(string(n.Text), SyntaxERE, n.Fold, g, wide, words)
	case *Regex:
		if n.Syntax == SyntaxRE2 {
			return nil, errors.New("-x and -w apply to -F, -E and -G patterns, not to --re2")
		}
		var w *Regex
		var err error
		if n.WordEdges() {
			// Their translation may take a character of the line next to
			// the pattern, which a wrapper's own test would then miss: the
			// restriction is translated with the pattern instead.
			w, err = wholeEdges(n, words)
		} else {
			w, err = wholeRegex(n.Expr, n.Syntax, n.Fold, n.Go, hasHighByte(n.Expr), words)
		}
		if err != nil {
			return nil, err
		}
		w.RepeatsTest = n.RepeatsTest
		return w, nil
	}
	return nil, errors.New("-x and -w apply to -F, -E and -G patterns, not to the query language")
}

// LocateWhole places an error of Whole on the tree ParseWarn made of
// patterns (read in mode, with fold) in the pattern at fault: Whole sees
// the patterns' regexes, not which pattern each came from, and leaves
// Pattern 0 and a Pos into the regex's own line. The first line of a
// pattern that Whole refuses alone gives Pattern, and Pos becomes a
// character offset into that pattern, as ParseWarn's errors give it.
// Other errors are returned as they are.
func LocateWhole(err error, patterns []string, mode Mode, fold, words bool) error {
	var pe *ParseError
	if !errors.As(err, &pe) {
		return err
	}
	for i, p := range patterns {
		off := 0
		for _, l := range strings.Split(p, "\n") {
			if n, _, perr := ParseWarn([]string{l}, mode, fold); perr == nil {
				var le *ParseError
				if _, werr := Whole(n, words); errors.As(werr, &le) {
					return &ParseError{Msg: le.Msg, Pattern: i, Pos: runePos(p, off+le.Pos), rank: le.rank}
				}
			}
			off += len(l) + 1
		}
	}
	return err
}

// NonWord is a Go class of the bytes grep -w takes for word edges in the
// C locale: all but letters, digits and '_' (a widened byte >= 0x80 too).
const NonWord = `[^0-9A-Za-z_]`

// WordEdges reports whether a grep pattern holds \< or \>, which its
// translation may turn into a character of the line next to the match:
// the lines it selects are right, the extent of its matches not (-o, -w,
// -x need them).
func (n *Regex) WordEdges() bool {
	return n.Syntax != SyntaxRE2 && (strings.Contains(n.Expr, `\<`) || strings.Contains(n.Expr, `\>`))
}

// EdgeTree is the tree of the regex's grep pattern with \< and \> kept
// (grepsyntax.TranslateEdges: as OpBeginLine and OpEndLine), the pattern
// read widened as grep in the C locale reads it, to be matched byte by
// byte (each byte the rune of its value). Only for patterns WordEdges
// reports.
func (n *Regex) EdgeTree() (*syntax.Regexp, error) {
	if n.Syntax == SyntaxRE2 {
		return nil, errors.New("EdgeTree of an RE2 expression")
	}
	expr := n.Expr
	if hasHighByte(expr) {
		expr = widen(expr)
	}
	return grepsyntax.TranslateEdges(expr, grepSyntax(n.Syntax), n.Fold)
}

// wholeEdges is Whole of a regex holding \< or \>, through
// grepsyntax.TranslateWhole.
func wholeEdges(n *Regex, words bool) (*Regex, error) {
	expr := n.Expr
	if n.Bytewise {
		expr = widen(expr) // (a widened ASCII pattern is itself)
	}
	g, tree, err := grepsyntax.TranslateWhole(expr, grepSyntax(n.Syntax), n.Fold, words)
	var ge *grepsyntax.Error
	if errors.As(err, &ge) {
		ge.Pos = unwidenPos(n.Expr, ge.Pos) // (as translateList)
	}
	w, _, err := newTranslated(n.Expr, n.Syntax, n.Fold, grepsyntax.Result{Expr: g, Re: tree, Err: err})
	if err != nil {
		return nil, err
	}
	setWide(w, n.Bytewise)
	return w, nil
}

// wholeRegex is the Regex of Go expression g (of pattern expr) restricted
// to whole lines or words; wide: g reads its pattern byte by byte.
func wholeRegex(expr string, syn Syntax, fold bool, g string, wide, words bool) (*Regex, error) {
	if words {
		g = `(?:^|` + NonWord + `)(?:` + g + `)(?:` + NonWord + `|$)`
	} else {
		g = `^(?:` + g + `)$`
	}
	tree, err := syntax.Parse(g, syntax.Perl)
	if err != nil {
		return nil, &ParseError{Msg: "invalid regex: " + err.Error()}
	}
	n := &Regex{Expr: expr, Syntax: syn, Fold: fold, Go: g, Tree: tree}
	setWide(n, wide)
	return n, nil
}

// GoExpr is a Go expression matching the literal's bytes (ASCII letters
// in either case with Fold, as grep -iF in the C locale); wide: it holds a
// byte >= 0x80, written widened (the rune of its value), and is to be
// matched against widened lines.
func (n *Literal) GoExpr() (expr string, wide bool) {
	return quoteLiteral(n.Text, n.Fold), hasHighByte(string(n.Text))
}

// quoteLiteral is a Go expression matching the bytes of lit (ASCII
// letters in either case with fold, as grep -iF in the C locale); a byte
// >= 0x80 is written widened, as the rune of its value.
func quoteLiteral(lit []byte, fold bool) string {
	var b strings.Builder
	for _, c := range lit {
		switch {
		case c >= utf8.RuneSelf:
			b.WriteRune(rune(c))
		case fold && ('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'):
			b.WriteString("[" + string(c|0x20) + string(c&^0x20) + "]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}
