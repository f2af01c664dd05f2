package query

import (
	"context"
	"errors"
	"math"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query/live"
)

type taskKind uint8

const (
	taskFile taskKind = iota // start of a file (counts, close of the previous)
	taskIDs
	taskScan
	// taskCounted: files (task.counted) with nothing to read or report,
	// counted from the index alone (0 for most), for Options.PerFile and
	// the total. One task for a run of them: over 100,000 small files,
	// most would otherwise be two or three goroutine hand-overs each.
	taskCounted
)

// runs tells whether a task of the kind is run (the others only mark
// where files begin).
func (k taskKind) runs() bool { return k == taskIDs || k == taskScan }

type hitRec struct {
	line, off, n int64
	tpos         int // start of the text in task.buf, -1 without text
	t            int64
	timed        bool
}

// Hit records and texts of tasks are recycled once delivered: a page of
// hits otherwise allocates them anew for every search.
var (
	hitRecPool  = sync.Pool{New: func() any { return new([]hitRec) }}
	textBufPool = sync.Pool{New: func() any { return new([]byte) }}
)

// maxPooled bounds the text buffers kept for reuse (a task's records are
// at most 4096, its text buffer is sized for them).
const maxPooled = 1 << 20

func getHitRecs(n int) []hitRec {
	p := hitRecPool.Get().(*[]hitRec)
	if cap(*p) < n {
		return make([]hitRec, 0, n)
	}
	return (*p)[:0]
}

func getTextBuf(n int) []byte {
	p := textBufPool.Get().(*[]byte)
	if cap(*p) < n {
		return make([]byte, 0, n)
	}
	return (*p)[:0]
}

// release gives the task's hit records and text back for reuse; the task
// must have been delivered (its hits' texts are no longer referenced).
func (t *task) release() {
	if t.hits != nil && cap(t.hits) <= 4096 {
		h := t.hits[:0]
		hitRecPool.Put(&h)
	}
	if t.buf != nil && cap(t.buf) <= maxPooled {
		b := t.buf[:0]
		textBufPool.Put(&b)
	}
	t.hits, t.buf = nil, nil
}

type task struct {
	// taskBody is all the task is and found. run's fallback rewrites it
	// whole while the consumer waits on done, which it must not write.
	taskBody
	done chan struct{} // closed once the task ran
}

type taskBody struct {
	kind    taskKind
	file    *File
	counted []fileCount // taskCounted
	h       *live.Handle
	seg     *mmapstore.Segment
	span    int
	plan    *segPlan
	// deferred, for an IDs task without a plan: the plans to ask for the
	// segment's (segIdx) when the task runs (planSet.deferSpans), and for
	// each later window of its span (planSet.windows).
	deferred *planSet
	segIdx   int
	// spanHits, when spanCounted, is the hits of a word in the whole span,
	// counted from its list (planSet.countTerm) as the task was made.
	spanHits    uint64
	spanCounted bool
	start       int64 // taskScan: byte range and line number of start
	end         int64
	line0       int64
	final       bool  // taskScan: an unterminated last line counts (file end)
	after       int64 // hits at or before this line are not wanted (paging cursor)
	until       int64 // when > 0, hits after this line are not wanted (Options.Only)
	// beyond is set when earlier tasks surely hold Limit hits: this one
	// only counts (for an exact plan, without reading a line).
	beyond bool
	// need is the most hit records this task must keep (0: no cap): the
	// limit less what earlier tasks surely hold.
	need int
	// budget bounds what the task reads only to count (nil: no bound);
	// partial says it stopped counting for want of it.
	budget  *countBudget
	partial bool

	hits       []hitRec
	buf        []byte
	count      int64
	candidates int64
	verified   int64
	scanned    int64
	// Time: the range kept, the task's own histogram, and where the
	// lines' times come from (the index, or the lines themselves).
	tr        *TimeRange
	hist      *Histogram
	wantTimes bool
	times     *spanTimes
	rtimer    *readTimer

	shrunk bool  // the file was found shorter than its index says
	damage error // the segment was found damaged: the span was read raw
	nulAt  int64 // taskScan: 1 + offset of the first NUL byte read, 0 when none
	err    error
}

