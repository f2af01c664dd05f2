package scan

import (
	"bytes"
	"regexp"
	"regexp/syntax"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
)

// reMatcher matches lines against a Go regexp with the lazy DFA. Go's
// regexp remains the reference: it reports match positions (only needed for
// the few lines displayed) and takes over when the DFA cache thrashes.
type reMatcher struct {
	re   *regexp.Regexp
	d    *dfa
	pre  []*finder // literals every match contains, most promising first
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
	for _, f := range m.pre {
		var st findState
		if f.index(line, 0, &st) < 0 {
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

// Prefilter tuning: after minPrefiltered bytes, stop using the prefilter
// when the DFA had to verify more than half of them anyway.
const minPrefiltered = 64 << 10

func (m *reMatcher) scan(buf []byte, k *sink) {
	c := m.pool.Get().(*cache)
	defer m.pool.Put(c)
	c.resets, c.resetPos, c.progress = 0, 0, 0
	pos := 0
	for _, f := range m.pre {
		var ok bool
		if pos, ok = m.prefiltered(c, f, buf, pos, k); !ok {
			return
		}
	}
	if pos < len(buf) {
		m.run(c, buf, pos, len(buf), false, k)
	}
}

// prefiltered runs the DFA only on the lines of buf[pos:] that contain f's
// literal. It gives up when the DFA has to verify more than half of the
// bytes anyway (the literal is common in this input) and returns where the
// next method must take over; ok is false when the scan is over.
func (m *reMatcher) prefiltered(c *cache, f *finder, buf []byte, pos int, k *sink) (next int, ok bool) {
	var st findState
	from, verified := pos, 0
	n := len(f.pat)
	for pos < len(buf) {
		if k.fallback {
			m.fallback(buf, pos, len(buf), k)
			return 0, false
		}
		s := f.index(buf, pos, &st)
		if s < 0 {
			return 0, false
		}
		start := pos + bytes.LastIndexByte(buf[pos:s], '\n') + 1
		end := lineEnd(buf, s+n)
		if !m.run(c, buf, start, end, true, k) {
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

// prefilters returns the literals that every match must contain and that
// are worth searching for, rarest-looking in log text first.
func prefilters(re *syntax.Regexp) []*finder {
	type cand struct {
		f    *finder
		rank int
	}
	var cands []cand
	for _, l := range requiredLiterals(re, nil) {
		if bytes.IndexByte(l.b, '\n') >= 0 || len(l.b) == 0 {
			continue
		}
		f := newFinder(l.b, l.fold)
		r := foldRank(f.b1, l.fold)
		// A literal made of bytes found everywhere in logs (a lone '.',
		// ' ', digits) would stop on nearly every line; the DFA is faster.
		if len(f.pat) == 1 && r > 200 || len(f.pat) == 2 && r > 225 {
			continue
		}
		cands = append(cands, cand{f, r})
	}
	// Rank first, then length (a longer literal verifies better).
	slices.SortStableFunc(cands, func(a, b cand) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return len(b.f.pat) - len(a.f.pat)
	})
	var out []*finder
	for _, c := range cands {
		if len(out) < 3 {
			out = append(out, c.f)
		}
	}
	return out
}

type reqLit struct {
	b    []byte
	fold bool // ASCII case-insensitive
}

// requiredLiterals appends byte strings that occur in every match of re.
func requiredLiterals(re *syntax.Regexp, out []reqLit) []reqLit {
	switch re.Op {
	case syntax.OpLiteral:
		return literalPieces(re.Rune, re.Flags&syntax.FoldCase != 0, out)
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiterals(re.Sub[0], out)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiterals(re.Sub[0], out)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			out = requiredLiterals(sub, out)
		}
	}
	return out
}

// literalPieces splits a literal into byte strings a matching line must
// contain. Runes whose matches are not one fixed byte string (under ASCII
// folding) split it: U+FFFD (it also matches any invalid byte) and, when
// folding, runes with non-ASCII case variants (k and s fold to K and ſ).
func literalPieces(runes []rune, fold bool, out []reqLit) []reqLit {
	var cur []byte
	flush := func() {
		if len(cur) > 0 {
			out = append(out, reqLit{cur, fold})
		}
		cur = nil
	}
	for _, r := range runes {
		ok := r != utf8.RuneError
		if ok && fold {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				if r >= utf8.RuneSelf || f >= utf8.RuneSelf || otherCase(byte(r)) != byte(f) {
					ok = false
					break
				}
			}
		}
		if !ok {
			flush()
			continue
		}
		cur = utf8.AppendRune(cur, r)
	}
	flush()
	return out
}
