package query

import (
	"bytes"
	"errors"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/logdex/logdex/query/internal/scan"
	"github.com/logdex/logdex/query/lang"
)

// OnlyMatching returns what grep -o prints of a matching line: the
// non-empty, non-overlapping, leftmost-longest matches of the query's
// patterns (over all of them at once), as [start, end) byte ranges
// appended to dst. Lines holding a byte >= 0x80 are matched byte-wise,
// widened, as grep in the C locale reads them. Only -F, -E, -G and
// --re2 patterns have such matches.
func (q *Query) OnlyMatching() (func(dst [][2]int, line []byte) [][2]int, error) {
	if err := q.repeatedTest(); err != nil {
		return nil, err
	}
	return q.onlyParts()
}

// onlyParts is OnlyMatching without the refusal of repeated tests.
func (q *Query) onlyParts() (func(dst [][2]int, line []byte) [][2]int, error) {
	if ls := q.literalSet(true); ls != nil {
		return ls.parts(false), nil
	}
	if q.hasWordEdges() {
		return q.edgeParts()
	}
	return q.onlyRegexp()
}

// onlyRegexp is OnlyMatching by one Go regexp of all the patterns.
func (q *Query) onlyRegexp() (func(dst [][2]int, line []byte) [][2]int, error) {
	exprs, err := q.onlyExprs()
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile("(?:" + strings.Join(exprs, ")|(?:") + ")")
	if err != nil {
		return nil, err
	}
	re.Longest() // POSIX's leftmost-longest, as grep
	return longestMatches(re, q.mode != lang.ModeRE2), nil
}

// WordMatches returns what grep -ow prints of a line (and -w marks with
// --color): the non-empty, non-overlapping matches of the query's
// patterns (built without -w) that form whole words, each the longest at
// the leftmost start where one does, which is where grep's retries of
// shorter matches and later starts end up.
func (q *Query) WordMatches() (func(dst [][2]int, line []byte) [][2]int, error) {
	if ls := q.literalSet(false); ls != nil {
		return ls.parts(true), nil
	}
	if err := q.repeatedTest(); err != nil {
		return nil, err // (as for -o: grep's -o reads them apart)
	}
	if q.hasWordEdges() {
		return q.edgeWords()
	}
	return q.wordsRegexp()
}

// wordsRegexp is WordMatches by Go regexps of all the patterns.
func (q *Query) wordsRegexp() (func(dst [][2]int, line []byte) [][2]int, error) {
	exprs, err := q.onlyExprs()
	if err != nil {
		return nil, err
	}
	nonWord := lang.NonWord
	inner := "((?:" + strings.Join(exprs, ")|(?:") + "))"
	// At the line's start, or after a non-word byte; the first search
	// starts at the line's start, later ones at the byte before the
	// previous match's end, whose word test that byte needs. A match at
	// the line's start is looked for first: the one after a leading
	// non-word byte starts as far left in the whole expression. Each
	// search has a twin ending at the line's end: a match whose inner part
	// ends one byte before it, that byte taken as the non-word after it,
	// is as long as one whose inner part takes that byte too, and Go may
	// return either.
	var res [6]*regexp.Regexp
	for i, start := range []string{`^`, `(?:^|` + nonWord + `)`, nonWord} {
		for k, end := range []string{`(?:` + nonWord + `|$)`, `$`} {
			re, err := regexp.Compile(start + inner + end)
			if err != nil {
				return nil, err
			}
			re.Longest()
			res[2*i+k] = re
		}
	}
	find := func(i int, text []byte) []int {
		m := res[2*i].FindSubmatchIndex(text)
		if m != nil && m[1] > m[3] && m[1] == len(text) { // (a widened line's last character may be 2 bytes)
			if m2 := res[2*i+1].FindSubmatchIndex(text); m2 != nil && m2[2] == m[2] {
				return m2
			}
		}
		return m
	}
	return widening(q.mode != lang.ModeRE2, func(dst [][2]int, text []byte, at []int) [][2]int {
		for pos := 0; pos <= len(text); {
			var m []int
			if pos == 0 {
				if m = find(0, text); m == nil || m[3] == m[2] {
					m = find(1, text)
				}
			} else if m = find(2, text[pos-1:]); m != nil {
				m[2], m[3] = m[2]+pos-1, m[3]+pos-1
			}
			if m == nil {
				break
			}
			if m[3] > m[2] {
				dst = appendPart(dst, m[2], m[3], at)
				pos = m[3]
			} else {
				pos = m[2] + 1
			}
		}
		return dst
	}), nil
}

