package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/query/lang"
)

// TestTotalBudget: a page reads what the page needs. Past the limit, hits
// the index counts without reading lines stay exact; counting that needs
// reading stops at TotalBudget and says Total is a lower bound; without
// CountAll nothing is read past the page at all.
func TestTotalBudget(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := range 40000 {
		// "pool exhausted" needs verifying (a phrase); "retry" is a word
		// the postings count exactly; "%7" needs a scan.
		fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ worker %d: pool exhausted, retry %d%%7\n", i%60, i%13, i)
		fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ worker %d: exhausted pool\n", i%60, i%13)
	}
	if err := os.WriteFile(filepath.Join(root, "app.log"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testIndex(t, 1<<20, root)
	cases := []struct {
		mode  lang.Mode
		q     string
		exact bool // counted from the index alone: exact within any budget
		want  int64
	}{
		{lang.ModeQuery, "retry", true, 40000},
		{lang.ModeQuery, `"pool exhausted"`, false, 40000},
		{lang.ModeLiteral, "%7", false, 40000},
	}
	for _, c := range cases {
		q, err := Compile([]string{c.q}, c.mode, false)
		if err != nil {
			t.Fatal(err)
		}
		hits := 0
		fn := func(*Hit) error { hits++; return nil }
		full, err := s.Search(context.Background(), q, Options{Limit: 10, CountAll: true}, fn)
		if err != nil || full.Total != c.want || full.TotalAtLeast {
			t.Fatalf("%s exact count: %v %d %t", c.q, err, full.Total, full.TotalAtLeast)
		}
		hits = 0
		st, err := s.Search(context.Background(), q, Options{Limit: 10, CountAll: true, TotalBudget: 64 << 10}, fn)
		if err != nil || hits != 10 {
			t.Fatalf("%s: %v, %d hits", c.q, err, hits)
		}
		if c.exact && (st.Total != c.want || st.TotalAtLeast) {
			t.Errorf("%s: total %d (at least %t), want exactly %d", c.q, st.Total, st.TotalAtLeast, c.want)
		}
		if !c.exact && (!st.TotalAtLeast || st.Total < 10 || st.Total >= c.want) {
			t.Errorf("%s: total %d (at least %t), want a lower bound under %d", c.q, st.Total, st.TotalAtLeast, c.want)
		}
		if !c.exact && st.Verified+st.Scanned >= full.Verified+full.Scanned {
			t.Errorf("%s: the budget read as much as the exact count (%d+%d)", c.q, st.Verified, st.Scanned)
		}
		hits = 0
		lim, err := s.Search(context.Background(), q, Options{Limit: 10}, fn)
		if err != nil || hits != 10 {
			t.Fatalf("%s limit: %v, %d hits", c.q, err, hits)
		}
		if !c.exact && lim.Scanned > 512<<10 {
			t.Errorf("%s: a 10-hit answer without a total scanned %d bytes", c.q, lim.Scanned)
		}
	}
}
