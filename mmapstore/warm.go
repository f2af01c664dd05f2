package mmapstore

// The staged warm-up: stages, pacing, the memory budget and progress
// reporting are one state machine; how it reads is in warmread.go.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// Warm-up modes.
const (
	WarmStaged = "staged" // answer at once, warm in paced stages in the background
	WarmEager  = "eager"  // warm everything before answering
	WarmOff    = "off"    // leave it to page faults
)

// Warm-up states, per region and overall.
const (
	StatePending = "pending"
	StateRunning = "running"
	StateDone    = "done"
	StateSkipped = "skipped" // excluded by the memory budget
	StateOff     = "off"
)

// Clock abstracts time for the warmer so tests can pace it without waiting.
type Clock interface {
	Now() time.Time
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// WarmOptions configure a Warmer.
type WarmOptions struct {
	Mode     string
	Rate     float64 // staged: bytes per second read from disk at most (0: unlimited)
	MaxBytes int64   // warm at most this many index bytes (0: unlimited)
	Chunk    int64   // bytes per step (default 8 MiB)
	// Busy reports queries in flight; while they run and take page
	// faults, a staged warmer pauses (up to YieldMax per piece) and then
	// reads small pieces, so queries get the disk first (see nextPiece).
	// Nil: any page fault counts.
	Busy func() int
	// StartGrace, with Busy, holds a staged warm-up back while a
	// server's first searches run, up to StartGrace for the first to
	// come and 4 × StartGrace in all (0: none). They come as the index
	// opens, from clients that waited for it, and their reads queued
	// behind the warmer's (a trace id's first answer on an evicted 4 GiB
	// index took about 20 ms longer staged than with no warm-up).
	StartGrace time.Duration
	Clock      Clock
	Logger     zerolog.Logger
}

// region is a range of one segment file warmed as a unit.
type region struct {
	seg   *Segment
	kind  uint32
	off   int64
	n     int64
	prio  int
	state atomic.Value // string
}

// Stage priorities: what a query touches first and needs most is warmed
// first. Small sections make every segment usable (the chunk checksums
// among them: every first read of a chunk checks its sum, and they are
// 0.2% of what they cover); the offset index locates every hit (and is
// small); then the dictionaries; substring filters, line times and postings are big and
// serve fewer queries.
func stagePrio(kind uint32) (int, string) {
	switch kind {
	case SectionMeta, SectionFiles, SectionSpans, SectionUnindexed, SectionLineGroups, SectionTermBlocks,
		SectionChunkSums, SectionSumPages, SectionDictBlocks, SectionTimeGroups, SectionCheckpoints:
		return 0, "small sections"
	case SectionLineLens:
		return 2, "offset indexes" // every hit is located through them, and they are small
	case SectionTermDict:
		return 3, "term dictionaries"
	case SectionTrigrams:
		return 4, "trigram filters"
	case SectionLineTimes:
		return 5, "line times"
	case SectionPostings:
		return 6, "postings"
	}
	return 7, "other sections"
}

func stageName(r *region) string {
	_, name := stagePrio(r.kind)
	return name
}

// Warmer brings an index's mapped pages into memory.
type Warmer struct {
	ix      *Index
	opt     WarmOptions
	regions []*region

	mu       sync.Mutex
	state    string
	stage    string
	warmed   int64 // bytes of regions done
	read     int64 // bytes that were not resident and had to be read
	started  time.Time
	finished time.Time
	err      error

	// resident measures residency; tests replace it to simulate a cold cache.
	resident func(m *Mapping, off, n int64) (int64, error)
	// touched, when set, is told of every chunk made resident (tests).
	touched func(s *Segment, kind uint32, off, n int64)
	// faults counts major page faults and queries' reads ahead (staged:
	// see nextPiece); tests replace it.
	faults     func() int64
	lastFaults int64
	prefetched func(off, n int64) // tests: told of every staged read
	buf        []byte             // staged: read buffer
}

// NewWarmer plans the warm-up of ix. Nothing happens until Run.
func NewWarmer(ix *Index, opt WarmOptions) *Warmer {
	if opt.Chunk <= 0 {
		opt.Chunk = 8 << 20
	}
	if opt.Clock == nil {
		opt.Clock = realClock{}
	}
	if opt.Mode == "" {
		opt.Mode = WarmStaged
	}
	w := &Warmer{ix: ix, opt: opt, state: StatePending,
		resident: func(m *Mapping, off, n int64) (int64, error) { return m.Resident(off, n) },
		faults:   diskWaits}
	if opt.Mode == WarmOff {
		w.state = StateOff
	}
	for _, s := range ix.segments {
		for _, e := range s.Sections() {
			if e.Length == 0 {
				continue
			}
			p, _ := stagePrio(e.Kind)
			// Any block of the dictionary may serve a lookup: it is
			// warmed whole.
			r := &region{seg: s, kind: e.Kind, off: int64(e.Offset), n: int64(e.Length), prio: p}
			r.state.Store(StatePending)
			w.regions = append(w.regions, r)
		}
	}
	sort.SliceStable(w.regions, func(i, j int) bool {
		a, b := w.regions[i], w.regions[j]
		if a.prio != b.prio {
			return a.prio < b.prio
		}
		return a.n < b.n
	})
	var total int64
	for _, r := range w.regions {
		if opt.MaxBytes > 0 && total+r.n > opt.MaxBytes {
			r.state.Store(StateSkipped)
			continue
		}
		total += r.n
	}
	return w
}

// Run warms the planned regions. In staged mode it paces itself and
// yields to queries; in eager mode it reads as fast as it can. It returns
// when done, skipped the rest, or ctx ends.
func (w *Warmer) Run(ctx context.Context) error {
	if w.opt.Mode == WarmOff {
		return nil
	}
	if err := w.ix.Acquire(); err != nil {
		return err
	}
	defer w.ix.Release()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	w.mu.Lock()
	w.state, w.started = StateRunning, w.opt.Clock.Now()
	w.mu.Unlock()
	if w.faults != nil {
		w.lastFaults = w.faults()
	}
	log := w.opt.Logger
	log.Info().Str("mode", w.opt.Mode).Int64("bytes", w.planned()).Float64("rate_mb_s", w.opt.Rate/1e6).Msg("warm-up starting")
	w.awaitFirstSearches(ctx)
	err := w.run(ctx)
	var verr error
	if err == nil {
		verr = w.verify(ctx) // damage is reported; the warm-up itself is done
	}
	w.mu.Lock()
	w.finished = w.opt.Clock.Now()
	w.err = errors.Join(err, verr)
	if err == nil {
		w.state = StateDone
	} else {
		w.state = StatePending
	}
	el := w.finished.Sub(w.started)
	w.mu.Unlock()
	ev := log.Info()
	if err != nil {
		ev = log.Warn().Err(err)
	}
	ev.Dur("took", el).Int64("warmed", w.warmed).Int64("read", w.read).Msg("warm-up finished")
	return err
}

// awaitFirstSearches waits, in staged mode with a StartGrace, until the
// searches that came first are answered (the first moment none runs after
// one did), or StartGrace passes without one, or 4 × StartGrace in all.
func (w *Warmer) awaitFirstSearches(ctx context.Context) {
	if w.opt.Mode != WarmStaged || w.opt.StartGrace <= 0 || w.opt.Busy == nil {
		return
	}
	t0 := w.opt.Clock.Now()
	seen := false
	for {
		busy := w.opt.Busy() > 0
		seen = seen || busy
		waited := w.opt.Clock.Now().Sub(t0)
		if !busy && (seen || waited >= w.opt.StartGrace) || waited >= 4*w.opt.StartGrace {
			return
		}
		if w.opt.Clock.Sleep(ctx, yieldPoll) != nil {
			return
		}
	}
}

func (w *Warmer) planned() int64 {
	var n int64
	for _, r := range w.regions {
		if r.state.Load() != StateSkipped {
			n += r.n
		}
	}
	return n
}

func (w *Warmer) run(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("warm-up: %v", r)
		}
	}()
	var (
		ioBytes int64
		t0      = w.opt.Clock.Now()
		stage   string
		stageT  = t0
		stageB  int64
	)
	for _, r := range w.regions {
		if r.state.Load() == StateSkipped {
			continue
		}
		if name := stageName(r); name != stage {
			if stage != "" {
				w.opt.Logger.Info().Str("stage", stage).Int64("bytes", stageB).Dur("took", w.opt.Clock.Now().Sub(stageT)).Msg("warm-up stage done")
			}
			stage, stageT, stageB = name, w.opt.Clock.Now(), 0
			w.mu.Lock()
			w.stage = name
			w.mu.Unlock()
		}
		r.state.Store(StateRunning)
		m := r.seg.Mapping()
		// Eager populates the mapping itself: read-ahead on while it does
		// (under MADV_RANDOM it faults page by page, ~30× slower).
		normal := m != nil && w.opt.Mode == WarmEager
		if normal {
			m.Advise(r.off, r.n, unix.MADV_NORMAL)
		}
		for off := r.off; off < r.off+r.n; off += w.opt.Chunk {
			if err := ctx.Err(); err != nil {
				return err
			}
			n := min(w.opt.Chunk, r.off+r.n-off)
			read, err := w.warmChunk(ctx, r.seg, off, n)
			if err != nil {
				return err
			}
			if w.touched != nil {
				w.touched(r.seg, r.kind, off, n)
			}
			ioBytes += read
			w.mu.Lock()
			w.read += read
			w.warmed += n
			w.mu.Unlock()
			stageB += n
			// Pace disk reads (not already-resident pages) to the budget.
			if w.opt.Mode == WarmStaged && w.opt.Rate > 0 && read > 0 {
				due := time.Duration(float64(ioBytes) / w.opt.Rate * float64(time.Second))
				if ahead := due - w.opt.Clock.Now().Sub(t0); ahead > 0 {
					if err := w.opt.Clock.Sleep(ctx, ahead); err != nil {
						return err
					}
				}
			}
		}
		if normal {
			m.Advise(r.off, r.n, unix.MADV_RANDOM)
		}
		r.state.Store(StateDone)
	}
	if stage != "" {
		w.opt.Logger.Info().Str("stage", stage).Int64("bytes", stageB).Dur("took", w.opt.Clock.Now().Sub(stageT)).Msg("warm-up stage done")
	}
	return nil
}

