package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

func TestEndpoints(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	for _, tc := range []struct {
		path     string
		code     int
		ctype    string
		contains string
	}{
		{"/healthz", 200, "application/json", `"alive"`},
		{"/readyz", 200, "application/json", `"ready"`},
		{"/api/status", 200, "application/json", `"files":20`},
		{"/api/files", 200, "application/json", `"path":"logs/app/api.log"`},
		{"/api/search?q=error", 200, "application/json", `"total":48`},
		{"/api/search/raw?q=error", 200, "text/plain; charset=utf-8", "ErrorHandler"},
		{"/api/files/1/content", 200, "text/plain; charset=utf-8", ""},
		{"/metrics", 200, "text/plain", "logdex_http_requests_total"},
		{"/", 200, "text/html; charset=utf-8", "logdex"},
		{"/assets/missing.js", 404, "", ""},
		{"/nope", 404, "application/json", `"error":"not found"`},
		{"/api/nope", 404, "application/json", `"error"`},
		// A pair URL.Query would drop (the search would run without it).
		{"/api/search?q=error&from=%ZZ", 400, "application/json", `malformed query string`},
		{"/api/search?q=error;from=2026-01-01", 400, "application/json", `malformed query string`},
		// A parameter the route does not read: ignored, the answer would be
		// to another question (all of time, every log, the whole file).
		{"/api/search?q=error&since=1h", 400, "application/json", `unknown parameter \"since\" (a time range is from and to); known: q, mode, case, from, to, untimed, order, log, limit, context, total, cursor`},
		{"/api/search?q=error&frmo=1h", 400, "application/json", `unknown parameter \"frmo\"; known: q, mode`},
		{"/api/search?q=error&until=2h&since=1h&b=1", 400, "application/json", `unknown parameters \"b\", \"since\", \"until\" (a time range is from and to); known: q,`},
		{"/api/search?q=error&from=2026-01-01", 200, "application/json", `"hits"`},
		{"/api/search/raw?q=error&limit=10", 400, "application/json", `unknown parameter \"limit\"`},
		{"/api/histogram?q=error&buckets=10&lgo=app", 400, "application/json", `unknown parameter \"lgo\"`},
		{"/api/histogram?q=error&buckets=10&log=logs/app/api.log", 200, "application/json", `"buckets"`},
		// A log the index has no file of: "no hits" alone would say it has
		// none (a warning, not an error: live, a log may come later).
		{"/api/histogram?q=error&log=api.log", 200, "application/json", `"warnings":["no log \"api.log\" in the index (yet)`},
		{"/api/search?q=error&log=logs/app/api.lgo", 200, "application/json", `"total":0,"total_exact":true`},
		{"/api/search?q=error&log=logs/app/api.lgo", 200, "application/json", `"warnings":["no log \"logs/app/api.lgo\" in the index (yet): a log is named by its path, as the log of /api/files (logs/app/api.log)"]`},
		{"/api/search?q=error&log=logs/app/api.log", 200, "application/json", `"path":"logs/app/api.log"`},
		{"/api/tail?q=error&from=1h", 400, "application/json", `/api/tail takes q, mode and case only`},
		{"/api/tail?q=error&follow=1", 400, "application/json", `unknown parameter \"follow\"`},
		{"/api/files?log=app", 400, "application/json", `unknown parameter \"log\": this endpoint takes none`},
		{"/api/status?verbose=1", 400, "application/json", `takes none`},
		{"/api/files/1/content?lines=5", 400, "application/json", `unknown parameter \"lines\"; known: line, before, after`},
		{"/api/files/1/content?before=5", 400, "application/json", `before and after need line`},
		{"/api/files/1/content?line=5&before=1&after=1", 200, "application/json", `"lines"`},
	} {
		// Bounded: a route that took a parameter it should refuse might
		// answer with a stream that never ends (/api/tail).
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.ts.URL+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := do(t, ts.ts.Client(), req)
		cancel()
		if r.code != tc.code || !strings.HasPrefix(r.header.Get("Content-Type"), tc.ctype) || !strings.Contains(string(r.body), tc.contains) {
			t.Errorf("%s: %d %q %.200s", tc.path, r.code, r.header.Get("Content-Type"), r.body)
		}
		if r.header.Get("X-Request-Id") == "" {
			t.Errorf("%s: no request id", tc.path)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, ts.ts.URL+"/api/search?q=a", nil)
	if r := do(t, ts.ts.Client(), req); r.code != http.StatusMethodNotAllowed || r.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d, Allow %q", r.code, r.header.Get("Allow"))
	}
	var st Status
	ts.get(t, "/api/status").json(t, &st)
	if !st.Ready || st.Index == nil || st.Index.Lines != 2570 || st.Index.Segments != 1 || st.Index.IndexBytes == 0 ||
		st.Index.ResidentBytes == 0 || st.Searches.Max == 0 || len(st.Index.Roots) != 1 || st.Index.Roots[0] != "logs" ||
		!st.Watch.Active || st.Watch.Error != "" {
		t.Errorf("status %+v %+v", st, st.Index)
	}
	if st.Build.Go != runtime.Version() || st.Build.Version == "" || st.Build.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("status build %+v", st.Build)
	}
	// Per-route metrics carry the pattern, not the path.
	m := string(ts.get(t, "/metrics").body)
	for _, want := range []string{`route="/api/files/{id}/content"`, `logdex_search_duration_seconds_count{endpoint="search"}`,
		"logdex_index_resident_bytes", "logdex_index_bytes", "logdex_sendfile_bytes_total", `route="unmatched"`,
		`goversion="` + runtime.Version() + `"`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestWarmupAndUI evicts the index from the page cache, lets the staged
// warmer run and watches /api/status report residency rising to 100%.
func TestWarmupAndUI(t *testing.T) {
	fx := newFixture(t)
	if err := mmapstore.Evict(fx.index); err != nil {
		t.Fatal(err)
	}
	ui := map[string]string{"index.html": "<p>real ui</p>", "assets/app.js": "console.log(1)"}
	ts := newTestServer(t, fx, func(o *Options) {
		o.Warmup = &mmapstore.WarmOptions{Mode: mmapstore.WarmStaged}
		o.UI = mapFS(ui)
	})
	var st Status
	deadline := time.Now().Add(10 * time.Second)
	for {
		ts.get(t, "/api/status").json(t, &st)
		if st.Warmup == nil {
			t.Fatal("no warmup in /api/status")
		}
		if st.Warmup.State == mmapstore.StateDone && st.Warmup.Resident == st.Warmup.Mapped {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("warm-up not done: %+v", st.Warmup)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st.Warmup.Mode != mmapstore.WarmStaged || len(st.Warmup.Files) == 0 || st.Warmup.Mapped == 0 {
		t.Errorf("warmup %+v", st.Warmup)
	}
	m := string(ts.get(t, "/metrics").body)
	for _, want := range []string{"logdex_warmup_resident_bytes{file=", `logdex_warmup_state{mode="staged",state="done"} 1`} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if r := ts.get(t, "/"); !strings.Contains(string(r.body), "real ui") {
		t.Errorf("/: %s", r.body)
	}
	if r := ts.get(t, "/assets/app.js"); r.code != 200 || string(r.body) != ui["assets/app.js"] {
		t.Errorf("asset: %d %s", r.code, r.body)
	}
}

func TestNotReady(t *testing.T) {
	fx := newFixture(t)
	s, err := New(Options{IndexDir: fx.index, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{Server: s, fx: fx}
	ts.ts = newHTTPTest(t, s)
	for _, p := range []string{"/readyz", "/api/search?q=a", "/api/search/raw?q=a", "/api/files", "/api/files/1/content"} {
		r := ts.get(t, p)
		if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Errorf("%s before the index is open: %d %v", p, r.code, r.header)
		}
	}
	if r := ts.get(t, "/healthz"); r.code != 200 {
		t.Errorf("healthz: %d", r.code)
	}
	var st Status
	ts.get(t, "/api/status").json(t, &st)
	if st.Ready || st.Index != nil {
		t.Errorf("status %+v", st)
	}
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	if r := ts.get(t, "/readyz"); r.code != 200 {
		t.Errorf("readyz after Reload: %d", r.code)
	}
}

func TestAuth(t *testing.T) {
	fx := newFixture(t)
	const token = "s3cret-token"
	for _, withToken := range []bool{false, true} {
		ts := newTestServer(t, fx, func(o *Options) {
			if withToken {
				o.AuthToken = token
			}
		})
		for _, tc := range []struct {
			path, auth string
			code       int // with a token configured
		}{
			{"/api/search?q=error", "", 401},
			{"/api/search?q=error", "Bearer " + token, 200},
			{"/api/search?q=error", "Bearer " + token + "x", 401},
			{"/api/search?q=error", "Bearer " + token[:5], 401},
			{"/api/search?q=error", "bearer " + token, 401},
			{"/api/search?q=error", token, 401},
			{"/api/search/raw?q=error", "", 401},
			{"/api/files", "", 401},
			{"/api/files/1/content", "", 401},
			{"/api/files/1/content", "Bearer " + token, 200},
			{"/api/status", "", 401},
			{"/metrics", "", 401},
			{"/metrics", "Bearer " + token, 200},
			{"/%61pi/search?q=error", "", 401},
			{"/healthz", "", 200},
			{"/readyz", "", 200},
			{"/", "", 200},
			{"/nope", "", 401},
		} {
			want := tc.code
			if !withToken && want == 401 {
				want = 200
				if strings.Contains(tc.path, "nope") || strings.Contains(tc.path, "%61") {
					want = 404
				}
			}
			var hdr []string
			if tc.auth != "" {
				hdr = []string{"Authorization", tc.auth}
			}
			r := ts.get(t, tc.path, hdr...)
			if r.code != want {
				t.Errorf("token %v: %s with %q: %d, want %d", withToken, tc.path, tc.auth, r.code, want)
			}
			if r.code == 401 && r.header.Get("WWW-Authenticate") == "" {
				t.Errorf("401 without WWW-Authenticate")
			}
		}
	}
}

// TestHostCheck: without a token, only requests for this machine's names
// are answered (a page elsewhere that rebinds its own name to 127.0.0.1
// sends that name); with a token, the token decides.
func TestHostCheck(t *testing.T) {
	fx := newFixture(t)
	for _, withToken := range []bool{false, true} {
		ts := newTestServer(t, fx, func(o *Options) {
			if withToken {
				o.AuthToken = "s3cret-token"
			}
		})
		for _, tc := range []struct {
			host string
			ok   bool
		}{
			{"localhost:7070", true},
			{"LOCALHOST", true},
			{"localhost.", true},
			{"app.localhost:7070", true},
			{"127.0.0.1:7070", true},
			{"127.0.0.2", true},
			{"[::1]:7070", true},
			{"evil.example:7070", false},
			{"evil.example", false},
			{"10.0.0.5:7070", false},
			{"localhost.evil.example", false},
		} {
			for _, path := range []string{"/api/search?q=error", "/"} {
				req, _ := http.NewRequest(http.MethodGet, ts.ts.URL+path, nil)
				req.Host = tc.host
				if withToken {
					req.Header.Set("Authorization", "Bearer s3cret-token")
				}
				resp, err := ts.ts.Client().Do(req)
				must(t, err)
				resp.Body.Close()
				want := http.StatusOK
				if !tc.ok && !withToken {
					want = http.StatusMisdirectedRequest
				}
				if resp.StatusCode != want {
					t.Errorf("token %v, Host %q, %s: %d, want %d", withToken, tc.host, path, resp.StatusCode, want)
				}
			}
		}
	}
}

// TestOverload holds every search slot and checks that one more search is
// refused at once with 503 and Retry-After, that a queued one waits at
// most QueueWait, and that a panic in a search becomes a generic 500.
func TestOverload(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx, func(o *Options) { o.MaxSearches, o.MaxQueued, o.QueueWait = 2, 1, 100*time.Millisecond })
	entered := make(chan struct{}, 10)
	unblock := make(chan struct{})
	ts.hookSearch = func() {
		entered <- struct{}{}
		<-unblock
	}
	var wg sync.WaitGroup
	codes := make(chan int, 10)
	for _, p := range []string{"/api/search?q=error", "/api/search/raw?q=error"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := ts.ts.Client().Get(ts.ts.URL + p)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	<-entered
	<-entered
	// One may queue: it waits QueueWait and gives up.
	queued := make(chan *response, 1)
	go func() { queued <- ts.get(t, "/api/search?q=timeout") }()
	time.Sleep(20 * time.Millisecond)
	for _, p := range []string{"/api/search?q=GET", "/api/search/raw?q=GET"} {
		t0 := time.Now()
		r := ts.get(t, p)
		if r.code != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || time.Since(t0) > 50*time.Millisecond {
			t.Errorf("%s while saturated: %d %v after %v", p, r.code, r.header, time.Since(t0))
		}
	}
	if r := <-queued; r.code != http.StatusServiceUnavailable {
		t.Errorf("queued search: %d", r.code)
	}
	// Cheap endpoints are not limited.
	if r := ts.get(t, "/api/files"); r.code != 200 {
		t.Errorf("files while saturated: %d", r.code)
	}
	close(unblock)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("held search: %d", c)
		}
	}
	if v := ts.metricValue(t, "logdex_search_rejected_total"); v != 3 {
		t.Errorf("rejected %v", v)
	}

	ts.hookSearch = func() { panic("boom at /secret/path") }
	r := ts.get(t, "/api/search?q=error")
	if r.code != 500 || strings.Contains(string(r.body), "boom") || strings.Contains(string(r.body), "secret") {
		t.Errorf("panic: %d %s", r.code, r.body)
	}
	ts.hookSearch = nil
	if r := ts.get(t, "/api/search?q=error"); r.code != 200 {
		t.Errorf("after a panic: %d", r.code)
	}
}

func TestSearchTimeout(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx, func(o *Options) { o.SearchTimeout = time.Nanosecond })
	r := ts.get(t, "/api/search?q=error")
	if r.code != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "longer than") {
		t.Fatalf("%d %s", r.code, r.body)
	}
}

