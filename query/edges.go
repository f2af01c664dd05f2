package query

import (
	"errors"
	"regexp/syntax"

	"github.com/logdex/logdex/query/lang"
)

// Patterns holding \< or \> are translated into Go expressions that may
// take a character of the line beside the match (lang.Regex.WordEdges):
// right for selecting lines, not for the extent of matches. Their extents
// (what grep -o prints, what --color marks) are found here instead, by a
// small matcher of the patterns' own trees, in which \< and \> are what
// grep makes of them: the start and the end of a word.

// Marks returns what grep --color marks in a line the query (without -w)
// selects: OnlyMatching's parts, the same leftmost-longest non-empty
// matches, \< and \> read as grep reads them, also where OnlyMatching
// refuses a pattern (a zero-width test repeated): where grep marks
// nothing, the matches of the lines' selection are marked.
func (q *Query) Marks() (func(dst [][2]int, line []byte) [][2]int, error) {
	return q.onlyParts()
}

// repeatedTest refuses, for -o, a pattern that repeats a zero-width test
// (^, $, \<, \>, \b or \B under *, +, ?, a count, or in a group under
// one: lang.Regex.RepeatsTest): there grep 3.8's -o contradicts its own
// line selection. '(\<a)+' prints nothing of the line "aaa-b" it selects,
// 'a\B*' nothing of "ab", 'x|a$?' only the "x" (the lines are selected
// alike, and -c and -n agree with grep), so no answer would be grep's.
func (q *Query) repeatedTest() error {
	return q.eachPattern(func(n lang.Node) error {
		if r, ok := n.(*lang.Regex); ok && r.RepeatsTest {
			return errors.New(`unsupported: an anchor or word test (^, $, \<, \>, \b, \B) repeated (under *, +, ? or a count) with -o, where grep's -o contradicts its own choice of lines`)
		}
		return nil
	})
}

// edgeParts is OnlyMatching for a query whose patterns include one with
// \< or \>: a Pike VM over the program of all the patterns, matching the
// line byte by byte (each byte the rune of its value, as grep in the C
// locale reads it), leftmost-longest as grep.
func (q *Query) edgeParts() (func(dst [][2]int, line []byte) [][2]int, error) {
	prog, err := q.edgeProg()
	if err != nil {
		return nil, err
	}
	return progMatches(prog), nil
}

// edgeProg is the program of all the query's patterns, \< and \> written
// as OpBeginLine and OpEndLine (lang.Regex.EdgeTree).
func (q *Query) edgeProg() (*syntax.Prog, error) {
	var subs []*syntax.Regexp
	err := q.eachPattern(func(n lang.Node) error {
		var re *syntax.Regexp
		switch n := n.(type) {
		case *lang.Literal:
			e, _ := n.GoExpr()
			var err error
			if re, err = syntax.Parse(e, syntax.Perl); err != nil {
				return err
			}
		case *lang.Regex:
			re = n.Tree
			if n.WordEdges() {
				var err error
				if re, err = n.EdgeTree(); err != nil {
					return err
				}
			}
		}
		subs = append(subs, re)
		return nil
	})
	if err != nil {
		return nil, err
	}
	re := subs[0]
	if len(subs) > 1 {
		re = &syntax.Regexp{Op: syntax.OpAlternate, Sub: subs}
	}
	return syntax.Compile(re.Simplify())
}

// edgeMatches gives the non-empty leftmost-longest matches of re in a
// line, as grep -o prints them, with \< and \> written as OpBeginLine and
// OpEndLine (lang.Regex.EdgeTree) and read as grep reads them.
func edgeMatches(re *syntax.Regexp) (func(dst [][2]int, line []byte) [][2]int, error) {
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, err
	}
	return progMatches(prog), nil
}

// progMatches is edgeMatches of a compiled program.
func progMatches(prog *syntax.Prog) func(dst [][2]int, line []byte) [][2]int {
	return func(dst [][2]int, line []byte) [][2]int {
		m := &edgeVM{prog: prog, line: line}
		// grep's loop (print_line_middle): the leftmost-longest match
		// starting at cur or later, the line before cur in view; an
		// empty one is not printed, and the next search starts a byte
		// further.
		for cur := 0; cur < len(line); {
			s, e := m.find(cur)
			if s < 0 || s == len(line) {
				break
			}
			if e == s {
				cur = s + 1
				continue
			}
			dst = append(dst, [2]int{s, e})
			cur = e
		}
		return dst
	}
}

// edgeWords is WordMatches for a query whose patterns include one with \<
// or \>: at each start after a non-word byte (or the line's start), the
// ends of the matches starting there, by the matcher of edgeParts; the
// longest that a non-word byte (or the line's end) follows is the part,
// and the search goes on after it.
func (q *Query) edgeWords() (func(dst [][2]int, line []byte) [][2]int, error) {
	prog, err := q.edgeProg()
	if err != nil {
		return nil, err
	}
	return func(dst [][2]int, line []byte) [][2]int {
		m := &edgeVM{prog: prog, line: line}
		var ends []int
		for s := 0; s < len(line); s++ {
			if s > 0 && wordByte[line[s-1]] {
				continue
			}
			ends = m.ends(s, ends[:0])
			for i := len(ends) - 1; i >= 0; i-- {
				if e := ends[i]; e > s && (e == len(line) || !wordByte[line[e]]) {
					dst = append(dst, [2]int{s, e})
					s = e - 1 // (the next start is past the part)
					break
				}
			}
		}
		return dst
	}, nil
}

