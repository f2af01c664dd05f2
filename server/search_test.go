package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/lang"
)

// TestSearchMatchesSearcher checks /api/search against the searcher itself
// and the bytes of the files: every hit's text is the file's bytes at its
// offset, highlights are those of the query, total is exact.
func TestSearchMatchesSearcher(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	for _, tc := range []struct {
		q, mode, cs string
		fold        bool // expected
	}{
		{"error", "", "", true},
		{"error", "query", "sensitive", false},
		{"ERROR", "literal", "", false},
		{"error", "literal", "insensitive", true},
		{`time(out|d out)`, "regex", "", false},
		{`time(out|d out)`, "ere", "", false},
		{`\<time\(out\|d out\)`, "bre", "", false},
		{`time(?:out|d out)\b`, "re2", "", false},
		{"timeout\nconnection reset", "literal", "", false},
		{"^ERROR\nx+(a{1})?", "regex", "insensitive", true},
		{`timeout OR "connection reset"`, "query", "", true},
		{"Straße", "literal", "", false},
		{"no newline", "literal", "", false},
		{"<script>", "literal", "", false},
	} {
		t.Run(tc.mode+":"+tc.q, func(t *testing.T) {
			v := url.Values{"q": {tc.q}, "limit": {"10000"}}
			if tc.mode != "" {
				v.Set("mode", tc.mode)
			}
			if tc.cs != "" {
				v.Set("case", tc.cs)
			}
			got := ts.search(t, v.Encode())
			mode, _ := lang.ParseMode(tc.mode)
			if got.Mode != mode.String() || got.Case != map[bool]string{true: "insensitive", false: "sensitive"}[tc.fold] {
				t.Errorf("mode %q case %q", got.Mode, got.Case)
			}
			q, err := query.Compile([]string{tc.q}, mode, tc.fold)
			if err != nil {
				t.Fatal(err)
			}
			sn := ts.acquire()
			defer sn.unref()
			var want []hitJSON
			st, err := sn.s.Search(context.Background(), q, query.Options{Text: true, Times: true}, func(h *query.Hit) error {
				hj := hitJSON{FileID: h.File.ID, Path: h.File.Path, Line: h.Line, Offset: h.Offset, Length: h.Length, Binary: h.Binary,
					Text: string(h.Text), Highlights: clipRanges(q.Highlights(h.Text), len(h.Text))}
				if h.Timed {
					hj.Time = time.Unix(0, h.Time).In(sn.s.Location()).Format(time.RFC3339Nano)
				}
				want = append(want, hj)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatalf("fixture has no hit for %q", tc.q)
			}
			if got.Total != st.Total || len(got.Hits) != len(want) {
				t.Fatalf("total %d hits %d, want %d and %d", got.Total, len(got.Hits), st.Total, len(want))
			}
			for i := range want {
				if !reflect.DeepEqual(got.Hits[i], want[i]) {
					t.Fatalf("hit %d:\n got %+v\nwant %+v", i, got.Hits[i], want[i])
				}
				h := got.Hits[i]
				b := fx.fileBytes(t, h.Path)
				if string(b[h.Offset:h.Offset+h.Length]) != h.Text {
					t.Fatalf("hit %d: text differs from the file at its offset", i)
				}
				for _, r := range h.Highlights {
					if r[0] < 0 || r[1] > len(h.Text) || r[0] >= r[1] {
						t.Fatalf("hit %d: bad highlight %v", i, r)
					}
				}
			}
			if got.NextCursor != nil || got.Warnings == nil || len(got.Warnings) != 0 {
				t.Errorf("next_cursor %v warnings %v", got.NextCursor, got.Warnings)
			}
		})
	}
}

func TestSearchContext(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	got := ts.search(t, "q=connection+lost&context=2")
	if len(got.Hits) != 1 {
		t.Fatalf("%d hits", len(got.Hits))
	}
	h := got.Hits[0]
	lines := strings.Split(string(fx.fileBytes(t, h.Path)), "\n")
	if len(h.Before) != 2 || len(h.After) != 1 { // the file ends one line later
		t.Fatalf("before %v after %v", h.Before, h.After)
	}
	for _, l := range append(h.Before, h.After...) {
		if l.Text != lines[l.Line-1] {
			t.Errorf("line %d: %q, want %q", l.Line, l.Text, lines[l.Line-1])
		}
	}
	if h.Before[0].Line != h.Line-2 || h.After[0].Line != h.Line+1 {
		t.Errorf("context lines %d.., %d", h.Before[0].Line, h.After[0].Line)
	}
}

// TestPagingExactlyOnce pages through results with small limits: the pages
// together are exactly one big answer, each hit once.
func TestPagingExactlyOnce(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	for _, q := range []string{"q=error", "q=GET", "q=a&mode=literal", "q=INFO"} {
		all := ts.search(t, q+"&limit=10000")
		if all.NextCursor != nil || int64(len(all.Hits)) != all.Total {
			t.Fatalf("%s: big request not complete", q)
		}
		for _, limit := range []int{1, 7, 50} {
			var pages []hitJSON
			cursor := ""
			remaining := all.Total
			// Paging one hit at a time through thousands is for the long
			// run; by default the first pages and the totals are checked.
			maxPages := 200
			if os.Getenv("LOGDEX_LONG") != "" {
				maxPages = 1 << 30
			}
			for n := 0; n < maxPages; n++ {
				total := "exact"
				if n%2 == 1 {
					total = "bounded" // the default: a lower bound past the count budget
				}
				p := ts.search(t, fmt.Sprintf("%s&limit=%d&total=%s&cursor=%s", q, limit, total, url.QueryEscape(cursor)))
				if p.TotalExact == nil {
					t.Fatalf("%s: no total_exact", q)
				}
				if *p.TotalExact && p.Total != remaining || !*p.TotalExact && (p.Total > remaining || p.Total < int64(len(p.Hits))) {
					t.Fatalf("%s limit %d page %d: total %d (exact %t), want %d hits after the cursor", q, limit, n, p.Total, *p.TotalExact, remaining)
				}
				if total == "exact" && !*p.TotalExact {
					t.Fatalf("%s: total=exact gave a lower bound", q)
				}
				pages = append(pages, p.Hits...)
				remaining -= int64(len(p.Hits))
				if p.NextCursor == nil {
					break
				}
				if len(p.Hits) != limit {
					t.Fatalf("short page with a next cursor")
				}
				cursor = *p.NextCursor
			}
			if !reflect.DeepEqual(pages, all.Hits[:len(pages)]) || remaining == 0 && len(pages) != len(all.Hits) {
				t.Fatalf("%s limit %d: %d paged hits differ from the %d of one request", q, limit, len(pages), len(all.Hits))
			}
		}
	}
}

// TestSearchPatternWarnings: grep's warnings about a pattern it still
// answers come in warnings.
func TestSearchPatternWarnings(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	got := ts.search(t, "mode=regex&q="+url.QueryEscape("*ERROR"))
	if got.Total == 0 || len(got.Warnings) == 0 || got.Warnings[0] != "pattern: * at start of expression (at character 1)" {
		t.Fatalf("total %d, warnings %q", got.Total, got.Warnings)
	}
	if got := ts.search(t, "mode=regex&q=ERROR"); len(got.Warnings) != 0 {
		t.Fatalf("warnings %q", got.Warnings)
	}
}

func TestSearchBadRequests(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	long := strings.Repeat("a", maxQueryBytes+1)
	pos := func(n int) *int { return &n }
	for _, tc := range []struct {
		name, params string
		code         int
		pos          *int
		searchOnly   bool // raw takes no limit, cursor or context
	}{
		{"missing q", "", 400, pos(0), false},
		{"unclosed phrase", `q="abc`, 400, pos(0), false},
		{"unclosed paren", `q=` + url.QueryEscape("error AND (timeout"), 400, pos(10), false},
		{"bad regex", "mode=regex&q=" + url.QueryEscape("a(b"), 400, pos(1), false},
		{"bad ere", "mode=ere&q=" + url.QueryEscape("a{}"), 400, pos(1), false},
		{"bad bre", "mode=bre&q=" + url.QueryEscape(`é\{1`), 400, pos(1), false},
		{"bad re2", "mode=re2&q=" + url.QueryEscape("a(b"), 400, pos(0), false},
		{"bad second line", "mode=regex&q=" + url.QueryEscape("ok\n(b"), 400, pos(3), false},
		{"back-reference", "mode=regex&q=" + url.QueryEscape(`(a)\1`), 400, pos(3), false},
		{"inline back-reference", "q=" + url.QueryEscape(`x /(a)\1/`), 400, pos(6), false},
		{"bad inline regex", "q=" + url.QueryEscape("x /a[/"), 400, pos(4), false},
		{"unknown mode", "q=a&mode=fuzzy", 400, nil, false},
		{"bad case", "q=a&case=upper", 400, nil, false},
		{"limit not a number", "q=a&limit=ten", 400, nil, true},
		{"limit too big", "q=a&limit=10001", 422, nil, true},
		{"negative limit", "q=a&limit=-1", 422, nil, true},
		{"context too big", "q=a&context=51", 422, nil, true},
		{"bad cursor", "q=a&cursor=%21%21", 400, nil, true},
		{"q twice", "q=a&q=b", 400, nil, false},
		{"q too long", "q=" + long, 413, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps := []string{"/api/search?", "/api/search/raw?"}
			if tc.searchOnly {
				eps = eps[:1]
			}
			for _, ep := range eps {
				r := ts.get(t, ep+tc.params)
				if r.code != tc.code {
					t.Fatalf("%s%s: %d %s, want %d", ep, tc.params, r.code, r.body, tc.code)
				}
				var e apiError
				r.json(t, &e)
				if e.Error == "" {
					t.Fatalf("no message: %s", r.body)
				}
				if tc.pos != nil && (e.Position == nil || *e.Position != *tc.pos) {
					t.Fatalf("%s: position %v, want %d (%s)", ep, e.Position, *tc.pos, r.body)
				}
			}
		})
	}
}

