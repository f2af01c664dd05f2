package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
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

// acquire takes a slot; ok is false when the server is saturated.
func (l *limiter) acquire(ctx context.Context) (release func(), ok bool) {
	select {
	case l.slots <- struct{}{}:
		return l.release, true
	default:
	}
	if l.queued.Add(1) > l.maxQueued {
		l.queued.Add(-1)
		return nil, false
	}
	defer l.queued.Add(-1)
	t := time.NewTimer(l.wait)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return l.release, true
	case <-t.C:
	case <-ctx.Done():
	}
	return nil, false
}

func (l *limiter) release() { <-l.slots }

// admit takes a search slot for r, or answers 503 (and counts the
// refusal) when the server is saturated.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	release, ok = s.limiter.acquire(r.Context())
	if !ok {
		s.metrics.rejected.Inc()
		unavailable(w, 1, "too many searches; retry shortly")
	}
	return release, ok
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