// TestGracefulShutdown: in-flight requests finish, new ones are refused,
// the index closes after its last reader.
func TestGracefulShutdown(t *testing.T) {
	fx := newFixture(t)
	s, err := New(Options{IndexDir: fx.index, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	sn := s.cur.Load()
	entered, unblock := make(chan struct{}), make(chan struct{})
	s.hookSearch = func() { close(entered); <-unblock }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	inflight := make(chan *response, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, url+"/api/search/raw?q=error", nil)
		inflight <- do(t, client, req)
	}()
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(context.Background()) }()
	time.Sleep(50 * time.Millisecond)
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned with a request in flight: %v", err)
	default:
	}
	if _, err := (&http.Client{Transport: &http.Transport{}}).Get(url + "/healthz"); err == nil {
		t.Fatal("new connection accepted during shutdown")
	}
	close(unblock)
	r := <-inflight
	if r.code != 200 || !strings.Contains(string(r.body), "ErrorHandler") {
		t.Fatalf("in-flight request: %d %.100s", r.code, r.body)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		t.Fatal(err)
	}
	if sn.refs.Load() != 0 || sn.ix.Acquire() == nil {
		t.Fatal("index not closed after shutdown")
	}
	if _, ok := s.Ready(); ok {
		t.Fatal("ready after shutdown")
	}
}