func TestSearchCountOnlyAndInvalidUTF8(t *testing.T) {
	fx := newFixture(t)
	writeFile(t, fx.logs+"/special/latin1.log", "caf\xe9 au lait marker\nplain marker line\n")
	fx.reindex(t)
	ts := newTestServer(t, fx)
	got := ts.search(t, "q=marker")
	if got.Total != 2 || len(got.Hits) != 2 {
		t.Fatalf("%+v", got)
	}
	h := got.Hits[0]
	if h.TextB64 == "" || h.Text != "caf\ufffd au lait marker" || h.Highlights[0] != [2]int{13, 19} {
		t.Fatalf("invalid UTF-8 line: %+v", h)
	}
	if got.Hits[1].TextB64 != "" {
		t.Fatalf("valid line got text_b64")
	}
	c := ts.search(t, "q=marker&limit=0")
	if c.Total != 2 || len(c.Hits) != 0 || c.Hits == nil {
		t.Fatalf("count only: %+v", c)
	}
	// Regexes read bytes, as grep in the C locale: a Latin-1 byte finds
	// its line; U+FFFD is its own three bytes, not any invalid byte.
	for _, tc := range []struct {
		q     string
		total int64
	}{
		{"mode=regex&q=caf%E9+au", 1},
		{"mode=regex&q=" + url.QueryEscape("caf. au"), 1},
		{"mode=regex&q=" + url.QueryEscape("caf\ufffd"), 0},
		{"q=" + url.QueryEscape("/caf\ufffd/"), 0},
	} {
		if r := ts.search(t, tc.q+"&total=exact"); r.Total != tc.total {
			t.Errorf("%s: %d hits, want %d", tc.q, r.Total, tc.total)
		}
	}
}

