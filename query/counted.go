package query

import (
	"context"

	"github.com/logdex/logdex/query/live"
)

// Files counted from the index alone (taskCounted): over 100,000 small
// files most have nothing to read, and a worker hand-over each would cost
// more than counting them.

// countedBatch is the most files one taskCounted holds.
const countedBatch = 512

// fileCount is a file with its number of hits, and the candidate lines
// the index gave and those read to verify them (for Stats).
type fileCount struct {
	f               *File
	n               int64
	cands, verified int64
}

// spareTasks keeps the tasks of files counted without them for the next
// files (over 100,000 small files, half with a hit, they would otherwise
// be 50,000 allocations of a few hundred bytes).
type spareTasks []*task

func (sp *spareTasks) get() *task {
	n := len(*sp)
	if n == 0 {
		return new(task)
	}
	t := (*sp)[n-1]
	*sp = (*sp)[:n-1]
	return t
}

func (sp *spareTasks) put(ts []*task) { *sp = append(*sp, ts...) }

// countedByIndex counts a file's hits when the index alone does: no task
// reads the file (readsFile), so every candidate is a hit (sureHits). The
// caller knows that no filter applies to lines or times, and that hits are
// only counted.
func countedByIndex(f *File, ts []*task) (fileCount, bool) {
	if readsFile(ts, true) {
		return fileCount{}, false
	}
	fc := fileCount{f: f}
	for _, t := range ts {
		fc.n += t.sureHits()
	}
	fc.cands = fc.n
	return fc, true
}

// verifyHereMax is the most candidate lines of a file the producer
// verifies itself (countHere).
const verifyHereMax = 64

// countHere counts the hits of a file with one IDs task of a few
// candidates by running it in the producer (h can read the file). ok is
// false, and the task is left as it was for a worker, when it has more
// candidates or anything is unusual (an error, damage, a file that shrank).
func (s *Searcher) countHere(ctx context.Context, q *Query, f *File, h *live.Handle, ts []*task, ls *lineState) (fileCount, bool) {
	if len(ts) != 1 || ts[0].kind != taskIDs || ts[0].plan == nil || h.File() == nil {
		return fileCount{}, false
	}
	t := ts[0]
	sp := t.seg.Spans()[t.span]
	if rangeCard(t.plan.cands, sp.FirstLine, sp.FirstLine+sp.NumLines) > verifyHereMax {
		return fileCount{}, false
	}
	orig := *t
	t.h = h
	s.run(ctx, q, t, false, true, 0, ls)
	if t.err != nil || t.kind != taskIDs || t.shrunk || t.damage != nil || t.partial || len(t.hits) > 0 || t.nulAt > 0 {
		t.release()
		*t = orig
		return fileCount{}, false
	}
	fc := fileCount{f: f, n: t.count, cands: t.candidates, verified: t.verified}
	t.release()
	return fc, true
}
