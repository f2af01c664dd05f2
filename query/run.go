package query

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/logdex/logdex/query/live"
)

const scanChunk = 8 << 20

// scanBufs recycles scan buffers. They are small enough for the bytes
// copied in by pread to still be in the CPU cache when the matcher reads
// them (reading 8 MiB at a time ran at half the speed). A free list a few
// per CPU deep, not a sync.Pool: it holds a bounded number, and under the
// race detector a sync.Pool drops a quarter of what it is given on
// purpose, so every scan there allocated and freed 256 KiB, each byte
// shadowed (the query tests ran 10% longer for it).
var scanBufs = make(chan *[]byte, 4*runtime.GOMAXPROCS(0))

func getScanBuf() *[]byte {
	select {
	case b := <-scanBufs:
		return b
	default:
		b := make([]byte, scanBuf)
		return &b
	}
}

func putScanBuf(b *[]byte) {
	select {
	case scanBufs <- b:
	default:
	}
}

const scanBuf = 256 << 10

// run runs a task. A task whose segment turns out damaged (a checksum
// mismatch, or a memory fault on a mapping truncated behind our back) is
// run again as a read of its span's bytes, which needs nothing from the
// segment but the span: the answer stays exact.
func (s *Searcher) run(ctx context.Context, q *Query, t *task, wantText, countOnly bool, maxRecs int, ls *lineState) {
	if t.kind == taskIDs && t.plan == nil && !s.planDeferred(t, countOnly) {
		return
	}
	switch t.kind {
	case taskIDs:
		t.err = s.runIDsGuarded(ctx, q, t, wantText, countOnly, maxRecs, ls)
		if errors.Is(t.err, mmapstore.ErrCorrupt) {
			h, err := s.openForFallback(t)
			if err != nil {
				t.err = err
				return
			}
			if h != t.h {
				defer h.Close()
			}
			sp := t.seg.Spans()[t.span]
			t.taskBody = taskBody{kind: taskScan, file: t.file, h: h, start: sp.StartOffset, end: sp.EndOffset, line0: sp.StartLineNo,
				after: t.after, until: t.until, beyond: t.beyond, need: t.need, budget: t.budget, damage: t.err,
				tr: t.tr, hist: t.hist, wantTimes: t.wantTimes}
			if t.tr != nil || t.hist != nil || t.wantTimes {
				t.rtimer = newReadTimer(s.loc, t.file.Record(), false)
			}
			t.err = s.runScan(ctx, q, t, wantText, countOnly, maxRecs, ls)
		}
	case taskScan:
		t.err = s.runScan(ctx, q, t, wantText, countOnly, maxRecs, ls)
	}
}

// planDeferred gives a deferred task its plan and says whether it has
// anything to run: none when the segment holds no candidate in its span,
// or when it would only count, the page's count budget is spent and the
// plans cut there (then it is partial, and not even planned). A plan that reads the segment
// whole makes it a read of its span's bytes.
func (s *Searcher) planDeferred(t *task, countOnly bool) bool {
	if countOnly && t.deferred.cuts && t.budget.spent() {
		t.partial = true
		return false
	}
	sp := t.seg.Spans()[t.span]
	lo, hi, ok := t.wanted()
	if !ok {
		return false
	}
	if countOnly && t.tr == nil && t.hist == nil {
		n, ok := t.spanHits, t.spanCounted && lo == sp.FirstLine && hi == sp.FirstLine+sp.NumLines
		if !ok {
			n, ok = t.deferred.countTerm(t.segIdx, lo, hi)
		}
		if ok {
			t.count, t.candidates = int64(n), int64(n)
			return false // counted: nothing to run
		}
	}
	p, err := t.deferred.reach(t.segIdx, lo, hi)
	if err != nil {
		t.err = err
		return false
	}
	switch p.mode {
	case planNone:
		return false
	case planIDs:
		t.plan = p
		return intersects(p.cands, lo, hi)
	}
	t.kind, t.start, t.end, t.line0 = taskScan, sp.StartOffset, sp.EndOffset, sp.StartLineNo
	if p.mode == planRaw { // damaged: lines timed from their text
		t.times = nil
		if t.tr != nil || t.hist != nil || t.wantTimes {
			t.rtimer = newReadTimer(s.loc, t.file.Record(), false)
		}
	}
	return true
}

