package query

import (
	"bytes"
	"context"
	"errors"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query/lang"
)

type planMode uint8

const (
	planNone planMode = iota // no candidates in the segment
	planIDs                  // candidate line ids, some or all to verify
	planScan                 // read the segment's lines sequentially
	// planRaw reads the segment's spans as byte ranges of their files,
	// without its offset index: the segment is damaged, and only its
	// spans (checked whole when it was opened) are trusted.
	planRaw
)

type segPlan struct {
	mode   planMode
	cands  *roaring.Bitmap // planIDs: candidate lines (live ones only)
	verify *roaring.Bitmap // planIDs: the subset that must be read and checked; nil = all
	// from, upto: a window's plan covers the segment's lines [from, upto)
	// only (planSet.windows); upto 0: the whole segment.
	from, upto uint32
}

// covers reports whether p is the plan of line id (nil: no plan yet).
func (p *segPlan) covers(id uint32) bool {
	return p != nil && (p.upto == 0 || p.from <= id && id < p.upto)
}

// coversTo reports whether p is the plan of every line from id below hi.
func (p *segPlan) coversTo(id, hi uint32) bool {
	return p.covers(id) && (p.upto == 0 || hi <= p.upto)
}

// planSet is a search's segment plans: all made before it starts (plan),
// or each made when the search first reaches the segment (lazyPlans).
type planSet struct {
	plans []*segPlan
	// Lazy: what makes a missing plan, and what the plans made so far
	// cost (Stats.Terms, Stats.Blocks). Only the producer asks for them.
	s             *Searcher
	q             *Query
	tr            *TimeRange
	lookups       func()
	evals         []*segEval // each segment's, kept for its later windows
	ahead         *lookAhead
	firsts        []uint64 // each segment's first window size, once judged
	terms, blocks int
	// deferSpans: tasks run in the producer (inline), so a file's later
	// spans may wait for their plans until they run (task.deferred).
	deferSpans bool
	// cuts: once the count budget is spent, the files and spans after are
	// neither planned nor counted. Not for a query the index counts
	// (words and their AND/OR/NOT): its counts cost no reading, and stay
	// exact but for lines too long to index.
	cuts bool
	// counter: the word's list of segment counterSeg-1, read for
	// countTerm's counts in its spans.
	counter    mmapstore.Counter
	counterSeg int
	// windows: a segment is planned a window of lines at a time, from
	// where the search reaches it (planSet.window sizes them): a phrase's
	// first page read a few thousand lines of one file, yet intersected
	// its two common words' lists over every segment the search passed
	// (46% of the page's CPU). Only for lazy plans of a search whose
	// count is cut (else every line is counted anyway) and whose tasks run
	// in the producer (a later window is made as a task reaches it; Search
	// turns windows off with deferSpans).
	windows bool
}

// firstWindow is how many lines a segment's first window plans;
// windowCands how many candidates a later one is sized for (a page and
// its count budget read about a thousand lines).
const (
	firstWindow = 1 << 16
	windowCands = 1 << 10
)

// indexCounts reports whether the index counts n's matches without
// reading lines (its plans are exact, but for unindexed lines).
func indexCounts(n lang.Node) bool {
	switch n := n.(type) {
	case *lang.Term, *lang.Prefix: // (a prefix too wide to expand: its plans say so, get)
		return true
	case *lang.Not:
		return indexCounts(n.Kid)
	case *lang.Or:
		return !slices.ContainsFunc(n.Kids, func(k lang.Node) bool { return !indexCounts(k) })
	case *lang.And:
		return !slices.ContainsFunc(n.Kids, func(k lang.Node) bool { return !indexCounts(k) })
	}
	return false
}

// lazyPlans plans no segment yet: a page whose count is bounded stops
// reading once the page is full and the budget spent, and then has no use
// for the later segments' plans (intersecting a phrase's two common
// words over a whole index cost more than its first page).
//
// countAll false: the hits past the page are not counted at all.
func (s *Searcher) lazyPlans(q *Query, tr *TimeRange, countAll bool) *planSet {
	ps := &planSet{plans: make([]*segPlan, len(s.segs)), s: s, q: q, tr: tr, cuts: !countAll || !indexCounts(q.root)}
	ps.windows = ps.cuts && !s.noInline // (noInline: its tasks run on workers)
	var once sync.Once
	ps.lookups = func() { once.Do(func() { s.prefetchTermBlocks(tr) }) }
	ps.ahead = newLookAhead(s, tr)
	return ps
}

