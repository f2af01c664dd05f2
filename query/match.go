package query

import (
	"bytes"
	"regexp"
	"slices"
	"sync"

	"github.com/logdex/logdex/mmapstore/token"
	"github.com/logdex/logdex/query/internal/scan"
	"github.com/logdex/logdex/query/lang"
)

// lineState is one line under evaluation; its tokens are computed on first
// use, so literal and regex queries never tokenize.
type lineState struct {
	line      []byte
	tokenized bool
	sc        token.Scanner
	buf       []byte
	toks      [][2]int // folded terms as ranges of buf
	spans     [][2]int // the same tokens as byte ranges of the line
	// ascii: the line is all ASCII (words are then compared in place,
	// ascii.go), once asciiKnown.
	ascii, asciiKnown bool
}

func (ls *lineState) reset(line []byte) {
	ls.line = line
	ls.tokenized = false
	ls.asciiKnown = false
}

func (ls *lineState) tokens() [][2]int {
	if ls.tokenized {
		return ls.toks
	}
	ls.tokenized = true
	ls.buf, ls.toks, ls.spans = ls.buf[:0], ls.toks[:0], ls.spans[:0]
	ls.sc.Reset(ls.line)
	for ls.sc.Next() {
		s := len(ls.buf)
		ls.buf = append(ls.buf, ls.sc.Term()...)
		ls.toks = append(ls.toks, [2]int{s, len(ls.buf)})
		a, b := ls.sc.Span()
		ls.spans = append(ls.spans, [2]int{a, b})
	}
	return ls.toks
}

func (ls *lineState) tok(i int) []byte { t := ls.toks[i]; return ls.buf[t[0]:t[1]] }

// matcher decides one node for one line.
type matcher interface {
	match(ls *lineState) bool
	// highlight appends the byte ranges in the line that this node's
	// positive atoms matched.
	highlight(ls *lineState, dst [][2]int) [][2]int
}

type andM []matcher
type orM []matcher
type notM struct{ m matcher }
type termM struct{ t []byte }
type prefixM struct{ t []byte }
type phraseM struct {
	terms      [][]byte
	lastPrefix bool
}

// scanM matches a literal or a regex; marks, when set, gives what grep
// marks of a line where the matcher's own extents differ (a regex: its
// leftmost-longest matches, \< and \> zero-width). It is built on first
// use: a second compile of the pattern (a millisecond for 200
// alternatives, up to 0.3 s for the largest nested counts) that only a
// page's highlights need, not a count or the lines' selection.
type scanM struct {
	m     scan.Matcher
	marks func() func(dst [][2]int, line []byte) [][2]int
}
type allM struct{}

func (m andM) match(ls *lineState) bool {
	for _, k := range m {
		if !k.match(ls) {
			return false
		}
	}
	return true
}
func (m orM) match(ls *lineState) bool {
	for _, k := range m {
		if k.match(ls) {
			return true
		}
	}
	return false
}
func (m notM) match(ls *lineState) bool    { return !m.m.match(ls) }
func (m termM) match(ls *lineState) bool   { return tokenMatch(ls, m.t, false) }
func (m prefixM) match(ls *lineState) bool { return tokenMatch(ls, m.t, true) }

// tokenMatch reports whether a token of the line equals t (or starts with
// it): in place on ASCII lines, else over the line's tokens.
func tokenMatch(ls *lineState, t []byte, prefix bool) bool {
	if found, decided := asciiMatch(ls, [][]byte{t}, prefix); decided {
		return found
	}
	toks := ls.tokens()
	for i := range toks {
		if tok := ls.tok(i); prefix && bytes.HasPrefix(tok, t) || !prefix && bytes.Equal(tok, t) {
			return true
		}
	}
	return false
}

// asciiMatch decides a word or phrase in place when it can (decided),
// without checking first that the whole line is ASCII: a match whose span
// and the byte either side of it are ASCII is one for the Unicode
// tokenizer too (no multi-byte rune can join or split its tokens, and
// UTF-8 decoding never takes an ASCII byte into a rune), so a matching
// line is read up to its first match only. On a line that is not all
// ASCII any other answer is left to the tokens.
func asciiMatch(ls *lineState, terms [][]byte, lastPrefix bool) (found, decided bool) {
	if ls.tokenized || ls.asciiKnown && !ls.ascii {
		return false, false
	}
	var first [1][2]int
	out, found := asciiFind(ls.line, terms, lastPrefix, first[:0], true)
	if ls.asciiKnown {
		return found, true
	}
	if found {
		a, b := max(out[0][0]-1, 0), min(out[0][1]+1, len(ls.line))
		if scan.IsASCII(ls.line[a:b]) {
			return true, true
		}
	}
	if ls.asciiLine() {
		return found, true
	}
	return false, false
}

