package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// servedFixture runs s.Serve on a loopback listener (httptest does not
// apply SocketSendBuffer) and returns its address.
func servedFixture(t *testing.T, fx *fixture, opts ...func(*Options)) (*Server, string) {
	t.Helper()
	opt := Options{IndexDir: fx.index, Display: []string{"logs"}, Logger: zerolog.Nop(), SocketSendBuffer: 16 << 10,
		QueueWait: 300 * time.Millisecond, MaxSearches: 4}
	for _, f := range opts {
		f(&opt)
	}
	s, err := New(opt)
	must(t, err)
	_, err = s.Reload()
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Serve(ln)
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		<-done
	})
	return s, ln.Addr().String()
}

// slowReader sends GET target on a connection with a 4 KiB receive
// buffer, reads the status line and then stops reading: the server's
// writes block as they would for a client on a slow link. Closing the
// returned conn ends it.
func slowReader(t *testing.T, addr, target string) (net.Conn, int) {
	t.Helper()
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return serr
	}}
	c, err := d.Dial("tcp", addr)
	must(t, err)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", target)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReaderSize(c, 64).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	var code int
	fmt.Sscanf(line, "HTTP/1.1 %d", &code)
	return c, code
}

// TestFaultSlowReaders: clients that read raw answers and
// downloads slowly (here: not at all) hold a stream each, not a search
// slot; a search run meanwhile is answered, and streams beyond the
// per-client bound are refused with 429.
func TestFaultSlowReaders(t *testing.T) {
	var b strings.Builder
	for i := range 60_000 {
		fmt.Fprintf(&b, "2026-10-10T00:00:00Z line %07d every match%d some padding to make the line longer\n", i, i%2)
	}
	fx := newTinyFixture(t, map[string]string{"big.log": b.String(), "small.log": "a needle here\n"})
	_, addr := servedFixture(t, fx, func(o *Options) { o.MaxStreamsPerClient = 9 })
	targets := []string{
		"/api/search/raw?q=every&mode=literal",  // one range: buffered, sent after the search
		"/api/search/raw?q=match1&mode=literal", // 30,000 ranges: streamed while searching
		"/api/search/raw?q=every&mode=literal",
		"/api/search/raw?q=match1&mode=literal",
		"/api/files/1/content",
		"/api/files/1/content",
		"/api/files/1/content",
		"/api/files/1/content",
	}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for _, tg := range targets {
		c, code := slowReader(t, addr, tg)
		conns = append(conns, c)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", tg, code)
		}
	}
	time.Sleep(100 * time.Millisecond) // the raw searches are blocked in writes now
	client := &http.Client{Timeout: 5 * time.Second}
	for _, ep := range []string{"/api/search?q=needle", "/api/search/raw?q=needle", "/api/histogram?q=needle"} {
		resp, err := client.Get("http://" + addr + ep)
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "needle") && !strings.Contains(ep, "histogram") {
			t.Fatalf("%s while 8 clients read slowly: %d %s", ep, resp.StatusCode, body)
		}
	}
	var st Status
	resp, err := client.Get("http://" + addr + "/api/status")
	must(t, err)
	must(t, json.NewDecoder(resp.Body).Decode(&st))
	resp.Body.Close()
	if st.Streams.Active != len(targets) || st.Streams.PerClient != 9 {
		t.Fatalf("status streams %+v, want %d active", st.Streams, len(targets))
	}
	// The ninth slow stream of this client is the last one admitted.
	c, code := slowReader(t, addr, "/api/files/1/content")
	conns = append(conns, c)
	if code != http.StatusOK {
		t.Fatalf("ninth stream: %d", code)
	}
	c, code = slowReader(t, addr, "/api/files/1/content")
	conns = append(conns, c)
	if code != http.StatusTooManyRequests {
		t.Fatalf("tenth stream of one client: %d, want 429", code)
	}
}

