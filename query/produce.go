package query

import (
	"context"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query/live"
)

type taskKind uint8

const (
	taskFile taskKind = iota // start of a file (counts, close of the previous)
	taskIDs
	taskScan
)

type hitRec struct {
	line, off, n int64
	tpos         int // start of the text in task.buf, -1 without text
}

type task struct {
	kind  taskKind
	file  *File
	h     *live.Handle
	seg   *mmapstore.Segment
	span  int
	plan  *segPlan
	start int64 // taskScan: byte range and line number of start
	end   int64
	line0 int64
	final bool  // taskScan: an unterminated last line counts (file end)
	after int64 // hits at or before this line are not wanted (paging cursor)
	// beyond is set when earlier tasks surely hold Limit hits: this one
	// only counts (for an exact plan, without reading a line).
	beyond bool
	// need is the most hit records this task must keep (0: no cap): the
	// limit less what earlier tasks surely hold.
	need int

	hits       []hitRec
	buf        []byte
	count      int64
	candidates int64
	verified   int64
	scanned    int64
	shrunk     bool  // the file was found shorter than its index says
	nulAt      int64 // taskScan: 1 + offset of the first NUL byte read, 0 when none
	err        error
	done       chan struct{}
}

// spans by offset, then its unindexed tail.
func (s *Searcher) produce(ctx context.Context, q *Query, opt Options, plans []*segPlan, emit func(*task) bool) error {
	var sure int64 // hits the tasks emitted so far hold at least
	for _, f := range s.files {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if opt.After != nil && f.Path < opt.After.Path {
			continue
		}
		var ts []*task
		for _, sr := range f.spans {
			p := plans[sr.seg]
			if p.mode == planNone {
				continue
			}
			seg := s.segs[sr.seg]
			sp := seg.Spans()[sr.span]
			if p.mode == planIDs {
				if rangeCard(p.cands, sp.FirstLine, sp.FirstLine+sp.NumLines) == 0 {
					continue
				}
				ts = append(ts, &task{kind: taskIDs, file: f, seg: seg, span: sr.span, plan: p})
				continue
			}
			chunks, err := seg.SpanChunks(sr.span, scanChunk)
			if err != nil {
				return err
			}
			for _, c := range chunks {
				ts = append(ts, &task{kind: taskScan, file: f, start: c.Start, end: c.End, line0: sp.StartLineNo + int64(c.FirstLine-sp.FirstLine)})
			}
		}
		// Every file is looked at: bytes appended since indexing are
		// scanned, and a file replaced since is answered as it is now.
		h, err := s.logs.Stat(f.lf, len(ts) > 0)
		if err != nil {
			h = live.Failed(err)
		}
		switch {
		case h.File() == nil && h.Stale() != nil: // gone or unreadable
			ts = nil
		case h.Stale() != nil: // answer from the file as it is now
			ts = []*task{{kind: taskScan, file: f, start: 0, end: h.Size(), line0: 1, final: true}}
		case h.Size() > f.Record().Indexed:
			ts = append(ts, &task{kind: taskScan, file: f, start: f.Record().Indexed, end: h.Size(), line0: f.Record().Lines + 1, final: true})
		}
		if len(ts) == 0 && h.Stale() == nil && opt.PerFile == nil {
			h.Close()
			continue // nothing to read, report or count
		}
		if !emit(&task{kind: taskFile, file: f, h: h}) {
			h.Close()
			return ctx.Err()
		}
		for _, t := range ts {
			t.h = h
			if opt.After != nil && f.Path == opt.After.Path {
				t.after = opt.After.Line
			}
			t.beyond = opt.Limit > 0 && sure >= int64(opt.Limit)
			if opt.Limit > 0 && !t.beyond {
				t.need = opt.Limit - int(sure)
			}
			if t.kind == taskIDs && t.after == 0 {
				sure += t.sureHits()
			}
			if !emit(t) {
				return ctx.Err()
			}
		}
	}
	return nil
}

// sureHits is how many hits an IDs task holds at least: its candidates
// that need no verification.
func (t *task) sureHits() int64 {
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