// onlyExprs are the Go expressions of the query's patterns, for -o and
// --color.
func (q *Query) onlyExprs() ([]string, error) {
	var exprs []string
	err := q.eachPattern(func(n lang.Node) error {
		switch n := n.(type) {
		case *lang.Literal:
			e, _ := n.GoExpr()
			exprs = append(exprs, e)
		case *lang.Regex:
			if n.WordEdges() {
				return errors.New(`unsupported: \< or \> here`) // (edgeParts and edgeWords take them)
			}
			exprs = append(exprs, n.Go)
		}
		return nil
	})
	return exprs, err
}

// eachPattern calls fn with each pattern of a query of grep's modes (a
// literal or a regex, under an OR of them, or the root -v of one); any
// other query is errOnlyQuery.
func (q *Query) eachPattern(fn func(n lang.Node) error) error {
	var walk func(n lang.Node) error
	walk = func(n lang.Node) error {
		switch n := n.(type) {
		case *lang.Or:
			for _, k := range n.Kids {
				if err := walk(k); err != nil {
					return err
				}
			}
			return nil
		case *lang.Not:
			if n == q.root {
				return walk(n.Kid) // grep -ov: the parts its other lines match
			}
		case *lang.Literal, *lang.Regex:
			return fn(n)
		}
		return errOnlyQuery
	}
	return walk(q.root)
}

// widening runs find on a line as grep in the C locale reads it, when
// bytewise: a line holding a byte >= 0x80 widened (an ASCII pattern that
// cannot match such a byte matches the same there), with at mapping its
// offsets back to the line's; not in --re2, Go's own syntax, which reads
// UTF-8.
func widening(bytewise bool, find func(dst [][2]int, text []byte, at []int) [][2]int) func(dst [][2]int, line []byte) [][2]int {
	return func(dst [][2]int, line []byte) [][2]int {
		if bytewise && !scan.IsASCII(line) {
			text, at := scan.WidenMap(line)
			return find(dst, text, at)
		}
		return find(dst, line, nil)
	}
}

// appendPart appends [a, b) of a line, mapped back through at when the
// line was widened.
func appendPart(dst [][2]int, a, b int, at []int) [][2]int {
	if at != nil {
		a, b = at[a], at[b]
	}
	return append(dst, [2]int{a, b})
}

var errOnlyQuery = errors.New("-o prints the parts of lines that -F, -E or -G patterns match, not the query language's")

// literalSet is the query's patterns when all are -F literals (nil
// otherwise): their parts are found by comparing bytes, where one Go
// regexp alternating a thousand literals (grep -oF -f ids.txt) took 14 ms
// a line. With regexes, grep regexes that match a few plain strings
// (-E 'timeout|refused', finiteLiterals) count as those literals.
func (q *Query) literalSet(regexes bool) *literalSet {
	ls := &literalSet{}
	var walk func(n lang.Node) bool
	walk = func(n lang.Node) bool {
		switch n := n.(type) {
		case *lang.Regex:
			if !regexes || n.Syntax == lang.SyntaxRE2 || n.WordEdges() {
				return false
			}
			lits, fold, ok := finiteLiterals(n.Tree)
			if !ok || ls.n > 0 && fold != ls.fold {
				return false
			}
			ls.fold = fold
			for _, lit := range lits {
				ls.add(lit)
			}
			return true
		case *lang.Or:
			for _, k := range n.Kids {
				if !walk(k) {
					return false
				}
			}
			return true
		case *lang.Not:
			return n == q.root && walk(n.Kid)
		case *lang.Literal:
			if ls.n > 0 && n.Fold != ls.fold {
				return false // (one folding for all: mixed sets go to the regexp)
			}
			ls.fold = n.Fold
			lit := bytes.Clone(n.Text)
			if n.Fold {
				for i, c := range lit {
					lit[i] = lower(c) // ASCII only: the C locale's folding
				}
			}
			ls.add(lit)
			return true
		}
		return false
	}
	if !walk(q.root) {
		return nil
	}
	ls.longestFirst()
	return ls
}