// produce emits tasks in output order: files by path, then each file's
// spans by offset, then its unindexed tail.
//
// A page whose count is bounded ends here once its budget is spent: the
// page is full by then (only a task past it spends the budget), and the
// files after it would only be counted. cut says so (Stats.TotalAtLeast).
func (s *Searcher) produce(ctx context.Context, q *Query, opt Options, plans *planSet, countOnly bool, emit func(*task) bool) (cut bool, err error) {
	var sure int64 // hits the tasks emitted so far hold at least
	timing := opt.Time != nil || opt.Times || opt.Histogram != nil
	if opt.Only == nil && !opt.Synced { // (indexed lines only: what files hold now does not matter)
		s.logs.Sync() // a line written before the search began is found
	}
	once := inodeOnce{s: s}
	dirs := s.logs.Dirs() // files come in path order: one open directory at a time
	defer dirs.Close()
	if opt.After == nil && opt.Log == "" && opt.Only == nil { // (else most files are passed over)
		dirs.LookAhead(len(s.files), func(i int) *live.File { return s.files[i].lf })
	}
	budget := newCountBudget(opt)
	var only LineRange
	var limited bool
	var counted []fileCount // files counted, not emitted yet
	flushCounted := func() bool {
		if len(counted) == 0 {
			return true
		}
		t := &task{taskBody: taskBody{kind: taskCounted, counted: counted}}
		counted = nil
		return emit(t)
	}
	// Counting hits the index finds without reading (a word's, when only
	// counts are asked for) needs no worker: such files are counted here,
	// and their tasks are used again.
	countFromIndex := countOnly && !timing && opt.After == nil && opt.Only == nil
	var spare spareTasks
	// A file's few candidates are verified here too when every count is
	// asked for (no limit, no budget): over many small files, a worker
	// hand-over each costs more than the read.
	verifyHere := countFromIndex && opt.Limit == 0 && budget == nil
	var ls lineState
	var tsBuf []*task
	// send emits a file's tasks, its lines up to after not wanted (false:
	// the search was cancelled).
	send := func(f *File, h *live.Handle, ts []*task, after int64) bool {
		if !flushCounted() {
			h.Close()
			return false
		}
		if !emit(&task{taskBody: taskBody{kind: taskFile, file: f, h: h}}) {
			h.Close()
			return false
		}
		for _, t := range ts {
			t.h = h
			t.tr, t.wantTimes = opt.Time, opt.Times
			if opt.Histogram != nil {
				t.hist = &Histogram{Start: opt.Histogram.Start, Step: opt.Histogram.Step, Counts: make([]int64, len(opt.Histogram.Counts))}
			}
			t.after = after
			if limited {
				t.after, t.until = max(t.after, only.From-1), only.To-1
			}
			t.budget = budget
			t.beyond = opt.Limit > 0 && sure >= int64(opt.Limit)
			if opt.Limit > 0 && !t.beyond {
				t.need = opt.Limit - int(sure)
			}
			if opt.MaxPerFile > 0 && opt.Limit == 0 {
				t.need = int(min(opt.MaxPerFile, math.MaxInt32)) // each of a file's tasks: its first hits may be the file's
			}
			if opt.Limit > 0 && t.kind == taskIDs && t.after == 0 && opt.Time == nil && !limited { // filters may drop sure hits
				sure += t.sureHits()
			}
			if !emit(t) {
				return false
			}
		}
		return true
	}
	for fi, f := range s.files {
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if opt.Limit > 0 && plans.cuts && budget.spent() {
			cut = true
			break
		}
		dirs.At(fi)
		indexed := f.Path
		if opt.passesOver(f) {
			continue
		}
		only, limited = opt.Only[f.ID]
		if opt.Only != nil && (!limited || only.To <= only.From || only.To <= 1) {
			continue // no line of the file is asked for (task.until > 0 below)
		}
		ts := tsBuf[:0] // (not kept: send emits the tasks, not the slice)
		for k, sr := range f.spans {
			seg := s.segs[sr.seg]
			sp := seg.Spans()[sr.span]
			if !opt.Time.holdsSpan(sp) {
				continue // no line of the span is in the time range
			}
			if limited && (sp.StartLineNo+int64(sp.NumLines) <= only.From || sp.StartLineNo >= only.To) {
				continue // none of the lines asked for
			}
			deferred := func() {
				t := spare.get()
				*t = task{taskBody: taskBody{kind: taskIDs, file: f, seg: seg, span: sr.span, deferred: plans, segIdx: sr.seg,
					times: spanTimesIf(timing, seg, sr.span)}}
				ts = append(ts, t)
			}
			if k > 0 && plans.deferSpans && !plans.plans[sr.seg].covers(sp.FirstLine) {
				// A file's later spans are planned when their turn comes:
				// a page may be full before (one huge file spans every
				// segment).
				deferred()
				continue
			}
			if plans.deferSpans && opt.Limit > 0 && sure >= int64(opt.Limit) && opt.Time == nil && opt.Histogram == nil {
				// Past a full page a word's spans are only counted, from
				// its lists, not planned: a span without a hit makes no
				// task.
				if n, ok := plans.countTerm(sr.seg, sp.FirstLine, sp.FirstLine+sp.NumLines); ok {
					if n > 0 {
						deferred()
						ts[len(ts)-1].spanHits, ts[len(ts)-1].spanCounted = n, true
					}
					continue
				}
			}
			p, err := plans.get(sr.seg, sp.FirstLine, sp.FirstLine+sp.NumLines)
			if err != nil {
				return false, err
			}
			if !p.coversTo(sp.FirstLine, sp.FirstLine+sp.NumLines) {
				deferred() // a window: the span's later ones are planned as its task reaches them
				continue
			}
			if p.mode == planNone {
				continue
			}
			if p.mode == planIDs {
				if !intersects(p.cands, sp.FirstLine, sp.FirstLine+sp.NumLines) {
					continue
				}
				t := spare.get()
				*t = task{taskBody: taskBody{kind: taskIDs, file: f, seg: seg, span: sr.span, plan: p, deferred: plans, segIdx: sr.seg,
					times: spanTimesIf(timing, seg, sr.span)}}
				ts = append(ts, t)
				continue
			}
			if p.mode == planRaw {
				ts = append(ts, rawTask(f, sp, s.loc, timing))
				continue
			}
			chunks, err := seg.SpanChunks(sr.span, scanChunk)
			if errors.Is(err, mmapstore.ErrCorrupt) {
				ts = append(ts, rawTask(f, sp, s.loc, timing))
				continue
			}
			if err != nil {
				return false, err
			}
			for ci, c := range chunks {
				if opt.Time != nil && sp.Timed && !chunkMeets(seg, sr.span, chunks, ci, opt.Time) {
					continue
				}
				ts = append(ts, &task{taskBody: taskBody{kind: taskScan, file: f, seg: seg, span: sr.span, start: c.Start, end: c.End,
					line0: sp.StartLineNo + int64(c.FirstLine-sp.FirstLine), times: spanTimesIf(timing, seg, sr.span)}})
			}
		}
		tsBuf = ts
		// Every file is looked at: bytes appended since indexing are
		// scanned, and a file replaced since is answered as it is now, as
		// is a file with lines in a segment that could not be opened.
		whole := s.damagedFiles[f.ID]
		h, err := s.logs.StatIn(dirs, f.lf, whole || readsFile(ts, countOnly))
		if err != nil {
			h = live.Failed(err)
		}
		if !limited && !once.take(fi, f, h) {
			// Its path holds a file read under another name in this
			// search; its own indexed file is nowhere to be found.
			stale := h.Stale() != nil
			h.Close()
			if stale && !send(f, live.Failed(live.ErrDeleted), nil, 0) {
				return false, ctx.Err()
			}
			continue
		}
		if mv := h.Moved(); mv != "" {
			// Renamed since indexing (rotated): read where it is now,
			// and said so in the hits' paths. Its name holds another
			// file now (the log's new live file, not indexed yet): that
			// one is read as it is, first (its name sorts first).
			if !limited {
				if cur, err := s.logs.Check(f.lf); err == nil && cur.File() != nil && once.take(fi, f, cur) {
					fc := f.atPath()
					var cts []*task
					// (A compressed file's new content waits for the next
					// index run, as below: the restart points are the
					// indexed file's; only the warning is sent.)
					if f.Record().Compression == "" {
						t := &task{taskBody: taskBody{kind: taskScan, file: fc, start: 0, end: cur.Size(), line0: 1, final: true}}
						if timing {
							t.rtimer = newReadTimer(s.loc, f.Record(), false)
						}
						cts = []*task{t}
					}
					after, skip := int64(0), false
					if c := opt.After; c != nil && c.orderPath() == f.Path {
						switch {
						case c.AtPath: // the cursor is in this file
							after = c.Line
						case c.Indexed != "": // in the renamed one after it: this one was all shown
							skip = true
						} // (else in the indexed file before it moved: this one's lines are new)
					}
					if skip {
						cur.Close()
					} else if !send(fc, cur, cts, after) {
						return false, ctx.Err()
					}
				} else if err == nil {
					cur.Close()
				}
			}
			f = f.renamed(mv)
			for _, t := range ts {
				t.file = f
			}
		}
		rec := f.Record()
		switch {
		case limited && h.Stale() != nil:
			// Options.Only asks for indexed lines, which a replaced file
			// no longer has (its new lines come under a new id).
			ts = nil
		case h.File() == nil && h.Stale() != nil: // gone or unreadable
			ts = nil
		case rec.Compression != "" && h.Stale() != nil:
			// A compressed file changed since indexing is a new file: it
			// waits for the next re-index (said in the warnings).
			ts = nil
		case rec.Compression != "" && whole: // read whole: decompressed from the start
			ts = []*task{{taskBody: taskBody{kind: taskScan, file: f, start: 0, end: rec.Indexed, line0: 1}}}
			if timing {
				ts[0].rtimer = newReadTimer(s.loc, rec, false)
			}
		case rec.Compression != "": // compressed files do not grow
		case h.Stale() != nil || whole: // answer from the file as it is now
			ts = []*task{{taskBody: taskBody{kind: taskScan, file: f, start: 0, end: h.Size(), line0: 1, final: true}}}
			if timing {
				ts[0].rtimer = newReadTimer(s.loc, rec, false)
			}
		case h.Size() > rec.Indexed && !limited: // (Options.Only: indexed lines)
			t := &task{taskBody: taskBody{kind: taskScan, file: f, start: rec.Indexed, end: h.Size(), line0: rec.Lines + 1, final: true}}
			if timing {
				t.rtimer = newReadTimer(s.loc, rec, true)
			}
			ts = append(ts, t)
		}
		if len(ts) == 0 && h.Stale() == nil && opt.PerFile == nil {
			h.Close()
			continue // nothing to read, report or count
		}
		if h.Stale() == nil && (len(ts) == 0 || countFromIndex) {
			fc, ok := countedByIndex(f, ts)
			if !ok && verifyHere {
				fc, ok = s.countHere(ctx, q, f, h, ts, &ls)
			}
			if ok {
				spare.put(ts) // never emitted
				h.Close()
				if counted = append(counted, fc); len(counted) == countedBatch && !flushCounted() {
					return false, ctx.Err()
				}
				continue
			}
		}
		// The indexed file's lines up to the cursor were shown, unless the
		// cursor is in the file its path holds now, which comes first.
		var after int64
		if c := opt.After; c != nil && !(c.AtPath && h.Moved() != "") {
			switch same, known := c.sameFile(f); {
			case same && (h.Stale() == nil || c.Now): // the cursor's file, wherever a rotation put it
				after = c.Line
			case known: // another file (at the cursor's path: one new there), or
				// the cursor's written again since its page (copytruncate's,
				// not indexed yet): none of what it holds now was shown
			case c.orderPath() == indexed:
				after = c.Line
			}
		}
		if !send(f, h, ts, after) {
			return false, ctx.Err()
		}
	}
	if !flushCounted() {
		return false, ctx.Err()
	}
	return cut, nil
}

