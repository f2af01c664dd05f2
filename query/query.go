package query

import (
	"fmt"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/logdex/logdex/query/internal/relit"
	"github.com/logdex/logdex/query/internal/scan"
	"github.com/logdex/logdex/query/lang"
)

// Query is a compiled query, reusable and safe for concurrent use.
type Query struct {
	root lang.Node
	mode lang.Mode
	m    matcher
	// single is set when the whole query is one literal or regex: scans
	// then run its fast buffer matcher instead of line-by-line evaluation.
	single scan.Matcher
	// What planning needs of the query's literals and regexes, worked out
	// once here rather than once per segment of every search.
	reqs  map[*lang.Regex]*relit.Req
	atoms map[litKey][]atom
	// warnings are grep's warnings about the patterns, for the caller to
	// print as grep does.
	warnings []lang.Warning
	// readBytes and verifyBatch are the bytes a scan reads, and the
	// candidate lines verified, before the first look at the search's
	// context: fewer for a costly regex, which a deadline must be able to
	// stop within a second, not after minutes (effort, pace).
	readBytes   int
	verifyBatch int
}

// litKey names a literal as the planner looks it up.
type litKey struct {
	text        string
	unicodeFold bool
}

// Compile parses and compiles patterns (several: any of them matches).
// Each regex is translated and compiled here, once for every search.
func Compile(patterns []string, mode lang.Mode, fold bool) (*Query, error) {
	return CompileGrep(patterns, mode, fold, GrepFlags{})
}

// GrepFlags are grep's flags that change which lines a pattern selects.
type GrepFlags struct {
	Invert bool // -v: the lines that do not match
	Words  bool // -w: matches that form whole words
	Lines  bool // -x: matches that are whole lines
}

// CompileGrep compiles patterns as Compile does, with grep's -v, -w and
// -x (the last two for -F, -E and -G patterns; -x wins over -w, as in
// grep).
func CompileGrep(patterns []string, mode lang.Mode, fold bool, g GrepFlags) (*Query, error) {
	root, warnings, err := lang.ParseWarn(patterns, mode, fold)
	if err != nil {
		return nil, err
	}
	if g.Words || g.Lines {
		if root, err = lang.Whole(root, !g.Lines); err != nil {
			return nil, lang.LocateWhole(err, patterns, mode, fold, !g.Lines)
		}
	}
	if g.Invert {
		root = &lang.Not{Kid: root}
	}
	q, err := CompileNode(root, mode)
	if err != nil {
		return nil, err
	}
	q.warnings = warnings
	return q, nil
}

// CompileNode compiles an already parsed tree.
func CompileNode(root lang.Node, mode lang.Mode) (*Query, error) {
	m, err := compileMatcher(root)
	if err != nil {
		return nil, err
	}
	q := &Query{root: root, mode: mode, m: m, reqs: map[*lang.Regex]*relit.Req{}, atoms: map[litKey][]atom{}}
	q.readBytes, q.verifyBatch = effort(matcherInsts(m))
	if sm, ok := m.(scanM); ok {
		q.single = sm.m
	}
	if err := q.prepare(root); err != nil {
		return nil, err
	}
	return q, nil
}

// Node is the parsed query.
func (q *Query) Node() lang.Node { return q.root }

// Warnings are the warnings grep prints for the patterns (Compile's).
func (q *Query) Warnings() []lang.Warning { return q.warnings }

// Mode is the mode the query was parsed in.
func (q *Query) Mode() lang.Mode { return q.mode }

func (q *Query) String() string { return q.root.String() }

// prepare analyses every literal and regex of the tree for planning.
func (q *Query) prepare(n lang.Node) error {
	switch n := n.(type) {
	case *lang.And:
		for _, k := range n.Kids {
			if err := q.prepare(k); err != nil {
				return err
			}
		}
	case *lang.Or:
		for _, k := range n.Kids {
			if err := q.prepare(k); err != nil {
				return err
			}
		}
	case *lang.Not:
		return q.prepare(n.Kid)
	case *lang.Literal:
		q.addAtoms(n.Text, false)
	case *lang.Regex:
		if n.Tree == nil {
			return fmt.Errorf("query: regex %q built without lang.NewRegex", n.Expr)
		}
		r := relit.Analyze(n.Tree)
		if n.Bytewise {
			r = narrowBytes(r) // what the line must hold as grep reads it: bytes
		}
		q.reqs[n] = r
		q.addReqAtoms(r)
	}
	return nil
}