// newLiteralSet is the literal set of lits (lower-case when fold).
func newLiteralSet(lits [][]byte, fold bool) *literalSet {
	ls := &literalSet{fold: fold}
	for _, lit := range lits {
		ls.add(lit)
	}
	ls.longestFirst()
	return ls
}

// longestFirst orders each first byte's literals longest first, as
// longestAt wants them, once all are added.
func (ls *literalSet) longestFirst() {
	for _, lits := range ls.byFirst {
		slices.SortStableFunc(lits, func(a, b []byte) int { return len(b) - len(a) })
	}
}

// literalSet finds -F literals in a line, bytes compared (ASCII letters
// folded with fold, the literals then lower-case), grouped by first byte.
type literalSet struct {
	byFirst [256][][]byte
	fold    bool
	n       int // literals seen
}

// add adds a literal (lower-case when ls.fold).
func (ls *literalSet) add(lit []byte) {
	ls.n++
	if len(lit) > 0 { // (an empty one's matches are empty: never printed)
		ls.byFirst[lit[0]] = append(ls.byFirst[lit[0]], lit)
	}
}

// maxFiniteLiterals bounds the strings finiteLiterals spells out.
const maxFiniteLiterals = 256

// finiteLiterals is the strings a grep regex's tree (as translated)
// matches, when it is an alternation of plain ASCII strings, as
// 'timeout|refused' (parsed "timeout|re(?:fused|set)") or, with -i,
// "[Tt][Ii]..." (parsed as case-folded literals): at most
// maxFiniteLiterals of them. fold: their letters are matched in either
// case (then lower-case here); ok is false for any other tree, or one
// folding some letters and not others.
func finiteLiterals(re *syntax.Regexp) (lits [][]byte, fold, ok bool) {
	lits, kinds, ok := spellLiterals(re, false)
	if ok && kinds == letterFolded|letterPlain {
		// Both kinds ("S\\.|K|k"): spelt again, every letter plain.
		lits, kinds, ok = spellLiterals(re, true)
	}
	if !ok || kinds == letterFolded|letterPlain {
		return nil, false, false
	}
	return lits, kinds == letterFolded, true
}

// Letter kinds spellLiterals reports.
const (
	letterFolded = 1 << iota // matched in either case
	letterPlain              // matched as written
)