// verify checks the checksums of every section of the segments now wholly
// resident: opening a segment checks only its small sections, and this is
// the moment the rest costs no I/O.
func (w *Warmer) verify(ctx context.Context) error {
	skipped := map[*Segment]bool{}
	for _, r := range w.regions {
		if r.state.Load() != StateDone {
			skipped[r.seg] = true
		}
	}
	var bad []string
	for _, s := range w.ix.segments {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if skipped[s] || s.Mapping() == nil {
			continue
		}
		if err := s.Verify(); err != nil {
			w.opt.Logger.Error().Err(err).Msg("index segment damaged; run logdex index --verify")
			bad = append(bad, err.Error())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d damaged segments: %s", len(bad), strings.Join(bad, "; "))
	}
	return nil
}

// warmChunk makes [off, off+n) of a segment resident and returns how many
// of those bytes were not resident before (what had to be read).
func (w *Warmer) warmChunk(ctx context.Context, s *Segment, off, n int64) (int64, error) {
	m := s.Mapping()
	if m == nil {
		return 0, nil
	}
	res, err := w.resident(m, off, n)
	if err != nil {
		return 0, err
	}
	if res == n {
		return 0, nil
	}
	if w.opt.Mode == WarmEager {
		if err := m.Advise(off, n, unix.MADV_POPULATE_READ); err == nil {
			return n - res, nil
		}
	}
	// Staged: read through the file, piece by piece (see nextPiece); the
	// mapping shares the page cache the reads fill, and queries faulting
	// at random meanwhile are not made to read megabytes around each fault.
	if w.buf == nil {
		w.buf = make([]byte, min(w.opt.Chunk, 8<<20))
	}
	for p, end := off, off+n; p < end; {
		k := min(w.nextPiece(ctx, int64(len(w.buf))), end-p)
		if res == 0 || !w.isResident(m, p, k) {
			if err := m.Prefetch(p, k, w.buf[:k]); err != nil {
				return 0, err
			}
			if w.prefetched != nil {
				w.prefetched(p, k)
			}
		}
		p += k
	}
	return n - res, nil
}

// WarmFile is the warm-up state of one segment file.
type WarmFile struct {
	Name     string `json:"name"`
	Mapped   int64  `json:"mapped_bytes"`
	Resident int64  `json:"resident_bytes"`
	State    string `json:"state"`
}

// WarmStatus is what /api/status and `logdex status` report.
type WarmStatus struct {
	Mode        string     `json:"mode"`
	State       string     `json:"state"`
	Stage       string     `json:"stage,omitempty"`
	Mapped      int64      `json:"mapped_bytes"`
	Resident    int64      `json:"resident_bytes"`
	Planned     int64      `json:"planned_bytes"` // within the memory budget
	Warmed      int64      `json:"warmed_bytes"`
	Read        int64      `json:"read_bytes"` // bytes that had to come from disk
	RateMBps    float64    `json:"rate_mb_s"`
	ElapsedMs   int64      `json:"elapsed_ms"`
	Files       []WarmFile `json:"files"`
	Mappings    int        `json:"mappings"`
	MaxMapCount int        `json:"max_map_count"`
	Error       string     `json:"error,omitempty"`
}

// Status measures residency (mincore per segment) and reports progress.
func (w *Warmer) Status() WarmStatus {
	w.mu.Lock()
	st := WarmStatus{Mode: w.opt.Mode, State: w.state, Stage: w.stage, Warmed: w.warmed, Read: w.read}
	if !w.started.IsZero() {
		end := w.finished
		if end.IsZero() {
			end = w.opt.Clock.Now()
		}
		el := end.Sub(w.started)
		st.ElapsedMs = el.Milliseconds()
		if el > 0 {
			st.RateMBps = float64(w.read) / el.Seconds() / 1e6
		}
	}
	if w.err != nil {
		st.Error = w.err.Error()
	}
	w.mu.Unlock()
	st.Planned = w.planned()
	perSeg := map[*Segment]map[string]int{}
	for _, r := range w.regions {
		if perSeg[r.seg] == nil {
			perSeg[r.seg] = map[string]int{}
		}
		perSeg[r.seg][r.state.Load().(string)]++
	}
	segState := func(c map[string]int) string {
		n := c[StatePending] + c[StateRunning] + c[StateDone] + c[StateSkipped]
		switch {
		case c[StateDone] == n:
			return StateDone
		case c[StateSkipped] == n:
			return StateSkipped
		case c[StatePending]+c[StateSkipped] == n:
			return StatePending
		case c[StateDone]+c[StateSkipped] == n:
			return StateDone // partly excluded by the budget
		}
		return StateRunning
	}
	if res, err := w.ix.Residency(); err == nil {
		for i, r := range res {
			state := segState(perSeg[w.ix.segments[i]])
			if w.opt.Mode == WarmOff {
				state = StateOff
			}
			st.Files = append(st.Files, WarmFile{Name: r.Name, Mapped: r.Mapped, Resident: r.Resident, State: state})
			st.Mapped += r.Mapped
			st.Resident += r.Resident
		}
	}
	st.Mappings, st.MaxMapCount = mapCounts()
	return st
}

// mapCounts returns this process's number of memory mappings and the
// kernel's limit (vm.max_map_count).
func mapCounts() (int, int) {
	n := 0
	if b, err := os.ReadFile("/proc/self/maps"); err == nil {
		n = strings.Count(string(b), "\n")
	}
	max := 0
	if b, err := os.ReadFile("/proc/sys/vm/max_map_count"); err == nil {
		max, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	return n, max
}
