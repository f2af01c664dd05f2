package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/rs/zerolog"
)

// makeSparseLog writes a log of size+len(last) bytes that takes ~10 MiB of
// disk: text lines (the first 8 KiB must hold no NUL, or the indexer skips
// the file as binary), then a hole with a '\n' at every MiB (so no line is
// longer than the indexer tokenizes, and each costs one disk block), then
// one text line.
func makeSparseLog(t *testing.T, name string, size int64, last string) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 0; i < 200; i++ {
		fmt.Fprintf(f, "2026-10-10T00:00:00Z INFO first region line %05d alpha beta\n", i)
	}
	for off := int64(1 << 20); off <= size; off += 1 << 20 {
		if _, err := f.WriteAt([]byte{'\n'}, min(off, size)-1); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.WriteAt([]byte(last), size); err != nil {
		t.Fatal(err)
	}
}

// countingTail counts bytes and keeps the last ones.
type countingTail struct {
	n    int64
	tail []byte
}

func (c *countingTail) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	c.tail = append(c.tail, p...)
	if len(c.tail) > 4096 {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-256:]...)
	}
	return len(p), nil
}

// TestLargerThan2GiB serves a 2.5 GiB file (sparse): a hit past 2 GiB, the
// whole file through content and through one 2.5 GiB raw range. Every
// byte must arrive (a sendfile that moves less than asked is continued)
// and memory must stay small. It reads 7.5 GiB: LOGDEX_LONG=1 only.
func TestLargerThan2GiB(t *testing.T) {
	if os.Getenv("LOGDEX_LONG") == "" {
		t.Skip("reads 7.5 GiB (minutes under the race detector): set LOGDEX_LONG=1")
	}
	tmp := t.TempDir()
	logs := filepath.Join(tmp, "logs")
	os.Mkdir(logs, 0o755)
	const size = 5 << 29 // 2.5 GiB
	last := "2026-10-10T00:00:01Z WARN last line with needle zebracorn\n"
	big := filepath.Join(logs, "big.log")
	makeSparseLog(t, big, size, last)
	total := int64(size + len(last))
	fx := &fixture{logs: logs, index: filepath.Join(tmp, "index")}
	if _, err := indexer.Update(context.Background(), indexer.Options{Dir: fx.index, Roots: []string{logs}, Logger: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, fx)

	sr := ts.search(t, "q=zebracorn")
	if sr.Total != 1 || sr.Hits[0].Offset != size || sr.Hits[0].Text+"\n" != last {
		t.Fatalf("search past 2 GiB: total %d, first hit at %d", sr.Total, sr.Hits[0].Offset)
	}
	if r := ts.get(t, "/api/search/raw?q=zebracorn"); string(r.body) != last {
		t.Fatalf("raw past 2 GiB: %q", r.body)
	}
	id := sr.Hits[0].FileID
	if r := ts.get(t, fmt.Sprintf("/api/files/%d/content", id), "Range", fmt.Sprintf("bytes=%d-", size)); r.code != 206 || string(r.body) != last {
		t.Fatalf("range past 2 GiB: %d %q", r.code, r.body)
	}

	download := func(path string, framed bool) {
		t.Helper()
		sent0 := ts.metricValue(t, "logdex_sendfile_bytes_total")
		resp, err := ts.ts.Client().Get(ts.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var c countingTail
		if _, err := io.Copy(&c, resp.Body); err != nil {
			t.Fatalf("%s: %v after %d bytes", path, err, c.n)
		}
		if c.n != total || !bytes.HasSuffix(c.tail, []byte(last)) {
			t.Fatalf("%s: %d bytes, want %d; tail %q", path, c.n, total, c.tail)
		}
		if cl := resp.Header.Get("Content-Length"); framed && cl != strconv.FormatInt(total, 10) || !framed && cl != "" {
			t.Fatalf("%s: Content-Length %q", path, cl)
		}
		if sent := ts.metricValue(t, "logdex_sendfile_bytes_total") - sent0; int64(sent) != total {
			t.Fatalf("%s: %v bytes through ReadFrom, want %d", path, sent, total)
		}
	}
	download(fmt.Sprintf("/api/files/%d/content", id), true)
	// Every line: the file is one coalesced 2.5 GiB range, sent with its
	// length, and then streamed.
	download("/api/search/raw?mode=regex&q=%5E", true)
	ts.rawBuffer.ranges = 1
	download("/api/search/raw?mode=regex&q=%5E", false)

	if hwm := peakRSS(t); hwm > 1<<30 {
		t.Fatalf("peak RSS %d MiB", hwm>>20)
	}
}

// peakRSS reads VmHWM of this process.
func peakRSS(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n << 10
		}
	}
	return 0
}
