package web_test

// The browser test of bounded totals (a subtest of TestBrowser, which
// lends it its browser): when counting past the first page would cost
// more than the server's budget, the summary says "at least N matches"
// and "count all" replaces it with the exact count.

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/server"
)

func testTotal(t *testing.T, browser context.Context) {
	logs := filepath.Join(t.TempDir(), "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for i := range 20000 {
		// A phrase whose candidates (both words on every line) must all
		// be read to be counted.
		if i%2 == 0 {
			fmt.Fprintf(&sb, "2026-10-10T12:00:00Z INFO zqxpool exhausted entry %d\n", i)
		} else {
			fmt.Fprintf(&sb, "2026-10-10T12:00:00Z INFO exhausted zqxpool entry %d\n", i)
		}
	}
	for i := range 1400 { // a phrase of 700 hits, a few pages
		if i%2 == 0 {
			fmt.Fprintf(&sb, "2026-10-10T12:00:01Z INFO zqxsmall thing %d\n", i)
		} else {
			fmt.Fprintf(&sb, "2026-10-10T12:00:01Z INFO thing zqxsmall %d\n", i)
		}
	}
	if err := os.WriteFile(filepath.Join(logs, "app.log"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// A budget of one read: any count that needs reading lines is bounded.
	base := startServer(t, logs, func(o *server.Options) { o.TotalBudget = 1 })
	q := `"zqxpool exhausted"`
	var bounded apiSearch
	getJSON(t, base+"/api/search?"+url.Values{"q": {q}, "limit": {"100"}}.Encode(), &bounded)
	exact := apiSearchAll(t, base, url.Values{"q": {q}, "total": {"exact"}})
	if exact.Total != 10000 || bounded.Total >= exact.Total || bounded.TotalExact == nil || *bounded.TotalExact {
		t.Fatalf("API: bounded total %d (exact %v), exact %d", bounded.Total, bounded.TotalExact, exact.Total)
	}

	t.Run("a bounded total says at least, and counts all on request", func(t *testing.T) {
		t.Parallel()
		tb := newTab(t, browser, base, desktop, false)
		tb.open("/")
		tb.search(q)
		tb.wait("at least", fmt.Sprintf(`logdex.results.state === 'done' && document.querySelector('#summary').textContent.startsWith(%s)`,
			jsString(fmt.Sprintf("at least %s match", fmtInt(bounded.Total)))))
		// The summary is rebuilt on every render: click it where it is.
		tb.wait("count all clicked", `(() => { const b = document.querySelector('#summary .count-all'); b?.click(); return Boolean(b); })()`)
		tb.waitResults(q, exact.Total)
		var left int
		tb.eval(`document.querySelectorAll('#summary .count-all').length`, &left)
		if left != 0 {
			t.Errorf("count all still offered after counting")
		}
	})

	t.Run("a bounded total is exact once every page is in", func(t *testing.T) {
		t.Parallel()
		small := `"zqxsmall thing"`
		want := apiSearchAll(t, base, url.Values{"q": {small}, "total": {"exact"}})
		tb := newTab(t, browser, base, desktop, false)
		tb.open("/")
		tb.search(small)
		tb.wait("at least", `logdex.results.state === 'done' && document.querySelector('#summary').textContent.startsWith('at least ')`)
		checkScroll(t, tb, want.Hits)
		var summary string
		tb.eval(`document.querySelector('#summary').textContent`, &summary)
		if !strings.HasPrefix(summary, fmt.Sprintf("%s matches", fmtInt(want.Total))) || strings.Contains(summary, "count all") {
			t.Errorf("summary once every page is in: %q, want %d matches", summary, want.Total)
		}
	})
}
