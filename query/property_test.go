package query

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/logdex/logdex/fixtures/loghub"

	"github.com/logdex/logdex/fixtures/loggen"
	"github.com/logdex/logdex/mmapstore/token"
	"github.com/logdex/logdex/query/lang"
)

// refTokens is an independent statement of the token rule for the
// reference scanner: maximal runs of letters (\pL), decimal digits (\p{Nd})
// and '_', folded; invalid UTF-8 separates tokens. (A loop, not a regexp:
// under the race detector the regexp took 5 s of a property run.)
func refTokens(line []byte) []string {
	var out []string
	var cur []byte
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRune(line[i:])
		i += size
		if (r != utf8.RuneError || size > 1) && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			cur = utf8.AppendRune(cur, token.FoldRune(r))
			continue
		}
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	if len(cur) > 0 {
		out = append(out, string(cur))
	}
	return out
}

var refRegexps = map[string]*regexp.Regexp{}

// refEval is a straightforward evaluation of a tree on one line.
func refEval(n lang.Node, l *refLine) bool {
	line := l.text
	switch n := n.(type) {
	case *lang.And:
		for _, k := range n.Kids {
			if !refEval(k, l) {
				return false
			}
		}
		return true
	case *lang.Or:
		for _, k := range n.Kids {
			if refEval(k, l) {
				return true
			}
		}
		return false
	case *lang.Not:
		return !refEval(n.Kid, l)
	case *lang.Term:
		for _, t := range l.tokens() {
			if t == n.Text {
				return true
			}
		}
		return false
	case *lang.Prefix:
		for _, t := range l.tokens() {
			if strings.HasPrefix(t, n.Text) {
				return true
			}
		}
		return false
	case *lang.Phrase:
		toks := l.tokens()
	outer:
		for i := 0; i+len(n.Terms) <= len(toks); i++ {
			for k, w := range n.Terms {
				if n.LastPrefix && k == len(n.Terms)-1 {
					if !strings.HasPrefix(toks[i+k], w) {
						continue outer
					}
				} else if toks[i+k] != w {
					continue outer
				}
			}
			return true
		}
		return false
	case *lang.Literal:
		if n.Fold {
			return bytes.Contains(l.lower(), asciiLower(n.Text))
		}
		return bytes.Contains(line, n.Text)
	case *lang.Regex:
		if n.Syntax != lang.SyntaxRE2 {
			panic("refEval: RE2 regexes only") // grep is the reference for the others
		}
		expr := n.Expr
		if n.Fold {
			expr = "(?i)" + expr
		}
		re, ok := refRegexps[expr]
		if !ok {
			re = regexp.MustCompile(expr)
			refRegexps[expr] = re
		}
		return re.Match(line)
	case *lang.All:
		return true
	}
	panic(fmt.Sprintf("refEval: %T", n))
}

func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}

// corpora lists the log trees the property tests run on: the committed
// fixtures, 4 MiB of generated logs and, when present, the real Loghub
// samples.
func corpora(t *testing.T, dir string) []string {
	var roots []string
	if fx := filepath.Join("..", "fixtures", "logs"); dirExists(fx) {
		roots = append(roots, fx)
	}
	gen := filepath.Join(dir, "generated")
	if _, err := loggen.Generate(gen, loggen.Options{TotalBytes: 4 << 20, Seed: int64(testSeed())}); err != nil {
		t.Fatal(err)
	}
	roots = append(roots, gen)
	roots = append(roots, jitteredLog(t, dir))
	if lh := loghub.Dir(); lh != "" {
		roots = append(roots, lh)
	} else {
		t.Logf("no Loghub samples (LOGDEX_CORPUS): property tests run without them")
	}
	return roots
}

