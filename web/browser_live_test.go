package web_test

// The browser tests of Live (subtests of TestBrowser, which lends them its
// browser): the page's Server-Sent Events parser, then a real server over
// a temporary log directory, re-indexed by the test after it appends
// lines, while a probe around the server's handler watches /api/tail from
// the server's side (streams open, Last-Event-ID asked for) and can break
// a stream's connection or refuse new ones.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/logdex/logdex/server"
)

// tailProbe wraps the server's handler to watch /api/tail.
type tailProbe struct {
	mu      sync.Mutex
	open    map[int]*tailConn
	next    int
	resumes []string // each stream's Last-Event-ID ("" for none)
	blocked bool     // refuse new streams (503)
	refused int
}

type tailConn struct {
	q      string
	cut    atomic.Bool
	cancel context.CancelFunc
}

// cutWriter drops what the handler writes once its stream is cut, so the
// client gets no "end" event: only a broken connection.
type cutWriter struct {
	http.ResponseWriter
	c *tailConn
}

func (w *cutWriter) Write(b []byte) (int, error) {
	if w.c.cut.Load() {
		return 0, errors.New("cut by the test")
	}
	return w.ResponseWriter.Write(b)
}

// Flush is needed (not only Unwrap): the server's own writer flushes
// what it wraps only when that is an http.Flusher.
func (w *cutWriter) Flush() {
	if !w.c.cut.Load() {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

func (w *cutWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (p *tailProbe) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/tail" {
			h.ServeHTTP(w, r)
			return
		}
		p.mu.Lock()
		if p.blocked {
			p.refused++
			p.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":"refused by the test"}`)
			return
		}
		ctx, cancel := context.WithCancel(r.Context())
		c := &tailConn{q: r.URL.Query().Get("q"), cancel: cancel}
		id := p.next
		p.next++
		p.open[id] = c
		p.resumes = append(p.resumes, r.Header.Get("Last-Event-ID"))
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.open, id)
			p.mu.Unlock()
			cancel()
			if c.cut.Load() {
				panic(http.ErrAbortHandler) // close the connection mid-body
			}
		}()
		h.ServeHTTP(&cutWriter{w, c}, r.WithContext(ctx))
	})
}

// openQueries are the q of the streams open now, sorted.
func (p *tailProbe) openQueries() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	qs := []string{}
	for _, c := range p.open {
		qs = append(qs, c.q)
	}
	slices.Sort(qs)
	return qs
}

func (p *tailProbe) lastResume() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.resumes) == 0 {
		return "<none>"
	}
	return p.resumes[len(p.resumes)-1]
}

// cutAll breaks every open stream's connection.
func (p *tailProbe) cutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.open {
		c.cut.Store(true)
		c.cancel()
	}
}

func (p *tailProbe) block(on bool) {
	p.mu.Lock()
	p.blocked = on
	p.mu.Unlock()
}

func (p *tailProbe) refusals() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// waitFor polls a condition on the test's side until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(stepTimeout)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
}

// liveLines are n lines matching zqxlive (tagged) and one that does not.
func liveLines(tag string, from, n int) string {
	var sb strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&sb, "2026-11-30T12:%02d:%02dZ WARN zqxlive %s %d\n", i/60%60, i%60, tag, i)
	}
	sb.WriteString("2026-11-30T13:00:00Z DEBUG nothing to see\n")
	return sb.String()
}

