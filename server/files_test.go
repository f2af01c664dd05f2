package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type filesResp struct {
	Files []fileJSON `json:"files"`
}

// fileID finds a file's id by display path.
func (ts *testServer) fileID(t *testing.T, display string) uint64 {
	t.Helper()
	var fr filesResp
	ts.get(t, "/api/files").json(t, &fr)
	for _, f := range fr.Files {
		if f.Path == display {
			return f.ID
		}
	}
	t.Fatalf("no file %s", display)
	return 0
}

func TestFilesList(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	var fr filesResp
	ts.get(t, "/api/files").json(t, &fr)
	if len(fr.Files) != 20 {
		t.Fatalf("%d files", len(fr.Files))
	}
	for _, f := range fr.Files {
		st, err := os.Stat(filepath.Join(fx.logs, strings.TrimPrefix(f.Path, "logs/")))
		if err != nil {
			t.Fatal(err)
		}
		if f.Size != st.Size() || f.IndexedBytes > f.Size || f.Lines == 0 || !f.MTime.Equal(st.ModTime()) {
			t.Errorf("%+v vs size %d mtime %v", f, st.Size(), st.ModTime())
		}
	}
}

func TestContentRanges(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	const path = "logs/app/api.log"
	id := ts.fileID(t, path)
	data := fx.fileBytes(t, path)
	size := len(data)
	url := fmt.Sprintf("/api/files/%d/content", id)
	for _, tc := range []struct {
		name, rng string
		code      int
		want      []byte   // single body
		parts     [][]byte // multipart bodies
	}{
		{"whole", "", 200, data, nil},
		{"first bytes", "bytes=0-9", 206, data[:10], nil},
		{"suffix", "bytes=-10", 206, data[size-10:], nil},
		{"open end", "bytes=5-", 206, data[5:], nil},
		{"past the end is clipped", fmt.Sprintf("bytes=%d-%d", size-3, size+100), 206, data[size-3:], nil},
		{"overlapping multi", "bytes=0-5,3-10", 206, nil, [][]byte{data[0:6], data[3:11]}},
		{"multi", "bytes=0-0,-1", 206, nil, [][]byte{data[:1], data[size-1:]}},
		{"unsatisfiable", fmt.Sprintf("bytes=%d-", size), 416, nil, nil},
		// A header that is not a byte range set is ignored (RFC 9110).
		{"malformed is ignored", "bytes=x-y", 200, data, nil},
		{"another unit is ignored", "items=0-5", 200, data, nil},
		{"backwards is ignored", "bytes=10-5", 200, data, nil},
		{"a double dash is ignored", "bytes=0--1", 200, data, nil},
		{"a position too big for int64 is the end", "bytes=0-99999999999999999999999", 206, data, nil},
		{"a start too big for int64 is past the end", "bytes=99999999999999999999999-", 416, nil, nil},
		{"empty list elements", "bytes=,0-1,", 206, data[:2], nil},
		{"the last zero bytes", "bytes=-0", 416, nil, nil},
		{"the last zero bytes, spelt long", "bytes=-000", 416, nil, nil},
		{"an empty suffix among others is left out", "bytes=-0,0-1", 206, data[:2], nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := []string{}
			if tc.rng != "" {
				hdr = []string{"Range", tc.rng}
			}
			r := ts.get(t, url, hdr...)
			if r.code != tc.code {
				t.Fatalf("%d, want %d: %s", r.code, tc.code, r.body)
			}
			if want := fmt.Sprintf("bytes */%d", size); tc.code == 416 && r.header.Get("Content-Range") != want {
				t.Fatalf("Content-Range %q, want %q", r.header.Get("Content-Range"), want)
			}
			if tc.code == 416 && !json.Valid(r.body) {
				t.Fatalf("416 body %q: not the API's JSON error", r.body)
			}
			if tc.want != nil && !bytes.Equal(r.body, tc.want) {
				t.Fatalf("body %q, want %q", trunc(r.body), trunc(tc.want))
			}
			if tc.parts != nil {
				mt, params, err := mime.ParseMediaType(r.header.Get("Content-Type"))
				if err != nil || mt != "multipart/byteranges" {
					t.Fatalf("content type %q", r.header.Get("Content-Type"))
				}
				mr := multipart.NewReader(bytes.NewReader(r.body), params["boundary"])
				for i, want := range tc.parts {
					p, err := mr.NextPart()
					if err != nil {
						t.Fatal(err)
					}
					got, _ := io.ReadAll(p)
					if !bytes.Equal(got, want) {
						t.Fatalf("part %d %q, want %q", i, got, want)
					}
				}
				if _, err := mr.NextPart(); err != io.EOF {
					t.Fatalf("extra part: %v", err)
				}
			}
			if tc.code < 300 && (r.header.Get("ETag") == "" || r.header.Get("Last-Modified") == "" ||
				r.header.Get("X-Content-Type-Options") != "nosniff") {
				t.Fatalf("headers %v", r.header)
			}
		})
	}

	full := ts.get(t, url)
	etag, lm := full.header.Get("ETag"), full.header.Get("Last-Modified")
	if r := ts.get(t, url, "If-None-Match", etag); r.code != http.StatusNotModified {
		t.Fatalf("If-None-Match: %d", r.code)
	}
	if r := ts.get(t, url, "If-Modified-Since", lm); r.code != http.StatusNotModified {
		t.Fatalf("If-Modified-Since: %d", r.code)
	}
	// If-Range with a stale validator sends the whole file.
	if r := ts.get(t, url, "Range", "bytes=0-3", "If-Range", `"stale"`); r.code != 200 || len(r.body) != size {
		t.Fatalf("If-Range stale: %d %d", r.code, len(r.body))
	}
	// The validators decide before an empty range is refused.
	if r := ts.get(t, url, "Range", "bytes=-0", "If-Range", `"stale"`); r.code != 200 || len(r.body) != size {
		t.Fatalf("bytes=-0 with a stale If-Range: %d %d, want the whole file", r.code, len(r.body))
	}
	if r := ts.get(t, url, "Range", "bytes=-0", "If-None-Match", etag); r.code != http.StatusNotModified {
		t.Fatalf("bytes=-0 with a matching If-None-Match: %d, want 304", r.code)
	}
	req, _ := http.NewRequest(http.MethodHead, ts.ts.URL+url, nil)
	if r := do(t, ts.ts.Client(), req); r.code != 200 || len(r.body) != 0 || r.header.Get("Content-Length") != fmt.Sprint(size) {
		t.Fatalf("HEAD: %d %d %v", r.code, len(r.body), r.header)
	}
	// A changed file gets a new ETag.
	f, _ := os.OpenFile(filepath.Join(fx.logs, "app/api.log"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("appended line\n")
	f.Close()
	if r := ts.get(t, url, "If-None-Match", etag); r.code != 200 || r.header.Get("ETag") == etag || len(r.body) != size+14 {
		t.Fatalf("after append: %d etag %s", r.code, r.header.Get("ETag"))
	}
}

// TestContentRangeEmptyFile: any range over an empty file is ignored (an
// empty 200), not a 206 with the impossible "bytes 0--1/0".
func TestContentRangeEmptyFile(t *testing.T) {
	fx := newTinyFixture(t, map[string]string{"empty.log": "", "a.log": "a line\n"})
	ts := newTestServer(t, fx)
	url := fmt.Sprintf("/api/files/%d/content", ts.fileID(t, "logs/empty.log"))
	for _, rng := range []string{"bytes=-5", "bytes=0-", "bytes=0-0"} {
		r := ts.get(t, url, "Range", rng)
		if r.code != http.StatusOK || len(r.body) != 0 || r.header.Get("Content-Range") != "" {
			t.Errorf("%s over an empty file: %d %q, Content-Range %q", rng, r.code, r.body, r.header.Get("Content-Range"))
		}
	}
}

func trunc(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

func TestContentLines(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	const path = "logs/special/no-final-newline.log"
	id := ts.fileID(t, path)
	data := string(fx.fileBytes(t, path))
	lines := strings.SplitAfter(data, "\n")
	type resp struct {
		FileID     uint64     `json:"file_id"`
		Path       string     `json:"path"`
		Lines      []lineJSON `json:"lines"`
		First      int64      `json:"first"`
		Last       int64      `json:"last"`
		TotalLines *int64     `json:"total_lines"`
	}
	for _, tc := range []struct {
		q           string
		code        int
		first, last int64
	}{
		{"line=2&before=1&after=1", 200, 1, 3},
		{"line=1&before=5", 200, 1, 1},
		{"line=3&after=10", 200, 3, 4}, // the unterminated last line counts
		{"line=4", 200, 4, 4},
		{"line=50", 200, 0, 0},
		{"line=0", 422, 0, 0},
		{"line=x", 400, 0, 0},
		{"line=2&before=1001", 422, 0, 0},
		{"line=2&after=-1", 422, 0, 0},
	} {
		r := ts.get(t, fmt.Sprintf("/api/files/%d/content?%s", id, tc.q))
		if r.code != tc.code {
			t.Fatalf("%s: %d %s", tc.q, r.code, r.body)
		}
		if tc.code != 200 {
			continue
		}
		var lr resp
		r.json(t, &lr)
		if lr.FileID != id || lr.Path != path || lr.First != tc.first || lr.Last != tc.last {
			t.Fatalf("%s: %+v", tc.q, lr)
		}
		for _, l := range lr.Lines {
			want := strings.TrimSuffix(lines[l.Line-1], "\n")
			off := int64(len(strings.Join(lines[:l.Line-1], "")))
			if l.Text != want || l.Offset == nil || *l.Offset != off {
				t.Fatalf("%s: line %d = %q at %v, want %q at %d", tc.q, l.Line, l.Text, l.Offset, want, off)
			}
		}
	}
	// total_lines is given for a file exactly as indexed.
	id2 := ts.fileID(t, "logs/app/worker.log")
	var lr resp
	ts.get(t, fmt.Sprintf("/api/files/%d/content?line=1", id2)).json(t, &lr)
	if lr.TotalLines == nil || *lr.TotalLines != int64(strings.Count(string(fx.fileBytes(t, "logs/app/worker.log")), "\n")) {
		t.Fatalf("total_lines %v", lr.TotalLines)
	}
}

func TestContentDeletedAndTruncated(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	id := ts.fileID(t, "logs/db/postgres.log")
	os.Remove(filepath.Join(fx.logs, "db/postgres.log"))
	for _, q := range []string{"", "?line=3"} {
		if r := ts.get(t, fmt.Sprintf("/api/files/%d/content%s", id, q)); r.code != http.StatusGone {
			t.Fatalf("deleted file%s: %d %s", q, r.code, r.body)
		}
	}
	sr := ts.search(t, "q=postgres")
	found := false
	for _, w := range sr.Warnings {
		found = found || strings.Contains(w, "logs/db/postgres.log") && strings.Contains(w, "deleted")
	}
	if !found {
		t.Fatalf("no warning for the deleted file: %v", sr.Warnings)
	}
	// Truncated: the content is what is left.
	id = ts.fileID(t, "logs/app/worker.log")
	os.Truncate(filepath.Join(fx.logs, "app/worker.log"), 10)
	if r := ts.get(t, fmt.Sprintf("/api/files/%d/content", id)); r.code != 200 || len(r.body) != 10 {
		t.Fatalf("truncated: %d %d bytes", r.code, len(r.body))
	}
	if r := ts.get(t, fmt.Sprintf("/api/files/%d/content?line=5", id)); r.code != 200 {
		t.Fatalf("lines of a truncated file: %d", r.code)
	}
}

// TestContentFollowsRotation: a file renamed by its rotation since
// indexing is served under its new name, by its id (the offsets a search
// gave are its own), not the new file its old path holds.
func TestContentFollowsRotation(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	p := filepath.Join(fx.logs, "app/worker.log")
	old, err := os.ReadFile(p)
	must(t, err)
	id := ts.fileID(t, "logs/app/worker.log")
	must(t, os.Rename(p, p+".1"))
	must(t, os.WriteFile(p, []byte("a new live file\n"), 0o644))
	c := fmt.Sprintf("/api/files/%d/content", id)
	if r := ts.get(t, c); r.code != 200 || string(r.body) != string(old) {
		t.Errorf("content after the rotation: %d, %d bytes (want the indexed %d)", r.code, len(r.body), len(old))
	}
	if r := ts.get(t, c, "Range", "bytes=0-9"); r.code != http.StatusPartialContent || string(r.body) != string(old[:10]) {
		t.Errorf("range after the rotation: %d %q", r.code, r.body)
	}
}

// TestSymlinkSwap replaces an indexed file by a symlink out of its root: it
// must not be served, searched or named in responses.
func TestSymlinkSwap(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	id := ts.fileID(t, "logs/app/api.log")
	outside := filepath.Join(filepath.Dir(fx.logs), "secret.txt")
	writeFile(t, outside, "topsecret password=hunter2\n")
	victim := filepath.Join(fx.logs, "app/api.log")
	os.Remove(victim)
	if err := os.Symlink(outside, victim); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"", "?line=1"} {
		r := ts.get(t, fmt.Sprintf("/api/files/%d/content%s", id, q))
		if r.code != http.StatusForbidden || bytes.Contains(r.body, []byte("hunter2")) || bytes.Contains(r.body, []byte(fx.logs)) {
			t.Fatalf("symlinked file%s: %d %s", q, r.code, r.body)
		}
	}
	// A symlink to another file beneath the root: not served either.
	id = ts.fileID(t, "logs/app/worker.log")
	victim = filepath.Join(fx.logs, "app/worker.log")
	os.Remove(victim)
	must(t, os.Symlink("../db/postgres.log", victim)) // (relative: os.Root follows it)
	for _, q := range []string{"", "?line=1"} {
		if r := ts.get(t, fmt.Sprintf("/api/files/%d/content%s", id, q)); r.code != http.StatusForbidden {
			t.Fatalf("file replaced by a symlink beneath its root%s: %d %s", q, r.code, r.body)
		}
	}
	for _, ep := range []string{"/api/search?q=hunter2", "/api/search/raw?q=hunter2", "/api/search?q=topsecret&context=3"} {
		r := ts.get(t, ep)
		if r.code != 200 || bytes.Contains(r.body, []byte("hunter2\n")) || bytes.Contains(r.body, []byte(`"text":"topsecret`)) ||
			bytes.Contains(r.body, []byte(fx.logs)) {
			t.Fatalf("%s: %d %s", ep, r.code, r.body)
		}
	}
}

// TestTraversal sends request targets byte for byte (no client cleaning):
// none reaches a file by path, none leaks a path.
func TestTraversal(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	addr := strings.TrimPrefix(ts.ts.URL, "http://")
	for _, target := range []string{
		"/api/files/../../../../etc/passwd/content",
		"/api/files/..%2F..%2F..%2Fetc%2Fpasswd/content",
		"/api/files/%2e%2e/content",
		"/api/files/%2e%2e%2f%2e%2e%2fetc%2fpasswd/content",
		"/api/files/%2Fetc%2Fpasswd/content",
		"/api/files//etc/passwd/content",
		"/api/files/1/../../../etc/passwd",
		"/api/files/1%2F..%2F2/content",
		"/api/files/999999/content",
		"/api/files/abc/content",
		"/api/files/01/content", // one spelling per id
		"/api/files/001/content",
		"/api/files/+1/content",
		"/api/files/1%20/content",
		"/api/files/-1/content",
		"/api/files/0x1/content",
		"/api/files/18446744073709551616/content",
		"/api/files/1/content/../../x",
		"/etc/passwd",
		"/assets/../../../../etc/passwd",
		"/assets/%2e%2e/%2e%2e/etc/passwd",
		"/assets/..%2f..%2fetc%2fpasswd",
		"http://example.com/etc/passwd",
		"/api/files/%00/content",
	} {
		code, body := rawRequest(t, addr, target)
		if code != http.StatusNotFound && code != http.StatusBadRequest && code != http.StatusMisdirectedRequest {
			t.Errorf("%s: %d %s", target, code, body)
		}
		if strings.Contains(body, "root:") || strings.Contains(body, fx.logs) || strings.Contains(body, "goroutine") {
			t.Errorf("%s: leaks: %s", target, body)
		}
	}
}

// rawRequest sends "GET target HTTP/1.1" as is and returns status and body.
func rawRequest(t *testing.T, addr, target string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", target, addr)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b)
}

// TestHugeLinesAround: lines read by number (?line=, search context) are
// held and sent only up to 64 KiB each, marked truncated with their full
// length, and one ?line= answer holds at most 8 MiB of text, ending early
// (at "last") past it.
func TestHugeLinesAround(t *testing.T) {
	fx := newFixture(t)
	huge := strings.Repeat("x", 3<<20)
	wide := strings.Repeat("w", 64<<10)
	var b strings.Builder
	b.WriteString("zqfirst\n" + huge + "\nzqend\n")
	for range 200 {
		b.WriteString(wide + "\n")
	}
	writeFile(t, filepath.Join(fx.logs, "huge.log"), b.String())
	fx.reindex(t)
	ts := newTestServer(t, fx)
	id := ts.fileID(t, "logs/huge.log")
	var lr struct {
		Lines []lineJSON `json:"lines"`
		Last  int64      `json:"last"`
	}
	ts.get(t, fmt.Sprintf("/api/files/%d/content?line=2&before=1&after=1", id)).json(t, &lr)
	if len(lr.Lines) != 3 || !lr.Lines[1].Truncated || lr.Lines[1].Length != int64(len(huge)) || len(lr.Lines[1].Text) != maxLineBytes ||
		lr.Lines[0].Truncated || lr.Lines[2].Text != "zqend" {
		t.Fatalf("lines around a 3 MiB line: %d lines", len(lr.Lines))
	}
	// Lines 4..203 are the 200 lines of 64 KiB: 12.5 MiB. Past 8 MiB the
	// lines furthest from the one asked for go: after it, the last ones;
	// before it (a client paging up), the first ones.
	var lf struct {
		Lines []lineJSON `json:"lines"`
		First int64      `json:"first"`
		Last  int64      `json:"last"`
	}
	ts.get(t, fmt.Sprintf("/api/files/%d/content?line=10&before=5&after=200", id)).json(t, &lf)
	if n := len(lf.Lines); n < 100 || lf.First != 5 || lf.Last >= 203 || lf.Last != lf.Lines[n-1].Line {
		t.Fatalf("paging down 200 lines of 64 KiB: %d lines, %d..%d; want 5.. cut at 8 MiB", n, lf.First, lf.Last)
	}
	ts.get(t, fmt.Sprintf("/api/files/%d/content?line=203&before=199&after=0", id)).json(t, &lf)
	if n := len(lf.Lines); n < 100 || lf.Last != 203 || lf.First <= 4 || lf.First != lf.Lines[0].Line {
		t.Fatalf("paging up 200 lines of 64 KiB: %d lines, %d..%d; want ..203, cut at 8 MiB from the top", n, lf.First, lf.Last)
	}
	sr := ts.search(t, "q=zqend&context=1")
	if len(sr.Hits) != 1 || len(sr.Hits[0].Before) != 1 || !sr.Hits[0].Before[0].Truncated || len(sr.Hits[0].Before[0].Text) != maxLineBytes {
		t.Fatalf("context of a 3 MiB line: %+v", sr.Hits)
	}
}

// TestContentDispositionNotUTF8: a file name that is not UTF-8 is named in
// Content-Disposition with its bad bytes replaced, never as bytes the
// header declares UTF-8 and are not.
func TestContentDispositionNotUTF8(t *testing.T) {
	fx := newTinyFixture(t, map[string]string{"caf\xe9.log": "a line\n"})
	ts := newTestServer(t, fx)
	var fr filesResp
	ts.get(t, "/api/files").json(t, &fr)
	if len(fr.Files) != 1 {
		t.Fatalf("%d files", len(fr.Files))
	}
	r := ts.get(t, fmt.Sprintf("/api/files/%d/content", fr.Files[0].ID))
	_, params, err := mime.ParseMediaType(r.header.Get("Content-Disposition"))
	if r.code != http.StatusOK || err != nil || params["filename"] != "caf\uFFFD.log" {
		t.Fatalf("%d, Content-Disposition %q: %v %q", r.code, r.header.Get("Content-Disposition"), err, params["filename"])
	}
}

// TestContentOfAnIDGone: an id from an earlier answer whose file has gone
// from the index since (deleted, or replaced under a new id) is 410 Gone,
// not 404: ids are never given twice. One never given is 404.
func TestContentOfAnIDGone(t *testing.T) {
	fx := newTinyFixture(t, map[string]string{"a.log": "a line\n", "b.log": "b line\n"})
	ts := newTestServer(t, fx, func(o *Options) { o.Reindex = fx.reindexFunc() })
	id := ts.fileID(t, "logs/b.log")
	must(t, os.Remove(filepath.Join(fx.logs, "b.log")))
	must(t, ts.ReindexNow(context.Background()))
	url := fmt.Sprintf("/api/files/%d/content", id)
	if r := ts.get(t, url); r.code != http.StatusGone || !json.Valid(r.body) {
		t.Fatalf("%s of a file gone since: %d %s", url, r.code, r.body)
	}
	if r := ts.get(t, "/api/files/1000/content"); r.code != http.StatusNotFound {
		t.Fatalf("an id never given: %d %s", r.code, r.body)
	}
}
