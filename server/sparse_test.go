package server

import (
	"bufio"
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

// makeBigLog writes a log of size+len(last) bytes: text lines, then lines
// of 1 MiB of spaces (no line longer than the indexer tokenizes, and no
// token), then one text line. The bytes are real, not a sparse file's
// hole: a hole reads as NUL bytes, which make the rest of the file binary,
// whose lines a raw search leaves out as grep does.
func makeBigLog(t *testing.T, name string, size int64, last string) {
	t.Helper()
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	for i := 0; i < 200; i++ {
		k, _ := fmt.Fprintf(w, "2026-10-10T00:00:00Z INFO first region line %05d alpha beta\n", i)
		n += int64(k)
	}
	filler := append(bytes.Repeat([]byte{' '}, 1<<20-1), '\n')
	for n < size {
		k := min(int64(len(filler)), size-n)
		w.Write(filler[len(filler)-int(k):]) // ends with its '\n'
		n += k
	}
	w.WriteString(last)
	if err := w.Flush(); err != nil {
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

// TestLargerThan2GiB serves a 2.5 GiB file: a hit past 2 GiB, the
// whole file through content and through one 2.5 GiB raw range. Every
// byte must arrive (a sendfile that moves less than asked is continued)
// and memory must stay small. It writes 2.5 GiB and reads 7.5 GiB:
// LOGDEX_LONG=1 only.
func TestLargerThan2GiB(t *testing.T) {
	if os.Getenv("LOGDEX_LONG") == "" {
		t.Skip("writes 2.5 GiB and reads 7.5 GiB (minutes under the race detector): set LOGDEX_LONG=1")
	}
	tmp := t.TempDir()
	logs := filepath.Join(tmp, "logs")
	os.Mkdir(logs, 0o755)
	const size = 5 << 29 // 2.5 GiB
	last := "2026-10-10T00:00:01Z WARN last line with needle zebracorn\n"
	big := filepath.Join(logs, "big.log")
	makeBigLog(t, big, size, last)
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