// spellLiterals is finiteLiterals' walk: the strings, and the kinds of
// letters met. A letter in both cases ([Kk], a folded literal) counts as
// folded, or with allPlain as its two cases, spelt out.
func spellLiterals(re *syntax.Regexp, allPlain bool) (lits [][]byte, kinds int, ok bool) {
	letter := func(c rune) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
	product := func(parts [][][]byte) ([][]byte, bool) {
		out := [][]byte{nil}
		for _, s := range parts {
			if len(out)*len(s) > maxFiniteLiterals {
				return nil, false
			}
			next := make([][]byte, 0, len(out)*len(s))
			for _, a := range out {
				for _, b := range s {
					next = append(next, append(slices.Clip(a), b...))
				}
			}
			out = next
		}
		return out, true
	}
	// bothCases is the strings of a letter in either case.
	bothCases := func(c byte) [][]byte {
		if allPlain {
			kinds |= letterPlain
			return [][]byte{{lower(c)}, {upper(c)}}
		}
		kinds |= letterFolded
		return [][]byte{{lower(c)}}
	}
	var spell func(re *syntax.Regexp) ([][]byte, bool)
	spell = func(re *syntax.Regexp) ([][]byte, bool) {
		switch re.Op {
		case syntax.OpEmptyMatch:
			return [][]byte{nil}, true
		case syntax.OpLiteral:
			parts := make([][][]byte, 0, len(re.Rune))
			for _, c := range re.Rune {
				switch {
				case c >= utf8.RuneSelf:
					return nil, false
				case letter(c) && re.Flags&syntax.FoldCase != 0:
					parts = append(parts, bothCases(byte(c)))
				default:
					if letter(c) {
						kinds |= letterPlain
					}
					parts = append(parts, [][]byte{{byte(c)}})
				}
			}
			return product(parts)
		case syntax.OpCharClass:
			// A few ASCII characters ((k|-) is parsed as [\-k]; -i
			// writes [Kk], which Go keeps a class, K folding to the
			// Kelvin sign too, and s|k as [KSks]).
			r := re.Rune
			var in [utf8.RuneSelf]bool
			n := 0
			for i := 0; i < len(r); i += 2 {
				if r[i+1] >= utf8.RuneSelf || n+int(r[i+1]-r[i]) >= 16 {
					return nil, false
				}
				for c := r[i]; c <= r[i+1]; c++ {
					in[c], n = true, n+1
				}
			}
			var out [][]byte
			for c := range byte(utf8.RuneSelf) {
				switch {
				case !in[c]:
				case !letter(rune(c)):
					out = append(out, []byte{c})
				case in[lower(c)] && in[upper(c)]:
					if c == lower(c) {
						out = append(out, bothCases(c)...)
					}
				default:
					kinds |= letterPlain
					out = append(out, []byte{c})
				}
			}
			return out, true
		case syntax.OpCapture:
			return spell(re.Sub[0])
		case syntax.OpAlternate:
			var out [][]byte
			for _, sub := range re.Sub {
				s, ok := spell(sub)
				if !ok || len(out)+len(s) > maxFiniteLiterals {
					return nil, false
				}
				out = append(out, s...)
			}
			return out, true
		case syntax.OpConcat:
			parts := make([][][]byte, 0, len(re.Sub))
			for _, sub := range re.Sub {
				s, ok := spell(sub)
				if !ok {
					return nil, false
				}
				parts = append(parts, s)
			}
			return product(parts)
		}
		return nil, false
	}
	lits, ok = spell(re)
	return lits, kinds, ok
}

// parts returns what grep -o prints of a line: at each position from the
// left, the longest literal there, then on past it; with words, only
// literals that form whole words (-ow).
func (ls *literalSet) parts(words bool) func(dst [][2]int, line []byte) [][2]int {
	return func(dst [][2]int, line []byte) [][2]int {
		for i := 0; i < len(line); {
			n := 0
			if !words || i == 0 || !wordByte[line[i-1]] {
				n = ls.longestAt(line, i, words)
			}
			if n == 0 {
				i++
				continue
			}
			dst = append(dst, [2]int{i, i + n})
			i += n
		}
		return dst
	}
}

// longestAt is the length of the longest literal at line[i:] (0: none);
// with words, of those followed by the line's end or a non-word byte.
func (ls *literalSet) longestAt(line []byte, i int, words bool) int {
	c := line[i]
	if ls.fold {
		c = lower(c)
	}
	for _, lit := range ls.byFirst[c] {
		end := i + len(lit)
		if end > len(line) || words && end < len(line) && wordByte[line[end]] {
			continue
		}
		if ls.fold && equalFoldedASCII(line[i:end], lit) || !ls.fold && bytes.Equal(line[i:end], lit) {
			return len(lit)
		}
	}
	return 0
}