// get is segment i's plan of line lo, made now if it is not yet: the
// whole segment's, or a window's from lo (planSet.windows) for a span
// ending at hi.
func (ps *planSet) get(i int, lo, hi uint32) (*segPlan, error) {
	last := ps.plans[i]
	if last.covers(lo) {
		return last, nil
	}
	e := ps.eval(i)
	win, err := ps.window(e, i, lo, hi, last)
	if err != nil {
		win = nil // (a fault: the segment is quarantined, and planned raw below)
	}
	// Only the segment's first plan may read it whole (a query with no
	// word or literal to narrow by): a task reaching a later window goes
	// on reading candidates.
	p, terms, blocks, err := ps.s.planSegment(e, ps.tr, i, win, last == nil)
	if errors.Is(err, mmapstore.ErrCorrupt) {
		p, err = &segPlan{mode: planRaw}, nil
	}
	if err != nil {
		return nil, err
	}
	if win != nil && (p.mode == planIDs || p.mode == planNone) {
		p.from, p.upto = win.Lo, win.Hi
	}
	ps.plans[i] = p
	// A plan that reads lines to count (a scan, a damaged segment, every
	// candidate to verify) makes the count a reading one after all.
	ps.cuts = ps.cuts || p.mode == planScan || p.mode == planRaw || p.mode == planIDs && p.verify == nil
	ps.terms += terms
	ps.blocks += blocks
	return p, nil
}

// window is the lines of segment i to plan for its line lo, in a span
// ending at hi (last: the segment's last plan): nil for the whole segment
// (no windows; a segment not much longer than a window; a damaged one).
func (ps *planSet) window(e *segEval, i int, lo, hi uint32, last *segPlan) (_ *mmapstore.LineRange, err error) {
	seg := ps.s.segs[i]
	n := seg.NumLines()
	if !ps.windows || lo >= n || seg.Damage() != nil {
		return nil, nil
	}
	// Sizing looks words up in the mapped segment (rarestDF): a mapping
	// truncated behind our back faults here as in planSegment.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverFault(seg, &err)
	if ps.firsts == nil {
		ps.firsts = make([]uint64, len(ps.plans))
	}
	first := ps.firsts[i]
	if first == 0 {
		first = firstWindow
		if ps.s.window > 0 {
			first = uint64(ps.s.window)
		} else if df, ok := e.rarestDF(ps.q.root); ok {
			// About windowCands lines of the query's rarest word, were
			// they spread evenly: a rare phrase's segment is planned
			// whole at once, as without windows (each window costs its
			// lookups and bitmaps: 20% of a page that passed 18).
			first = max(first, uint64(n)*windowCands/uint64(df+1))
		}
		ps.firsts[i] = first
	}
	if last == nil && uint64(n) <= 2*first {
		return nil, nil // planned whole: about as cheap as a window of it, and planned once
	}
	size := first
	if last != nil && last.upto == lo {
		// The next window holds about windowCands candidates if the last
		// one's density holds, and is at least twice as long: a rare
		// phrase's (a few candidates a window) is planned to the span's
		// end at once.
		var c uint64
		if last.mode == planIDs {
			c = last.cands.GetCardinality()
		}
		size = uint64(last.upto-last.from) * max(2, windowCands/(c+1))
	}
	end := uint64(lo) + size
	if end > uint64(hi) {
		// Not far past the span: the next file's lines may be read first
		// where the segment is not in path order, and its first page
		// needs few windows of its own.
		end = max(uint64(hi), uint64(lo)+first)
	}
	if end = min(end, uint64(n)); lo == 0 && end == uint64(n) {
		return nil, nil
	}
	return &mmapstore.LineRange{Lo: lo, Hi: uint32(end)}, nil
}

// countableTerm is the word countTerm counts in segment i's lines from lo
// on: false unless the plans are lazy, the query is a word, and nothing
// else makes a plan needed.
func (ps *planSet) countableTerm(i int, lo uint32) (*lang.Term, bool) {
	if ps.s == nil {
		return nil, false // (eager plans)
	}
	term, isTerm := ps.q.root.(*lang.Term)
	seg := ps.s.segs[i]
	if !isTerm || ps.tr != nil || ps.plans[i].covers(lo) || seg.Damage() != nil ||
		seg.Unindexed() != nil || ps.s.ix.LiveLines(i) != nil {
		return nil, false
	}
	return term, true
}