// openForFallback returns a handle that can read t's file: t's own, or,
// when a count that read no line left the file unopened (readsFile), the
// file opened now. A file replaced since it was checked cannot stand in
// for the span's indexed lines: that is an error, failing the count (a
// count that finds a file replaced without damage answers with a
// warning, but here the damaged index has nothing else to count from).
func (s *Searcher) openForFallback(t *task) (*live.Handle, error) {
	if t.h == nil || t.h.File() != nil || t.h.Stale() != nil {
		return t.h, nil
	}
	h, err := s.logs.Stat(t.file.lf, true)
	if err != nil {
		return nil, err
	}
	if err := h.Stale(); err != nil {
		h.Close()
		return nil, fmt.Errorf("%w during the search", err) // the caller names the file
	}
	return h, nil
}

func (s *Searcher) runIDsGuarded(ctx context.Context, q *Query, t *task, wantText, countOnly bool, maxRecs int, ls *lineState) (err error) {
	var mapped []byte
	if rec := t.file.Record(); s.mapReads && rec.Compression == "" && rec.Indexed >= mapMin {
		mapped = t.h.Mapped()
	}
	err = s.runIDsMapped(ctx, q, t, mapped, wantText, countOnly, maxRecs, ls)
	if errors.Is(err, errMapFault) {
		// Truncated after it was checked: again with pread, which comes
		// up short where the mapping faulted, and says so (task.shrunk).
		t.restart()
		err = s.runIDsMapped(ctx, q, t, nil, wantText, countOnly, maxRecs, ls)
	}
	return err
}

// errMapFault: reading a log file's mapping faulted.
var errMapFault = errors.New("log file mapping faulted")

func (s *Searcher) runIDsMapped(ctx context.Context, q *Query, t *task, mapped []byte, wantText, countOnly bool, maxRecs int, ls *lineState) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if mapped != nil && t.h.Faulted(r) {
				err = errMapFault
				return
			}
			err = t.seg.Fault(r)
		}
	}()
	return s.runIDs(ctx, q, t, mapped, wantText, countOnly, maxRecs, ls)
}

// restart forgets what an IDs task found, to run it again.
func (t *task) restart() {
	t.release()
	t.count, t.candidates, t.verified, t.partial, t.shrunk = 0, 0, 0, false, false
	if h := t.hist; h != nil {
		clear(h.Counts)
		h.Before, h.After, h.Untimed = 0, 0, 0
	}
}

