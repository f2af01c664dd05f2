package query

// Files counted from the index alone (taskCounted): over 100,000 small
// files most have nothing to read, and a worker hand-over each would cost
// more than counting them.

// countedBatch is the most files one taskCounted holds.
const countedBatch = 512

// fileCount is a file with its number of hits.
type fileCount struct {
	f *File
	n int64
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

// countedByIndex returns the number of hits of a file's tasks when the
// index alone counts them: none, or only IDs tasks whose candidates need
// no verification (the caller knows that no filter applies to lines or
// times, and that hits are only counted).
func countedByIndex(ts []*task) (int64, bool) {
	var n int64
	for _, t := range ts {
		if t.kind != taskIDs || t.times != nil {
			return 0, false
		}
		sp := t.seg.Spans()[t.span]
		lo, hi := sp.FirstLine, sp.FirstLine+sp.NumLines
		if t.plan.verify == nil || t.plan.verify.IntersectsWithInterval(uint64(lo), uint64(hi)) { // (nil: every candidate is verified)
			return 0, false
		}
		n += int64(rangeCard(t.plan.cands, lo, hi))
	}
	return n, true
}
