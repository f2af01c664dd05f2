package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/live"
)

// snapshot is one open index with its searcher. Requests hold a reference
// for their whole duration (a raw download may outlive a re-index); the
// last reference to a retired snapshot closes it. mmapstore.Index's own
// Acquire cannot serve here: it refuses new readers once Close has begun,
// and Searcher methods acquire internally.
type snapshot struct {
	ix  *mmapstore.Index
	s   *query.Searcher
	seq uint64
	// ids counts the index's file numberings: it grows when the index was
	// built anew (query.Delta.Renumbered) and file ids name other files.
	ids    uint64
	opened time.Time
	refs   atomic.Int64 // 1 for being current, +1 per request
	warmer *mmapstore.Warmer
	stop   context.CancelFunc // ends a staged warm-up
}

func (sn *snapshot) tryRef() bool {
	for {
		n := sn.refs.Load()
		if n <= 0 {
			return false
		}
		if sn.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (sn *snapshot) unref() {
	if sn.refs.Add(-1) == 0 {
		if sn.stop != nil {
			sn.stop() // the warmer holds a reader; Close waits for it
		}
		sn.s.Close()
		sn.ix.Close()
	}
}

// acquire returns the current snapshot with a reference, or nil when no
// index is open.
func (s *Server) acquire() *snapshot {
	for {
		sn := s.cur.Load()
		if sn == nil {
			return nil
		}
		if sn.tryRef() {
			return sn
		}
		// Retired between Load and tryRef: the next Load sees its successor.
	}
}

// Reload opens the index directory and swaps to it when its manifest
// generation differs from the one served (or none is served yet).
func (s *Server) Reload() (bool, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	if s.closed {
		return false, errors.New("server closed")
	}
	if cur := s.cur.Load(); cur != nil {
		m, err := mmapstore.ReadManifest(s.opt.IndexDir)
		if err != nil {
			return false, err
		}
		if cur.ix.OpenedFrom(m) {
			return false, nil
		}
	}
	var prev, ix *mmapstore.Index
	var err error
	if cur := s.cur.Load(); cur != nil {
		prev = cur.ix // its segments are reused: mapped, verified and warm already
		ix, err = mmapstore.OpenFrom(s.opt.IndexDir, prev)
	} else {
		ix, err = mmapstore.OpenCold(s.opt.IndexDir) // the first open: all of it may be cold
	}
	if err != nil {
		return false, err
	}
	sn := &snapshot{ix: ix, s: query.NewSearcher(ix, s.opt.Display), seq: s.seq.Add(1), opened: time.Now()}
	sn.s.SetMappedReads(true) // a snapshot answers many searches: its log files' mappings pay off
	if s.opt.SearchWorkers > 0 {
		sn.s.SetWorkers(s.opt.SearchWorkers)
	}
	if w := s.watchRoots(ix); w != nil {
		sn.s.SetWatch(w)
	}
	sn.refs.Store(1)
	s.startWarmup(sn, prev == nil)
	delta := sn.s.Delta(prev, &s.tailHistory) // before prev can close
	if cur := s.cur.Load(); cur != nil {
		sn.ids = cur.ids
		if delta.Renumbered {
			sn.ids++
			s.tailHistory = query.History{} // (its records are by the old ids)
			s.log.Info().Uint64("generation", ix.Generation()).Msg("index built anew: file ids renumbered; live tails behind it start again")
		}
	}
	s.tailHistory.Add(delta)
	old := s.cur.Swap(sn)
	// Served first, then fed: a tail reading this generation finds a
	// snapshot that holds its lines.
	s.tailFeed.push(ix.Generation(), sn.ids, delta)
	if old != nil {
		old.unref()
	}
	st := ix.Stats()
	ev := s.log.Info().Uint64("generation", ix.Generation()).Int("files", st.Files).Int("segments", st.Segments).Int64("lines", st.Lines)
	if len(ix.Damaged()) > 0 {
		ev = s.log.Warn().Uint64("generation", ix.Generation()).Int("damaged_segments", len(ix.Damaged())).Errs("damage", ix.Damaged())
	}
	ev.Msg("index opened")
	return true, nil
}

// warmupGrace is how long the staged warm-up of the first snapshot waits
// for the first search (see mmapstore.WarmOptions.StartGrace).
const warmupGrace = 250 * time.Millisecond

// startWarmup runs the configured warm-up of a new snapshot: eager before
// it is served, staged in the background until it is retired; the first
// snapshot's staged warm-up gives the first searches the disk.
func (s *Server) startWarmup(sn *snapshot, first bool) {
	if s.opt.Warmup == nil || s.opt.Warmup.Mode == mmapstore.WarmOff || s.opt.Warmup.Mode == "" {
		return
	}
	wo := *s.opt.Warmup
	wo.Busy = s.limiter.active
	wo.Logger = s.log
	if first && wo.StartGrace == 0 {
		wo.StartGrace = warmupGrace
	}
	sn.warmer = mmapstore.NewWarmer(sn.ix, wo)
	if wo.Mode == mmapstore.WarmEager {
		if err := sn.warmer.Run(context.Background()); err != nil {
			s.log.Warn().Err(err).Msg("eager warm-up failed")
		}
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	sn.stop = cancel
	go sn.warmer.Run(ctx)
}

// TriggerReindex asks the re-index loop for a run soon (SIGHUP). Requests
// made while one is pending coalesce.
func (s *Server) TriggerReindex() { poke(s.trigger) }

// requestMerge asks the background merger to look for merges due.
func (s *Server) requestMerge() { poke(s.mergeDue) }

// poke wakes the loop reading c, unless a wake-up is already pending.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (s *Server) reindexLoop(ctx context.Context) {
	var tick <-chan time.Time
	if s.opt.ReindexEvery > 0 {
		t := time.NewTicker(s.opt.ReindexEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		// Live indexing: a change the watch reports is indexed LiveDelay
		// later (changes meanwhile join it), so appended lines are
		// searchable from the index within about a second; the timer is
		// the fallback when the watch cannot see (a network file system).
		var changes <-chan struct{}
		if w := s.watching.Load(); w != nil && s.opt.LiveDelay > 0 {
			changes = w.Changes()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick:
		case <-s.trigger:
		case <-s.watchSet:
			// The watch starts with the first snapshot, after this loop
			// began waiting without it: wait again, on its changes.
			continue
		case <-changes:
			select {
			case <-time.After(s.opt.LiveDelay):
			case <-s.trigger: // a search waits for it (awaitCreated): now
			case <-ctx.Done():
				return
			}
		}
		s.ReindexNow(ctx)
	}
}

// mergeLoop runs Options.Merge each time a re-index run reports merges
// due (requests meanwhile coalesce), and re-opens the index after one
// that published.
func (s *Server) mergeLoop(ctx context.Context) {
	if s.opt.Merge == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.mergeDue:
		}
		t0 := time.Now()
		res, err := s.opt.Merge(ctx)
		if res.Changed {
			// (also after a failure: merges published before it are
			// served, and their inputs' mappings released)
			_, rerr := s.Reload()
			err = errors.Join(err, rerr)
		}
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.log.Error().Err(err).Msg("background merge failed; still serving the previous snapshot")
		case res.Changed:
			s.log.Debug().Dur("took", time.Since(t0)).Msg(res.Summary)
			s.requestMerge() // a merge can fill the next tier: look again
		}
	}
}