// TestReindexSwap re-indexes while a download holds the old snapshot: the
// download completes from it, new requests see the new one, and the old
// one closes when released.
func TestReindexSwap(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx, func(o *Options) { o.Reindex = fx.reindexFunc() })
	old := ts.cur.Load()
	entered, unblock := make(chan struct{}), make(chan struct{})
	ts.hookRawSend = func() { close(entered); <-unblock }
	want := expectedRaw(t, ts, "q=error")
	got := make(chan *response, 1)
	go func() { got <- ts.get(t, "/api/search/raw?q=error") }()
	<-entered
	ts.hookRawSend = nil

	writeFile(t, fx.logs+"/app/new.log", "a fresh zanzibar line\n")
	if sr := ts.search(t, "q=zanzibar"); sr.Total != 0 {
		t.Fatalf("new file visible before re-index")
	}
	if err := ts.ReindexNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sr := ts.search(t, "q=zanzibar"); sr.Total != 1 || sr.Hits[0].Path != "logs/app/new.log" {
		t.Fatalf("after re-index: %+v", sr)
	}
	if old.refs.Load() != 1 {
		t.Fatalf("old snapshot refs %d while a download holds it", old.refs.Load())
	}
	close(unblock)
	r := <-got
	if r.code != 200 || string(r.body) != string(want) {
		t.Fatalf("download across the swap: %d, %d bytes, want %d", r.code, len(r.body), len(want))
	}
	// The handler releases the snapshot just after the last byte is out.
	for i := 0; i < 500 && old.refs.Load() != 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if old.refs.Load() != 0 {
		t.Fatalf("old snapshot not closed: refs %d", old.refs.Load())
	}
	var st Status
	ts.get(t, "/api/status").json(t, &st)
	if st.Reindex.Runs != 1 || st.Reindex.Last == nil || st.Reindex.Last.Result != "updated" || st.Index.Generation != 2 {
		t.Fatalf("status %+v %+v", st.Reindex, st.Reindex.Last)
	}
	// Nothing changed: no new snapshot.
	ts.ReindexNow(context.Background())
	if g, _ := ts.Ready(); g != 2 {
		t.Fatalf("generation %d after a no-op re-index", g)
	}
	ts.get(t, "/api/status").json(t, &st)
	if st.Reindex.Last.Result != "unchanged" {
		t.Fatalf("last %+v", st.Reindex.Last)
	}
	// A failing re-index keeps the old snapshot and is reported.
	ts.opt.Reindex = func(context.Context, *mmapstore.Index) (ReindexResult, error) {
		return ReindexResult{}, fmt.Errorf("disk full under %s", fx.index)
	}
	ts.ReindexNow(context.Background())
	ts.get(t, "/api/status").json(t, &st)
	if st.Reindex.Last.Result != "error" || st.Reindex.Failures != 1 || strings.Contains(st.Reindex.Last.Error, fx.index) || !st.Ready {
		t.Fatalf("failed run: %+v", st.Reindex.Last)
	}
}

