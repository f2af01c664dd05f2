package server

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if sr := ts.search(t, "q=zqxold&log=logs/other"); sr.Total != 0 {
		t.Errorf("another log: total %d", sr.Total)
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