// jitteredLog writes a log of several threads whose lines reach the file a
// little out of time order, as a busy multi-threaded service's do: its
// line groups overlap in time, so time ranges over it are filtered group
// by group rather than found by binary search (TestTimeRanges needs both).
func jitteredLog(t *testing.T, dir string) string {
	root := filepath.Join(dir, "jittered")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(testSeed(), 41))
	base := time.Date(2026, 10, 10, 9, 0, 0, 0, time.UTC)
	var b strings.Builder
	for i := range 3000 {
		ts := base.Add(time.Duration(i)*time.Second + time.Duration(r.IntN(180))*time.Second)
		status := [...]string{"ok", "failed", "retrying"}[r.IntN(3)]
		fmt.Fprintf(&b, "%s [worker-%d] job %d %s after %d ms\n", ts.Format("2006-01-02 15:04:05.000"), r.IntN(8), 10000+i, status, r.IntN(5000))
	}
	if err := os.WriteFile(filepath.Join(root, "workers.log"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// queryGen builds queries from the data itself.
type queryGen struct {
	r     *rand.Rand
	lines []refLine
}

func (g *queryGen) line() []byte {
	for {
		l := g.lines[g.r.IntN(len(g.lines))].text
		if len(l) > 0 {
			return l
		}
	}
}

func (g *queryGen) word() string {
	for {
		toks := token.Terms(g.line())
		if len(toks) > 0 {
			return toks[g.r.IntN(len(toks))]
		}
	}
}

func (g *queryGen) atom() lang.Node {
	switch g.r.IntN(6) {
	case 0, 1:
		return &lang.Term{Text: g.word()}
	case 2:
		w := g.word()
		n := 1 + g.r.IntN(len(w))
		return &lang.Prefix{Text: string([]rune(w)[:min(n, len([]rune(w)))])}
	case 3:
		for {
			toks := token.Terms(g.line())
			if len(toks) < 2 {
				continue
			}
			i := g.r.IntN(len(toks) - 1)
			k := 2 + g.r.IntN(min(3, len(toks)-i-1)+1-1)
			if i+k > len(toks) {
				k = len(toks) - i
			}
			return &lang.Phrase{Terms: toks[i : i+k], LastPrefix: g.r.IntN(4) == 0}
		}
	case 4:
		l := g.line()
		a := g.r.IntN(len(l))
		b := min(len(l), a+1+g.r.IntN(20))
		return &lang.Literal{Text: bytes.Clone(l[a:b]), Fold: g.r.IntN(2) == 0}
	default:
		n, _, err := lang.NewRegex(regexp.QuoteMeta(g.word())+`\W+\w`, lang.SyntaxRE2, true)
		if err != nil {
			panic(err)
		}
		return n
	}
}

func (g *queryGen) tree(depth int) lang.Node {
	if depth == 0 || g.r.IntN(3) == 0 {
		return g.atom()
	}
	switch g.r.IntN(3) {
	case 0:
		return &lang.And{Kids: []lang.Node{g.tree(depth - 1), g.tree(depth - 1)}}
	case 1:
		return &lang.Or{Kids: []lang.Node{g.tree(depth - 1), g.tree(depth - 1)}}
	default:
		return &lang.And{Kids: []lang.Node{g.tree(depth - 1), &lang.Not{Kid: g.tree(depth - 1)}}}
	}
}

// TestPropertyQueryLanguage: queries cut from the data give exactly the
// lines a straightforward scan with the same token rule gives.
func TestPropertyQueryLanguage(t *testing.T) {
	// Small segments so that files span several segments.
	_, lines, s := propertyCorpus(t, 256<<10)
	seed := testSeed()
	g := &queryGen{r: rand.New(rand.NewPCG(seed, 7)), lines: lines}
	n := cases(300, 40)
	for i := 0; i < n; i++ {
		node := g.tree(2)
		q, err := CompileNode(node, lang.ModeQuery)
		if err != nil {
			t.Fatalf("compile %v: %v", node, err)
		}
		got, _ := search(t, s, q, Options{})
		var want []gotLine
		for li := range lines {
			if refEval(node, &lines[li]) {
				l := lines[li]
				want = append(want, gotLine{l.path, l.no, string(l.text)})
			}
		}
		if err := diffLines(got, want); err != nil {
			t.Fatalf("seed %d query %d %v: %v", seed, i, node, err)
		}
		checkPaging(t, s, q, want, g.r)
	}
}

// checkPaging: with a limit and CountAll the first hits come with an exact
// total, without text the same lines come back, and paging with cursors
// returns every hit exactly once.
func checkPaging(t *testing.T, s *Searcher, q *Query, want []gotLine, r *rand.Rand) {
	t.Helper()
	// Selective queries run without the worker pipeline: it must agree.
	s.noInline = true
	piped, _ := search(t, s, q, Options{})
	s.noInline = false
	if err := diffLines(piped, want); err != nil {
		t.Fatalf("%v: through the worker pipeline: %v", q.root, err)
	}
	limit := 1 + r.IntN(50)
	got, st := search(t, s, q, Options{Limit: limit, CountAll: true})
	if st.Total != int64(len(want)) {
		t.Fatalf("%v: limit %d: total %d, want %d", q.root, limit, st.Total, len(want))
	}
	if err := diffLines(got, want[:min(limit, len(want))]); err != nil {
		t.Fatalf("%v: limit %d: %v", q.root, limit, err)
	}
	// A page whose count is bounded (the server's): the same page, a
	// total exact or a lower bound that says so, and a next page offered
	// whenever hits follow.
	budget := 1 + r.Int64N(64<<10)
	got, st = search(t, s, q, Options{Limit: limit, CountAll: true, TotalBudget: budget})
	if err := diffLines(got, want[:min(limit, len(want))]); err != nil {
		t.Fatalf("%v: limit %d, budget %d: %v", q.root, limit, budget, err)
	}
	if st.Total > int64(len(want)) || st.Total < int64(len(got)) || !st.TotalAtLeast && st.Total != int64(len(want)) ||
		len(want) > limit && !st.Truncated {
		t.Fatalf("%v: limit %d, budget %d: total %d (at least %t, more %t), want %d", q.root, limit, budget, st.Total, st.TotalAtLeast, st.Truncated, len(want))
	}
	var nums []gotLine
	if _, err := s.Search(t.Context(), q, Options{}, func(h *Hit) error {
		nums = append(nums, gotLine{h.File.Path, h.Line, ""})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(nums) != len(want) {
		t.Fatalf("%v: %d hits without text, want %d", q.root, len(nums), len(want))
	}
	// Pages plan a segment a window of lines at a time: small windows,
	// many a span, half the time.
	if r.IntN(2) == 0 {
		s.window = 1 + uint32(r.IntN(256))
		defer func() { s.window = 0 }()
		got, st = search(t, s, q, Options{Limit: limit, CountAll: true, TotalBudget: budget})
		if err := diffLines(got, want[:min(limit, len(want))]); err != nil {
			t.Fatalf("%v: limit %d, budget %d, windows of %d: %v", q.root, limit, budget, s.window, err)
		}
		if st.Total > int64(len(want)) || st.Total < int64(len(got)) || !st.TotalAtLeast && st.Total != int64(len(want)) ||
			len(want) > limit && !st.Truncated {
			t.Fatalf("%v: limit %d, budget %d, windows of %d: total %d (at least %t, more %t), want %d", q.root, limit, budget, s.window, st.Total, st.TotalAtLeast, st.Truncated, len(want))
		}
	}
	var paged []gotLine
	var after *Cursor
	const maxPages = 12
	for pages := 0; pages < maxPages; pages++ {
		page, _ := search(t, s, q, Options{Limit: limit, After: after})
		paged = append(paged, page...)
		if len(page) < limit {
			break
		}
		last := page[len(page)-1]
		after = &Cursor{Path: last.path, Line: last.no}
	}
	if err := diffLines(paged, want[:min(len(want), maxPages*limit)]); err != nil {
		t.Fatalf("%v: paging by %d: %v", q.root, limit, err)
	}
}

func diffLines(got, want []gotLine) error {
	for i := 0; i < min(len(got), len(want)); i++ {
		if got[i] != want[i] {
			return fmt.Errorf("line %d: got %s:%d:%q, want %s:%d:%q", i, got[i].path, got[i].no, got[i].text, want[i].path, want[i].no, want[i].text)
		}
	}
	if len(got) != len(want) {
		extra := ""
		if len(got) > len(want) {
			extra = fmt.Sprintf(" (first extra: %v)", got[len(want)])
		} else {
			extra = fmt.Sprintf(" (first missing: %v)", want[len(got)])
		}
		return fmt.Errorf("got %d lines, want %d%s", len(got), len(want), extra)
	}
	return nil
}
