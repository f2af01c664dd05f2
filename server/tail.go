package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/logdex/logdex/query"
)

// Live tail: every index snapshot the server opens adds one generation to
// the tail feed, with the lines it holds that the previous one did not
// (query.Searcher.Delta). A /api/tail client reads the feed at its own
// pace, from the generation current when it connected or from where its
// Last-Event-ID says it stopped; hits within a generation come in order
// of file id and line, so "generation:file:line" is a resumable position.
// The feed keeps the last tailKeep generations' deltas (line ranges, not
// lines), which bounds memory whatever the clients do: a client that
// falls further behind is cut, with an event saying so.

// tailKeep is how many generations the feed remembers: at one snapshot
// per LiveDelay (250 ms), over four minutes.
const tailKeep = 1024

type tailGen struct {
	gen   uint64
	ids   uint64 // the file numbering of delta's ids (snapshot.ids)
	delta query.Delta
}

type tailFeed struct {
	mu      sync.Mutex
	gens    []tailGen     // oldest first
	evicted uint64        // the newest generation dropped (0: none)
	first   uint64        // the first generation pushed (0: none yet)
	wake    chan struct{} // closed by the next push
}

func newTailFeed() *tailFeed { return &tailFeed{wake: make(chan struct{})} }

// push adds a generation (opened after every one it holds).
func (f *tailFeed) push(gen, ids uint64, delta query.Delta) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.gens); n > 0 && gen <= f.gens[n-1].gen {
		// An index rebuilt from scratch counts its generations from 1
		// again; the feed's positions must still only grow.
		gen = f.gens[n-1].gen + 1
	}
	if f.first == 0 {
		f.first = gen
	}
	if len(f.gens) == tailKeep {
		f.evicted = f.gens[0].gen
		f.gens = append(f.gens[:0], f.gens[1:]...)
	}
	f.gens = append(f.gens, tailGen{gen, ids, delta})
	close(f.wake)
	f.wake = make(chan struct{})
}

// head is the newest generation's number (0: none yet).
func (f *tailFeed) head() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.gens) == 0 {
		return 0
	}
	return f.gens[len(f.gens)-1].gen
}

// errTailBehind: the position is older than what the feed remembers.
var errTailBehind = errors.New("behind the feed")

// next returns the generation to read from position at: at's own when
// part of it is left, else the one after it; ok is false when there is
// none yet, and wake is closed when one comes. errTailBehind when the
// feed no longer holds it.
func (f *tailFeed) next(at query.TailID) (g tailGen, ok bool, wake <-chan struct{}, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Behind when part of a dropped generation is still to read, or the
	// position is of a generation before this server's first (an earlier
	// process's: what was indexed between is in no delta here). A
	// position done with the last one dropped, or 0 (taken before the
	// first generation, at start-up), has missed nothing.
	if at.Gen < f.evicted || at.Gen == f.evicted && at.TailPos != query.TailDone ||
		at.Gen != 0 && f.first != 0 && at.Gen < f.first {
		return g, false, nil, errTailBehind
	}
	for _, e := range f.gens {
		if e.gen == at.Gen && at.TailPos != query.TailDone || e.gen > at.Gen {
			return e, true, nil, nil
		}
	}
	return g, false, f.wake, nil
}

// tailClients bounds the /api/tail streams open at once.
type tailClients struct {
	mu sync.Mutex
	n  int
}

func (c *tailClients) add(limit int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n >= limit {
		return false
	}
	c.n++
	return true
}

func (c *tailClients) done() {
	c.mu.Lock()
	c.n--
	c.mu.Unlock()
}

// handleTail streams newly indexed matching lines as Server-Sent Events:
// a "hit" event per line (data: the hit as /api/search gives it, plus
// its id), an "id"-only message when a generation ends without a hit for
// this client (so that a resume starts after it), comments as
// heartbeats, and a final "end" event saying why the stream stops.
func (s *Server) handleTail(w http.ResponseWriter, r *http.Request) {
	p, q, e := parseSearch(r, true)
	if e != nil {
		writeStatusError(w, e)
		return
	}
	if p.tr != nil || p.order != query.OrderPath || p.log != "" {
		writeError(w, http.StatusBadRequest, "/api/tail takes q, mode and case only")
		return
	}
	resume := r.Header.Get("Last-Event-ID")
	if resume == "" {
		resume = r.URL.Query().Get("last_event_id") // for clients that cannot set headers
	}
	var at query.TailID
	resumed := resume != ""
	if resumed {
		var err error
		if at, err = query.ParseTailID(resume); err != nil {
			writeError(w, http.StatusBadRequest, "Last-Event-ID: "+err.Error())
			return
		}
	}
	if !s.tails.add(s.opt.MaxTails) {
		unavailable(w, 5, fmt.Sprintf("%d live tails open already", s.opt.MaxTails))
		return
	}
	defer s.tails.done()

	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{}) // a stream outlives ReadTimeout; it ends when the client goes
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // a proxy in front must not hold events back
	w.WriteHeader(http.StatusOK)

	st := &tailStream{s: s, w: w, rc: rc, q: q}
	if !resumed {
		at = query.TailID{Gen: s.tailFeed.head(), TailPos: query.TailDone}
	} else if head := s.tailFeed.head(); at.Gen > head {
		// From another index (or a server that restarted with a new
		// one): nothing here follows it.
		st.event("reset", fmt.Sprintf(`{"reason":"position %s is not from this index; following from now"}`, resume))
		at = query.TailID{Gen: head, TailPos: query.TailDone}
	}
	st.id(at)
	st.flush()
	s.log.Debug().Str("q", p.q).Str("from", at.String()).Msg("tail opened")
	reason := st.run(r.Context(), at)
	st.event("end", fmt.Sprintf(`{"reason":%q}`, reason))
	st.flush()
}

