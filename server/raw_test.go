package server

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/query"
)

// expectedRaw is what /api/search/raw must send for a query: each hit's
// line with its '\n' (from the file, or added to an unterminated last
// line), in order.
func expectedRaw(t *testing.T, ts *testServer, params string) []byte {
	t.Helper()
	sr := ts.search(t, params+"&limit=10000")
	if sr.NextCursor != nil {
		t.Fatal("too many hits for the test")
	}
	var want []byte
	for _, h := range sr.Hits {
		b := ts.fx.fileBytes(t, h.Path)
		want = append(append(want, b[h.Offset:h.Offset+h.Length]...), '\n')
	}
	return want
}

func TestRawEqualsHits(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	for _, params := range []string{
		"q=error", "q=" + url.QueryEscape(`"connection lost" OR broken`), "q=no+newline&mode=literal",
		"q=" + url.QueryEscape(`\r$`) + "&mode=regex", "q=GET&case=sensitive", "q=zzzznothing",
		"q=error&order=oldest", "q=error&order=newest",
	} {
		t.Run(params, func(t *testing.T) {
			want := expectedRaw(t, ts, params)
			r := ts.get(t, "/api/search/raw?"+params)
			if r.code != http.StatusOK {
				t.Fatalf("%d %s", r.code, r.body)
			}
			if !bytes.Equal(r.body, want) {
				t.Fatalf("raw body (%d bytes) differs from the hits' lines (%d bytes)", len(r.body), len(want))
			}
			if r.header.Get("Content-Length") != strconv.Itoa(len(want)) || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Fatalf("headers %v", r.header)
			}
		})
	}
}

// allFiles concatenates the fixture's files in display-path order, a '\n'
// added to each that lacks a final one (as the raw stream does); it also
// returns the number of non-empty files and of added newlines.
func allFiles(t *testing.T, fx *fixture) ([]byte, int, int) {
	var names []string
	filepath.WalkDir(fx.logs, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			names = append(names, p)
		}
		return nil
	})
	sort.Strings(names)
	var all []byte
	n, added := 0, 0
	for _, p := range names {
		b, _ := os.ReadFile(p)
		if len(b) > 0 {
			n++
		}
		all = append(all, b...)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			all = append(all, '\n')
			added++
		}
	}
	return all, n, added
}

