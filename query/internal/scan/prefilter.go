package scan

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// Prefilters, as in ripgrep: when every match of a regexp must contain one
// of a few literals (ERROR.*timeout needs "ERROR" and "timeout";
// ERROR|FATAL needs either), searching for them with the SIMD-backed finder
// skips the lines that cannot match far faster than the DFA reads them.

const maxSet = 8 // literals searched side by side at most

// litSet finds the leftmost occurrence of any of its literals.
type litSet struct {
	fs []*finder
}

// setState is a litSet's per-scan state.
type setState struct {
	st    [maxSet]findState
	next  [maxSet]int // next occurrence of fs[i] found so far, -1 for none
	valid [maxSet]bool
}

// index returns the start of the leftmost occurrence of a literal of the
// set at or after from, or -1. Calls for one hay need non-decreasing from.
func (ls *litSet) index(hay []byte, from int, st *setState) int {
	if len(ls.fs) == 1 {
		return ls.fs[0].index(hay, from, &st.st[0])
	}
	// Keep each literal's next occurrence and search again only for those
	// passed: k SIMD scans beat one scan that checks k literals per byte.
	best := -1
	for i, f := range ls.fs {
		if !st.valid[i] || st.next[i] >= 0 && st.next[i] < from {
			st.next[i], st.valid[i] = f.index(hay, from, &st.st[i]), true
		}
		if n := st.next[i]; n >= 0 && (best < 0 || n < best) {
			best = n
		}
	}
	return best
}

type reqLit struct {
	b    []byte
	fold bool // ASCII case-insensitive
}

// reqSet is a set of literals at least one of which occurs in every match.
type reqSet []reqLit

// score estimates how common a set's hits are in log text: the rank of the
// rarest byte of its commonest member (lower is rarer), and its shortest
// member's length. ok is false for sets that cannot serve.
func (rs reqSet) score() (rank, minLen int, ok bool) {
	if len(rs) == 0 || len(rs) > maxSet {
		return 0, 0, false
	}
	minLen = 1 << 30
	for _, l := range rs {
		if len(l.b) == 0 || bytes.IndexByte(l.b, '\n') >= 0 {
			return 0, 0, false
		}
		f := newFinder(l.b, l.fold)
		rank = max(rank, foldRank(f.b1, l.fold))
		minLen = min(minLen, len(l.b))
	}
	return rank, minLen, true
}

// better orders sets: rarer first, then longer, then smaller.
func (rs reqSet) better(o reqSet) bool {
	r1, l1, _ := rs.score()
	r2, l2, _ := o.score()
	if r1 != r2 {
		return r1 < r2
	}
	if l1 != l2 {
		return l1 > l2
	}
	return len(rs) < len(o)
}

// prefilters returns the literal sets that every match must hit and that
// are worth searching for, most promising first.
func prefilters(re *syntax.Regexp) []*litSet {
	var sets []reqSet
	for _, rs := range requiredSets(re, nil) {
		rank, minLen, ok := rs.score()
		// Literals made of bytes found everywhere in logs (a lone '.', ' ',
		// digits) would stop on nearly every line; the DFA is faster then.
		if !ok || minLen == 1 && rank > 200 || minLen == 2 && rank > 225 {
			continue
		}
		sets = append(sets, rs)
	}
	slices.SortStableFunc(sets, func(a, b reqSet) int {
		switch {
		case a.better(b):
			return -1
		case b.better(a):
			return 1
		}
		return 0
	})
	var out []*litSet
	for _, rs := range sets[:min(len(sets), 3)] {
		ls := &litSet{}
		for _, l := range rs {
			ls.fs = append(ls.fs, newFinder(l.b, l.fold))
		}
		out = append(out, ls)
	}
	return out
}

// requiredSets appends literal sets that every match of re hits.
func requiredSets(re *syntax.Regexp, out []reqSet) []reqSet {
	switch re.Op {
	case syntax.OpLiteral:
		for _, l := range literalPieces(re.Rune, re.Flags&syntax.FoldCase != 0, nil) {
			out = append(out, reqSet{l})
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredSets(re.Sub[0], out)
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredSets(re.Sub[0], out)
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			out = requiredSets(sub, out)
		}
	case syntax.OpAlternate:
		// A match goes through one branch: the union of one set per
		// branch is hit by every match.
		var union reqSet
		for _, sub := range re.Sub {
			var best reqSet
			for _, rs := range requiredSets(sub, nil) {
				if _, _, ok := rs.score(); ok && (best == nil || rs.better(best)) {
					best = rs
				}
			}
			if best == nil {
				return out
			}
			union = append(union, best...)
		}
		if len(union) <= maxSet {
			out = append(out, union)
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