type tailStream struct {
	s      *Server
	w      http.ResponseWriter
	rc     *http.ResponseController
	q      *query.Query
	follow query.Follower
	ids    uint64 // the file numbering follow's state is by
	out    []byte // events gathered, to be written
	hit    []byte
	err    error // the first write error: the client is gone
}

func (st *tailStream) write(b []byte) {
	if st.err == nil {
		_, st.err = st.w.Write(b)
	}
}

func (st *tailStream) flush() {
	if st.err == nil {
		st.err = st.rc.Flush()
	}
}

func (st *tailStream) id(at query.TailID) {
	st.write([]byte("id: " + at.String() + "\n\n"))
}

func (st *tailStream) event(name, data string) {
	st.write([]byte("event: " + name + "\ndata: " + data + "\n\n"))
}

// run streams until the client goes, the server stops or the client falls
// behind the feed; it returns why it stopped.
func (st *tailStream) run(ctx context.Context, at query.TailID) string {
	heartbeat := time.NewTicker(st.s.opt.TailHeartbeat)
	defer heartbeat.Stop()
	for {
		g, ok, wake, err := st.s.tailFeed.next(at)
		if err != nil {
			return fmt.Sprintf("client too slow: position %s is older than the last %d index generations the server keeps; search for what was missed and tail again", at, tailKeep)
		}
		if !ok {
			select {
			case <-ctx.Done():
				return "client gone"
			case <-st.s.tailStop:
				return "server shutting down"
			case <-heartbeat.C:
				st.write([]byte(": heartbeat\n\n"))
				st.flush()
			case <-wake:
			}
			if st.err != nil {
				return "client gone"
			}
			continue
		}
		if at.Gen != g.gen {
			at = query.TailID{Gen: g.gen}
		}
		if g.ids != st.ids {
			// The first generation of a new file numbering: what the
			// follower kept is by the old ids.
			st.follow, st.ids = query.Follower{}, g.ids
		}
		sent, last, err := st.gen(ctx, g, at.TailPos)
		// Written once the snapshot is released: a client that reads
		// slowly holds no index, files or segments meanwhile.
		st.write(st.out)
		switch {
		case st.err != nil:
			return "client gone"
		case errors.Is(err, errTailChunk):
			at = query.TailID{Gen: g.gen, TailPos: last}
			st.flush()
			continue // the rest of the generation, with the snapshot of then
		case errors.Is(err, errNoSnapshot):
			return "server shutting down"
		case errors.Is(err, errRenumbered):
			return fmt.Sprintf("the index was built anew (file ids renumbered) before position %s was read; search for what was missed and tail again", at)
		case err != nil:
			return "search failed: " + err.Error()
		}
		at = query.TailID{Gen: g.gen, TailPos: query.TailDone}
		if sent == 0 {
			st.id(at)
		}
		st.flush()
	}
}

// tailChunk bounds the events of one generation gathered under one
// snapshot before they are written.
const tailChunk = 256 << 10

// errTailChunk: a chunk of events is ready; the generation goes on after it.
var errTailChunk = errors.New("tail chunk full")

var errNoSnapshot = errors.New("no index open")

// errRenumbered: a generation's ids are of a file numbering the current
// snapshot no longer has.
var errRenumbered = errors.New("file ids renumbered")

// gen gathers in st.out the events of the hits of generation g after pos,
// from the current snapshot (the feed only gets a generation once it is
// served; the lines of a file the snapshot no longer has, copytruncate's
// source, the Follower reads from its copy, now or once the copy holds
// them). It stops with errTailChunk, last the position of the last hit
// gathered, once tailChunk bytes are.
func (st *tailStream) gen(ctx context.Context, g tailGen, pos query.TailPos) (sent int, last query.TailPos, err error) {
	st.out = st.out[:0]
	if len(g.delta.Lines) == 0 && len(g.delta.Copies) == 0 && !st.follow.Waiting() {
		return 0, last, nil
	}
	sn := st.s.acquire()
	if sn == nil {
		return 0, last, errNoSnapshot
	}
	defer sn.unref()
	if sn.ids != g.ids {
		return 0, last, errRenumbered
	}
	loc := sn.s.Location()
	var hl [][2]int
	err = st.follow.Read(ctx, sn.s, st.q, g.gen, g.delta, pos, func(h *query.Hit) error {
		last = query.TailPos{File: h.File.ID, Line: h.Line}
		id := query.TailID{Gen: g.gen, TailPos: last}.String()
		hl = clipRanges(st.q.AppendHighlights(hl[:0], h.Text), clippedLen(h.Text))
		b := append(st.out, "event: hit\nid: "...)
		b = append(b, id...)
		b = append(b, "\ndata: {\"id\":\""...)
		b = append(b, id...)
		b = append(b, "\","...)
		st.hit = appendHit(st.hit[:0], h, hl, nil, nil, loc)
		b = append(b, st.hit[1:]...) // the hit's fields after its "{"
		b = append(b, "\n\n"...)
		st.out = b
		sent++
		if len(st.out) >= tailChunk {
			return errTailChunk
		}
		return nil
	})
	return sent, last, err
}