// runIDs handles the candidate lines of one span: exact hits are located
// through the offset index; the rest are read (neighbouring lines in one
// read) and verified. After maxRecs hit records (0: no cap) it only counts:
// no task can deliver more hits than the limit.
//
// mapped, when not nil, is the file's indexed bytes in memory (live
// Handle.Mapped): lines are read there instead of with pread.
func (s *Searcher) runIDs(ctx context.Context, q *Query, t *task, mapped []byte, wantText, countOnly bool, maxRecs int, ls *lineState) error {
	seg := t.seg
	sp := seg.Spans()[t.span]
	lo, hi, ok := t.wanted()
	if !ok {
		return nil
	}
	if t.times != nil && t.tr != nil {
		var err error
		if lo, hi, err = t.times.window(t.tr, lo, hi); err != nil {
			return err
		}
		if hi <= lo {
			return nil
		}
	}
	src, err := s.source(t.file, t.h)
	if err != nil {
		return err
	}
	sc := idScratches.Get().(*idScratch)
	defer idScratches.Put(sc)
	var (
		locs       = sc.locs[:0]
		rbuf       = sc.rbuf
		extra      int64 // hits counted without records
		prefetched bool
	)
	defer func() { sc.locs, sc.rbuf = locs[:0], rbuf }()
	full := func() bool { return countOnly || maxRecs > 0 && len(t.hits) >= maxRecs }
	// sure counts the exact candidates gathered in the batch, not yet
	// recorded: once they fill the page, the candidates after them are
	// past it and need not be located (a word's first page located up
	// to 512 lines per span, most of them only to be counted).
	var sure int
	gathered := func() bool { return countOnly || maxRecs > 0 && len(t.hits)+sure >= maxRecs }
	// Without a time filter or histogram only the hits kept need their
	// times: those are decoded once a line is kept (a phrase's candidates
	// that fail, and lines only counted past the page, need none).
	lateTimes := t.times != nil && t.tr == nil && t.hist == nil
	record := func(l idLoc) (hitRec, error) {
		h := hitRec{line: sp.StartLineNo + int64(l.id-sp.FirstLine), off: l.off, n: l.n - 1, tpos: -1, t: l.t, timed: l.timed}
		if lateTimes {
			var err error
			if h.t, h.timed, err = t.times.at(l.id); err != nil {
				return h, err
			}
		}
		return h, nil
	}
	// keep counts a hit, and records it (with its text, when wanted and
	// read) while the page is not full.
	keep := func(l idLoc, text []byte) error {
		t.count1(l.t, l.timed)
		if full() {
			extra++
			return nil
		}
		h, err := record(l)
		if err != nil {
			return err
		}
		if wantText && text != nil {
			h.tpos = len(t.buf)
			t.buf = append(t.buf, text...)
		}
		t.hits = append(t.hits, h)
		return nil
	}
	// runWindow runs the candidates of plan p in [lo, hi).
	runWindow := func(p *segPlan, lo, hi uint32) error {
		n := rangeCard(p.cands, lo, hi)
		t.candidates += int64(n)
		var nverify uint64
		if p.verify != nil {
			nverify = rangeCard(p.verify, lo, hi)
		} else {
			nverify = n
		}
		if countOnly && nverify == 0 && t.tr == nil && t.hist == nil {
			extra += int64(n) // exact: nothing to read
			return nil
		}
		if countOnly && nverify == 0 && (t.tr != nil || t.hist != nil) && t.times != nil && sp.TimeSorted {
			c, err := t.times.countSorted(t.tr, t.hist, p.cands, lo, hi)
			extra += c
			return err
		}
		// The lines located: the candidates to verify, or, for exact
		// hits, a page's worth (those past it are counted, not located);
		// counting without verifying locates none.
		located := n
		switch {
		case nverify == 0 && countOnly:
			located = 0
		case nverify == 0 && maxRecs > 0:
			located = min(n, uint64(maxRecs))
		}
		if located >= 32 && !prefetched {
			seg.PrefetchLines(t.span) // cold index: one sequential read beats many faults
			prefetched = true
		}
		if recs := min(int(n), 4096); !countOnly && t.hits == nil {
			if maxRecs > 0 {
				recs = min(recs, maxRecs)
			}
			t.hits = getHitRecs(recs)
			if wantText {
				t.buf = getTextBuf(recs * 256) // typical log lines fit
			}
		}
		it := p.cands.Iterator()
		it.AdvanceIfNeeded(lo)
		// Once the page is gathered, the remaining candidates, when none
		// needs reading, are counted by rank, not one by one: a common
		// word's first span held 200,000 of them (1.7 ms for a page of
		// info). This is looked at once, as the page fills: should a
		// candidate to verify remain then, the rest go one by one as
		// before.
		restChecked, restCounted := false, false
		batch, batchBegan := q.verifyBatch, time.Time{}
		// In a span in time order, [lo, hi) narrowed by window, the rest
		// is counted in a time range too: by rank but for its edge groups.
		rankTimes := t.tr != nil && t.times != nil && sp.TimeSorted
		for it.HasNext() && !restCounted {
			if err := ctx.Err(); err != nil {
				return err
			}
			if q.costly() && !batchBegan.IsZero() {
				batch = pace(batch, 1, maxVerifyBatch, time.Since(batchBegan))
			}
			batchBegan = time.Now()
			// Gather a batch of candidates.
			locs, sure = locs[:0], 0
			for it.HasNext() && len(locs) < batch {
				id := it.PeekNext()
				if id >= hi {
					break
				}
				if !restChecked && t.hist == nil && (t.tr == nil || rankTimes) && gathered() {
					restChecked = true
					if p.verify != nil && rangeCard(p.verify, id, hi) == 0 {
						if t.tr == nil {
							extra += int64(rangeCard(p.cands, id, hi))
						} else {
							// (a page in a time order counts the hits past its
							// last slab so: 500,000 of INFO in one span)
							c, err := t.times.countSorted(t.tr, nil, p.cands, id, hi)
							if err != nil {
								return err
							}
							extra += c
						}
						restCounted = true
						break
					}
				}
				it.Next()
				var ts int64
				var timed bool
				if t.times != nil && !lateTimes {
					// The group's range alone decides when its lines are all
					// out of the range, or all in it and in one histogram
					// bucket, and no hit needs its own time: 64 lines at a
					// time without decoding their times.
					decided := false
					if t.tr != nil || t.hist != nil {
						tg, next, ok, err := t.times.groupOf(id)
						if err != nil {
							return err
						}
						if ok && t.tr != nil && !t.tr.meets(tg.Min, tg.Max) {
							it.AdvanceIfNeeded(next)
							continue
						}
						if ok && (!t.wantTimes || full()) && (t.tr == nil || t.tr.From <= tg.Min && tg.Max < t.tr.To) && (t.hist == nil || t.hist.sameBucket(tg.Min, tg.Max)) {
							ts, timed, decided = tg.Min, true, true
						}
					}
					if !decided {
						var err error
						if ts, timed, err = t.times.at(id); err != nil {
							return err
						}
						if !t.tr.keep(ts, timed) {
							continue
						}
					}
				}
				verify := p.verify == nil || p.verify.Contains(id)
				if !verify && gathered() {
					t.count1(ts, timed)
					extra++
					continue
				}
				if !verify {
					sure++
				}
				locs = append(locs, idLoc{id: id, verify: verify, t: ts, timed: timed})
			}
			if len(locs) == 0 {
				if !it.HasNext() || it.PeekNext() >= hi {
					break
				}
				continue
			}
			// Located together: a cold index's pages of offsets (and of the
			// page's times) are asked for at once, then read.
			timed := 0
			if lateTimes && !full() {
				timed = len(locs)
				if maxRecs > 0 {
					timed = min(timed, maxRecs-len(t.hits))
				}
			}
			ids := sc.ids[:0]
			for _, l := range locs {
				ids = append(ids, l.id)
			}
			sc.ids = ids
			seg.PrefetchHits(t.span, ids, timed)
			for i := range locs {
				l, err := seg.Locate(locs[i].id)
				if err != nil {
					return err
				}
				locs[i].off, locs[i].n = l.Offset, l.Length
			}
			// Read in runs of neighbours: one pread for lines less than 4 KiB
			// apart, up to 256 KiB.
			for i := 0; i < len(locs); {
				j := i + 1
				for j < len(locs) && locs[j].off-(locs[j-1].off+locs[j-1].n) < 4<<10 && locs[j].off+locs[j].n-locs[i].off <= 256<<10 {
					j++
				}
				needRead := wantText && !full()
				for k := i; k < j && !needRead; k++ {
					needRead = locs[k].verify
				}
				if !needRead {
					for _, l := range locs[i:j] {
						if err := keep(l, nil); err != nil {
							return err
						}
					}
					i = j
					continue
				}
				start, end := locs[i].off, locs[j-1].off+locs[j-1].n
				if full() && !t.budget.spend(end-start+readCost) {
					t.partial = true // read only to count, and the budget is spent
					break
				}
				var run []byte
				if end <= int64(len(mapped)) {
					run = mapped[start:end]
				} else {
					rbuf = grow(rbuf, int(end-start))
					m, err := src.ReadAt(rbuf, start)
					if m < len(rbuf) {
						if err != nil && !errors.Is(err, io.EOF) {
							return err
						}
						// Truncated since it was checked: lines past the end are
						// gone, and no stale buffer bytes may pass for them.
						rbuf = rbuf[:m]
						t.shrunk = true
					}
					run = rbuf
				}
				for _, l := range locs[i:j] {
					if l.off-start+l.n > int64(len(run)) {
						break
					}
					text := run[l.off-start : l.off-start+l.n-1]
					if l.verify {
						t.verified++
						ls.reset(text)
						if !q.m.match(ls) {
							continue
						}
					}
					if err := keep(l, text); err != nil {
						return err
					}
				}
				i = j
			}
			if t.partial {
				break
			}
		}
		return nil
	}
	p := t.plan
	for {
		whi := hi
		if p.upto != 0 {
			whi = min(hi, p.upto)
		}
		if err := runWindow(p, max(lo, p.from), whi); err != nil {
			return err
		}
		if t.partial || whi == hi {
			break
		}
		// The next window with a candidate: none, and the count is exact.
		var err error
		if p, err = t.deferred.reach(t.segIdx, whi, hi); err != nil {
			return err
		}
		if p.mode == planNone {
			break
		}
		if p.mode != planIDs {
			// planRaw: damaged since the last window; run reads the span
			// raw instead.
			if err := seg.Damage(); err != nil {
				return err
			}
			return fmt.Errorf("query: segment %d: a later window planned as mode %d", t.segIdx, p.mode)
		}
		lo = whi
	}
	t.count = int64(len(t.hits)) + extra
	return nil
}