// hasWordEdges reports whether a pattern of q holds \< or \>.
func (q *Query) hasWordEdges() bool {
	var walk func(n lang.Node) bool
	walk = func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.Or:
			for _, k := range n.Kids {
				if walk(k) {
					return true
				}
			}
		case *lang.Not:
			return walk(n.Kid)
		case *lang.Regex:
			return n.WordEdges()
		}
		return false
	}
	return walk(q.root)
}

// edgeVM runs a program on one line. Threads carry the position their
// match started at; a state is held by one thread a step, the one of the
// earliest start (threads are kept in order of start), which is all
// leftmost-longest needs.
type edgeVM struct {
	prog         *syntax.Prog
	line         []byte
	clist, nlist edgeQueue
	stack        []uint32
}

type edgeThread struct {
	pc    uint32
	start int
}

// edgeQueue is a sparse set of states, in order of insertion.
type edgeQueue struct {
	sparse []uint32
	dense  []edgeThread
}

func (q *edgeQueue) init(n int) {
	if q.sparse == nil {
		q.sparse = make([]uint32, n)
	}
	q.dense = q.dense[:0]
}

func (q *edgeQueue) has(pc uint32) bool {
	i := q.sparse[pc]
	return int(i) < len(q.dense) && q.dense[i].pc == pc
}

// find returns the leftmost-longest match starting at cur or later
// ([s, e), s < 0: none).
func (m *edgeVM) find(cur int) (s, e int) {
	n := len(m.prog.Inst)
	m.clist.init(n)
	m.nlist.init(n)
	s, e = -1, -1
	for pos := cur; ; pos++ {
		if s < 0 {
			m.add(&m.clist, uint32(m.prog.Start), pos, pos)
		}
		if len(m.clist.dense) == 0 {
			break
		}
		r := rune(-1)
		if pos < len(m.line) {
			r = rune(m.line[pos])
		}
		m.nlist.dense = m.nlist.dense[:0]
		for _, t := range m.clist.dense {
			if s >= 0 && t.start > s {
				break // (in order of start: a match starts no later)
			}
			inst := &m.prog.Inst[t.pc]
			if inst.Op == syntax.InstMatch {
				s, e = t.start, pos // (the earliest start to match; later, longer)
				continue
			}
			if reads(inst, r) {
				m.add(&m.nlist, inst.Out, pos+1, t.start)
			}
		}
		if pos >= len(m.line) {
			break
		}
		m.clist, m.nlist = m.nlist, m.clist
	}
	return s, e
}

// ends appends to dst, in order, the ends of the matches that start at s
// (the line before s in view).
func (m *edgeVM) ends(s int, dst []int) []int {
	n := len(m.prog.Inst)
	m.clist.init(n)
	m.nlist.init(n)
	m.add(&m.clist, uint32(m.prog.Start), s, s)
	for pos := s; len(m.clist.dense) > 0; pos++ {
		r := rune(-1)
		if pos < len(m.line) {
			r = rune(m.line[pos])
		}
		m.nlist.dense = m.nlist.dense[:0]
		for _, t := range m.clist.dense {
			inst := &m.prog.Inst[t.pc]
			if inst.Op == syntax.InstMatch {
				if len(dst) == 0 || dst[len(dst)-1] != pos {
					dst = append(dst, pos)
				}
				continue
			}
			if reads(inst, r) {
				m.add(&m.nlist, inst.Out, pos+1, s)
			}
		}
		if pos >= len(m.line) {
			break
		}
		m.clist, m.nlist = m.nlist, m.clist
	}
	return dst
}

// reads reports whether inst reads r (-1: the line's end, which none
// reads).
func reads(inst *syntax.Inst, r rune) bool {
	switch inst.Op {
	case syntax.InstRune:
		return r >= 0 && inst.MatchRune(r)
	case syntax.InstRune1:
		return r >= 0 && r == inst.Rune[0]
	case syntax.InstRuneAny:
		return r >= 0
	case syntax.InstRuneAnyNotNL:
		return r >= 0 && r != '\n'
	}
	return false
}

// add puts pc and the states it reaches without reading a byte at pos
// into q, for a match started at start.
func (m *edgeVM) add(q *edgeQueue, pc uint32, pos, start int) {
	m.stack = append(m.stack[:0], pc)
	for len(m.stack) > 0 {
		pc := m.stack[len(m.stack)-1]
		m.stack = m.stack[:len(m.stack)-1]
		if q.has(pc) {
			continue
		}
		q.sparse[pc] = uint32(len(q.dense))
		q.dense = append(q.dense, edgeThread{pc, start})
		inst := &m.prog.Inst[pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			m.stack = append(m.stack, inst.Arg, inst.Out)
		case syntax.InstNop, syntax.InstCapture:
			m.stack = append(m.stack, inst.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(inst.Arg)&^m.empty(pos) == 0 {
				m.stack = append(m.stack, inst.Out)
			}
		}
	}
}

// empty is what holds at pos of the line: its start and end, \b or \B
// (grep's words: ASCII letters, digits and '_'), and in the places of
// (?m)^ and (?m)$, \< and \> (TranslateEdges).
func (m *edgeVM) empty(pos int) syntax.EmptyOp {
	var f syntax.EmptyOp
	before := pos > 0 && wordByte[m.line[pos-1]]
	after := pos < len(m.line) && wordByte[m.line[pos]]
	if pos == 0 {
		f |= syntax.EmptyBeginText
	}
	if pos == len(m.line) {
		f |= syntax.EmptyEndText
	}
	if before != after {
		f |= syntax.EmptyWordBoundary
	} else {
		f |= syntax.EmptyNoWordBoundary
	}
	if !before && after {
		f |= syntax.EmptyBeginLine
	}
	if before && !after {
		f |= syntax.EmptyEndLine
	}
	return f
}