// reindexState is what /api/status tells of re-indexing.
type reindexState struct {
	mu       sync.Mutex
	running  bool
	runs     int64
	failures int64
	last     *ReindexRun
	// behind is what answers say while runs fail (from the first failed
	// run since the last that worked; "": the last worked): the snapshot
	// served misses the files added since.
	behind string
}

// ReindexRun describes one re-index run.
type ReindexRun struct {
	Start    time.Time `json:"start"`
	Duration float64   `json:"duration_ms"`
	Result   string    `json:"result"` // "updated", "unchanged" or "error"
	Error    string    `json:"error,omitempty"`
	Summary  string    `json:"summary,omitempty"`
}

// ReindexNow runs the Reindex func (if any) and re-opens the index when
// it changed. Runs are serialized.
func (s *Server) ReindexNow(ctx context.Context) error {
	s.reindex.mu.Lock()
	if s.reindex.running {
		s.reindex.mu.Unlock()
		return nil
	}
	s.reindex.running = true
	s.reindex.mu.Unlock()

	t0 := time.Now()
	run := &ReindexRun{Start: t0}
	w := s.watching.Load()
	var from uint64 // the files created up to here are in this run's walk
	if w != nil {
		from = w.Seq()
	}
	var err error
	if s.opt.Reindex != nil {
		var res ReindexResult
		var open *mmapstore.Index
		sn := s.acquire()
		if sn != nil {
			open = sn.ix
		}
		res, err = s.opt.Reindex(ctx, open)
		if sn != nil {
			sn.unref()
		}
		run.Summary = res.Summary
		if err == nil && res.MergeDue {
			s.requestMerge()
		}
	}
	changed := false
	if err == nil {
		changed, err = s.Reload()
	}
	if err == nil && w != nil && s.watching.Load() == w {
		for c := s.covered.Load(); c < from && !s.covered.CompareAndSwap(c, from); c = s.covered.Load() {
		}
	}
	run.Duration = float64(time.Since(t0).Microseconds()) / 1000
	switch {
	case err != nil:
		run.Result, run.Error = "error", s.sanitize(err.Error())
		s.log.Error().Err(err).Msg("re-index failed; still serving the previous snapshot")
	case changed:
		run.Result = "updated"
	default:
		run.Result = "unchanged"
	}
	if err == nil && run.Summary != "" {
		// Live indexing runs several times a second: the log gets the
		// first run and slow ones; the others are debug lines.
		ev := s.log.Debug()
		if s.reindex.runs == 0 || run.Duration >= 1000 {
			ev = s.log.Info()
		}
		ev.Str("result", run.Result).Float64("ms", run.Duration).Msg(run.Summary)
	}
	s.metrics.reindexRuns.With(run.Result).Inc()

	s.reindex.mu.Lock()
	s.reindex.running = false
	s.reindex.runs++
	if err != nil {
		s.reindex.failures++
		if s.reindex.behind == "" {
			s.reindex.behind = fmt.Sprintf("the index could not be updated since %s (%s); files added to the logs since then are not searched",
				run.Start.UTC().Format(time.RFC3339), run.Error)
		}
	} else {
		s.reindex.behind = ""
	}
	s.reindex.last = run
	s.reindex.mu.Unlock()
	return err
}