func TestSearchCache(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx, func(o *Options) { o.CacheTTL, o.Reindex = -1, fx.reindexFunc() })
	r1 := ts.get(t, "/api/search?q=error")
	r2 := ts.get(t, "/api/search?q=error")
	if r1.header.Get("X-Logdex-Cache") != "miss" || r2.header.Get("X-Logdex-Cache") != "hit" || string(r1.body) != string(r2.body) {
		t.Fatalf("cache: %q %q", r1.header.Get("X-Logdex-Cache"), r2.header.Get("X-Logdex-Cache"))
	}
	// A new snapshot is a new key.
	writeFile(t, fx.logs+"/new.log", "error in a new file\n")
	if err := ts.ReindexNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	r3 := ts.get(t, "/api/search?q=error")
	if r3.header.Get("X-Logdex-Cache") != "miss" || string(r3.body) == string(r1.body) {
		t.Fatalf("stale cache after re-index: %q\n%s\n%s", r3.header.Get("X-Logdex-Cache"), r1.body[:200], r3.body[:200])
	}
	if r := ts.get(t, "/api/search?q=error"); r.code != http.StatusOK || r.header.Get("X-Logdex-Cache") != "hit" {
		t.Fatalf("second request after re-index: %d %q", r.code, r.header.Get("X-Logdex-Cache"))
	}
}