// narrowBytes turns the requirements of a widened pattern (its runes the
// bytes of the pattern, U+0000..U+00FF) back into bytes. A literal that
// is not bytes that way (a rune of a case folding's), or that relit folds
// and holds a non-ASCII rune (grep folds ASCII letters only, relit whole
// orbits, which are other bytes here), requires nothing: the matcher
// decides.
func narrowBytes(r *relit.Req) *relit.Req {
	switch r.Op {
	case relit.OpLit:
		b := make([]byte, 0, len(r.Lit))
		for _, c := range r.Lit {
			if c > 0xFF || r.Fold && c >= utf8.RuneSelf {
				return &relit.Req{Op: relit.OpAll}
			}
			b = append(b, byte(c))
		}
		return &relit.Req{Op: relit.OpLit, Lit: string(b), Fold: r.Fold}
	case relit.OpAnd, relit.OpOr:
		out := &relit.Req{Op: r.Op}
		for _, k := range r.Sub {
			out.Sub = append(out.Sub, narrowBytes(k))
		}
		return out
	}
	return r
}

func (q *Query) addReqAtoms(r *relit.Req) {
	if r.Op == relit.OpLit {
		q.addAtoms([]byte(r.Lit), r.Fold)
	}
	for _, k := range r.Sub {
		q.addReqAtoms(k)
	}
}

func (q *Query) addAtoms(p []byte, unicodeFold bool) {
	k := litKey{string(p), unicodeFold}
	if _, ok := q.atoms[k]; !ok {
		q.atoms[k] = literalAtoms(p, unicodeFold)
	}
}

// literalAtoms returns the prepared atoms of a literal.
func (q *Query) literalAtoms(p []byte, unicodeFold bool) []atom {
	if a, ok := q.atoms[litKey{string(p), unicodeFold}]; ok {
		return a
	}
	return literalAtoms(p, unicodeFold)
}

// MatchLine evaluates the query on one line (without its '\n').
func (q *Query) MatchLine(line []byte) bool {
	var ls lineState
	ls.reset(line)
	return q.m.match(&ls)
}

// Highlights returns the merged byte ranges of line that the query's
// positive atoms match.
func (q *Query) Highlights(line []byte) [][2]int {
	return q.AppendHighlights(nil, line)
}

// AppendHighlights is Highlights appending to dst (whose ranges it leaves
// alone): a server renders many hits per request without allocating.
func (q *Query) AppendHighlights(dst [][2]int, line []byte) [][2]int {
	ls := lineStates.Get().(*lineState)
	ls.reset(line)
	n := len(dst)
	dst = q.m.highlight(ls, dst)
	ls.reset(nil)
	lineStates.Put(ls)
	merged := mergeRanges(dst[n:])
	return dst[:n+len(merged)]
}

// lineStates recycles tokenization buffers between Highlights calls.
var lineStates = sync.Pool{New: func() any { return new(lineState) }}

// Between two looks at the context, a search reads at most maxReadBytes
// (its read buffer) and verifies at most maxVerifyBatch candidates. A
// regex program of more than cheapInsts instructions starts with
// costlyReadBytes and costlyVerifyBatch instead; then each read or batch
// that took longer than lookEvery halves the next, each that took under
// an eighth of it doubles the next (pace). What a byte costs grows
// faster than the program: the automaton's states outgrow its cache. A
// program of 60,000 instructions (nested counts:
// "(.{1,1000}){1,30}[0-9]{5}") matched about 100 KB a second, some
// 10,000 times slower than a literal; one of 200,000 made a search under
// a 30 s deadline go on for 54 s, its context looked at once per 256 KiB.
const (
	maxReadBytes      = scanBuf
	maxVerifyBatch    = 512
	cheapInsts        = 256
	costlyReadBytes   = minReadBytes
	costlyVerifyBatch = 1
	minReadBytes      = 256
	lookEvery         = 20 * time.Millisecond
)

// effort is the bytes read and the candidates verified before the first
// look at the context, for a query whose regex programs hold insts
// instructions.
func effort(insts int) (readBytes, verifyBatch int) {
	if insts <= cheapInsts {
		return maxReadBytes, maxVerifyBatch
	}
	return costlyReadBytes, costlyVerifyBatch
}

// costly reports whether q's reads and batches are paced (effort): only a
// costly regex's are, whose time goes to matching. Others keep their
// sizes: a cold disk's slow read would otherwise shrink the reads and
// batches that coalesce I/O.
func (q *Query) costly() bool { return q.readBytes < maxReadBytes }

// pace sizes the work between two looks at the context: n, within [lo,
// hi], after a piece of work that took d.
func pace(n, lo, hi int, d time.Duration) int {
	switch {
	case d > lookEvery:
		return max(lo, n/2)
	case d < lookEvery/8:
		return min(hi, n*2)
	}
	return n
}

// matcherInsts is the instructions of the regex programs of m's tree.
func matcherInsts(m matcher) int {
	n := 0
	switch m := m.(type) {
	case andM:
		for _, k := range m {
			n += matcherInsts(k)
		}
	case orM:
		for _, k := range m {
			n += matcherInsts(k)
		}
	case notM:
		n = matcherInsts(m.m)
	case scanM:
		n = scan.Insts(m.m)
	}
	return n
}