// wanted is the span's lines an IDs task wants, as segment line ids
// [lo, hi): those after the paging cursor and within Options.Only's range
// (false: none).
func (t *task) wanted() (lo, hi uint32, ok bool) {
	sp := t.seg.Spans()[t.span]
	lo, hi = sp.FirstLine, sp.FirstLine+sp.NumLines
	if t.after >= sp.StartLineNo {
		// Lines up to the paging cursor are not wanted at all.
		skip := t.after - sp.StartLineNo + 1
		if skip >= int64(sp.NumLines) {
			return 0, 0, false
		}
		lo += uint32(skip)
	}
	if t.until > 0 && t.until < sp.StartLineNo+int64(sp.NumLines)-1 {
		// Nor the lines after Options.Only's range.
		if t.until < sp.StartLineNo {
			return 0, 0, false
		}
		hi = sp.FirstLine + uint32(t.until-sp.StartLineNo) + 1
	}
	return lo, hi, true
}

// idLoc is a candidate line of runIDs, located.
type idLoc struct {
	id     uint32
	off, n int64
	verify bool
	t      int64
	timed  bool
}

// idScratch is runIDs' working memory, recycled across tasks and searches
// (a page of hits is read by a few tasks, each of which needed its own).
type idScratch struct {
	locs []idLoc
	ids  []uint32
	rbuf []byte
}

