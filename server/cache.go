package server

import (
	"context"
	"sync"
	"time"
)

// cache keeps rendered /api/search responses for a short time and lets
// identical concurrent requests share one search. Keys include the
// snapshot's sequence number, so a re-index invalidates everything, and
// the watch's change sequence, so any change to the logs (lines appended
// since indexing, which searches scan live) does too: without a watch
// nothing is cached. Only complete responses small enough to have been
// buffered are kept.
type cache struct {
	ttl      time.Duration
	maxBytes int

	mu       sync.Mutex
	entries  map[string]*entry
	bytes    int
	inflight map[string]*flight
}

type entry struct {
	body    []byte
	expires time.Time
}

type flight struct {
	done chan struct{}
	body []byte // nil: the leader produced nothing cacheable
}

func newCache(ttl time.Duration, maxBytes int) *cache {
	return &cache{ttl: ttl, maxBytes: maxBytes, entries: map[string]*entry{}, inflight: map[string]*flight{}}
}

// enabled reports whether answers are kept at all.
func (c *cache) enabled() bool { return c.ttl > 0 }

// get returns a fresh body, or waits for a search of the same key already
// running. Otherwise it returns a flight the caller leads and must finish.
func (c *cache) get(ctx context.Context, key string) (body []byte, lead *flight) {
	if !c.enabled() {
		return nil, nil
	}
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		if time.Now().Before(e.expires) {
			c.mu.Unlock()
			return e.body, nil
		}
		c.drop(key, e)
	}
	if f, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		select {
		case <-f.done:
			return f.body, nil // nil body: search on its own
		case <-ctx.Done():
			return nil, nil
		}
	}
	f := &flight{done: make(chan struct{})}
	c.inflight[key] = f
	c.mu.Unlock()
	return nil, f
}

// finish ends a flight; body (nil when not cacheable) goes to waiters and
// into the cache.
func (c *cache) finish(key string, f *flight, body []byte) {
	if f == nil {
		return
	}
	c.mu.Lock()
	delete(c.inflight, key)
	if body != nil && len(body) <= c.maxBytes/16 {
		c.evict(len(body))
		c.entries[key] = &entry{body: body, expires: time.Now().Add(c.ttl)}
		c.bytes += len(body)
	}
	c.mu.Unlock()
	f.body = body
	close(f.done)
}

func (c *cache) drop(key string, e *entry) {
	delete(c.entries, key)
	c.bytes -= len(e.body)
}

// evict makes room for n bytes: expired entries first, then any.
func (c *cache) evict(n int) {
	if c.bytes+n <= c.maxBytes {
		return
	}
	now := time.Now()
	for k, e := range c.entries {
		if now.After(e.expires) {
			c.drop(k, e)
		}
	}
	for k, e := range c.entries {
		if c.bytes+n <= c.maxBytes {
			break
		}
		c.drop(k, e)
	}
}
