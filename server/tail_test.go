package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logdex/logdex/query"
)

// sseEvent is one Server-Sent Event as a browser's EventSource sees it;
// comment is set for a comment line (a heartbeat).
type sseEvent struct {
	name, id, data, comment string
}

// tailClient reads an /api/tail stream.
type tailClient struct {
	events chan sseEvent
	cancel context.CancelFunc
	code   int
	body   string // the error body of a refused stream
}

func openTail(t *testing.T, ts *testServer, params, lastID string) *tailClient {
	t.Helper()
	return openTailAt(t, ts.ts.Client(), ts.ts.URL, params, lastID)
}

func openTailAt(t *testing.T, c *http.Client, url, params, lastID string) *tailClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/api/tail?"+params, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	tc := &tailClient{events: make(chan sseEvent, 1024), cancel: cancel, code: resp.StatusCode}
	t.Cleanup(cancel)
	if resp.StatusCode != http.StatusOK {
		b := make([]byte, 4096)
		n, _ := resp.Body.Read(b)
		tc.body = string(b[:n])
		resp.Body.Close()
		cancel()
		close(tc.events)
		return tc
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	go func() {
		defer close(tc.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				tc.events <- ev
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				tc.events <- sseEvent{comment: line}
			default:
				k, v, _ := strings.Cut(line, ":")
				v = strings.TrimPrefix(v, " ")
				switch k {
				case "event":
					ev.name = v
				case "id":
					ev.id = v
				case "data":
					ev.data += v
				}
			}
		}
	}()
	return tc
}

// next returns the next event that is not a heartbeat or id-only.
func (tc *tailClient) next(t *testing.T) sseEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-tc.events:
			if !ok {
				t.Fatal("stream ended")
			}
			if ev.comment != "" || ev.name == "" && ev.data == "" {
				continue
			}
			return ev
		case <-timeout:
			t.Fatal("no event in 10s")
		}
	}
}

type tailHit struct {
	ID   string `json:"id"`
	Path string `json:"path"`
	Line int64  `json:"line"`
	Text string `json:"text"`
	Time string `json:"time"`
}

func (tc *tailClient) hit(t *testing.T) tailHit {
	t.Helper()
	ev := tc.next(t)
	if ev.name != "hit" {
		t.Fatalf("event %q %s, want a hit", ev.name, ev.data)
	}
	var h tailHit
	if err := json.Unmarshal([]byte(ev.data), &h); err != nil {
		t.Fatalf("%s: %v", ev.data, err)
	}
	if h.ID != ev.id {
		t.Fatalf("data id %q, event id %q", h.ID, ev.id)
	}
	return h
}

func appendLines(t *testing.T, path string, from, n int, word string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	must(t, err)
	defer f.Close()
	for i := from; i < from+n; i++ {
		fmt.Fprintf(f, "2026-11-30T12:00:%02dZ INFO seq %d %s\n2026-11-30T12:00:%02dZ DEBUG filler %d\n", i%60, i, word, i%60, i)
	}
}

// TestTail: matching lines indexed after the stream opened arrive once, in
// order, with their ids; a stream resumed with Last-Event-ID continues
// with neither gap nor duplicate; idle streams get heartbeats.
func TestTail(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx, func(o *Options) { o.TailHeartbeat = 20 * time.Millisecond })
	log := filepath.Join(fx.logs, "live.log")
	appendLines(t, log, 0, 3, "zqtail") // before the stream: not sent
	fx.reindex(t)
	ts.Reload()

	tc := openTail(t, ts, "q=zqtail", "")
	// The stream says where it starts (an id-only message), then idles.
	sawHeartbeat := false
	for !sawHeartbeat {
		select {
		case ev := <-tc.events:
			sawHeartbeat = ev.comment == ": heartbeat"
		case <-time.After(10 * time.Second):
			t.Fatal("no heartbeat")
		}
	}
	appendLines(t, log, 3, 5, "zqtail")
	fx.reindex(t)
	ts.Reload()
	var last string
	for i := 3; i < 6; i++ {
		h := tc.hit(t)
		if h.Text != fmt.Sprintf("2026-11-30T12:00:%02dZ INFO seq %d zqtail", i, i) || h.Path != "logs/live.log" || h.Line != int64(2*i+1) || h.Time == "" {
			t.Fatalf("hit %+v, want seq %d", h, i)
		}
		last = h.ID
	}
	tc.cancel() // gone after seq 5: seq 6, 7 not read

	appendLines(t, log, 8, 4, "zqtail")
	fx.reindex(t)
	ts.Reload()
	tc = openTail(t, ts, "q=zqtail", last)
	for i := 6; i < 12; i++ {
		if h := tc.hit(t); !strings.Contains(h.Text, fmt.Sprintf(" seq %d zqtail", i)) {
			t.Fatalf("resumed: %+v, want seq %d", h, i)
		}
	}
	// Nothing more: the next event is the end of the stream at shutdown.
	ts.Server.Close()
	if ev := tc.next(t); ev.name != "end" || !strings.Contains(ev.data, "server shutting down") {
		t.Fatalf("%+v, want the end event", ev)
	}
}