// passesOver reports whether a search leaves file f out whole: before the
// paging cursor, or not of the log asked for.
func (opt *Options) passesOver(f *File) bool {
	return opt.After != nil && f.Path < opt.After.orderPath() || opt.Log != "" && f.log != opt.Log
}

// rawTask reads span sp as a byte range of f's file, without the offset
// index (whose damage is why), timing lines from their text if asked.
func rawTask(f *File, sp mmapstore.Span, loc *time.Location, timing bool) *task {
	t := &task{taskBody: taskBody{kind: taskScan, file: f, start: sp.StartOffset, end: sp.EndOffset, line0: sp.StartLineNo}}
	if timing {
		t.rtimer = newReadTimer(loc, f.Record(), false)
	}
	return t
}

func spanTimesIf(timing bool, seg *mmapstore.Segment, si int) *spanTimes {
	if !timing {
		return nil
	}
	return newSpanTimes(seg, si)
}

// chunkMeets reports whether chunk ci of a timed span may hold a line in
// tr, from the ranges of its line groups (an unreadable one says yes: the
// lines then decide).
func chunkMeets(seg *mmapstore.Segment, si int, chunks []mmapstore.Chunk, ci int, tr *TimeRange) bool {
	sp := seg.Spans()[si]
	end := sp.FirstLine + sp.NumLines
	if ci+1 < len(chunks) {
		end = chunks[ci+1].FirstLine
	}
	for l := chunks[ci].FirstLine; l < end; l += mmapstore.GroupSize {
		tg, err := seg.TimeGroupOf(sp.FirstGroup + (l-sp.FirstLine)/mmapstore.GroupSize)
		if err != nil || !tg.Timed || tr.meets(tg.Min, tg.Max) {
			return true
		}
	}
	return false
}

