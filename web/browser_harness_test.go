package web_test

// The harness of the browser tests (one file: helpers the subtests share):
// the server and Chromium under test,
// tabs with bounded steps, and the API as the tests' reference.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/server"
	"github.com/logdex/logdex/web"
	"github.com/rs/zerolog"
)

// stepTimeout bounds each browser step (navigation, wait, evaluation).
const stepTimeout = 15 * time.Second

// latin1 is a log file that is not valid UTF-8: the API sends its lines
// with text_b64, and highlights are offsets into those bytes.
const latin1 = "2026-10-10T12:00:00Z WARN caf\xe9 cr\xe8me br\xfbl\xe9e order failed\n" +
	"2026-10-10T12:00:01Z INFO na\xefve r\xe9sum\xe9 \xff\xfe uploaded\n"

// ---------- environment ----------

func chromiumPath() string {
	if p := os.Getenv("LOGDEX_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return ""
}

// needChromium skips when there is no browser, except in CI where a
// missing browser is a failure.
func needChromium(t *testing.T) string {
	t.Helper()
	p := chromiumPath()
	if p == "" {
		if os.Getenv("CI") != "" || os.Getenv("LOGDEX_CI") != "" {
			t.Fatal("no Chromium found but CI/LOGDEX_CI is set: install chromium (or set LOGDEX_CHROMIUM)")
		}
		t.Skip("no Chromium found (install chromium, or set LOGDEX_CHROMIUM): skipping the browser tests")
	}
	return p
}

// artifactsDir is where screenshots go: $LOGDEX_ARTIFACTS, or
// $TMPDIR/logdex-ui-artifacts (t.TempDir would delete them).
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LOGDEX_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "logdex-ui-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// copyFixtures copies fixtures/logs into dir/logs and adds extra files.
func copyFixtures(t *testing.T, dir string, extra map[string]string) string {
	t.Helper()
	logs := filepath.Join(dir, "logs")
	err := filepath.WalkDir("../fixtures/logs", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../fixtures/logs", p)
		out := filepath.Join(logs, rel)
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range extra {
		p := filepath.Join(logs, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return logs
}

// startServer indexes logs and serves them with the real UI on
// 127.0.0.1:0; it returns the base URL.
func startServer(t *testing.T, logs string, opts ...func(*server.Options)) string {
	t.Helper()
	s := newServer(t, logs, opts...)
	return serveHTTP(t, s, s.Handler())
}

// newServer indexes logs and opens a server over the index; its Reindex
// indexes them again (run it with ReindexNow: nothing runs on a timer).
func newServer(t *testing.T, logs string, opts ...func(*server.Options)) *server.Server {
	t.Helper()
	index := filepath.Join(filepath.Dir(logs), "index")
	update := func(ctx context.Context, open *mmapstore.Index) (server.ReindexResult, error) {
		res, err := indexer.Update(ctx, indexer.Options{Dir: index, Roots: []string{logs}, Logger: zerolog.Nop(), Open: open})
		return server.ReindexResult{Changed: err == nil && res.Changed}, err
	}
	if _, err := update(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	opt := server.Options{IndexDir: index, Display: []string{"logs"}, UI: web.FS(), Logger: zerolog.Nop(), Reindex: update}
	for _, o := range opts {
		o(&opt)
	}
	s, err := server.New(opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	return s
}

// serveHTTP serves h (s's handler, maybe wrapped) until the test ends.
func serveHTTP(t *testing.T, s *server.Server, h http.Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		s.Close()
	})
	return ts.URL
}

// startBrowser launches headless Chromium with a fresh profile.
func startBrowser(t *testing.T, execPath string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }() // the first Do starts the browser
	select {
	case err := <-started:
		if err != nil {
			t.Fatalf("start %s: %v", execPath, err)
		}
	case <-time.After(45 * time.Second):
		t.Fatalf("start %s: timed out", execPath)
	}
	return bctx
}

// ---------- a tab ----------

type tab struct {
	t    *testing.T
	ctx  context.Context
	base string

	mu      sync.Mutex
	dialogs []string
	errs    []string
	allowed []string // substrings of expected console errors
}

type viewport struct {
	name string
	w, h int64
}

var (
	desktop = viewport{"1280x800", 1280, 800}
	phone   = viewport{"390x844", 390, 844}
)

// newTab opens a tab at the given size and color scheme and records
// dialogs (dismissed at once) and console errors; both fail the test.
func newTab(t *testing.T, browser context.Context, base string, vp viewport, dark bool) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser)
	tb := &tab{t: t, ctx: ctx, base: base}
	if err := chromedp.Do(ctx); err != nil { // open the tab
		cancel()
		t.Fatal(err)
	}
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	console := chromedp.Console(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.dialogs = append(tb.dialogs, string(ev.Type)+": "+ev.Message)
			tb.mu.Unlock()
			go chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	})
	wg.Go(func() {
		for m, err := range console {
			if err != nil {
				return
			}
			if m.IsException() || m.Type == chromedp.ConsoleError {
				tb.mu.Lock()
				if !slices.ContainsFunc(tb.allowed, func(a string) bool { return strings.Contains(m.String(), a) }) {
					tb.errs = append(tb.errs, m.String())
				}
				tb.mu.Unlock()
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		tb.mu.Lock()
		defer tb.mu.Unlock()
		if len(tb.dialogs) > 0 {
			t.Errorf("dialogs opened: %q", tb.dialogs)
		}
		if len(tb.errs) > 0 {
			t.Errorf("console errors: %q", tb.errs)
		}
	})
	tb.setViewport(vp, dark)
	return tb
}

func (tb *tab) setViewport(vp viewport, dark bool) {
	tb.t.Helper()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	tb.do("viewport", chromedp.EmulateViewport(vp.w, vp.h), chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	}))
}