// TestTailRefusals: what /api/tail does not take, and a position the feed
// no longer holds.
func TestTailRefusals(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx, func(o *Options) { o.MaxTails = 1 })
	for _, c := range []struct{ params, lastID, want string }{
		{"q=", "", "missing query"},
		{"q=a&mode=nope", "", "mode"},
		{"q=a&from=2h", "", "q, mode and case only"},
		{"q=(a", "", "position"},
		{"q=a", "x:y", "invalid tail id"},
	} {
		tc := openTail(t, ts, c.params, c.lastID)
		if tc.code != http.StatusBadRequest || !strings.Contains(tc.body, c.want) {
			t.Errorf("%s (%s): %d %s, want 400 with %q", c.params, c.lastID, tc.code, tc.body, c.want)
		}
	}

	// A position from the future (another index): reset, then live.
	tc := openTail(t, ts, "q=a", "999999:1:1")
	if ev := tc.next(t); ev.name != "reset" {
		t.Fatalf("%+v, want reset", ev)
	}
	// One stream at a time here: the second is refused.
	if tc2 := openTail(t, ts, "q=a", ""); tc2.code != http.StatusServiceUnavailable {
		t.Errorf("second tail: %d %s", tc2.code, tc2.body)
	}
	tc.cancel()

	// A client further behind than the feed keeps is cut, saying why.
	head := ts.tailFeed.head()
	for i := range uint64(tailKeep + 1) {
		ts.tailFeed.push(head+1+i, 0, query.Delta{})
	}
	var tc3 *tailClient
	for range 100 { // the refused stream's slot frees when its handler returns
		if tc3 = openTail(t, ts, "q=a", fmt.Sprint(head)); tc3.code == http.StatusOK {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ev := tc3.next(t); ev.name != "end" || !strings.Contains(ev.data, "client too slow") {
		t.Fatalf("%+v, want the end event of a slow client", ev)
	}
}

// TestTailFeedBehind: a client is cut as too slow only when part of a
// generation the feed dropped is still to be read: not when it connected
// before the first generation (the server still opening its index), nor
// when it is done with the last generation dropped.
func TestTailFeedBehind(t *testing.T) {
	f := newTailFeed()
	start := query.TailID{Gen: f.head(), TailPos: query.TailDone}
	if _, ok, wake, err := f.next(start); ok || wake == nil || err != nil {
		t.Fatalf("before any generation: ok %v, wake %v, err %v; want to wait", ok, wake != nil, err)
	}
	f.push(1, 0, query.Delta{})
	if g, ok, _, err := f.next(start); !ok || err != nil || g.gen != 1 {
		t.Fatalf("connected before the first generation: %d, %v, %v; want generation 1", g.gen, ok, err)
	}
	for gen := uint64(2); gen <= tailKeep+2; gen++ {
		f.push(gen, 0, query.Delta{})
	}
	// Generations 1 and 2 are dropped.
	// A position from before this server's first generation (an earlier
	// process's) missed what was indexed between.
	restarted := newTailFeed()
	restarted.push(50, 0, query.Delta{})
	if _, _, _, err := restarted.next(query.TailID{Gen: 30, TailPos: query.TailDone}); !errors.Is(err, errTailBehind) {
		t.Errorf("a position of an earlier process: %v, want behind", err)
	}
	for _, tc := range []struct {
		at     query.TailID
		behind bool
		next   uint64
	}{
		{query.TailID{Gen: 2, TailPos: query.TailDone}, false, 3},
		{query.TailID{Gen: 2, TailPos: query.TailPos{File: 1, Line: 5}}, true, 0},
		{query.TailID{Gen: 1, TailPos: query.TailDone}, true, 0},
		{query.TailID{Gen: 3, TailPos: query.TailPos{File: 1, Line: 5}}, false, 3},
		{query.TailID{Gen: 3, TailPos: query.TailDone}, false, 4},
	} {
		g, _, _, err := f.next(tc.at)
		if behind := errors.Is(err, errTailBehind); behind != tc.behind || !behind && g.gen != tc.next {
			t.Errorf("at %s: generation %d, %v; want behind %v, else generation %d", tc.at, g.gen, err, tc.behind, tc.next)
		}
	}
}

// TestTailLargeGeneration: a generation with more matching lines than one
// chunk of events arrives whole, in order, once; a client that stops
// reading holds no snapshot while the server waits to write to it.
func TestTailLargeGeneration(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	log := filepath.Join(fx.logs, "live.log")
	appendLines(t, log, 0, 1, "zqbig")
	fx.reindex(t)
	ts.Reload()
	// A client with a small receive buffer: the server's writes block
	// soon after it stops reading.
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	tc := openTailAt(t, client, ts.ts.URL, "q=zqbig", "")
	const n = 30_000 // about 7 MB of events: more than the socket buffers hold
	appendLines(t, log, 1, n, "zqbig")
	fx.reindex(t)
	ts.Reload()
	// The client's queue fills, then the server blocks writing to it.
	deadline := time.Now().Add(10 * time.Second)
	for len(tc.events) < cap(tc.events) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// Once its chunk is gathered the server waits to write it, without
	// the snapshot (it was held throughout, writes included).
	for ts.cur.Load().refs.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the snapshot has %d references while the tail waits for its client, want 1 (the server's)", ts.cur.Load().refs.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := 1; i <= n; i++ {
		if h := tc.hit(t); !strings.HasSuffix(h.Text, fmt.Sprintf(" seq %d zqbig", i)) {
			t.Fatalf("hit %d: %+v", i, h)
		}
	}
}

// TestTailIndexBuiltAnew: when the index is rebuilt from scratch while
// the server runs (here: its manifest damaged), file ids are numbered
// anew; the tail still sends only the lines new since the last snapshot,
// and a client resuming inside a generation of the old numbering is told
// to search for what it missed instead of getting other files' lines.
func TestTailIndexBuiltAnew(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx)
	// First in path order: a rebuild gives it the first id, another
	// file's before.
	live := filepath.Join(fx.logs, "aaa-live.log")
	appendLines(t, live, 0, 3, "zqnum")
	fx.reindex(t)
	ts.Reload()
	tc := openTail(t, ts, "q=zqnum", "")
	appendLines(t, live, 3, 3, "zqnum")
	fx.reindex(t)
	ts.Reload()
	var inside string
	for i := 3; i < 6; i++ {
		h := tc.hit(t)
		if !strings.HasSuffix(h.Text, fmt.Sprintf(" seq %d zqnum", i)) {
			t.Fatalf("hit %+v, want seq %d", h, i)
		}
		if i == 3 {
			inside = h.ID
		}
	}
	appendLines(t, live, 6, 3, "zqnum")
	must(t, os.WriteFile(filepath.Join(fx.index, "MANIFEST"), []byte("damaged"), 0o644))
	fx.reindex(t)
	if changed, err := ts.Reload(); !changed || err != nil {
		t.Fatalf("Reload: %v, %v", changed, err)
	}
	for i := 6; i < 9; i++ {
		if h := tc.hit(t); !strings.HasSuffix(h.Text, fmt.Sprintf(" seq %d zqnum", i)) || h.Path != "logs/aaa-live.log" {
			t.Fatalf("after the rebuild: hit %+v, want seq %d", h, i)
		}
	}
	resumed := openTail(t, ts, "q=zqnum", inside)
	if ev := resumed.next(t); ev.name != "end" || !strings.Contains(ev.data, "built anew") {
		t.Fatalf("resumed inside a generation of the old numbering: %+v, want the end event saying why", ev)
	}
	ts.Server.Close()
	if ev := tc.next(t); ev.name != "end" || !strings.Contains(ev.data, "server shutting down") {
		t.Fatalf("%+v, want the end event (no other hit)", ev)
	}
}