// countTerm counts the hits of a one-word query in segment i's lines
// [lo, hi) from the word's postings list, without a plan: a task past the
// page only counts, and the plan's bitmap of the list was most of what
// counting a common word cost. ok is false where a plan is needed after
// all: a query of more than a word, a time range, lines not indexed or
// not live, a damaged segment (its plan reads it raw), or a plan made
// already (it counts as cheaply).
func (ps *planSet) countTerm(i int, lo, hi uint32) (n uint64, ok bool) {
	term, ok := ps.countableTerm(i, lo)
	if !ok {
		return 0, false
	}
	ref, found, err := ps.eval(i).lookup([]byte(term.Text))
	if err != nil {
		return 0, false // (the plan meets the damage again, and reads the segment raw)
	}
	ps.terms++
	if !found {
		return 0, true
	}
	seg := ps.s.segs[i]
	if lo == 0 && hi >= seg.NumLines() {
		n, err = seg.CountIn(ref, lo, hi) // (the list's header)
		return n, err == nil
	}
	// A segment's spans are counted one after another (its files come in
	// path order, as the indexer wrote them): its list is read once.
	if ps.counterSeg != i+1 {
		buf := ps.counter.IDs()
		if buf == nil {
			buf = *countBufs.Get().(*[]uint32)
		}
		c, err := seg.NewCounter(ref, buf)
		ps.counter, ps.counterSeg = c, i+1
		if err != nil {
			ps.counterSeg = 0
			return 0, false
		}
	}
	return ps.counter.In(lo, hi), true
}

// countBufs recycles the ids countTerm decodes a list into.
var countBufs = sync.Pool{New: func() any { return new([]uint32) }}

// release gives back what the plans hold for the search's length.
func (ps *planSet) release() {
	if ids := ps.counter.IDs(); ids != nil && cap(ids) <= 1<<16 {
		ids = ids[:0]
		countBufs.Put(&ids)
	}
	ps.counter, ps.counterSeg = mmapstore.Counter{}, 0
}

// eval is segment i's evaluator, made once and kept for its later windows
// and counts.
func (ps *planSet) eval(i int) *segEval {
	if ps.evals == nil {
		ps.evals = make([]*segEval, len(ps.plans))
	}
	if ps.evals[i] == nil {
		ps.evals[i] = ps.s.newSegEval(ps.q, i, ps.lookups, ps.ahead)
	}
	return ps.evals[i]
}

// reach is segment i's plan of its lines from lo below hi (a span's): the
// whole segment's, or, by windows, the first window at or past lo with a
// candidate below hi (when none has, a planNone standing for [lo, hi)).
func (ps *planSet) reach(i int, lo, hi uint32) (*segPlan, error) {
	for {
		p, err := ps.get(i, lo, hi)
		if err != nil || p.upto == 0 || p.mode == planIDs && intersects(p.cands, lo, min(hi, p.upto)) {
			return p, err
		}
		if p.upto >= hi {
			return &segPlan{mode: planNone}, nil
		}
		lo = p.upto
	}
}

// scans reports whether the plan of the first segment the search reaches
// reads it whole (the query has no literal to narrow it by): lazy plans
// run inline, in the caller's goroutine, but for a page that scans, which
// workers read in parallel.
func (ps *planSet) scans(opt *Options) bool {
	for _, f := range ps.s.files {
		if opt.passesOver(f) || len(f.spans) == 0 {
			continue
		}
		sr := f.spans[0]
		sp := ps.s.segs[sr.seg].Spans()[sr.span]
		p, err := ps.get(sr.seg, sp.FirstLine, sp.FirstLine+sp.NumLines)
		return err != nil || p.mode == planScan || p.mode == planRaw
	}
	return false
}

// stats adds what the lazy plans cost and the damaged segments to st.
func (ps *planSet) stats(st *Stats) {
	if ps.s == nil {
		return // (plan counted its own)
	}
	st.Terms += ps.terms
	st.Blocks += ps.blocks
	for _, p := range ps.plans {
		if p != nil {
			st.Planned++
		}
	}
	for _, seg := range ps.s.segs {
		if err := seg.Damage(); err != nil && !slices.Contains(st.Damaged, err.Error()) { // (a task may have said so)
			st.Damaged = append(st.Damaged, err.Error())
		}
	}
}