var idScratches = sync.Pool{New: func() any { return &idScratch{locs: make([]idLoc, 0, 512)} }}

// readCost is what one positioned read costs against a count budget, in
// bytes: about what scanning that many bytes costs.
const readCost = 1 << 10

func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// runScan reads [start, end) sequentially and checks every line.
func (s *Searcher) runScan(ctx context.Context, q *Query, t *task, wantText, countOnly bool, maxRecs int, ls *lineState) error {
	src, err := s.source(t.file, t.h)
	if err != nil {
		return err
	}
	if t.rtimer != nil {
		// A part's first lines may have no timestamp: they take its first.
		if err := t.rtimer.seedFirst(src, t.start, t.end); err != nil {
			return err
		}
	}
	bp := getScanBuf()
	defer putScanBuf(bp)
	buf := *bp
	pos := t.start // file offset of buf[0]
	have := 0
	lineNo := t.line0
	// NUL bytes end lines (as the indexer read them), so each read is
	// searched for one, unless the task reads indexed bytes that the
	// indexer found free of them (a file rewritten in place behind its
	// index is beyond the index's reach anyway).
	rec := t.file.Record()
	nulFree := t.seg != nil && t.end <= rec.Indexed && (rec.NULAt == 0 || rec.NULAt-1 >= t.end)
	readBytes := q.readBytes
	for {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		eof := false
		if pos+int64(have) < t.end {
			if have == len(buf) { // a line longer than the buffer
				buf = append(buf, make([]byte, len(buf))...)
				*bp = buf
			}
			n := int(min(int64(min(len(buf)-have, readBytes)), t.end-pos-int64(have)))
			// Charged what it reads (not the buffer's size: a small
			// file's scan would spend 256 KiB).
			if (countOnly || maxRecs > 0 && len(t.hits) >= maxRecs) && !t.budget.spend(int64(n)) {
				t.partial = true // scanning only to count, and the budget is spent
				break
			}
			m, err := src.ReadAt(buf[have:have+n], pos+int64(have))
			if nulFree {
				// (nothing to look for)
			} else if k := logfile.EndLinesAtNUL(buf[have : have+m]); k >= 0 && t.nulAt == 0 {
				t.nulAt = pos + int64(have+k) + 1
			}
			have += m
			if m < n {
				if err != nil && !errors.Is(err, io.EOF) {
					return err
				}
				// Shrank since its size was taken: the lines past its new
				// end are missing, and the answer says so.
				eof, t.shrunk = true, true
			}
		} else {
			eof = true
		}
		data := buf[:have]
		// Whole lines only, unless at the end where an unterminated line
		// counts (grep prints it).
		cut := bytes.LastIndexByte(data, '\n') + 1
		if eof && t.final {
			cut = len(data)
		}
		if cut == 0 && !eof {
			continue // grow and read more
		}
		block := data[:cut]
		t.scanned += int64(len(block))
		short := !countOnly && maxRecs > 0 && len(t.hits) < maxRecs // the page not full yet
		began := time.Now()
		lineNo = s.scanBlock(q, t, block, pos, lineNo, wantText, countOnly, maxRecs, ls)
		if q.costly() {
			readBytes = pace(readBytes, minReadBytes, maxReadBytes, time.Since(began))
		}
		if short && len(t.hits) >= maxRecs {
			// The block's lines past the page's last were read only to
			// count them: charged as such.
			last := t.hits[len(t.hits)-1]
			t.budget.spend(max(0, pos+int64(len(block))-(last.off+last.n)))
		}
		copy(buf, data[cut:])
		pos += int64(cut)
		have -= cut
		if eof {
			break
		}
	}
	t.count += int64(len(t.hits))
	return nil
}