// TestReindexLoop: the timer and TriggerReindex both run re-indexing.
func TestReindexLoop(t *testing.T) {
	fx := newFixture(t)
	runs := make(chan struct{}, 10)
	s, err := New(Options{IndexDir: fx.index, Logger: zerolog.Nop(), ReindexEvery: 30 * time.Millisecond,
		Reindex: func(context.Context, *mmapstore.Index) (ReindexResult, error) {
			runs <- struct{}{}
			return ReindexResult{}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go s.Serve(ln)
	for i := 0; i < 2; i++ {
		select {
		case <-runs:
		case <-time.After(5 * time.Second):
			t.Fatal("timer did not re-index")
		}
	}
	if _, ok := s.Ready(); !ok {
		t.Fatal("loop did not open the index")
	}
	s.Shutdown(context.Background())
}

func newHTTPTest(t *testing.T, s *Server) *httptestServer {
	ts := newHTTPTestServer(s.Handler())
	t.Cleanup(func() { ts.Close(); s.Close() })
	return ts
}

// TestWriteDeadlines: a download that keeps moving outlives WriteTimeout; a
// client that stops reading is cut after it; oversized headers get 431.
func TestWriteDeadlines(t *testing.T) {
	fx := newFixture(t)
	// 16 MiB in lines too long to tokenize: quick to index under -race.
	big := strings.Repeat(strings.Repeat("padding for a long download ", 48<<10)+"\n", 12)
	writeFile(t, fx.logs+"/big.log", big)
	fx.reindex(t)
	s, err := New(Options{IndexDir: fx.index, Logger: zerolog.Nop(), WriteTimeout: time.Second, SendfileChunk: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Reload(); err != nil {
		t.Fatal(err)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go s.Serve(ln)
	defer s.Close()
	var id uint64
	sn := s.acquire()
	for _, f := range sn.s.Files() {
		if strings.HasSuffix(f.Path, "/big.log") {
			id = f.ID
		}
	}
	sn.unref()
	url := fmt.Sprintf("http://%s/api/files/%d/content", ln.Addr(), id)
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	// (First: net/http lingers 500ms on the connection it refuses.)
	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/healthz", nil)
	req.Header.Set("X-Big", strings.Repeat("x", 64<<10))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("64 KiB header: %d", resp.StatusCode)
	}

	read := func(pause time.Duration, every int) (int, error) {
		resp, err := client.Get(url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		buf := make([]byte, 1<<20)
		n := 0
		for i := 0; ; i++ {
			if i%every == 0 {
				time.Sleep(pause)
			}
			m, err := io.ReadFull(resp.Body, buf)
			n += m
			if err == io.EOF || err == io.ErrUnexpectedEOF && n == len(big) {
				return n, nil
			}
			if err != nil {
				return n, err
			}
		}
	}
	// Slow but steady: ~2.4s in all, far past the 1s WriteTimeout (whose
	// margin keeps a loaded machine's scheduling delays from cutting it).
	if n, err := read(300*time.Millisecond, 2); err != nil || n != len(big) {
		t.Fatalf("steady slow reader: %d of %d bytes, %v", n, len(big), err)
	}
	// Stalled for 3s after the first read: cut.
	if n, err := read(3*time.Second, 1<<30); err == nil || n == len(big) {
		t.Fatalf("stalled reader got %d bytes, err %v", n, err)
	}

}

// TestClientGoneQuietly: a search or histogram whose client left while it
// queued or ran is no server error (no error logged, no 500 counted).
func TestClientGoneQuietly(t *testing.T) {
	fx := newFixture(t)
	var logs syncBuffer
	ts := newTestServer(t, fx, func(o *Options) { o.Logger = zerolog.New(&logs) })
	for _, path := range []string{"/api/search?q=error&total=exact", "/api/histogram?q=error"} {
		ctx, cancel := context.WithCancel(context.Background())
		gone := make(chan struct{})
		ts.hookSearch = func() {
			cancel() // the client leaves while the search holds its slot
			<-gone
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.ts.URL+path, nil)
		go func() {
			time.Sleep(100 * time.Millisecond) // the server sees the connection close
			close(gone)
		}()
		if resp, err := ts.ts.Client().Do(req); err == nil {
			resp.Body.Close()
		}
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(logs.String(), `"path":"`+strings.Split(path, "?")[0]) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // its access-log line: the handler returned
		}
		if s := logs.String(); strings.Contains(s, `"level":"error"`) {
			t.Fatalf("%s: an error was logged for a client that left:\n%s", path, s)
		}
	}
	ts.hookSearch = nil
}

// syncBuffer is a bytes.Buffer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