// TestAppendedLinesWithoutReindex: lines appended to a log after indexing
// are found (the appended bytes are scanned) without a re-index, as soon
// as the watch reports the write; after a rotation (api.log renamed over
// the indexed api.log.1) they are found where grep would find them now.
func TestAppendedLinesWithoutReindex(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx, func(o *Options) { o.CacheTTL = 0 })
	log := fx.logs + "/app/api.log"
	if sr := ts.search(t, "q=zanzibar"); sr.Total != 0 {
		t.Fatalf("zanzibar before the append: %d", sr.Total)
	}
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("2026-10-10T23:59:59Z WARN appended after indexing zanzibar\n")
	f.Close()
	const text = "2026-10-10T23:59:59Z WARN appended after indexing zanzibar"
	waitFor := func(path string) *searchResp {
		t.Helper()
		for start := time.Now(); ; time.Sleep(2 * time.Millisecond) {
			sr := ts.search(t, "q=zanzibar")
			if sr.Total == 1 && sr.Hits[0].Path == path && sr.Hits[0].Text == text {
				return sr
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("zanzibar: %+v, want one hit in %s", sr, path)
			}
		}
	}
	waitFor("logs/app/api.log")
	if err := os.Rename(log, log+".1"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, log, "a fresh file\n")
	if sr := waitFor("logs/app/api.log.1"); len(sr.Warnings) < 2 {
		t.Fatalf("rotated files answered without warnings: %q", sr.Warnings)
	}
}

// TestSearchWarnsUnreadable: a file the indexer could not read is named in
// every answer's warnings (its lines are missing from it).
func TestSearchWarnsUnreadable(t *testing.T) {
	fx := newTinyFixture(t, map[string]string{"a.log": "match\n"})
	m, err := mmapstore.ReadManifest(fx.index)
	if err != nil {
		t.Fatal(err)
	}
	m.Skipped = append(m.Skipped, mmapstore.Skipped{Root: 0, Path: "secret.log", Reason: "permission denied", Unreadable: true})
	if err := mmapstore.PublishManifest(fx.index, m); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, fx)
	sr := ts.search(t, "q=match")
	if len(sr.Warnings) != 1 || !strings.HasPrefix(sr.Warnings[0], "logs/secret.log: permission denied") {
		t.Fatalf("warnings %q", sr.Warnings)
	}
}

// TestReindexFailingSaysSo: while re-indexing fails (index disk full, a
// directory that cannot be written), answers come from the last snapshot
// and miss the files added since: they say so (a warning, total_exact
// false) until a run works again.
func TestReindexFailingSaysSo(t *testing.T) {
	fx := newTinyFixture(t, map[string]string{"a.log": "error one\n"})
	var failing atomic.Bool
	update := fx.reindexFunc()
	ts := newTestServer(t, fx, func(o *Options) {
		o.CacheTTL = 0
		o.Reindex = func(ctx context.Context, open *mmapstore.Index) (ReindexResult, error) {
			if failing.Load() {
				return ReindexResult{}, errors.New("write segment: no space left on device")
			}
			return update(ctx, open)
		}
	})
	writeFile(t, fx.logs+"/b.log", "error two\n")
	failing.Store(true)
	if err := ts.ReindexNow(context.Background()); err == nil {
		t.Fatal("the failing re-index did not fail")
	}
	sr := ts.search(t, "q=error")
	if sr.Total != 1 || sr.TotalExact == nil || *sr.TotalExact || !slices.ContainsFunc(sr.Warnings, func(w string) bool {
		return strings.Contains(w, "could not be updated") && strings.Contains(w, "no space left")
	}) {
		t.Fatalf("while re-indexing fails: total %d exact %v, warnings %q", sr.Total, sr.TotalExact, sr.Warnings)
	}
	failing.Store(false)
	must(t, ts.ReindexNow(context.Background()))
	if sr := ts.search(t, "q=error"); sr.Total != 2 || !*sr.TotalExact || len(sr.Warnings) != 0 {
		t.Fatalf("once re-indexing works: total %d exact %v, warnings %q", sr.Total, *sr.TotalExact, sr.Warnings)
	}
}