// prefetchTermBlocks asks for the term-block indexes of the segments with
// lines in the time range.
func (s *Searcher) prefetchTermBlocks(tr *TimeRange) {
	for _, seg := range s.segs {
		if segmentMeets(seg, tr) {
			seg.PrefetchTermBlocks()
		}
	}
}

// plan evaluates the query on every segment's dictionary, in parallel.
// A time range narrows each segment to the lines that may lie in it
// before any postings list is decoded.
func (s *Searcher) plan(ctx context.Context, q *Query, tr *TimeRange, workers int, st *Stats) (*planSet, error) {
	segs := s.segs
	plans := make([]*segPlan, len(segs))
	errs := make([]error, len(segs))
	terms := make([]int, len(segs))
	blocks := make([]int, len(segs))
	// A cold index's term-block indexes are asked for together at the
	// search's first dictionary lookup, before lookups fault them in page
	// by page (a query of substrings only looks no term up), for the
	// segments with lines in the time range.
	var once sync.Once
	lookups := func() { once.Do(func() { s.prefetchTermBlocks(tr) }) }
	ahead := newLookAhead(s, tr)
	defer ahead.wait()
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(segs) || ctx.Err() != nil {
				return
			}
			plans[i], terms[i], blocks[i], errs[i] = s.planSegment(s.newSegEval(q, i, lookups, ahead), tr, i, nil, true)
		}
	}
	// The calling goroutine is one of the workers: one goroutine fewer to
	// start and wake per search.
	var wg sync.WaitGroup
	for w := 1; w < min(workers, len(segs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	st.Planned = len(segs)
	for i := range segs {
		st.Terms += terms[i]
		st.Blocks += blocks[i]
		if errors.Is(errs[i], mmapstore.ErrCorrupt) {
			plans[i], errs[i] = &segPlan{mode: planRaw}, nil
		}
		if err := segs[i].Damage(); err != nil {
			st.Damaged = append(st.Damaged, err.Error())
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &planSet{plans: plans}, ctx.Err()
}

// planSegment plans segment i's lines in the time range tr with e, the
// segment's evaluator (newSegEval; kept across a segment's windows, its
// dictionary lookups are made once). win, when not nil, is the only lines
// to plan (a window); scanOK allows a plan that reads the segment whole.
func (s *Searcher) planSegment(e *segEval, tr *TimeRange, i int, win *mmapstore.LineRange, scanOK bool) (_ *segPlan, _, _ int, err error) {
	seg := s.segs[i]
	if seg.Damage() != nil {
		return &segPlan{mode: planRaw}, 0, 0, nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverFault(seg, &err)
	e.terms, e.blocks, e.within = 0, 0, nil
	if tr != nil {
		var all bool
		if e.within, all, err = timeLines(seg, tr); err != nil {
			return nil, 0, 0, err
		}
		if len(e.within) == 0 {
			return &segPlan{mode: planNone}, 0, 0, nil
		}
		if all {
			e.within = nil // no narrowing: every line may be in the range
		}
	}
	if win != nil {
		if e.within == nil {
			e.within = []mmapstore.LineRange{*win}
		} else {
			e.within = clipLineRanges(e.within, *win)
		}
		if len(e.within) == 0 {
			return &segPlan{mode: planNone}, 0, 0, nil
		}
	}
	p, err := s.planWith(e, e.q, i, win, scanOK)
	return p, e.terms, e.blocks, err
}

// newSegEval is an evaluator of q on segment i.
func (s *Searcher) newSegEval(q *Query, i int, lookups func(), ahead *lookAhead) *segEval {
	seg := s.segs[i]
	return &segEval{q: q, seg: seg, un: seg.Unindexed(), lookups: lookups, ahead: ahead}
}

// lookAheadWorkers is how many segments' lookups a lookAhead asks for at
// once.
const lookAheadWorkers = 4

// lookAhead asks, on a cold index, for the dictionary lookups that one
// segment's plan found cold (its words' entries, blocks and list heads)
// in the search's other segments too, in the background. Each segment
// costs three reads one after another a word; a literal verified and
// counted across a 4 GiB index (an IP address: four words) planned its 32
// segments one after another, and waited for the disk about 300 times.
// Asked ahead, segments' reads overlap and wait in the disk's queue
// together. A search waits for its lookAhead before it returns (the
// segments stay open until then).
type lookAhead struct {
	segs []*mmapstore.Segment
	tr   *TimeRange
	mu   sync.Mutex
	seen []string // the sets of words asked for (a few a search)
	stop atomic.Bool
	wg   sync.WaitGroup
}

func newLookAhead(s *Searcher, tr *TimeRange) *lookAhead {
	return &lookAhead{segs: s.segs, tr: tr}
}

// cold asks for texts' lookups in every segment but from, once a search
// for each set of words (at most four sets).
func (la *lookAhead) cold(from *mmapstore.Segment, texts [][]byte) {
	if la == nil || len(la.segs) < 2 || la.stop.Load() {
		return
	}
	key := string(bytes.Join(texts, []byte{0}))
	workers := min(lookAheadWorkers, len(la.segs)-1)
	la.mu.Lock() // (stop is set under it too: no Add after wait)
	if la.stop.Load() || len(la.seen) >= 4 || slices.Contains(la.seen, key) {
		la.mu.Unlock()
		return
	}
	la.seen = append(la.seen, key)
	la.wg.Add(workers)
	la.mu.Unlock()
	texts = slices.Clone(texts)
	var next atomic.Int64
	for range workers {
		go func() {
			defer la.wg.Done()
			for !la.stop.Load() {
				k := int(next.Add(1) - 1)
				if k >= len(la.segs) {
					return
				}
				if seg := la.segs[k]; seg != from && segmentMeets(seg, la.tr) {
					seg.PrefetchLookups(texts)
				}
			}
		}()
	}
}

// wait stops asking and waits for the asks under way.
func (la *lookAhead) wait() {
	if la == nil {
		return
	}
	la.mu.Lock()
	la.stop.Store(true)
	la.mu.Unlock()
	la.wg.Wait()
}

func (s *Searcher) planWith(e *segEval, q *Query, i int, win *mmapstore.LineRange, scanOK bool) (*segPlan, error) {
	seg := e.seg
	c, err := e.eval(q.root)
	if err != nil {
		return nil, err
	}
	live := s.ix.LiveLines(i)
	if c.all && scanOK {
		return &segPlan{mode: planScan}, nil
	}
	if c.all { // (a later window: its every line is a candidate)
		c = cset{bm: roaring.New()}
		c.bm.AddRange(0, uint64(seg.NumLines()))
	}
	cands := c.bm
	if live != nil {
		cands = roaring.And(cands, live)
	}
	if e.within != nil {
		// Words' lists were decoded inside the range only, but other
		// atoms (a negation, a scan) may hold lines outside it.
		cands = roaring.And(cands, mmapstore.RangesBitmap(e.within))
	}
	if cands.IsEmpty() {
		return &segPlan{mode: planNone}, nil
	}
	p := &segPlan{mode: planIDs, cands: cands}
	if c.exact {
		p.verify = roaring.New()
		if e.un != nil {
			p.verify = roaring.And(cands, e.un)
		}
	} else if win == nil && cands.GetCardinality()*4 > uint64(seg.NumLines()) {
		// Reading a quarter of the lines at random costs more than
		// reading them all in order. Not for a window: a page reads
		// few of its candidates (dense ones in runs of neighbours), and
		// a scan of its span would read every line up to its budget.
		p.mode = planScan
	}
	return p, nil
}

// recoverFault turns a panic while reading a segment (a memory fault on a
// mapping truncated behind our back, under SetPanicOnFault) into a
// corruption error that quarantines the segment.
func recoverFault(seg *mmapstore.Segment, err *error) {
	if r := recover(); r != nil {
		*err = seg.Fault(r)
	}
}

// segmentMeets reports whether a line of seg may be in tr (nil: every line).
func segmentMeets(seg *mmapstore.Segment, tr *TimeRange) bool {
	return slices.ContainsFunc(seg.Spans(), tr.holdsSpan)
}

// clipLineRanges is the parts of ranges within win.
func clipLineRanges(ranges []mmapstore.LineRange, win mmapstore.LineRange) []mmapstore.LineRange {
	var out []mmapstore.LineRange
	for _, r := range ranges {
		if lo, hi := max(r.Lo, win.Lo), min(r.Hi, win.Hi); lo < hi {
			out = append(out, mmapstore.LineRange{Lo: lo, Hi: hi})
		}
	}
	return out
}