// metricValue scrapes one sample from /metrics.
func (ts *testServer) metricValue(t *testing.T, name string) float64 {
	t.Helper()
	r := ts.get(t, "/metrics")
	for _, l := range strings.Split(string(r.body), "\n") {
		if v, ok := strings.CutPrefix(l, name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestRawCoalesces matches every line: each file must go out as one range,
// one sendfile call (files are far below SendfileChunk).
func TestRawCoalesces(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	all, nfiles, added := allFiles(t, fx)
	calls0 := ts.metricValue(t, "logdex_sendfile_calls_total")
	bytes0 := ts.metricValue(t, "logdex_sendfile_bytes_total")
	r := ts.get(t, "/api/search/raw?mode=regex&q=%5E")
	if !bytes.Equal(r.body, all) {
		t.Fatalf("raw of every line (%d bytes) is not the files' concatenation (%d bytes)", len(r.body), len(all))
	}
	calls := ts.metricValue(t, "logdex_sendfile_calls_total") - calls0
	sent := ts.metricValue(t, "logdex_sendfile_bytes_total") - bytes0
	if int(calls) != nfiles || int(sent) != len(all)-added {
		t.Fatalf("%v sendfile calls for %d files, %v bytes for %d", calls, nfiles, sent, len(all)-added)
	}
}

// TestRawStreamingFraming forces the streaming mode: no Content-Length,
// the connection closes at the end, same bytes.
func TestRawStreamingFraming(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	ts.rawBuffer.ranges = 1
	all, _, _ := allFiles(t, fx)
	resp, err := ts.ts.Client().Get(ts.ts.URL + "/api/search/raw?mode=regex&q=%5E")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentLength != -1 || len(resp.TransferEncoding) != 0 || !resp.Close {
		t.Fatalf("framing: length %d, transfer-encoding %v, close %v", resp.ContentLength, resp.TransferEncoding, resp.Close)
	}
	if !bytes.Equal(body, all) {
		t.Fatalf("streamed %d bytes, want %d", len(body), len(all))
	}
	if exp := expectedRaw(t, ts, "q=error"); !bytes.Equal(ts.get(t, "/api/search/raw?q=error").body, exp) {
		t.Fatal("streamed raw of q=error differs")
	}
}

// TestRawFileTruncatedDuringSend truncates a file after its ranges were
// found: the response is cut (the client sees an error, not a short body
// passing for complete) and the server keeps serving.
func TestRawFileTruncatedDuringSend(t *testing.T) {
	for _, stream := range []bool{false, true} {
		fx := newFixture(t)
		ts := newTestServer(t, fx)
		if stream {
			ts.rawBuffer.ranges = 1
		}
		ts.hookRawSend = func() {
			if err := os.Truncate(filepath.Join(fx.logs, "app/api.log"), 100); err != nil {
				t.Error(err)
			}
		}
		resp, err := ts.ts.Client().Get(ts.ts.URL + "/api/search/raw?q=error")
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !stream && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("buffered: read error %v, want unexpected EOF", err)
		}
		ts.hookRawSend = nil
		if r := ts.get(t, "/healthz"); r.code != http.StatusOK {
			t.Fatalf("healthz after a cut response: %d", r.code)
		}
		// Hits now come from what is left, with a warning.
		sr := ts.search(t, "q=error")
		if len(sr.Warnings) == 0 || !strings.Contains(sr.Warnings[0], "logs/app/api.log") {
			t.Fatalf("warnings %v", sr.Warnings)
		}
		if r := ts.get(t, "/api/search/raw?q=error"); r.code != http.StatusOK || !bytes.Equal(r.body, expectedRaw(t, ts, "q=error")) {
			t.Fatalf("raw after truncation: %d", r.code)
		}
	}
}

func TestRawHead(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	want := expectedRaw(t, ts, "q=error")
	req, _ := http.NewRequest(http.MethodHead, ts.ts.URL+"/api/search/raw?q=error", nil)
	sent0 := ts.metricValue(t, "logdex_sendfile_bytes_total")
	r := do(t, ts.ts.Client(), req)
	if r.code != 200 || len(r.body) != 0 || r.header.Get("Content-Length") != strconv.Itoa(len(want)) {
		t.Fatalf("HEAD: %d %v", r.code, r.header)
	}
	if ts.metricValue(t, "logdex_sendfile_bytes_total") != sent0 {
		t.Fatal("HEAD read the file")
	}
}

func TestNextChunk(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name      string
		cur, sent int64
		took      time.Duration
		minChunk  int64
		timeout   time.Duration
		want      int64
	}{
		{"fast client doubles", 4 * mib, 4 * mib, 2 * time.Millisecond, 4 * mib, 30 * time.Second, 8 * mib},
		{"up to the cap", 48 * mib, 48 * mib, 2 * time.Millisecond, 4 * mib, 30 * time.Second, maxSendfileChunk},
		{"slow client stays at the minimum", 4 * mib, 4 * mib, 10 * time.Second, 4 * mib, 30 * time.Second, 4 * mib},
		{"in between: an eighth of the timeout's worth", 16 * mib, 16 * mib, 4 * time.Second, 4 * mib, 32 * time.Second, 16 * mib},
		{"a slower client shrinks it", 32 * mib, 32 * mib, 8 * time.Second, 4 * mib, 32 * time.Second, 16 * mib},
		{"short send (end of file) keeps the size", 8 * mib, mib, time.Millisecond, 4 * mib, 30 * time.Second, 8 * mib},
		{"no timeout: the cap", 4 * mib, 4 * mib, time.Second, 4 * mib, 0, maxSendfileChunk},
		{"a minimum above the cap wins", 1 << 32, 1 << 32, time.Second, 1 << 32, 30 * time.Second, 1 << 32},
	}
	for _, c := range cases {
		if got := nextChunk(c.cur, c.sent, c.took, c.minChunk, c.timeout); got != c.want {
			t.Errorf("%s: nextChunk = %d, want %d", c.name, got, c.want)
		}
	}
}

// newTinyFixture indexes the given files (path relative to the logs
// root -> content) instead of the sample tree.
func newTinyFixture(t testing.TB, files map[string]string) *fixture {
	t.Helper()
	tmp := t.TempDir()
	fx := &fixture{logs: filepath.Join(tmp, "logs"), index: filepath.Join(tmp, "index")}
	for name, content := range files {
		p := filepath.Join(fx.logs, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, content)
	}
	fx.reindex(t)
	return fx
}

// TestRawUnterminatedLastLine: a file's last line without '\n' gets one in
// the raw stream, as grep prints it, instead of running into the next
// file's first line; in both framings.
func TestRawUnterminatedLastLine(t *testing.T) {
	fx := newTinyFixture(t, map[string]string{"a.log": "a match\nb match", "b.log": "c match\n", "c.log": "no\nd match"})
	for _, stream := range []bool{false, true} {
		ts := newTestServer(t, fx)
		if stream {
			ts.rawBuffer.ranges = 1
		}
		r := ts.get(t, "/api/search/raw?q=match&mode=literal")
		if want := "a match\nb match\nc match\nd match\n"; r.code != http.StatusOK || string(r.body) != want {
			t.Fatalf("stream=%v: %d %q, want %q", stream, r.code, r.body, want)
		}
		if cl := r.header.Get("Content-Length"); !stream && cl != strconv.Itoa(len(r.body)) {
			t.Fatalf("Content-Length %s for %d bytes", cl, len(r.body))
		}
	}
}

// TestRawRotatedAfterCheck rotates a file after the search checked it and
// before the raw endpoint opens it: the lines sent are the checked file's
// (at the offsets the search found them), not the new file's bytes.
func TestRawRotatedAfterCheck(t *testing.T) {
	for _, stream := range []bool{false, true} {
		fx := newTinyFixture(t, map[string]string{"app.log": "one match\ntwo\nthree match\n"})
		ts := newTestServer(t, fx)
		if stream {
			ts.rawBuffer.ranges = 1
		}
		ts.hookRawFile = func(*query.File) {
			p := filepath.Join(fx.logs, "app.log")
			if err := os.Rename(p, p+".1"); err != nil {
				t.Error(err)
			}
			// The same size, other bytes: offsets stay in range.
			writeFile(t, p, "XXX XXXXX\nXXX\nXXXXX XXXXX\n")
		}
		r := ts.get(t, "/api/search/raw?q=match&mode=literal")
		if want := "one match\nthree match\n"; r.code != http.StatusOK || string(r.body) != want {
			t.Fatalf("stream=%v: %d %q, want %q", stream, r.code, r.body, want)
		}
	}
}

// TestRawLeavesOutBinaryLines: as grep prints no lines of a binary file
// (all of it when a NUL comes within grep's first 96 KiB read, else from
// its first NUL on), neither does the raw stream; they count as warnings.
func TestRawLeavesOutBinaryLines(t *testing.T) {
	text := strings.Repeat("text match\n", 10_000) // past grep's first read
	fx := newTinyFixture(t, map[string]string{
		"a.log": text + "b\x00c match\nafter match\n", "b.log": "plain match\n",
		"c.bin": "early match\n\x00late match\n"})
	ts := newTestServer(t, fx)
	r := ts.get(t, "/api/search/raw?q=match&mode=literal")
	if want := text + "plain match\n"; r.code != http.StatusOK || string(r.body) != want {
		t.Fatalf("%d: %d bytes, want %d", r.code, len(r.body), len(want))
	}
	if r.header.Get("X-Logdex-Warnings") != "4" {
		t.Fatalf("warnings header %q", r.header.Get("X-Logdex-Warnings"))
	}
	// The JSON API returns them, marked.
	binary := map[string]int{}
	sr := ts.search(t, "q=%22late+match%22+OR+%22early+match%22+OR+%22after+match%22+OR+%22plain+match%22&mode=query")
	for _, h := range sr.Hits {
		if h.Binary {
			binary[h.Text]++
		}
	}
	if len(sr.Hits) != 4 || !maps.Equal(binary, map[string]int{"early match": 1, "late match": 1, "after match": 1}) {
		t.Fatalf("%d hits, binary ones %v", len(sr.Hits), binary)
	}
}