// sureHits is how many hits an IDs task holds at least: its candidates
// that need no verification.
func (t *task) sureHits() int64 {
	if t.plan == nil {
		return 0 // deferred: not known yet
	}
	sp := t.seg.Spans()[t.span]
	lo, hi := sp.FirstLine, sp.FirstLine+sp.NumLines
	n := rangeCard(t.plan.cands, lo, hi)
	if t.plan.verify != nil {
		n -= rangeCard(t.plan.verify, lo, hi)
	} else {
		n = 0 // every candidate is verified
	}
	return int64(n)
}

// intersects reports whether bm has a member in [lo, hi), without the
// iterator roaring's IntersectsWithInterval allocates each call.
func intersects(bm *roaring.Bitmap, lo, hi uint32) bool {
	return lo < hi && rangeCard(bm, lo, hi) > 0
}

// rangeCard counts members of bm in [lo, hi).
func rangeCard(bm *roaring.Bitmap, lo, hi uint32) uint64 {
	if hi == 0 {
		return 0
	}
	n := bm.Rank(hi - 1)
	if lo > 0 {
		n -= bm.Rank(lo - 1)
	}
	return n
}

// renamed is a copy of f under the name its file has now (newRel, from
// live.Handle.Moved: the same directory, another name).
func (f *File) renamed(newRel string) *File {
	// (Not a compressed file: those do not move, their content is the
	// name's; ci stays zero.)
	return &File{ID: f.ID, Path: f.Path[:strings.LastIndexByte(f.Path, '/')+1] + path.Base(newRel),
		s: f.s, lf: f.lf, log: f.log, rotation: f.rotation, spans: f.spans, indexedPath: f.Path}
}