// awaitCreated waits, when live indexing runs, until the snapshot served
// holds the files whose creation (or rename into place, or removal) the
// watch has noted: a new log, a rotation just compressed, or the copy of
// a copytruncate is otherwise searched only from the next live run on,
// and an answer given meanwhile would silently leave it out. It first
// syncs the watch (its barrier), so that every change completed before
// the request is noted, then pokes the re-index loop so that the run
// starts at once, and gives up after createdWait (or when ctx ends, or
// while runs fail: answers then say that files added since are not
// searched). It waits outside the search slots. synced reports that the
// barrier round was made: the search need not make its own.
func (s *Server) awaitCreated(ctx context.Context) (synced bool) {
	w := s.watching.Load()
	if w == nil || s.opt.Reindex == nil || s.opt.LiveDelay <= 0 || !w.Sync() {
		return false
	}
	want := w.ListingSeq()
	if want <= s.covered.Load() {
		return true // (every search passes here)
	}
	if _, failing := s.behind(); failing || w.Err() != nil {
		return true
	}
	poke(s.trigger)
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	deadline := time.After(createdWait)
	for s.covered.Load() < want {
		select {
		case <-t.C:
		case <-deadline:
			return true
		case <-ctx.Done():
			return true
		}
		if s.watching.Load() != w {
			return false // (the watch was replaced: its sequences are not ours)
		}
	}
	return true
}

// createdWait bounds awaitCreated: a live run over a busy tree that takes
// longer is not waited for.
const createdWait = 2 * time.Second

// behind says, while re-indexing fails (index disk full, index directory
// not writable), that answers miss the files added to the logs since:
// their lines are in no snapshot (lines appended to indexed files are
// still read from the files).
func (s *Server) behind() (string, bool) {
	s.reindex.mu.Lock()
	defer s.reindex.mu.Unlock()
	return s.reindex.behind, s.reindex.behind != ""
}

// sanitize keeps the index directory's location out of messages shown in
// responses.
func (s *Server) sanitize(msg string) string {
	if s.opt.IndexDir != "" {
		msg = strings.ReplaceAll(msg, s.opt.IndexDir+"/", "")
		msg = strings.ReplaceAll(msg, s.opt.IndexDir, "<index>")
	}
	return msg
}

// Ready reports whether an index is open, and its manifest generation.
func (s *Server) Ready() (generation uint64, ok bool) {
	sn := s.acquire()
	if sn == nil {
		return 0, false
	}
	defer sn.unref()
	return sn.ix.Generation(), true
}

// watchRoots returns the inotify watch of the index's roots, starting it
// on first use (under reloadMu). Without one every search stats every
// file; that is slower, not wrong, so failing to watch is only logged.
func (s *Server) watchRoots(ix *mmapstore.Index) *live.Watch {
	if s.opt.NoWatch {
		return nil
	}
	var roots []string
	for _, r := range ix.Roots() {
		roots = append(roots, r.Abs)
	}
	key := strings.Join(roots, "\x00")
	if s.watch != nil && s.watchKey == key {
		return s.watch
	}
	if s.watch != nil {
		s.watch.Close()
		s.watch = nil
		s.watching.Store(nil)
	}
	w, err := live.NewWatch(roots, s.opt.IndexDir)
	if err != nil {
		s.log.Warn().Err(err).Msg("cannot watch the log directories; every search checks every file")
		return nil
	}
	if err := w.Err(); err != nil {
		s.log.Warn().Err(err).Msg("cannot watch all log directories; every search checks every file")
	}
	s.watch, s.watchKey = w, key
	s.watching.Store(w)
	poke(s.watchSet)
	return w
}
