package scan

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"sync"
)

// reMatcher matches lines against a Go regexp with the lazy DFA. Go's
// regexp remains the reference: it reports match positions (only needed for
// the few lines displayed) and takes over when the DFA cache thrashes.
type reMatcher struct {
	re   *regexp.Regexp
	d    *dfa
	pre  []*litSet // literal sets every match contains one of, most promising first
	pool sync.Pool
}

// NewRegexp compiles expr (Go RE2 syntax, Perl flags) into a line Matcher;
// caseInsensitive is the same as a leading (?i). Parse errors are returned
// unchanged as *syntax.Error.
func NewRegexp(expr string, caseInsensitive bool) (Matcher, error) {
	flags := syntax.Perl
	prefix := ""
	if caseInsensitive {
		flags |= syntax.FoldCase
		prefix = "(?i)"
	}
	ast, err := syntax.Parse(expr, flags)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(prefix + expr)
	if err != nil {
		return nil, err
	}
	ast = ast.Simplify()
	prog, err := syntax.Compile(ast)
	if err != nil {
		return nil, err
	}
	m := &reMatcher{re: re, d: newDFA(prog)}
	if !m.d.always {
		m.pre = prefilters(ast)
	}
	m.pool.New = func() any { return newCache(m.d) }
	return m, nil
}

func (m *reMatcher) Match(line []byte) bool {
	if m.d.always {
		return true
	}
	if bytes.IndexByte(line, '\n') >= 0 {
		return m.re.Match(line) // outside the contract; keep regexp's answer
	}
	for _, ls := range m.pre {
		var st setState
		if ls.index(line, 0, &st) < 0 {
			return false
		}
	}
	c := m.pool.Get().(*cache)
	c.resets, c.resetPos, c.progress = 0, 0, 0
	var k sink
	m.run(c, line, 0, len(line), true, &k)
	m.pool.Put(c)
	return k.count > 0
}

func (m *reMatcher) AppendMatches(dst [][2]int, line []byte) [][2]int {
	for _, loc := range m.re.FindAllIndex(line, -1) {
		dst = append(dst, [2]int{loc[0], loc[1]})
	}
	return dst
}

func (m *reMatcher) ScanLines(buf []byte, fn func(start, end int) bool) {
	if m.d.always {
		scanAllLines(buf, fn)
		return
	}
	m.scan(buf, &sink{fn: fn})
}

func (m *reMatcher) CountLines(buf []byte) int {
	if m.d.always {
		return countAllLines(buf)
	}
	var k sink
	m.scan(buf, &k)
	return k.count
}

// runRegexp is run with Go's regexp.
func (m *reMatcher) runRegexp(_ *cache, buf []byte, from, to int, _ bool, k *sink) bool {
	if from == to {
		if m.re.Match(nil) {
			return k.emit(from, to)
		}
		return true
	}
	return m.fallback(buf, from, to, k)
}

// Prefilter tuning: after minPrefiltered bytes, stop using the prefilter
// when the DFA had to verify more than half of them anyway.
const minPrefiltered = 64 << 10

func (m *reMatcher) scan(buf []byte, k *sink) {
	c := m.pool.Get().(*cache)
	defer m.pool.Put(c)
	c.resets, c.resetPos, c.progress = 0, 0, 0
	pos := 0
	for _, ls := range m.pre {
		var ok bool
		if pos, ok = m.prefiltered(c, ls, buf, pos, k); !ok {
			return
		}
	}
	if pos < len(buf) {
		m.run(c, buf, pos, len(buf), false, k)
	}
}

// prefiltered runs the DFA only on the lines of buf[pos:] that contain one
// of the literals of ls. It gives up when the DFA has to verify more than half of the
// bytes anyway (the literal is common in this input) and returns where the
// next method must take over; ok is false when the scan is over.
func (m *reMatcher) prefiltered(c *cache, ls *litSet, buf []byte, pos int, k *sink) (next int, ok bool) {
	var st setState
	from, verified := pos, 0
	for pos < len(buf) {
		s := ls.index(buf, pos, &st)
		if s < 0 {
			return 0, false
		}
		start := pos + bytes.LastIndexByte(buf[pos:s], '\n') + 1
		end := lineEnd(buf, s)
		verify := m.run
		if k.fallback {
			verify = m.runRegexp // the DFA gave up
		}
		if !verify(c, buf, start, end, true, k) {
			return 0, false
		}
		verified += end - start
		pos = end + 1
		if pos-from > minPrefiltered && 2*verified > pos-from {
			return pos, true
		}
	}
	return 0, false
}