func (m phraseM) at(ls *lineState, i int) bool {
	for k, t := range m.terms {
		if m.lastPrefix && k == len(m.terms)-1 {
			if !bytes.HasPrefix(ls.tok(i+k), t) {
				return false
			}
		} else if !bytes.Equal(ls.tok(i+k), t) {
			return false
		}
	}
	return true
}
func (m phraseM) match(ls *lineState) bool {
	if len(m.terms) > 0 {
		if found, decided := asciiMatch(ls, m.terms, m.lastPrefix); decided {
			return found
		}
	}
	toks := ls.tokens()
	for i := 0; i+len(m.terms) <= len(toks); i++ {
		if m.at(ls, i) {
			return true
		}
	}
	return false
}
func (m scanM) match(ls *lineState) bool { return m.m.Match(ls.line) }
func (allM) match(*lineState) bool       { return true }

func (m andM) highlight(ls *lineState, dst [][2]int) [][2]int {
	for _, k := range m {
		dst = k.highlight(ls, dst)
	}
	return dst
}
func (m orM) highlight(ls *lineState, dst [][2]int) [][2]int {
	for _, k := range m {
		if k.match(ls) {
			dst = k.highlight(ls, dst)
		}
	}
	return dst
}
func (notM) highlight(_ *lineState, dst [][2]int) [][2]int { return dst }
func (allM) highlight(_ *lineState, dst [][2]int) [][2]int { return dst }

// tokenSpans returns the raw byte ranges of the line's tokens, in order,
// parallel to ls.tokens().
func tokenSpans(ls *lineState) [][2]int {
	ls.tokens()
	return ls.spans
}

// highlightTokens appends the spans of the line's tokens that ok accepts.
func highlightTokens(ls *lineState, dst [][2]int, ok func([]byte) bool) [][2]int {
	if ls.tokenized {
		for i := range ls.toks {
			if ok(ls.tok(i)) {
				dst = append(dst, ls.spans[i])
			}
		}
		return dst
	}
	// Not tokenized yet (the index answered without reading the line):
	// walk the tokens without keeping them.
	ls.sc.Reset(ls.line)
	for ls.sc.Next() {
		if ok(ls.sc.Term()) {
			a, b := ls.sc.Span()
			dst = append(dst, [2]int{a, b})
		}
	}
	return dst
}

func (m termM) highlight(ls *lineState, dst [][2]int) [][2]int {
	if !ls.tokenized && ls.asciiLine() {
		out, _ := asciiFind(ls.line, [][]byte{m.t}, false, dst, false)
		return out
	}
	return highlightTokens(ls, dst, func(t []byte) bool { return bytes.Equal(t, m.t) })
}
func (m prefixM) highlight(ls *lineState, dst [][2]int) [][2]int {
	if !ls.tokenized && ls.asciiLine() {
		out, _ := asciiFind(ls.line, [][]byte{m.t}, true, dst, false)
		return out
	}
	return highlightTokens(ls, dst, func(t []byte) bool { return bytes.HasPrefix(t, m.t) })
}

// equalFoldedASCII reports whether ASCII word bytes b fold to t.
func equalFoldedASCII(b, t []byte) bool {
	for k, c := range b {
		if lower(c) != t[k] {
			return false
		}
	}
	return true
}
func (m phraseM) highlight(ls *lineState, dst [][2]int) [][2]int {
	if !ls.tokenized && len(m.terms) > 0 && ls.asciiLine() {
		out, _ := asciiFind(ls.line, m.terms, m.lastPrefix, dst, false)
		return out
	}
	spans := tokenSpans(ls)
	toks := ls.tokens()
	for i := 0; i+len(m.terms) <= len(toks); i++ {
		if m.at(ls, i) {
			dst = append(dst, [2]int{spans[i][0], spans[i+len(m.terms)-1][1]})
		}
	}
	return dst
}
func (m scanM) highlight(ls *lineState, dst [][2]int) [][2]int {
	if m.marks != nil {
		if marks := m.marks(); marks != nil {
			return marks(dst, ls.line) // (non-empty already)
		}
	}
	n := len(dst)
	dst = m.m.AppendMatches(dst, ls.line)
	// Empty matches (of x* or ^) mark nothing: drop them.
	out := dst[:n]
	for _, r := range dst[n:] {
		if r[0] < r[1] {
			out = append(out, r)
		}
	}
	return out
}

