package query

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/query/lang"
)

// writeLines writes n lines, line(i) each, to root/name.
func writeLines(t *testing.T, root, name string, n int, line func(i int) string) {
	t.Helper()
	var b strings.Builder
	for i := range n {
		b.WriteString(line(i))
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(root, name), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWindowedPageCounts: a page planned a window of lines at a time ends
// as one planned whole: no next page offered when no hit follows, and
// exact candidates past a spent budget still counted (they cost no read).
func TestWindowedPageCounts(t *testing.T) {
	rootA, rootB := t.TempDir(), t.TempDir()
	writeLines(t, rootA, "a.log", 300, func(i int) string {
		switch {
		case i < 5:
			return fmt.Sprintf("line %d needle here", i)
		case i%10 == 0:
			return fmt.Sprintf("line %d needle is not there", i)
		case i%10 == 1:
			return fmt.Sprintf("line %d here is no pin", i)
		}
		return fmt.Sprintf("line %d other stuff", i)
	})
	writeLines(t, rootB, "b.log", 300, func(i int) string {
		switch {
		case i == 0:
			return "777 first"
		case i == 1: // unindexed (too long): reading it spends the budget
			return "777 " + strings.Repeat("z", 1<<20+10)
		case i%3 == 0:
			return fmt.Sprintf("x%d 777 y", i)
		}
		return fmt.Sprintf("x%d other", i)
	})
	a, b := testIndex(t, 64<<20, rootA), testIndex(t, 64<<20, rootB)
	for _, tc := range []struct {
		s     *Searcher
		q     string
		mode  lang.Mode
		opt   Options
		total int64 // every hit
		exact bool  // the total must be exact (else a lower bound may do)
	}{
		{a, `"needle here"`, lang.ModeQuery, Options{Limit: 5}, 5, true},
		{a, `"needle here"`, lang.ModeQuery, Options{Limit: 5, CountAll: true, TotalBudget: 1}, 5, true},
		{a, `"needle here"`, lang.ModeQuery, Options{Limit: 4}, 5, false},
		{a, "needle", lang.ModeQuery, Options{Limit: 40}, 34, true},
		{b, "777", lang.ModeLiteral, Options{Limit: 1, CountAll: true, TotalBudget: 1}, 101, true},
	} {
		q, err := Compile([]string{tc.q}, tc.mode, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []uint32{0, 2, 10} {
			tc.s.window = w
			got, st := search(t, tc.s, q, tc.opt)
			more := tc.total > int64(tc.opt.Limit)
			if int64(len(got)) != min(tc.total, int64(tc.opt.Limit)) || st.Truncated != more ||
				st.Total > tc.total || st.Total < int64(len(got)) || st.TotalAtLeast == (st.Total == tc.total) || tc.exact && st.TotalAtLeast {
				t.Errorf("%s %+v, windows of %d: %d hits, total %d (at least %t, more %t); want %d in all",
					tc.q, tc.opt, w, len(got), st.Total, st.TotalAtLeast, st.Truncated, tc.total)
			}
		}
	}
}

// TestWindowTruncatedSegment: a segment file truncated between two of a
// page's windows is planned raw (read from the log), not a crash: sizing
// the next window looks words up in the mapping too.
func TestWindowTruncatedSegment(t *testing.T) {
	root := t.TempDir()
	writeLines(t, root, "a.log", 200000, func(i int) string {
		switch {
		case i%10 == 0:
			return fmt.Sprintf("l%d needle is not there", i)
		case i%10 == 1:
			return fmt.Sprintf("l%d here is no pin", i)
		}
		return fmt.Sprintf("l%d other stuff", i)
	})
	s := testIndex(t, 64<<20, root)
	if len(s.segs) != 1 {
		t.Fatalf("%d segments, want 1", len(s.segs))
	}
	q, err := Compile([]string{`"needle here"`}, lang.ModeQuery, false)
	if err != nil {
		t.Fatal(err)
	}
	ps := s.lazyPlans(q, nil, false)
	n := s.segs[0].NumLines()
	p, err := ps.get(0, 0, n)
	if err != nil || p.upto == 0 || p.upto >= n {
		t.Fatalf("first window: %v, [%d, %d) of %d lines; want a window", err, p.from, p.upto, n)
	}
	segs, _ := filepath.Glob(filepath.Join(s.Index().Dir(), "seg-*.ldx"))
	if len(segs) != 1 {
		t.Fatalf("segment files %q", segs)
	}
	if err := os.Truncate(segs[0], 8192); err != nil {
		t.Fatal(err)
	}
	if p, err = ps.get(0, p.upto, n); err != nil || p.mode != planRaw {
		t.Fatalf("after truncation: %v, mode %d; want the segment planned raw", err, p.mode)
	}
}