// TestFaultStalledStreamsHangUp: raw searches whose clients stop reading
// hold no search slot while they wait for room in the send buffer (more
// of them than slots, and searches are still answered), and clients that
// hang up give their streams back at once, not at the write timeout.
func TestFaultStalledStreamsHangUp(t *testing.T) {
	var b strings.Builder
	for i := range 60_000 {
		fmt.Fprintf(&b, "2026-10-10T00:00:00Z line %07d every match%d some padding to make the line longer\n", i, i%2)
	}
	fx := newTinyFixture(t, map[string]string{"big.log": b.String(), "small.log": "a needle here\n"})
	_, addr := servedFixture(t, fx, func(o *Options) { o.MaxSearches = 2; o.WriteTimeout = time.Minute })
	var conns []net.Conn
	for range 4 {
		c, code := slowReader(t, addr, "/api/search/raw?q=match1&mode=literal") // streamed while searching
		conns = append(conns, c)
		if code != http.StatusOK {
			t.Fatalf("raw search: %d", code)
		}
	}
	time.Sleep(200 * time.Millisecond) // all four wait for their clients now
	client := &http.Client{Timeout: 5 * time.Second}
	status := func() Status {
		var st Status
		resp, err := client.Get("http://" + addr + "/api/status")
		must(t, err)
		must(t, json.NewDecoder(resp.Body).Decode(&st))
		resp.Body.Close()
		return st
	}
	resp, err := client.Get("http://" + addr + "/api/search?q=needle")
	must(t, err)
	resp.Body.Close()
	if st := status(); resp.StatusCode != http.StatusOK || st.Searches.Active != 0 {
		t.Fatalf("4 stalled raw searches, 2 slots: a search got %d, %d slots held", resp.StatusCode, st.Searches.Active)
	}
	for _, c := range conns {
		c.Close()
	}
	// (The write timeout is a minute: only noticing the hang-up frees them.)
	for deadline := time.Now().Add(20 * time.Second); status().Streams.Active > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("streams still held 20 s after their clients hung up: %+v", status().Streams)
		}
	}
}