func reindex(t *testing.T, s *server.Server) {
	t.Helper()
	if err := s.ReindexNow(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func testLive(t *testing.T, browser context.Context) {
	t.Run("the Server-Sent Events parser", func(t *testing.T) {
		t.Parallel()
		// Any page of the app will do: the parser is a module.
		logs := copyFixtures(t, t.TempDir(), nil)
		tb := newTab(t, browser, startServer(t, logs), desktop, false)
		tb.open("/")
		type ev struct {
			Event string `json:"event"`
			Data  string `json:"data"`
			ID    string `json:"id"`
		}
		for _, c := range []struct {
			name   string
			chunks []string
			want   []ev
			lastID string
		}{
			{"a hit", []string{"event: hit\nid: 1:2:3\ndata: {\"a\":1}\n\n"}, []ev{{"hit", `{"a":1}`, "1:2:3"}}, "1:2:3"},
			{"an id alone moves the position", []string{"id: 7\n\n"}, []ev{}, "7"},
			{"heartbeat", []string{": heartbeat\n\n"}, []ev{}, ""},
			{"CRLF split between chunks", []string{"event: end\r", "\ndata: {\"reason\":\"x\"}\r\n\r\n"}, []ev{{"end", `{"reason":"x"}`, ""}}, ""},
			{"CR alone, two data lines", []string{"data:a\rdata: b\r\r"}, []ev{{"message", "a\nb", ""}}, ""},
			{"a field split between chunks", []string{"da", "ta: x", "\n", "\n"}, []ev{{"message", "x", ""}}, ""},
			{"an id with NUL is ignored", []string{"id: 5\n\n", "id: a\x00b\ndata: y\n\n"}, []ev{{"message", "y", "5"}}, "5"},
			{"the id lasts", []string{"id: 9\ndata: a\n\ndata: b\n\n"}, []ev{{"message", "a", "9"}, {"message", "b", "9"}}, "9"},
			{"data without a colon", []string{"data\n\n"}, []ev{{"message", "", ""}}, ""},
			{"an unfinished event waits", []string{"id: 3\ndata: x\n"}, []ev{}, ""},
			{"unknown fields and retry", []string{"retry: 10\nfoo: bar\nevent: reset\ndata: {}\n\n"}, []ev{{"reset", "{}", ""}}, ""},
		} {
			chunks, _ := json.Marshal(c.chunks)
			var got struct {
				Evs    []ev   `json:"evs"`
				LastID string `json:"lastId"`
			}
			tb.eval(fmt.Sprintf(`import('/assets/tail.js').then((m) => { const p = new m.SSEParser(), evs = [];
				for (const c of %s) evs.push(...p.push(c)); return { evs, lastId: p.lastId }; })`, chunks), &got)
			if !reflect.DeepEqual(got.Evs, c.want) || got.LastID != c.lastID {
				t.Errorf("%s: %+v, last id %q; want %+v, %q", c.name, got.Evs, got.LastID, c.want, c.lastID)
			}
		}
	})

	t.Run("dates: a file's in its own offset, range bounds as the API reads them", func(t *testing.T) {
		t.Parallel()
		logs := copyFixtures(t, t.TempDir(), nil)
		tb := newTab(t, browser, startServer(t, logs), desktop, false)
		tb.open("/")
		var got string
		tb.eval(`import('/assets/dom.js').then((m) => m.fmtDate('2026-11-30T23:05:09-05:00'))`, &got)
		if got != "2026-11-30 23:05" {
			t.Errorf("fmtDate = %q, want the time as written, 2026-11-30 23:05", got)
		}
		// Every form of a range bound the API reads (logtime.ParseUserTime),
		// to epoch ms, now being 2026-11-30T12:00:00Z.
		var abs map[string]any
		tb.eval(`import('/assets/time.js').then((m) => { const now = Date.UTC(2026, 10, 30, 12); const out = {};
			for (const s of ['now', '2h', '1w', '1h30m', '1d12h', '2026-11-29', '2026-11-29 14:02', '2026-11-29T14:02:00+01:00', '1764374400000', 'soon', '2x', ''])
				out[s] = m.absTime(s, now); return out; })`, &abs)
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		ms := func(t time.Time) float64 { return float64(t.UnixMilli()) }
		for s, want := range map[string]any{
			"now": ms(now), "2h": ms(now.Add(-2 * time.Hour)), "1w": ms(now.Add(-7 * 24 * time.Hour)),
			"1h30m": ms(now.Add(-90 * time.Minute)), "1d12h": ms(now.Add(-36 * time.Hour)),
			"2026-11-29": ms(time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)), "2026-11-29 14:02": ms(time.Date(2026, 11, 29, 14, 2, 0, 0, time.UTC)),
			"2026-11-29T14:02:00+01:00": ms(time.Date(2026, 11, 29, 13, 2, 0, 0, time.UTC)), "1764374400000": float64(1764374400000),
			"soon": nil, "2x": nil, "": nil,
		} {
			if abs[s] != want {
				t.Errorf("absTime(%q) = %v, want %v", s, abs[s], want)
			}
		}
	})

	// These share a server whose logs they append to, and its tail
	// streams: one after another, in order.
	t.Run("a growing log directory", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		logs := filepath.Join(dir, "logs")
		liveLog, otherLog := filepath.Join(logs, "app", "live.log"), filepath.Join(logs, "app", "other.log")
		if err := os.MkdirAll(filepath.Dir(liveLog), 0o755); err != nil {
			t.Fatal(err)
		}
		appendFile(t, liveLog, liveLines("old", 0, 60))
		appendFile(t, otherLog, liveLines("other", 0, 5))
		manyLog := filepath.Join(logs, "app", "many.log")
		appendFile(t, manyLog, strings.ReplaceAll(liveLines("many", 0, 700), "zqxlive", "zqxmany"))
		srv := newServer(t, logs)
		probe := &tailProbe{open: map[int]*tailConn{}}
		base := serveHTTP(t, srv, probe.wrap(srv.Handler()))
		const q = "zqxlive"
		history := apiSearchAll(t, base, url.Values{"q": {q}})
		if history.Total != 65 {
			t.Fatalf("%d hits to start with", history.Total)
		}
		// newHits are the API's hits of live.log past line after.
		newHits := func(after int64) []apiHit {
			var out []apiHit
			for _, h := range apiSearchAll(t, base, url.Values{"q": {q}}).Hits {
				if h.Path == "logs/app/live.log" && h.Line > after {
					out = append(out, h)
				}
			}
			return out
		}
		noTails := func() bool { return len(probe.openQueries()) == 0 }
		tails := func(qs ...string) func() bool {
			return func() bool { return slices.Equal(probe.openQueries(), qs) }
		}

		t.Run("Live follows, keeps still, counts, resumes and closes", func(t *testing.T) {
			tb := newTab(t, browser, base, desktop, false)
			tb.allow("status of 503", "ERR_INCOMPLETE_CHUNKED_ENCODING")

			// Not in time order: the toggle says why, and nothing streams.
			tb.open("/?q=zqxlive&order=newest&live=1")
			tb.waitResults(q, 65)
			var off struct {
				Checked, Disabled bool
				Title             string
			}
			tb.eval(`(() => { const b = document.querySelector('#live'); return { checked: b.checked, disabled: b.disabled, title: b.closest('label').title }; })()`, &off)
			if off.Checked || !off.Disabled || !strings.Contains(off.Title, `"By file"`) || !noTails() {
				t.Errorf("Live in time order: %+v, streams %q", off, probe.openQueries())
			}

			// A browser in another zone than the index's: the times shown
			// stay the index's (the Live separator's too).
			tb.do("time zone", chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				_, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "America/New_York"})
				return err
			}))
			tb.open("/?q=zqxlive")
			tb.waitResults(q, 65)
			tb.eval(`Object.assign(logdex.tailConfig, { retryMs: 50, maxRetryMs: 200 })`, nil)
			tb.click("#live")
			tb.wait("live open", `logdex.live.state === 'open' && location.search.includes('live=1') && logdex.results.live`)
			waitFor(t, "one stream", tails(q))

			// At the bottom: new rows are followed.
			sc := `document.querySelector('#results')`
			tb.eval(`(async () => { const sc = `+sc+`; sc.scrollTop = sc.scrollHeight; await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))); return true; })()`, nil)
			appendFile(t, liveLog, liveLines("new", 100, 3))
			reindex(t, srv)
			tb.wait("3 live rows, followed", `logdex.results.liveCount === 3 && logdex.results.vlist.atEnd() &&
				[...document.querySelectorAll('#results .hit')].at(-1)?.dataset.n === String(logdex.results.hits.length - 1)`)
			added := newHits(60)
			if len(added) != 3 {
				t.Fatalf("API has %d new hits", len(added))
			}
			checkRows(t, tb, append(slices.Clone(history.Hits), added...))
			var order []string
			tb.eval(`[...document.querySelectorAll('#results .vlist > *')].slice(-5).map((e) => e.className.split(' ')[0] + (e.title ? ':' + e.title : ''))`, &order)
			if want := []string{"live-sep", "file-head:logs/app/live.log", "hit", "hit", "hit"}; !slices.Equal(order, want) {
				t.Errorf("rows at the end %q, want %q", order, want)
			}
			var sep struct{ Text, UTC string }
			tb.eval(`(() => { const s = logdex.results.live.since, p = (n) => String(n).padStart(2, '0');
				return { text: document.querySelector('#results .live-sep .since').textContent,
					utc: p(s.getUTCHours()) + ':' + p(s.getUTCMinutes()) + ':' + p(s.getUTCSeconds()) }; })()`, &sep)
			if !strings.HasSuffix(sep.Text, " "+sep.UTC) {
				t.Errorf("Live separator %q in a New York browser, want the index's UTC clock %s", sep.Text, sep.UTC)
			}
			checkLayout(t, tb)

			// Scrolled away: the list keeps still and counts what arrives.
			top := func() (pos struct {
				Top  float64
				Item string
			}) {
				tb.eval(`(() => { const sc = `+sc+`, b = sc.getBoundingClientRect();
					const el = document.elementFromPoint(b.left + 40, b.top + 2)?.closest('.vlist > *');
					return { top: sc.scrollTop, item: el ? el.className + '/' + (el.dataset.n || el.title) : '' }; })()`, &pos)
				return pos
			}
			tb.eval(`(async () => { `+sc+`.scrollTop = 400; await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))); return true; })()`, nil)
			before := top()
			appendFile(t, liveLog, liveLines("newer", 200, 4))
			reindex(t, srv)
			tb.wait("the pill counts 4", `logdex.results.liveCount === 7 && !document.querySelector('#live-pill').hidden &&
				document.querySelector('#live-pill').textContent.includes('4 new matches')`)
			if after := top(); after != before || before.Item == "" {
				t.Errorf("the list moved: %+v, then %+v", before, after)
			}
			tb.shot("live-pill-" + desktop.name + "-light")
			firstNew := newHits(60)[3]
			tb.click("#live-pill")
			tb.wait("scrolled to the new rows", fmt.Sprintf(`(() => { const sc = `+sc+`.getBoundingClientRect();
				const r = document.querySelector('#results .hit[data-file="%d"][data-line="%d"]')?.getBoundingClientRect();
				return r && r.top >= sc.top && r.bottom <= sc.bottom && document.querySelector('#live-pill').hidden; })()`, firstNew.FileID, firstNew.Line))

			// Memory is bounded: the oldest live rows go.
			tb.eval(`(async () => { logdex.liveConfig.cap = 5; const sc = `+sc+`; sc.scrollTop = sc.scrollHeight;
				await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))); return true; })()`, nil)
			appendFile(t, liveLog, liveLines("capped", 300, 3))
			reindex(t, srv)
			tb.wait("5 live rows kept", `logdex.results.liveCount === 5 && /keeping the newest 5/.test(document.querySelector('#live-status').textContent)`)
			kept := newHits(60)[5:]
			var got []string
			tb.eval(`logdex.results.hits.slice(logdex.results.histHits).map((h) => h.file_id + ':' + h.line)`, &got)
			var want []string
			for _, h := range kept {
				want = append(want, fmt.Sprintf("%d:%d", h.FileID, h.Line))
			}
			if !slices.Equal(got, want) {
				t.Errorf("live rows kept %q, want the newest %q", got, want)
			}
			checkRows(t, tb, append(slices.Clone(history.Hits), kept...))
			checkLayout(t, tb)
			tb.eval(`logdex.liveConfig.cap = 10000`, nil)

			// A broken connection: Live connects again from the last event, so
			// what was indexed meanwhile arrives once.
			var lastID string
			tb.eval(`logdex.live.stream.lastId`, &lastID)
			probe.block(true)
			probe.cutAll()
			tb.wait("reconnecting", `logdex.live.state === 'retry' && /connecting again/.test(document.querySelector('#live-status').textContent)`)
			waitFor(t, "a refused reconnection", func() bool { return probe.refusals() > 0 })
			appendFile(t, liveLog, liveLines("meanwhile", 400, 2))
			reindex(t, srv)
			probe.block(false)
			tb.wait("the lines indexed meanwhile", `logdex.live.state === 'open' && logdex.results.liveCount === 7`)
			if r := probe.lastResume(); r != lastID || !strings.Contains(lastID, ":") {
				t.Errorf("resumed from %q, the last event was %q", r, lastID)
			}
			checkRows(t, tb, append(slices.Clone(history.Hits), newHits(60)[5:]...))

			// Off closes the stream; on again catches up from where it was.
			tb.click("#live")
			waitFor(t, "the stream closed", noTails)
			tb.wait("off", `!location.search.includes('live=1') && document.querySelector('#live-status').dataset.state === 'off'`)
			appendFile(t, liveLog, liveLines("while off", 500, 2))
			reindex(t, srv)
			tb.click("#live")
			tb.wait("caught up", `logdex.live.state === 'open' && logdex.results.liveCount === 9`)
			checkRows(t, tb, append(slices.Clone(history.Hits), newHits(60)[5:]...))

			// A new query closes the stream and opens one for it.
			tb.search("zqxother")
			waitFor(t, "the new query's stream only", tails("zqxother"))
			tb.wait("still live", `location.search.includes('live=1') && logdex.live.state === 'open'`)
			tb.open("/")
			waitFor(t, "no stream without a query", noTails)
		})

		t.Run("pages of the search go in before the live rows", func(t *testing.T) {
			tb := newTab(t, browser, base, desktop, false)
			many := apiSearchAll(t, base, url.Values{"q": {"zqxmany"}})
			if many.Total != 700 {
				t.Fatalf("%d hits", many.Total)
			}
			tb.open("/?q=zqxmany&live=1")
			tb.waitResults("zqxmany", 700)
			tb.wait("live open, two pages of three", `logdex.live.state === 'open' && logdex.results.histHits === 600 && !logdex.results.loading && !logdex.results.done`)
			appendFile(t, manyLog, strings.ReplaceAll(liveLines("arrived", 800, 2), "zqxlive", "zqxmany"))
			reindex(t, srv)
			tb.wait("2 live rows", `logdex.results.liveCount === 2`)
			var arrived []apiHit
			for _, h := range apiSearchAll(t, base, url.Values{"q": {"zqxmany"}}).Hits {
				if strings.Contains(h.Text, " arrived ") {
					arrived = append(arrived, h)
				}
			}
			// Scrolling down loads the other pages above the live rows; the
			// lines that arrived live are not shown again by them.
			checkScroll(t, tb, append(slices.Clone(many.Hits), arrived...))
			checkLayout(t, tb)
		})

		t.Run("Live with a log filter: hits that come while the file list reloads", func(t *testing.T) {
			tb := newTab(t, browser, base, desktop, true)
			tb.open("/?q=zqxlive&log=logs%2Fapp%2Fburst.log&live=1")
			tb.wait("live open", `logdex.live.state === 'open'`)
			waitFor(t, "one stream", tails(q))
			// The file list answers slowly: a second run's hits of the new file
			// come while the list asked for by the first is loading.
			tb.eval(`(() => { const f = window.fetch;
				window.fetch = (u, o) => String(u).includes('/api/files') ? new Promise((r) => setTimeout(r, 1500)).then(() => f(u, o)) : f(u, o);
				return true; })()`, nil)
			burst := filepath.Join(logs, "app", "burst.log")
			appendFile(t, burst, liveLines("burst one", 800, 1))
			reindex(t, srv)
			time.Sleep(300 * time.Millisecond)
			appendFile(t, burst, liveLines("burst two", 801, 1))
			reindex(t, srv)
			tb.wait("both rows of the log", `logdex.results.liveCount === 2`)
			// The summary, a live region, is not rebuilt (read out again) when
			// a batch leaves it as it was.
			tb.eval(`(() => { document.querySelector('#summary').firstChild.kept = true; return true; })()`, nil)
			appendFile(t, burst, liveLines("burst again", 803, 1))
			reindex(t, srv)
			tb.wait("the third row", `logdex.results.liveCount === 3`)
			var kept bool
			tb.eval(`document.querySelector('#summary').firstChild?.kept === true`, &kept)
			if !kept {
				t.Errorf("the summary was rebuilt for a live batch that left it as it was")
			}
			// A burst of another log's hits between two frames (a hidden tab
			// draws none) does not push this log's out of the bounded queue.
			var queued []string
			tb.eval(`(() => { const L = logdex.live, fs = logdex.catalog.files;
				const id = (p) => fs.find((f) => f.path === p).id;
				logdex.liveConfig.cap = 3;
				L.received({ file_id: id('logs/app/burst.log'), line: 99 });
				for (let i = 0; i < 10; i++) L.received({ file_id: id('logs/app/other.log'), line: i });
				const q = L.queue.map((h) => h.file_id === id('logs/app/burst.log') ? 'mine' : 'other');
				L.queue = []; logdex.liveConfig.cap = 10000;
				return q; })()`, &queued)
			if !slices.Equal(queued, []string{"mine"}) {
				t.Errorf("queued %q, want this log's hit alone", queued)
			}
		})

		t.Run("Live with a log filter, through a rotation", func(t *testing.T) {
			tb := newTab(t, browser, base, desktop, true)
			inLog := apiSearchAll(t, base, url.Values{"q": {q}, "log": {"logs/app/live.log"}})
			tb.open("/?q=zqxlive&log=logs%2Fapp%2Flive.log&live=1")
			tb.waitResults(q, inLog.Total)
			tb.wait("live open", `logdex.live.state === 'open'`)
			waitFor(t, "one stream", tails(q))
			// logrotate: live.log (with a new line) becomes live.log.1, a new
			// live.log starts; other.log, another log, gets a line too.
			b, err := os.ReadFile(liveLog)
			if err != nil {
				t.Fatal(err)
			}
			rotatedLine := strings.Count(string(b), "\n") + 1
			appendFile(t, liveLog, liveLines("rotated away", 600, 1))
			appendFile(t, otherLog, liveLines("other log", 600, 1))
			if err := os.Rename(liveLog, liveLog+".1"); err != nil {
				t.Fatal(err)
			}
			appendFile(t, liveLog, liveLines("fresh", 700, 1))
			reindex(t, srv)
			tb.wait("two rows of the log", `logdex.results.liveCount === 2`)
			var paths []string
			tb.eval(`logdex.results.hits.slice(logdex.results.histHits).map((h) => h.path + ':' + h.line)`, &paths)
			if want := []string{fmt.Sprintf("logs/app/live.log.1:%d", rotatedLine), "logs/app/live.log:1"}; !slices.Equal(paths, want) {
				t.Errorf("live rows %q, want %q", paths, want)
			}
			tb.shot("live-" + desktop.name + "-dark")

			// The server going away ends the stream, saying why.
			srv.Close()
			tb.allow("status of 503")
			tb.wait("the end's reason", `/server shutting down/.test(document.querySelector('#live-status').textContent)`)
		})
	})
}