// do runs steps with a timeout.
func (tb *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to base+path and waits for the app to start.
func (tb *tab) open(path string) {
	tb.t.Helper()
	tb.do("navigate "+path, chromedp.Navigate(tb.base+path))
	tb.wait("app started", `window.logdex && ['ok', 'warm'].includes(document.querySelector('#status-chip').dataset.state)`)
}

// eval evaluates a JS expression (awaiting promises) into out.
func (tb *tab) eval(expr string, out any) {
	tb.t.Helper()
	tb.evalWithin(stepTimeout, expr, out)
}

// evalWithin is eval for a long step (one that walks many pages), bounded
// by limit instead of stepTimeout.
func (tb *tab) evalWithin(limit time.Duration, expr string, out any) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, limit)
	defer cancel()
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[[]byte](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("eval %.120s: %v", expr, err)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			tb.t.Fatalf("eval %.120s: decode %s: %v", expr, raw, err)
		}
	}
}

// wait polls a JS expression until it is truthy. (chromedp.Poll builds its
// predicate with new Function, which the page's CSP rightly forbids.)
func (tb *tab) wait(what, expr string) {
	tb.t.Helper()
	js := fmt.Sprintf(`(async () => {
		const end = performance.now() + %d;
		for (;;) {
			try { if (%s) return true; } catch (e) {}
			if (performance.now() > end) return false;
			await new Promise((r) => setTimeout(r, 15));
		}
	})()`, (stepTimeout - time.Second).Milliseconds(), expr)
	var ok bool
	tb.eval(js, &ok)
	if !ok {
		var dump string
		tb.eval(`document.querySelector('#summary')?.textContent + ' | ' + (document.querySelector('#q-error:not([hidden])')?.textContent || '') + ' | ' + location.href +
			[...document.querySelectorAll('#viewer:not([hidden]) .edge')].map((e) => ' | viewer edge ' + e.dataset.state + ': ' + e.textContent).join('')`, &dump)
		tb.t.Fatalf("timed out waiting for %s (%s); page: %s", what, expr, dump)
	}
}

// key presses keys as a user does: one keyDown carrying the text (so a
// page that prevents the default on keydown gets no character, as in a
// real browser; chromedp.KeyEvent sends a separate char event) and a
// keyUp.
func (tb *tab) key(keys string) {
	tb.t.Helper()
	tb.do("key "+keys, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, r := range keys {
			var down, up *input.DispatchKeyEventParams
			for _, ev := range kb.Encode(r) {
				switch ev.Type {
				case input.DispatchKeyEventTypeKeyDown:
					down = ev
				case input.DispatchKeyEventTypeChar:
					down.Text, down.UnmodifiedText = ev.Text, ev.UnmodifiedText
				case input.DispatchKeyEventTypeKeyUp:
					up = ev
				}
			}
			if down.Text == "" {
				down.Type = input.DispatchKeyEventTypeRawKeyDown
			}
			for _, ev := range []*input.DispatchKeyEventParams{down, up} {
				if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, *ev); err != nil {
					return err
				}
			}
		}
		return nil
	}))
}

// typeText enters text into the focused field as an IME would (any
// Unicode). chromedp.SendKeys is avoided: it reads node attributes
// without their lock (a data race under -race when the page changes them).
func (tb *tab) typeText(text string) {
	tb.t.Helper()
	tb.do("type "+text, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, input.InsertText, input.InsertTextParams{Text: text})
		return err
	}))
}

// allow makes console errors containing one of subs expected.
func (tb *tab) allow(subs ...string) {
	tb.mu.Lock()
	tb.allowed = append(tb.allowed, subs...)
	tb.mu.Unlock()
}

