package server

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestTimeAPI: from, to and order on /api/search, paging in time order,
// and /api/histogram adding up to the same search's total.
func TestTimeAPI(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	base := url.Values{"q": {"error"}, "from": {"2026-10-10T03:00:00Z"}, "to": {"2026-10-10T09:00:00Z"}, "untimed": {"exclude"}}
	all := ts.search(t, base.Encode()+"&limit=10000")
	if all.Total == 0 || int64(len(all.Hits)) != all.Total {
		t.Fatalf("no hits in the range, or not all: %d of %d", len(all.Hits), all.Total)
	}
	lo, _ := time.Parse(time.RFC3339, "2026-10-10T03:00:00Z")
	hi, _ := time.Parse(time.RFC3339, "2026-10-10T09:00:00Z")
	for _, h := range all.Hits {
		tm, err := time.Parse(time.RFC3339Nano, h.Time)
		if err != nil || tm.Before(lo) || !tm.Before(hi) {
			t.Fatalf("%s:%d at %q outside [03:00, 09:00)", h.Path, h.Line, h.Time)
		}
	}
	for _, order := range []string{"oldest", "newest"} {
		var got []hitJSON
		cursor := ""
		for n := 0; n < 1000; n++ {
			v := url.Values{}
			for k, vs := range base {
				v[k] = vs
			}
			v.Set("order", order)
			v.Set("limit", "7")
			if cursor != "" {
				v.Set("cursor", cursor)
			}
			p := ts.search(t, v.Encode())
			got = append(got, p.Hits...)
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		if int64(len(got)) != all.Total {
			t.Fatalf("order %s: paging gave %d hits, want %d", order, len(got), all.Total)
		}
		for i := 1; i < len(got); i++ {
			a, _ := time.Parse(time.RFC3339Nano, got[i-1].Time)
			b, _ := time.Parse(time.RFC3339Nano, got[i].Time)
			if order == "oldest" && b.Before(a) || order == "newest" && a.Before(b) {
				t.Fatalf("order %s: %s before %s", order, got[i-1].Time, got[i].Time)
			}
		}
	}
	var h histogramJSON
	r := ts.get(t, "/api/histogram?"+base.Encode()+"&buckets=25")
	if r.code != http.StatusOK {
		t.Fatalf("histogram: %d %s", r.code, r.body)
	}
	r.json(t, &h)
	if h.Total != all.Total || len(h.Buckets) == 0 || len(h.Buckets) > 25 {
		t.Fatalf("histogram total %d in %d buckets, search total %d", h.Total, len(h.Buckets), all.Total)
	}
	for _, bad := range []string{"from=yesterday-ish", "from=2026-10-10T09:00:00Z&to=2026-10-10T03:00:00Z", "order=random", "untimed=maybe"} {
		if r := ts.get(t, "/api/search?q=error&"+bad); r.code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, r.code)
		}
	}
}

// TestHistogramOfAppendedLines: lines appended since indexing, later than
// anything indexed, are in the buckets (the default range goes on to
// now), as in the search; a range over centuries answers without
// wrapping.
func TestHistogramOfAppendedLines(t *testing.T) {
	fx := newFixture(t)
	p := filepath.Join(fx.logs, "app", "late.log")
	must(t, os.WriteFile(p, []byte("2026-10-10T10:00:00Z INFO zqhearly\n"), 0o644))
	fx.reindex(t)
	ts := newTestServer(t, fx)
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	now := time.Now().UTC().Add(-time.Minute).Format(time.RFC3339)
	fmt.Fprintf(f, "%s WARN zqhlater\n", now)
	f.Close()
	var hist struct {
		Total   int64 `json:"total"`
		Buckets []struct {
			Count int64 `json:"count"`
		} `json:"buckets"`
	}
	for _, q := range []string{"zqhlater", "zqhlater&from=1h", "zqhearly+OR+zqhlater"} {
		want := ts.search(t, "q="+q).Total
		ts.get(t, "/api/histogram?q="+q).json(t, &hist)
		if hist.Total != want || want == 0 {
			t.Errorf("%s: histogram total %d, search %d", q, hist.Total, want)
		}
	}
	r := ts.get(t, "/api/histogram?q=zqhearly&from=1700-01-01T00:00:00Z&to=2262-01-01T00:00:00Z&buckets=10")
	r.json(t, &hist)
	if r.code != 200 || hist.Total != 1 || len(hist.Buckets) > 11 {
		t.Errorf("over centuries: %d, total %d, %d buckets", r.code, hist.Total, len(hist.Buckets))
	}
}
