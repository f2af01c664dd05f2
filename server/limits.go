package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Request limits. Each bounds the memory or time one request can take.
const (
	defaultLimit   = 100
	maxLimit       = 10_000
	maxContext     = 50    // context lines before and after a hit
	maxLinesAround = 1_000 // before/after of /api/files/{id}/content?line=
	maxQueryBytes  = 4 << 10
	maxLineBytes   = 64 << 10 // a line's text in JSON is cut here ("truncated": true)
	spillBytes     = 1 << 20  // JSON buffered up to this, then streamed
)

// limiter admits at most max searches at once. A few more may wait, for at
// most wait; the rest are refused at once (503), so a burst cannot pile up
// goroutines and memory without bound.
type limiter struct {
	slots     chan struct{}
	queued    atomic.Int64
	maxQueued int64
	wait      time.Duration
}

func newLimiter(max, queued int, wait time.Duration) *limiter {
	return &limiter{slots: make(chan struct{}, max), maxQueued: int64(queued), wait: wait}
}

// acquire takes a slot; false when the server is saturated.
func (l *limiter) acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	if l.queued.Add(1) > l.maxQueued {
		l.queued.Add(-1)
		return false
	}
	defer l.queued.Add(-1)
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func (l *limiter) release() { <-l.slots }

// searchSlot is an admitted request's hold on a limiter slot. The slot
// bounds searching, not sending: respWriter pauses it around every write
// to the connection, so a client that reads slowly holds a stream (see
// streamBound), never a search slot, and the search takes its slot back
// (waiting behind others, as long as the client stays) before going on.
// Only the handler's goroutine, or a callback it waits for, uses it.
type searchSlot struct {
	l        *limiter
	ctx      context.Context
	held     bool
	finished bool
}

// pause lets the slot go while a write may block on the client.
func (sl *searchSlot) pause() {
	if sl != nil && sl.held {
		sl.l.release()
		sl.held = false
	}
}

// resume takes the slot back after a write, unless the search is over.
func (sl *searchSlot) resume() error {
	if sl == nil || sl.held || sl.finished {
		return nil
	}
	select {
	case sl.l.slots <- struct{}{}:
		sl.held = true
		return nil
	case <-sl.ctx.Done():
		return sl.ctx.Err()
	}
}

// finish lets the slot go for good: what is left is sending the answer.
func (sl *searchSlot) finish() {
	sl.pause()
	sl.finished = true
}

// admit takes a search slot for r, or answers 503 (and counts the
// refusal) when the server is saturated. The slot is the handler's to
// finish; writes through w pause it meanwhile.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (*searchSlot, bool) {
	if !s.limiter.acquire(r.Context()) {
		s.metrics.rejected.Inc()
		unavailable(w, 1, "too many searches; retry shortly")
		return nil, false
	}
	sl := &searchSlot{l: s.limiter, ctx: r.Context(), held: true}
	if rw, isRW := w.(*respWriter); isRW {
		rw.slot = sl
	}
	return sl, true
}

// streamBound limits the responses that send file bytes for as long as a
// client reads (raw searches, downloads): max at once, perClient of them
// from one client address. A few slow readers then cannot hold every
// open file and goroutine the server is willing to give, and one client
// cannot take them all.
type streamBound struct {
	mu             sync.Mutex
	max, perClient int
	n              int
	byClient       map[string]int
}

// enter counts a stream for client; code is 0, or the refusal's status.
func (b *streamBound) enter(client string) (code int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.n >= b.max:
		return http.StatusServiceUnavailable
	case b.byClient[client] >= b.perClient:
		return http.StatusTooManyRequests
	}
	if b.byClient == nil {
		b.byClient = map[string]int{}
	}
	b.n++
	b.byClient[client]++
	return 0
}

func (b *streamBound) leave(client string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.n--
	if b.byClient[client]--; b.byClient[client] <= 0 {
		delete(b.byClient, client)
	}
}

func (b *streamBound) active() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.n
}

// openStream admits a streaming response for r's client (its address:
// behind a proxy, every client is one), or answers 503 when the server
// streams its maximum, 429 when this client does.
func (s *Server) openStream(w http.ResponseWriter, r *http.Request) (leave func(), ok bool) {
	client, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		client = r.RemoteAddr
	}
	switch s.streams.enter(client) {
	case 0:
		return func() { s.streams.leave(client) }, true
	case http.StatusTooManyRequests:
		s.metrics.streamsRejected.Inc()
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, "too many downloads from this client at once; retry when one ends")
	default:
		s.metrics.streamsRejected.Inc()
		unavailable(w, 1, "too many downloads at once; retry shortly")
	}
	return nil, false
}

func (l *limiter) active() int { return len(l.slots) }

// intParam reads an optional integer parameter within [lo, hi]. A value
// that is not a number is a 400; one out of range a 422.
func intParam(v url.Values, name string, def, lo, hi int) (int, *statusError) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, badRequest(fmt.Sprintf("%s: not a number", name))
	}
	if n < lo || n > hi {
		return 0, unprocessable(fmt.Sprintf("%s must be between %d and %d", name, lo, hi))
	}
	return n, nil
}