func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.do("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// search types q into the search box (replacing it) and presses Enter.
func (tb *tab) search(q string) {
	tb.t.Helper()
	tb.eval(`(() => { const i = document.querySelector('#q'); i.value = ''; i.focus(); return true; })()`, nil)
	tb.typeText(q)
	tb.key(kb.Enter)
}

// waitResults waits for the summary to report a finished search of q.
func (tb *tab) waitResults(q string, total int) {
	tb.t.Helper()
	want := fmt.Sprintf("%s match", fmtInt(total))
	tb.wait(fmt.Sprintf("%d results for %q", total, q), fmt.Sprintf(
		`logdex.results.params?.q === %s && logdex.results.state === 'done' && document.querySelector('#summary').textContent.startsWith(%s)`,
		jsString(q), jsString(want)))
}

// shot saves a full-page PNG screenshot as an artifact (LOGDEX_ARTIFACTS
// names the directory; with it or LOGDEX_LONG set).
func (tb *tab) shot(name string) string {
	tb.t.Helper()
	if os.Getenv("LOGDEX_ARTIFACTS") == "" && os.Getenv("LOGDEX_LONG") == "" {
		return "" // pictures for people to look at: taken when asked for (seconds of the default run)
	}
	// Let pending renders (rAF) and transitions settle before capturing.
	tb.eval(`new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => r(true), 50))))`, nil)
	ctx, cancel := context.WithTimeout(tb.ctx, stepTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(artifactsDir(tb.t), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", p)
	return p
}

// ---------- the API, for expected answers ----------

type apiHit struct {
	FileID     uint64   `json:"file_id"`
	Path       string   `json:"path"`
	Line       int64    `json:"line"`
	Time       string   `json:"time"`
	Text       string   `json:"text"`
	TextB64    string   `json:"text_b64"`
	Highlights [][2]int `json:"highlights"`
}

type apiSearch struct {
	Hits       []apiHit `json:"hits"`
	Total      int      `json:"total"`
	TotalExact *bool    `json:"total_exact"`
	NextCursor *string  `json:"next_cursor"`
}

type apiFile struct {
	ID          uint64 `json:"id"`
	Path        string `json:"path"`
	Log         string `json:"log"`
	Rotation    int    `json:"rotation"`
	Compression string `json:"compression"`
	Size        int64  `json:"size"`
	Lines       int64  `json:"lines"`
	Timed       bool   `json:"timed"`
	TimeFormat  string `json:"time_format"`
	FirstTime   string `json:"first_time"`
	LastTime    string `json:"last_time"`
}

func getJSON(t *testing.T, u string, out any) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %d %s", u, resp.StatusCode, b)
	}
	return resp.StatusCode
}

// apiSearchAll returns every hit of a search (one page of up to 10,000).
func apiSearchAll(t *testing.T, base string, params url.Values) apiSearch {
	t.Helper()
	params.Set("limit", "10000")
	var r apiSearch
	if code := getJSON(t, base+"/api/search?"+params.Encode(), &r); code != 200 {
		t.Fatalf("search %v: %d", params, code)
	}
	if r.NextCursor != nil {
		t.Fatalf("search %v: more than 10,000 hits", params)
	}
	return r
}

// getAuthed GETs u with a bearer token and returns the body.
func getAuthed(t *testing.T, u, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
	}
	return string(b)
}

func apiFiles(t *testing.T, base string) []apiFile {
	t.Helper()
	var r struct{ Files []apiFile }
	getJSON(t, base+"/api/files", &r)
	return r.Files
}

// goText decodes raw line bytes as the server's JSON does: each byte that
// is not part of valid UTF-8 becomes one U+FFFD.
func goText(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		sb.WriteRune(r) // RuneError for an invalid byte (n == 1)
		b = b[n:]
	}
	return sb.String()
}

func (h apiHit) raw() []byte {
	if h.TextB64 != "" {
		b, _ := base64.StdEncoding.DecodeString(h.TextB64)
		return b
	}
	return []byte(h.Text)
}

// marks are the highlighted texts the UI must show for h.
func (h apiHit) marks() []string {
	raw := h.raw()
	out := []string{}
	for _, r := range h.Highlights {
		out = append(out, goText(raw[r[0]:r[1]]))
	}
	return out
}

// ---------- page readers ----------

// rowJSON is one rendered hit row as the page shows it.
type rowJSON struct {
	N     int      `json:"n"`
	File  uint64   `json:"file"`
	Line  int64    `json:"line"`
	Pos   int      `json:"pos"`
	Text  string   `json:"text"`
	Marks []string `json:"marks"`
	Elide bool     `json:"elide"`
	Time  string   `json:"time"`  // as shown
	Title string   `json:"title"` // the time's tooltip
}