// scanBlock finds the matching lines of block (whole lines, the last one
// possibly unterminated), whose first line has number lineNo; it returns
// the number of the line after the block.
func (s *Searcher) scanBlock(q *Query, t *task, block []byte, pos, lineNo int64, wantText, countOnly bool, maxRecs int, ls *lineState) int64 {
	if t.rtimer != nil {
		return s.scanBlockTimed(q, t, block, pos, lineNo, wantText, countOnly, maxRecs, ls)
	}
	if countOnly && q.single != nil && t.after == 0 && t.until == 0 && t.times == nil {
		// Every block of the task comes here: no line number is needed,
		// so the lines are not counted.
		t.count += int64(q.single.CountLines(block))
		return lineNo
	}
	counted := 0 // block offset up to which lines were counted
	add := func(ls0, le int) {
		lineNo += int64(bytes.Count(block[counted:ls0], nl))
		counted = ls0
		if lineNo <= t.after || t.until > 0 && lineNo > t.until {
			return // before the paging cursor, or outside Options.Only
		}
		var ts int64
		var timed bool
		if t.times != nil {
			var err error
			ts, timed, err = t.times.at(t.times.sp.FirstLine + uint32(lineNo-t.times.sp.StartLineNo))
			if err != nil {
				timed = false // a damaged time index: the line is kept, untimed
			}
			if !t.tr.keep(ts, timed) {
				return
			}
			t.count1(ts, timed)
		}
		if countOnly || maxRecs > 0 && len(t.hits) >= maxRecs {
			t.count++ // beyond what can be delivered: count only
			return
		}
		h := hitRec{line: lineNo, off: pos + int64(ls0), n: int64(le - ls0), tpos: -1, t: ts, timed: timed}
		if wantText {
			h.tpos = len(t.buf)
			t.buf = append(t.buf, block[ls0:le]...)
		}
		t.hits = append(t.hits, h)
	}
	if q.single != nil {
		q.single.ScanLines(block, func(a, b int) bool { add(a, b); return true })
	} else {
		for i := 0; i < len(block); {
			j := bytes.IndexByte(block[i:], '\n')
			e := i + j
			if j < 0 {
				e = len(block)
			}
			ls.reset(block[i:e])
			if q.m.match(ls) {
				add(i, e)
			}
			i = e + 1
		}
	}
	lineNo += int64(bytes.Count(block[counted:], nl))
	if len(block) > 0 && block[len(block)-1] != '\n' {
		lineNo++
	}
	return lineNo
}

var nl = []byte{'\n'}

// scanBlockTimed is scanBlock for lines timed from their text (no index
// times): every line is timed, in order, so that one without a timestamp
// takes the previous line's.
func (s *Searcher) scanBlockTimed(q *Query, t *task, block []byte, pos, lineNo int64, wantText, countOnly bool, maxRecs int, ls *lineState) int64 {
	for i := 0; i < len(block); lineNo++ {
		j := bytes.IndexByte(block[i:], '\n')
		e := i + j
		if j < 0 {
			e = len(block)
		}
		line := block[i:e]
		ts, timed := t.rtimer.line(line)
		ls.reset(line)
		if lineNo > t.after && (t.until == 0 || lineNo <= t.until) && t.tr.keep(ts, timed) && q.m.match(ls) {
			t.count1(ts, timed)
			if countOnly || maxRecs > 0 && len(t.hits) >= maxRecs {
				t.count++
			} else {
				h := hitRec{line: lineNo, off: pos + int64(i), n: int64(e - i), tpos: -1, t: ts, timed: timed}
				if wantText {
					h.tpos = len(t.buf)
					t.buf = append(t.buf, line...)
				}
				t.hits = append(t.hits, h)
			}
		}
		i = e + 1
	}
	return lineNo
}

// count1 counts one matching line in the task's histogram.
func (t *task) count1(ts int64, timed bool) {
	if t.hist != nil {
		t.hist.add(ts, timed, 1)
	}
}
