package query

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/query/lang"
)

// TestStoppedSearchIsNoAnswer: a search whose context its caller cancels
// (a client that left, a server shutting down) returns the context's
// error, not a short page that looks whole (a server would cache it). A
// page in a time order is several searches, each a page in path order,
// which takes a stop for the end of its page.
func TestStoppedSearchIsNoAnswer(t *testing.T) {
	_, _, s := propertyCorpus(t, 256<<10)
	q, err := Compile([]string{"/[0-9]+ms/"}, lang.ModeQuery, true)
	must(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, o := range []Order{OrderPath, OrderNewest, OrderOldest} {
		for _, tr := range []*TimeRange{nil, {From: math.MinInt64, To: math.MaxInt64, ExcludeUntimed: true}} {
			n := 0
			st, err := s.Search(ctx, q, Options{Order: o, Limit: 10, CountAll: true, TotalBudget: 1 << 20, Time: tr}, func(*Hit) error { n++; return nil })
			if err == nil {
				t.Errorf("order %v, range %v: cancelled, yet no error: %d hits, total %d", o, tr, n, st.Total)
			}
		}
	}
}

// TestNewestPageOfAppendedLines: lines appended since indexing, newer than
// every indexed line, have no time index; a page newest first reads them
// a few times, not once per narrowing of its slab.
func TestNewestPageOfAppendedLines(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "app.log")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lines := func(from, n int) string {
		var b strings.Builder
		for i := from; i < from+n; i++ {
			fmt.Fprintf(&b, "%s INFO request %d done\n", t0.Add(time.Duration(i)*time.Second).Format(time.RFC3339), i)
		}
		return b.String()
	}
	must(t, os.WriteFile(p, []byte(lines(0, 2000)), 0o644))
	s := testIndex(t, 1<<20, root)
	appended := lines(2000, 20000)
	appendFile(t, p, appended)
	q, err := Compile([]string{"INFO"}, lang.ModeQuery, true)
	must(t, err)
	for _, tc := range []struct {
		o    Order
		want []int64
	}{
		{OrderNewest, []int64{22000, 21999, 21998, 21997, 21996, 21995, 21994, 21993, 21992, 21991}},
		{OrderOldest, []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
	} {
		var got []int64
		st, err := s.Search(t.Context(), q, Options{Order: tc.o, Limit: 10, CountAll: true}, func(h *Hit) error {
			got = append(got, h.Line)
			return nil
		})
		must(t, err)
		if !slices.Equal(got, tc.want) || st.Total != 22000 || st.TotalAtLeast || !st.Truncated {
			t.Errorf("%v: lines %v, total %d (at least %t, more %t); want %v, 22000", tc.o, got, st.Total, st.TotalAtLeast, st.Truncated, tc.want)
		}
		if st.Scanned > 4*int64(len(appended)) {
			t.Errorf("%v: %d bytes scanned for %d appended", tc.o, st.Scanned, len(appended))
		}
	}
}