const readRowsJS = `[...document.querySelectorAll('#results .hit')].map((r) => {
	const t = r.querySelector('.txt').cloneNode(true);
	t.querySelectorAll('.sr-only, .note').forEach((x) => x.remove());
	const elide = !!t.querySelector('.elide');
	t.querySelectorAll('.elide').forEach((x) => x.remove());
	return { n: +r.dataset.n, file: +r.dataset.file, line: +r.dataset.line, pos: +r.getAttribute('aria-posinset'),
		text: t.textContent, marks: [...t.querySelectorAll('mark')].map((m) => m.textContent), elide,
		time: r.querySelector('.time').textContent, title: r.querySelector('.time').title };
})`

// checkRows compares the rendered rows with the API's hits.
func checkRows(t *testing.T, tb *tab, hits []apiHit) int {
	t.Helper()
	tb.wait("rows rendered", `document.querySelectorAll('#results .hit').length > 0`)
	var rows []rowJSON
	tb.eval(readRowsJS, &rows)
	if len(rows) == 0 {
		t.Fatal("no rows rendered")
	}
	for _, r := range rows {
		if r.N < 0 || r.N >= len(hits) {
			t.Fatalf("row n=%d outside %d hits", r.N, len(hits))
		}
		h := hits[r.N]
		if r.File != h.FileID || r.Line != h.Line || r.Pos != r.N+1 {
			t.Errorf("row %d: file %d line %d pos %d; API: file %d line %d", r.N, r.File, r.Line, r.Pos, h.FileID, h.Line)
		}
		want := goText(h.raw())
		if (!r.Elide && r.Text != want) || (r.Elide && !strings.HasSuffix(want, r.Text)) {
			t.Errorf("row %d (%s:%d): text %q, want %q", r.N, h.Path, h.Line, r.Text, want)
		}
		if !slices.Equal(r.Marks, h.marks()) {
			t.Errorf("row %d (%s:%d): marks %q, want %q", r.N, h.Path, h.Line, r.Marks, h.marks())
		}
		if r.Time != hitTimeText(h.Time) || r.Title != h.Time {
			t.Errorf("row %d (%s:%d): time %q (title %q), want %q (%q)", r.N, h.Path, h.Line, r.Time, r.Title, hitTimeText(h.Time), h.Time)
		}
	}
	return len(rows)
}

// hitTimeText is a hit's time as its row shows it: the wall clock in the
// time's own zone, without the year and fraction.
func hitTimeText(s string) string {
	if s == "" {
		return ""
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "bad time " + s
	}
	return tm.Format("Jan 2 15:04:05")
}

// checkScroll scrolls the results down a screen at a time, as a user
// would (waiting for a page being loaded, as a user reading would),
// collecting the rows on screen until the end of the results shows, and
// checks that they are the API's hits, each exactly once.
func checkScroll(t *testing.T, tb *tab, hits []apiHit) {
	t.Helper()
	var seen []string
	tb.eval(`(async () => {
		const sc = document.querySelector('#results'), keys = new Map();
		const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
		const end = performance.now() + 60000; // ends early when done; the margin is for loaded machines
		for (;;) {
			while (logdex.results.loading && performance.now() < end) await frame();
			for (const r of sc.querySelectorAll('.hit')) keys.set(+r.dataset.n, r.dataset.file + ':' + r.dataset.line);
			const done = logdex.results.done && !logdex.results.loading;
			if (done && sc.scrollTop + sc.clientHeight >= sc.scrollHeight - 1) break;
			if (performance.now() > end) break;
			sc.scrollTop += sc.clientHeight * 0.9;
			await frame();
		}
		return [...keys.entries()].sort((a, b) => a[0] - b[0]).map((e) => e[1]);
	})()`, &seen)
	if len(seen) != len(hits) {
		t.Fatalf("saw %d distinct rows while scrolling, API has %d hits", len(seen), len(hits))
	}
	for i, h := range hits {
		if k := fmt.Sprintf("%d:%d", h.FileID, h.Line); seen[i] != k {
			t.Fatalf("row %d is %s, API hit %d is %s", i, seen[i], i, k)
		}
	}
}

// readLog reads a log file by its display path ("logs/...").
func readLog(t *testing.T, logs, display string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(logs, strings.TrimPrefix(display, "logs/")))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// checkLayout waits until the rendered result rows neither overlap nor
// leave gaps (row heights are measured asynchronously).
func checkLayout(t *testing.T, tb *tab) {
	t.Helper()
	tb.wait("rows laid out without overlaps or gaps", `(() => { let prev = null;
		for (const r of document.querySelectorAll('#results .vlist > *')) {
			const b = r.getBoundingClientRect();
			if (prev && Math.abs(b.top - prev.bottom) > 0.5) return false;
			prev = b;
		}
		return prev !== null; })()`)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func fmtInt(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ---------- tests ----------
