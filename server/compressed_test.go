package server

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// TestCompressedLogs: a log's rotations, gzip included, are one log
// (/api/files, log=); a compressed file's content is served decompressed,
// Range included, or stored with Content-Encoding: gzip to a client that
// takes it; raw search sends its lines; and when logrotate compresses
// app.log.1 into app.log.2.gz the lines are found again after the next
// re-index, once.
func TestCompressedLogs(t *testing.T) {
	fx := newFixture(t)
	dir := filepath.Join(fx.logs, "rot")
	must(t, os.MkdirAll(dir, 0o755))
	old := "2026-11-28T10:00:00Z INFO zqxold one\n2026-11-28T10:00:01Z WARN zqxold two\n"
	cur := "2026-11-29T10:00:00Z INFO zqxcur one\n"
	must(t, os.WriteFile(filepath.Join(dir, "app.log.1"), []byte(old), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "app.log"), []byte(cur), 0o644))
	fx.reindex(t)
	ts := newTestServer(t, fx)

	// logrotate: app.log.1 -> app.log.2.gz, app.log -> app.log.1, new app.log.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(old))
	zw.Close()
	must(t, os.WriteFile(filepath.Join(dir, "app.log.2.gz"), gz.Bytes(), 0o644))
	must(t, os.Remove(filepath.Join(dir, "app.log.1")))
	must(t, os.Rename(filepath.Join(dir, "app.log"), filepath.Join(dir, "app.log.1")))
	must(t, os.WriteFile(filepath.Join(dir, "app.log"), []byte("2026-11-30T10:00:00Z INFO zqxnew\n"), 0o644))
	fx.reindex(t)
	ts.Reload()

	for q, want := range map[string][]string{
		"zqxold": {"logs/rot/app.log.2.gz:1", "logs/rot/app.log.2.gz:2"},
		"zqxcur": {"logs/rot/app.log.1:1"},
		"zqxnew": {"logs/rot/app.log:1"},
	} {
		sr := ts.search(t, "q="+q)
		var got []string
		for _, h := range sr.Hits {
			got = append(got, fmt.Sprintf("%s:%d", h.Path, h.Line))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	var files struct {
		Files []fileJSON `json:"files"`
	}
	ts.get(t, "/api/files").json(t, &files)
	var gzID uint64
	for _, f := range files.Files {
		if strings.HasPrefix(f.Path, "logs/rot/") {
			if f.Log != "logs/rot/app.log" {
				t.Errorf("%s: log %q", f.Path, f.Log)
			}
			if f.Path == "logs/rot/app.log.2.gz" {
				gzID = f.ID
				if f.Rotation != 2 || f.Compression != "gzip" || f.IndexedBytes != int64(len(old)) {
					t.Errorf("%s: rotation %d compression %q indexed %d", f.Path, f.Rotation, f.Compression, f.IndexedBytes)
				}
			}
		}
	}
	if sr := ts.search(t, "q=zqxold+OR+zqxcur+OR+zqxnew&log=logs/rot/app.log"); sr.Total != 4 {
		t.Errorf("log=: total %d, want 4", sr.Total)
	}
	if sr := ts.search(t, "q=zqxold&log=logs/app/api.log"); sr.Total != 0 {
		t.Errorf("another log: total %d", sr.Total)
	}
	if r := ts.get(t, "/api/search?q=zqxold&log=logs/other"); r.code != http.StatusOK || !strings.Contains(string(r.body), `no log \"logs/other\" in the index`) {
		t.Errorf("a log without files: %d %s", r.code, r.body)
	}
	if r := ts.get(t, "/api/search/raw?q=zqxold&log=logs/other"); r.code != http.StatusOK || r.header.Get("X-Logdex-Warnings") != "1" {
		t.Errorf("raw, a log without files: %d %q", r.code, r.header.Get("X-Logdex-Warnings"))
	}
	content := fmt.Sprintf("/api/files/%d/content", gzID)
	if r := ts.get(t, content); r.code != 200 || string(r.body) != old {
		t.Errorf("content: %d %q", r.code, r.body)
	}
	if r := ts.get(t, content, "Range", "bytes=21-40"); r.code != http.StatusPartialContent || string(r.body) != old[21:41] {
		t.Errorf("range: %d %q", r.code, r.body)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.ts.URL+content, nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	must(t, err)
	var stored bytes.Buffer
	stored.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(stored.Bytes(), gz.Bytes()) {
		t.Errorf("gzip as stored: %q, %d bytes", resp.Header.Get("Content-Encoding"), stored.Len())
	}
	if r := ts.get(t, content+"?line=2"); r.code != 200 || !strings.Contains(string(r.body), "zqxold two") {
		t.Errorf("line 2: %d %s", r.code, r.body)
	}
	if r := ts.get(t, "/api/search/raw?q=zqxold"); string(r.body) != old {
		t.Errorf("raw: %q", r.body)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCompressedContentEdges: a compressed file's content is what zcat
// prints (no newline the indexer supplied after a last line without one);
// the stored gzip goes out with its length (so by sendfile, not chunked)
// only to a client that takes gzip (q=0.0 refuses it) and only when the
// file is whole; several ranges of a compressed file get the whole
// content; a compressed file deleted since indexing is 410 Gone.
func TestCompressedContentEdges(t *testing.T) {
	fx := newFixture(t)
	dir := filepath.Join(fx.logs, "z")
	must(t, os.MkdirAll(dir, 0o755))
	gzipped := func(s string) []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return b.Bytes()
	}
	raw := "2026-11-28T10:00:00Z INFO zqyone\n2026-11-28T10:00:01Z WARN zqytwo, no newline"
	whole := gzipped(raw)
	long := gzipped(strings.Repeat("2026-11-28T10:00:02Z INFO zqydamaged line of filler text\n", 4000))
	must(t, os.WriteFile(filepath.Join(dir, "nonl.log.1.gz"), whole, 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "damaged.log.1.gz"), long[:len(long)/2], 0o644))
	old := time.Now().Add(-time.Hour) // damaged long ago, not being written
	must(t, os.Chtimes(filepath.Join(dir, "damaged.log.1.gz"), old, old))
	must(t, os.WriteFile(filepath.Join(dir, "gone.log.1.gz"), whole, 0o644))
	// zstd: one frame with a small window (as zstd writes up to level
	// 19), and one asking for 16 MiB (as --long does), which a browser
	// refuses as a Content-Encoding.
	enc, err := zstd.NewWriter(nil)
	must(t, err)
	zst := enc.EncodeAll([]byte(raw), nil)
	must(t, os.WriteFile(filepath.Join(dir, "small.log.1.zst"), zst, 0o644))
	var wide bytes.Buffer
	ww, err := zstd.NewWriter(&wide, zstd.WithWindowSize(16<<20))
	must(t, err)
	// (Past one block, so that the frame states its window rather than
	// its size.)
	wideRaw := strings.Repeat("2026-11-28T10:00:03Z INFO zqywide a line of text to fill blocks\n", 8000)
	ww.Write([]byte(wideRaw))
	ww.Close()
	must(t, os.WriteFile(filepath.Join(dir, "wide.log.1.zst"), wide.Bytes(), 0o644))
	fx.reindex(t)
	ts := newTestServer(t, fx)
	var files struct {
		Files []fileJSON `json:"files"`
	}
	ts.get(t, "/api/files").json(t, &files)
	ids := map[string]string{}
	for _, f := range files.Files {
		ids[path.Base(f.Path)] = fmt.Sprintf("/api/files/%d/content", f.ID)
	}
	plain := &http.Transport{DisableCompression: true}
	get := func(url string, header ...string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, ts.ts.URL+url, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := plain.RoundTrip(req)
		must(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		must(t, err)
		return resp, body
	}

	c := ids["nonl.log.1.gz"]
	if resp, body := get(c); string(body) != raw || resp.ContentLength != int64(len(raw)) {
		t.Errorf("content: %d bytes (length %d), want zcat's %d", len(body), resp.ContentLength, len(raw))
	}
	if _, body := get(c, "Range", "bytes=-1"); string(body) != "e" {
		t.Errorf("last byte: %q, want %q", body, "e")
	}
	resp, body := get(c, "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(body, whole) || resp.ContentLength != int64(len(whole)) || len(resp.TransferEncoding) > 0 {
		t.Errorf("gzip as stored: %q, %d bytes, length %d, transfer %v", resp.Header.Get("Content-Encoding"), len(body), resp.ContentLength, resp.TransferEncoding)
	}
	// Resuming it: its validator is its own ETag, never a date the
	// decompressed content shares.
	if resp.Header.Get("Last-Modified") != "" {
		t.Errorf("gzip as stored has Last-Modified %q", resp.Header.Get("Last-Modified"))
	}
	if resp, _ := get(c, "Range", "bytes=5-", "If-Range", resp.Header.Get("ETag")); resp.StatusCode != http.StatusOK {
		t.Errorf("resumed with the gzip ETag: %d, want 200 (another representation)", resp.StatusCode)
	}
	for _, ae := range []string{"gzip;q=0.0", "gzip; Q=0", "identity, gzip;q=0.000", "br"} {
		if resp, body := get(c, "Accept-Encoding", ae); resp.Header.Get("Content-Encoding") != "" || string(body) != raw {
			t.Errorf("Accept-Encoding %q: %q, %q", ae, resp.Header.Get("Content-Encoding"), body)
		}
	}
	if resp, body := get(c, "Range", "bytes=40-44,0-3,40-44"); resp.StatusCode != http.StatusOK || string(body) != raw {
		t.Errorf("several ranges: %d %q, want the whole content", resp.StatusCode, body)
	}

	z := ids["small.log.1.zst"]
	resp, body = get(z, "Accept-Encoding", "gzip, deflate, br, zstd")
	if resp.Header.Get("Content-Encoding") != "zstd" || !bytes.Equal(body, zst) || resp.ContentLength != int64(len(zst)) {
		t.Errorf("zstd as stored: %q, %d bytes, length %d", resp.Header.Get("Content-Encoding"), len(body), resp.ContentLength)
	}
	if resp, body := get(z, "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "" || string(body) != raw {
		t.Errorf("zstd file to a gzip client: %q, %q", resp.Header.Get("Content-Encoding"), body)
	}
	if resp, body := get(ids["wide.log.1.zst"], "Accept-Encoding", "zstd"); resp.Header.Get("Content-Encoding") != "" || string(body) != wideRaw {
		t.Errorf("zstd file with a 16 MiB window: %q, %d bytes, want the decompressed content", resp.Header.Get("Content-Encoding"), len(body))
	}

	d := ids["damaged.log.1.gz"]
	if resp, body := get(d, "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "" || !strings.HasPrefix(string(body), "2026-11-28T10:00:02Z INFO zqydamaged") {
		t.Errorf("damaged gzip: Content-Encoding %q, %d bytes", resp.Header.Get("Content-Encoding"), len(body))
	}

	must(t, os.Remove(filepath.Join(dir, "gone.log.1.gz")))
	if resp, _ := get(ids["gone.log.1.gz"]); resp.StatusCode != http.StatusGone {
		t.Errorf("deleted: %d, want 410", resp.StatusCode)
	}
}