// longestMatches gives the non-empty matches of re (set to Longest) in a
// line, read byte by byte when bytewise and the line holds a byte >= 0x80
// (grep's C locale).
func longestMatches(re *regexp.Regexp, bytewise bool) func(dst [][2]int, line []byte) [][2]int {
	return widening(bytewise, func(dst [][2]int, text []byte, at []int) [][2]int {
		for _, m := range re.FindAllIndex(text, -1) {
			if m[1] > m[0] {
				dst = appendPart(dst, m[0], m[1], at)
			}
		}
		return dst
	})
}

// regexMarks is what grep marks of a line that the regex n (not --re2)
// matches: its leftmost-longest matches (' | tbird' marks " tbird", where
// Go's leftmost-first match is " "), with \< or \> by the edge matcher;
// nil if it does not compile (the matcher's own extents are used then).
func regexMarks(n *lang.Regex) func(dst [][2]int, line []byte) [][2]int {
	if n.WordEdges() {
		tree, err := n.EdgeTree()
		if err != nil {
			return nil
		}
		marks, err := edgeMatches(tree)
		if err != nil {
			return nil
		}
		return marks
	}
	if lits, fold, ok := finiteLiterals(n.Tree); ok {
		// A few plain strings (timeout|refused): compared as bytes,
		// where Go's regexp spent 5 to 6 µs on a log line.
		return newLiteralSet(lits, fold).parts(false)
	}
	re, err := regexp.Compile(n.Go)
	if err != nil {
		return nil
	}
	re.Longest()
	return longestMatches(re, n.Bytewise)
}

// compileMatcher builds the line matcher of a tree.
func compileMatcher(n lang.Node) (matcher, error) {
	switch n := n.(type) {
	case *lang.And:
		ms := make(andM, len(n.Kids))
		for i, k := range n.Kids {
			m, err := compileMatcher(k)
			if err != nil {
				return nil, err
			}
			ms[i] = m
		}
		return ms, nil
	case *lang.Or:
		ms := make(orM, len(n.Kids))
		for i, k := range n.Kids {
			m, err := compileMatcher(k)
			if err != nil {
				return nil, err
			}
			ms[i] = m
		}
		return ms, nil
	case *lang.Not:
		m, err := compileMatcher(n.Kid)
		if err != nil {
			return nil, err
		}
		return notM{m}, nil
	case *lang.Term:
		return termM{[]byte(n.Text)}, nil
	case *lang.Prefix:
		return prefixM{[]byte(n.Text)}, nil
	case *lang.Phrase:
		ts := make([][]byte, len(n.Terms))
		for i, t := range n.Terms {
			ts[i] = []byte(t)
		}
		return phraseM{ts, n.LastPrefix}, nil
	case *lang.Literal:
		return scanM{m: scan.NewLiteral(n.Text, n.Fold)}, nil
	case *lang.Regex:
		var marks func() func(dst [][2]int, line []byte) [][2]int
		if n.Syntax != lang.SyntaxRE2 {
			marks = sync.OnceValue(func() func(dst [][2]int, line []byte) [][2]int { return regexMarks(n) })
		}
		if n.Bytewise {
			// grep's C locale: lines with bytes >= 0x80 byte by byte
			m, err := scan.NewBytewise(n.Go)
			if err != nil {
				return nil, err
			}
			return scanM{m, marks}, nil
		}
		m, err := scan.NewRegexp(n.Go, false) // folding is written in Go
		if err != nil {
			return nil, err
		}
		return scanM{m, marks}, nil
	case *lang.All:
		return allM{}, nil
	}
	panic("query: unknown node")
}

// mergeRanges sorts and merges overlapping or touching ranges.
func mergeRanges(r [][2]int) [][2]int {
	if len(r) < 2 {
		return r
	}
	slices.SortFunc(r, func(a, b [2]int) int { return a[0] - b[0] })
	out := r[:1]
	for _, x := range r[1:] {
		last := &out[len(out)-1]
		if x[0] <= last[1] {
			last[1] = max(last[1], x[1])
			continue
		}
		out = append(out, x)
	}
	return out
}