// TestFaultStalledLeaderSharesNothing: identical searches share one run,
// but a request is not held up by another client's reading: a streamed
// answer (too big to share) lets the identical requests waiting on it go
// as soon as it starts streaming, not when its client has read it all.
func TestFaultStalledLeaderSharesNothing(t *testing.T) {
	var b strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&b, "2026-10-10T00:00:00Z line %07d every match%d some padding to make the line longer\n", i, i%2)
	}
	fx := newTinyFixture(t, map[string]string{"big.log": b.String()})
	_, addr := servedFixture(t, fx, func(o *Options) {
		o.CacheTTL, o.Reindex, o.WriteTimeout = -1, fx.reindexFunc(), time.Minute
	})
	const target = "/api/search?q=every&mode=literal&limit=10000" // megabytes of JSON: streamed
	c, code := slowReader(t, addr, target)
	defer c.Close()
	if code != http.StatusOK {
		t.Fatalf("stalled leader: %d", code)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get("http://" + addr + target)
	if err != nil {
		t.Fatalf("the same search while its first client stalls: %v", err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || n < 1<<20 {
		t.Fatalf("the same search while its first client stalls: %d, %d bytes", resp.StatusCode, n)
	}
}

// TestStreamBound: the bound counts per client and overall, and a stream
// that ends gives its place back.
func TestStreamBound(t *testing.T) {
	b := &streamBound{max: 3, perClient: 2}
	steps := []struct {
		client string
		leave  bool
		want   int
	}{
		{"a", false, 0},
		{"a", false, 0},
		{"a", false, http.StatusTooManyRequests},
		{"b", false, 0},
		{"c", false, http.StatusServiceUnavailable},
		{"a", true, 0},
		{"c", false, 0},
		{"b", false, http.StatusServiceUnavailable},
	}
	for i, st := range steps {
		if st.leave {
			b.leave(st.client)
			continue
		}
		if got := b.enter(st.client); got != st.want {
			t.Fatalf("step %d (%s): %d, want %d", i, st.client, got, st.want)
		}
	}
	if b.active() != 3 {
		t.Fatalf("active %d", b.active())
	}
}

// TestFaultDownloadTruncated: a file truncated during a download, then
// written again past its old end (copytruncate with a writer that keeps
// its offset leaves a hole that reads as NULs), ends the response before
// any byte the file did not hold: a short body and a closed connection,
// never NUL filler. Both the download and the raw search are tried.
func TestFaultDownloadTruncated(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n"
	content := strings.Repeat(line, 80_000) // 8 MB
	for _, target := range []string{"/api/files/1/content", "/api/search/raw?q=xxx&mode=literal"} {
		fx := newTinyFixture(t, map[string]string{"big.log": content})
		_, addr := servedFixture(t, fx, func(o *Options) { o.SendfileChunk = 64 << 10 })
		c, code := slowReader(t, addr, target)
		if code != http.StatusOK {
			t.Fatalf("%s: %d", target, code)
		}
		head := make([]byte, 64<<10)
		_, err := io.ReadFull(c, head)
		must(t, err)
		p := fx.logs + "/big.log"
		must(t, os.Truncate(p, 0))
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		must(t, err)
		_, err = f.WriteAt([]byte("written after the truncation\n"), int64(len(content))+100)
		must(t, err)
		f.Close()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		rest, err := io.ReadAll(c)
		c.Close()
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		body := append(head, rest...)
		if i := bytes.IndexByte(body, 0); i >= 0 {
			t.Fatalf("%s: NUL at byte %d of %d (%d NULs)", target, i, len(body), bytes.Count(body, []byte{0}))
		}
		if len(body) >= len(content) {
			t.Fatalf("%s: %d bytes after a truncation, want fewer than %d", target, len(body), len(content))
		}
	}
}

// TestFaultFIFOServed: a log replaced by a FIFO is refused at once by
// every endpoint that reads files (no request waits on it, none pins a
// thread), and searches go on answering.
func TestFaultFIFOServed(t *testing.T) {
	fx := newTinyFixture(t, map[string]string{"a.log": "a fifo-probe\n", "b.log": "b fifo-probe\n"})
	ts := newTestServer(t, fx)
	id := ts.fileID(t, "logs/b.log")
	must(t, os.Remove(fx.logs+"/b.log"))
	must(t, syscall.Mkfifo(fx.logs+"/b.log", 0o644))
	for range 50 {
		for _, ep := range []string{fmt.Sprintf("/api/files/%d/content", id), fmt.Sprintf("/api/files/%d/content?line=1", id)} {
			if r := ts.get(t, ep); r.code != http.StatusForbidden && r.code != http.StatusGone {
				t.Fatalf("%s: %d %s", ep, r.code, r.body)
			}
		}
	}
	for _, ep := range []string{"/api/search?q=fifo-probe", "/api/search/raw?q=fifo-probe"} {
		r := ts.get(t, ep)
		if r.code != http.StatusOK || !strings.Contains(string(r.body), "a fifo-probe") || strings.Contains(string(r.body), "b fifo-probe") {
			t.Fatalf("%s: %d %s", ep, r.code, r.body)
		}
	}
}

// TestSlowDownloadHoldsNoSnapshot: a download that a client reads slowly
// holds its open file, not the index snapshot it was found in (whose
// mappings and merged-away segments would outlive every re-index).
func TestSlowDownloadHoldsNoSnapshot(t *testing.T) {
	fx := newTinyFixture(t, map[string]string{"big.log": strings.Repeat(strings.Repeat("y", 99)+"\n", 80_000)})
	s, addr := servedFixture(t, fx)
	c, code := slowReader(t, addr, "/api/files/1/content")
	defer c.Close()
	if code != http.StatusOK {
		t.Fatalf("download: %d", code)
	}
	for deadline := time.Now().Add(5 * time.Second); s.cur.Load().refs.Load() != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("the snapshot has %d references while a download waits for its client, want 1 (the server's)", s.cur.Load().refs.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Still served whole.
	n, err := io.Copy(io.Discard, c)
	if err != nil || n < 7_000_000 {
		t.Fatalf("read %d bytes: %v", n, err)
	}
}