// atPath is a copy of f standing for the file its path holds now (not
// the indexed one, which was renamed away).
func (f *File) atPath() *File {
	return &File{ID: f.ID, Path: f.Path, s: f.s, lf: f.lf, log: f.log, rotation: f.rotation, atPathNow: true}
}

// countBudget is what a search may still read only to count hits past the
// page (Options.TotalBudget), shared by its tasks.
type countBudget struct {
	left    atomic.Int64
	refused atomic.Bool // run out: spend took the last bytes, or said no
}

// newCountBudget is the budget opt allows: nil when every hit must be
// counted (grep -c, histograms, an exact Total), zero when counts past the
// limit are of no use (Limit without CountAll, MaxPerFile).
func newCountBudget(opt Options) *countBudget {
	switch {
	case opt.Histogram != nil:
		return nil
	case opt.MaxPerFile > 0:
		return &countBudget{} // (PerFile's counts stop at MaxPerFile too)
	case opt.PerFile != nil:
		return nil
	case opt.Limit > 0 && !opt.CountAll:
		return &countBudget{}
	case opt.Limit > 0 && opt.TotalBudget > 0:
		b := &countBudget{}
		b.left.Store(opt.TotalBudget)
		return b
	}
	return nil
}

// spent reports whether the budget has run out, which only a task past
// the page spends: the page is full (a nil budget never runs out).
func (b *countBudget) spent() bool { return b != nil && b.refused.Load() }

// spend takes n bytes from the budget; false when it has run out (a nil
// budget never does). The last read may overdraw it.
func (b *countBudget) spend(n int64) bool {
	if b == nil {
		return true
	}
	if b.left.Load() <= 0 {
		b.refused.Store(true)
		return false
	}
	if b.left.Add(-n) <= 0 {
		// Run out: spent says so now, not only once a later read is
		// refused (the producer stops planning files there).
		b.refused.Store(true)
	}
	return true
}

// readsFile tells whether any of a file's tasks reads the file (else an
// unchanged file is not even opened: counting hits that need no
// verification, over 100,000 small files, is then one fstatat each). A
// time range or histogram does not read it either: lines are timed from
// the segment. Should the segment turn out damaged, the task's fallback
// opens the file then (run).
func readsFile(ts []*task, countOnly bool) bool {
	for _, t := range ts {
		if t.kind != taskIDs || !countOnly || t.plan == nil || t.plan.verify == nil {
			return true
		}
		sp := t.seg.Spans()[t.span]
		if intersects(t.plan.verify, sp.FirstLine, sp.FirstLine+sp.NumLines) {
			return true
		}
	}
	return false
}
