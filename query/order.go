package query

// Hits in time order, across files: one timeline. The search runs in its
// usual path order, keeping each hit's position and time (and, with a
// limit, only the hits that can still make the page: a bounded heap), then
// the page is sorted and its lines read.

import (
	"container/heap"
	"context"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"slices"

	"github.com/logdex/logdex/query/live"
)

// Order is the order hits are delivered in.
type Order uint8

const (
	OrderPath   Order = iota // by path, then line: grep's order
	OrderOldest              // by time, oldest first, across files
	OrderNewest              // by time, newest first
)

// ParseOrder reads an order as the API spells it.
func ParseOrder(s string) (Order, error) {
	switch s {
	case "", "path":
		return OrderPath, nil
	case "oldest", "time":
		return OrderOldest, nil
	case "newest":
		return OrderNewest, nil
	}
	return 0, fmt.Errorf("unknown order %q (want path, oldest or newest)", s)
}

func (o Order) String() string {
	switch o {
	case OrderOldest:
		return "oldest"
	case OrderNewest:
		return "newest"
	}
	return "path"
}

// timedHit is a hit's place in a time order.
type timedHit struct {
	f      *File
	line   int64
	off, n int64
	t      int64
	timed  bool
	binary bool
}

// before reports whether a comes before b in order o: timed lines by time
// (ties by path and line), then lines without a time by path and line.
func (o Order) before(a, b *timedHit) bool {
	if a.timed != b.timed {
		return a.timed
	}
	if a.timed && a.t != b.t {
		if o == OrderNewest {
			return a.t > b.t
		}
		return a.t < b.t
	}
	ka, nowA := orderKey(a.f)
	kb, nowB := orderKey(b.f)
	if ka != kb {
		return ka < kb
	}
	if nowA != nowB {
		return nowB // the indexed file, then the one its path holds now
	}
	return a.line < b.line
}

// orderKey is what ties between files are broken by: the path a file was
// indexed under (not the name a rotation gave it since: a page's cursor
// keeps its place when logrotate runs between pages), and whether the
// file stands for what that path holds now instead.
func orderKey(f *File) (path string, atPathNow bool) {
	if f.indexedPath != "" {
		return f.indexedPath, false
	}
	return f.Path, f.atPathNow
}

// afterCursor reports whether h comes after the cursor in order o.
func (o Order) afterCursor(h *timedHit, c *Cursor) bool {
	if c == nil {
		return true
	}
	at := &timedHit{f: &File{Path: c.Path, indexedPath: c.Indexed, atPathNow: c.AtPath}, line: c.Line, t: c.Time, timed: c.Timed}
	if same, _ := c.sameFile(h.f); same {
		at.f = h.f // renamed by a rotation since or not, ties with it go by line
	}
	return o.before(at, h)
}

// pageHeap keeps the hits after a cursor that come first in an order
// (limit of them; 0: all), worst on top, counting them all.
type pageHeap struct {
	o     Order
	limit int
	after *Cursor
	hs    []timedHit
	found int64 // hits after the cursor offered
}

// offer counts a hit after the cursor and keeps it if it makes the page
// (with countOnly, only counts it).
func (p *pageHeap) offer(th timedHit, countOnly bool) {
	if !p.o.afterCursor(&th, p.after) {
		return
	}
	p.found++
	switch {
	case countOnly:
	case p.limit <= 0 || p.Len() < p.limit:
		heap.Push(p, th)
	case p.o.before(&th, &p.hs[0]):
		p.hs[0] = th
		heap.Fix(p, 0)
	}
}

// full reports whether the page holds all it can.
func (p *pageHeap) full() bool { return p.limit > 0 && p.Len() >= p.limit }

// collect offers p every hit of q in the time range tr, found in path
// order.
func (s *Searcher) collect(ctx context.Context, q *Query, opt Options, tr *TimeRange, p *pageHeap, countOnly bool) (*Stats, error) {
	return s.Search(ctx, q, inPathOrder(opt, tr), func(h *Hit) error {
		p.offer(timedOf(h), countOnly)
		return nil
	})
}

// inPathOrder is the search in path order, with times and without texts,
// that finds the hits of opt's in the time range tr.
func inPathOrder(opt Options, tr *TimeRange) Options {
	opt.Order, opt.Limit, opt.After, opt.Text, opt.Times, opt.PerFile, opt.Time = OrderPath, 0, nil, false, true, nil, tr
	return opt
}

func timedOf(h *Hit) timedHit {
	return timedHit{f: h.File, line: h.Line, off: h.Offset, n: h.Length, t: h.Time, timed: h.Timed, binary: h.Binary}
}

// slabShare is the part of the index's time range a page's first slab
// covers: a common word (INFO: 2.9M lines over two days) fills a page of
// 100 from its first, a rare one (300 lines) after three or four slabs,
// each up to slabGrowth times the last.
const (
	slabShare  = 1024
	slabGrowth = 16
	// A slab's search stops once it has found slabCap times the page's
	// hits (at least slabCapMin): it is narrowed and searched again
	// (narrowSlab). Hits of one log only (GET in the gateway's) reach the
	// page 2.5 hours past the other logs' last lines, where a slab grown
	// by 16 took 18 hours of them: 113,000 hits timed to keep 100.
	slabCap    = 4
	slabCapMin = 256
	// The first search, over the whole answer, stops past probeMax times a
	// slab's cap.
	probeMax = 2
)

// untimedOnly selects the lines without a time only.
var untimedOnly = TimeRange{From: math.MaxInt64, To: math.MaxInt64}

// collectBySlabs fills the page p, in a time order with a limit. One
// search of the whole answer, stopped past a few slabs' worth of hits,
// finds a rare word's hits; else the page is filled from its end of the
// timeline: a slab of time at a time (each one search in path order
// within a time range), each slab wider than the last by what the hits so
// far suggest, until the page is full; then every hit left is in a slab
// not searched yet, and comes after the page. Lines without a
// time come after all timed ones, in either order. A page of a common word
// so reads its first slab's hits instead of every hit (INFO newest over
// 1 GiB: all 2.9M lines timed to keep 100). The hits past the last slab
// are only counted, as a path-order page counts them (within
// Options.TotalBudget).
func (s *Searcher) collectBySlabs(ctx context.Context, q *Query, opt Options, p *pageHeap) (*Stats, error) {
	newest := opt.Order == OrderNewest
	// [lo, hi): the times still to search.
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	untimed := true
	if opt.Time != nil {
		lo, hi, untimed = opt.Time.From, opt.Time.To, !opt.Time.ExcludeUntimed
	}
	if c := opt.After; c != nil {
		switch {
		case !c.Timed: // past every timed line
			lo, hi = 0, 0
		case newest:
			hi = min(hi, satAdd(c.Time, 1)) // (ties with the cursor are after it or not by path and line)
		default:
			lo = max(lo, c.Time)
		}
	}
	first, last, timed := s.ix.TimeRange()
	share, capMin, probe := int64(slabShare), slabCapMin, probeMax
	if s.slabShare > 0 {
		share, capMin, probe = int64(s.slabShare), s.slabCapMin, 1
	}
	width := max(satSub(last, first)/share, 1)
	slabMax := max(slabCap*opt.Limit, capMin)
	st := &Stats{Segments: len(s.segs)}
	counted := int64(-1) // the whole answer's hits, as the first search counted them
	probing := lo < hi
	if probing && indexCounts(q.root) {
		// The index counts the answer without reading a line: when it
		// holds more hits than the probe keeps, the probe (which locates
		// and times each of them, to drop them all) is skipped, and the
		// count sizes the first slab. error newest first over 1 GiB:
		// 4,958 hits, 800 of them located and timed for nothing.
		cnt := inPathOrder(opt, &TimeRange{From: lo, To: hi, ExcludeUntimed: !untimed})
		cnt.Times, cnt.CountAll = false, true
		sst, err := s.Search(ctx, q, cnt, nil)
		st.add(sst)
		if err != nil {
			return st, err
		}
		opt.Synced = true // (one timeline: files are looked at once)
		if n := sst.Total; n > int64(probe*slabMax) {
			probing = false
			if opt.CountAll && opt.After == nil {
				counted, st.TotalAtLeast = n, sst.TotalAtLeast
			}
			if s.slabShare == 0 && timed {
				// A slab expected to hold half as many hits again as the
				// page: spread evenly, the page fills from the first.
				span := max(satSub(min(hi, satAdd(last, 1)), max(lo, first)), 1)
				want := int64(opt.Limit) * 3 / 2
				width = max(satMul(span, want)/n, satMul(span/n, want), 1) // (the first overflows for spans of years in ns)
			}
		}
	}
	if probing {
		// First the whole answer in path order, stopped past a few slabs'
		// worth of hits: a rare word's are all found so, in one search as
		// without slabs. A first page's search counts the answer as a
		// path-order page does (the same hits): no count after the slabs.
		all := inPathOrder(opt, &TimeRange{From: lo, To: hi, ExcludeUntimed: !untimed})
		all.Limit, all.CountAll = probe*slabMax, all.CountAll && opt.After == nil
		got, sst, err := s.hitsAfter(ctx, q, all, opt.Order, p.after, st)
		if err != nil {
			return st, err
		}
		opt.Synced = true // (one timeline: files are looked at once)
		if !sst.Truncated {
			for _, th := range got {
				p.offer(th, false)
			}
			st.Total, st.TotalAtLeast = p.found, sst.TotalAtLeast
			return st, nil
		}
		if all.CountAll {
			counted, st.TotalAtLeast = sst.Total, sst.TotalAtLeast
		}
	}
	// dense: a slab found to hold more hits than the cap, narrowed
	// (narrowSlab); what is left of it is searched next, narrowed again.
	var dense *TimeRange
	for lo < hi && !p.full() {
		slab := TimeRange{From: lo, To: hi, ExcludeUntimed: true}
		switch {
		case dense != nil && max(dense.From, lo) < min(dense.To, hi):
			slab.From, slab.To = max(dense.From, lo), min(dense.To, hi)
		case !timed: // one slab: nothing to size them by
		case newest:
			if from := satSub(min(hi, satAdd(last, 1)), width); from > max(lo, first) {
				slab.From = from
			}
		default:
			if to := satAdd(max(lo, first), width); to < min(hi, satAdd(last, 1)) {
				slab.To = to
			}
		}
		dense = nil
		var got []timedHit
		for capped := true; ; {
			var aborted bool
			var err error
			got, aborted, err = s.slabHits(ctx, q, opt, &slab, p, slabMax, capped, st)
			if err != nil {
				return st, err
			}
			opt.Synced = true // (one timeline: files are looked at once)
			if !aborted {
				break
			}
			// Too many hits to keep them all: a part of the slab at the
			// page's end of it will do (see narrowSlab).
			narrowed := narrowSlab(slab, got, opt.Order, opt.Limit, timed, max(lo, first), min(hi, satAdd(last, 1)))
			if capped = narrowed != slab; capped {
				dense = &TimeRange{From: slab.From, To: slab.To}
			}
			slab = narrowed
		}
		for _, th := range got {
			p.offer(th, false)
		}
		if newest {
			hi = slab.From
		} else {
			lo = slab.To
		}
		grow := int64(slabGrowth)
		if p.found > 0 {
			grow = min(max(int64(opt.Limit)*3/2/p.found, 2), slabGrowth)
		}
		// (measured within the index's times: a first slab is open-ended)
		width = satMul(max(satSub(min(slab.To, satAdd(last, 1)), max(slab.From, first)), 1), grow)
	}
	rest := TimeRange{From: lo, To: hi, ExcludeUntimed: !untimed}
	if lo >= hi {
		rest = untimedOnly
	}
	restOffered := lo >= hi && !untimed // (no rest)
	if !p.full() && !restOffered {
		// Every timed hit is on the page: the untimed ones follow.
		sst, err := s.collect(ctx, q, opt, &rest, p, false)
		st.add(sst)
		if err != nil {
			return st, err
		}
		st.TotalAtLeast = st.TotalAtLeast || sst.TotalAtLeast
		restOffered = true
	}
	switch {
	case counted >= 0:
		st.Total = max(counted, p.found)
	case restOffered:
		st.Total = p.found
	default:
		// Past the page: counted only, as a path-order page counts.
		cnt := inPathOrder(opt, &rest)
		cnt.Limit, cnt.Times, cnt.Synced = 1, false, true
		sst, err := s.Search(ctx, q, cnt, func(*Hit) error { return nil })
		st.add(sst)
		if err != nil {
			return st, err
		}
		st.Total = p.found + sst.Total
		st.TotalAtLeast = st.TotalAtLeast || sst.TotalAtLeast
	}
	st.Truncated = st.Total > int64(opt.Limit) || st.TotalAtLeast && p.full()
	return st, nil
}

// slabHits returns the hits of q in the time slab tr after the cursor
// (found in path order), adding the work to st. Capped, it stops at most
// hits (aborted when more follow); uncapped, it offers them to the page p
// as they come and returns none: a slab that cannot be narrowed, its hits
// all of one time, may hold many (INFO's last second over 1 GiB: 10,996,
// 4.5 MB of them kept to take 100).
func (s *Searcher) slabHits(ctx context.Context, q *Query, opt Options, tr *TimeRange, p *pageHeap, most int, capped bool, st *Stats) (got []timedHit, aborted bool, err error) {
	inner := inPathOrder(opt, tr)
	var sst *Stats
	if capped {
		inner.Limit, inner.CountAll = most, false // (a page: it stops there)
		got, sst, err = s.hitsAfter(ctx, q, inner, opt.Order, p.after, st)
	} else {
		sst, err = s.Search(ctx, q, inner, func(h *Hit) error {
			p.offer(timedOf(h), false)
			return nil
		})
		st.add(sst)
	}
	aborted = err == nil && capped && sst.Truncated
	// (an aborted search's count stopped at its page: not a lower bound
	// of the page's; a search's own is, a file cut short while read)
	st.TotalAtLeast = st.TotalAtLeast || err == nil && !aborted && sst.TotalAtLeast
	return got, aborted, err
}

// hitsAfter runs the path-order search inner and returns its hits after
// the cursor in order o, adding its work to st.
func (s *Searcher) hitsAfter(ctx context.Context, q *Query, inner Options, o Order, after *Cursor, st *Stats) ([]timedHit, *Stats, error) {
	var got []timedHit
	sst, err := s.Search(ctx, q, inner, func(h *Hit) error {
		if th := timedOf(h); o.afterCursor(&th, after) {
			got = append(got, th)
		}
		return nil
	})
	st.add(sst)
	return got, sst, err
}

// narrowSlab is the part of a slab to search instead of it, at the
// page's end of it (the newest part for OrderNewest), given some of its
// hits (got, more than the page holds): half of it, or, when less, the
// part that holds limit of those hits (then the page is full once it has
// been searched). The hits were found in path order, the oldest of each
// file first: for OrderOldest they are the ones wanted, and one narrowing
// usually suffices; for OrderNewest halving finds the newest. [lo, hi) is
// where the index's times can be (timed false: it has none, and the slab
// is not halved). The slab itself when neither narrows it (ties: its hits
// share a time) or when, newest first, it lies past the index's times:
// lines appended since, which have no time index (each narrowing would
// read them all again for a few hits).
func narrowSlab(slab TimeRange, got []timedHit, o Order, limit int, timed bool, lo, hi int64) TimeRange {
	slices.SortFunc(got, func(a, b timedHit) int {
		if o.before(&a, &b) {
			return -1
		}
		return 1
	})
	from, to := max(slab.From, lo), min(slab.To, hi)
	halve := timed && from < to
	mid := from + (to-from)/2 // (a slab's width within [lo, hi) is at most width's: no overflow)
	if o == OrderNewest && !halve {
		return slab
	}
	if o == OrderNewest {
		slab.From = max(slab.From, mid, pageBeforeEnd(got, limit, slab.To))
		if len(got) >= limit {
			slab.From = max(slab.From, got[limit-1].t)
		}
	} else {
		if halve {
			slab.To = min(slab.To, mid+1)
		}
		if len(got) >= limit {
			slab.To = min(slab.To, satAdd(got[limit-1].t, 1))
		}
	}
	return slab
}

// pageBeforeEnd is where hits as dense as got's (sorted newest first)
// would give two pages' worth before the end of their files' times (and
// before to): a log that ends hours before the others, holding all the
// hits, has its last ones there. math.MinInt64 when got's files have no
// indexed times.
func pageBeforeEnd(got []timedHit, limit int, to int64) int64 {
	end := int64(math.MinInt64)
	var f *File
	for i := range got {
		if got[i].f != f {
			f = got[i].f
			if _, last, ok := f.TimeRange(); ok {
				end = max(end, last)
			}
		}
	}
	if end == math.MinInt64 || len(got) == 0 {
		return math.MinInt64
	}
	span := satSub(got[0].t, got[len(got)-1].t)
	return satSub(min(end, to-1), satMul(span, int64(2*limit))/int64(len(got)))
}

// add sums o's counts into st and takes what o reports that st does not
// yet (the searches of one page meet the same files). Totals are the
// caller's to merge.
func (st *Stats) add(o *Stats) {
	if o == nil {
		return
	}
	st.Candidates += o.Candidates
	st.Verified += o.Verified
	st.Scanned += o.Scanned
	st.Planned = max(st.Planned, o.Planned)
	st.Terms += o.Terms
	st.Blocks += o.Blocks
	st.Warnings = appendNew(st.Warnings, o.Warnings...)
	st.Damaged = appendNew(st.Damaged, o.Damaged...)
	st.Unreadable = appendNew(st.Unreadable, o.Unreadable...)
	st.Replaced = appendNew(st.Replaced, o.Replaced...)
}

func appendNew[T comparable](to []T, xs ...T) []T {
	for _, x := range xs {
		if !slices.Contains(to, x) {
			to = append(to, x)
		}
	}
	return to
}

// satAdd, satSub and satMul are +, - and * of times and durations that
// stop at the ends of int64 instead of wrapping.
func satAdd(a, b int64) int64 {
	if c := a + b; (c > a) == (b > 0) {
		return c
	}
	if b > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

func satSub(a, b int64) int64 {
	if b == math.MinInt64 {
		return satAdd(satAdd(a, math.MaxInt64), 1)
	}
	return satAdd(a, -b)
}

func satMul(a, b int64) int64 { // a, b >= 0
	if b != 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

func (p *pageHeap) Len() int           { return len(p.hs) }
func (p *pageHeap) Less(i, j int) bool { return p.o.before(&p.hs[j], &p.hs[i]) }
func (p *pageHeap) Swap(i, j int)      { p.hs[i], p.hs[j] = p.hs[j], p.hs[i] }
func (p *pageHeap) Push(x any)         { p.hs = append(p.hs, x.(timedHit)) }
func (p *pageHeap) Pop() any {
	h := p.hs[len(p.hs)-1]
	p.hs = p.hs[:len(p.hs)-1]
	return h
}

// searchOrdered is Search for the time orders.
func (s *Searcher) searchOrdered(ctx context.Context, q *Query, opt Options, fn func(*Hit) error) (*Stats, error) {
	page := &pageHeap{o: opt.Order, limit: opt.Limit, after: opt.After}
	var st *Stats
	var err error
	if opt.Limit > 0 && fn != nil && opt.Histogram == nil && opt.MaxPerFile == 0 {
		st, err = s.collectBySlabs(ctx, q, opt, page)
	} else if st, err = s.collect(ctx, q, opt, opt.Time, page, fn == nil); st != nil {
		st.Total = page.found
	}
	if err != nil {
		return st, err
	}
	st.Truncated = st.Truncated || opt.Limit > 0 && page.found > int64(opt.Limit)
	hits := page.hs
	slices.SortFunc(hits, func(a, b timedHit) int {
		if opt.Order.before(&a, &b) {
			return -1
		}
		return 1
	})
	if fn == nil {
		return st, nil
	}
	r := newLineReader(s)
	defer r.close()
	var buf []byte
	for i := range hits {
		th := &hits[i]
		// The file is opened again (the path-order search closed it): its
		// handle lets the caller reopen it (Reopen: raw answers' byte
		// ranges) as it does in path order.
		src, err := r.handle(th.f)
		if err != nil {
			st.Warnings = append(st.Warnings, fmt.Sprintf("%s: %v; line %d left out", th.f.Path, err, th.line))
			continue
		}
		h := Hit{File: th.f, Line: th.line, Offset: th.off, Length: th.n, Time: th.t, Timed: th.timed, Binary: th.binary, src: src}
		if opt.Text {
			buf = grow(buf, int(th.n))
			text, err := r.read(th.f, th.off, buf)
			if err != nil {
				st.Warnings = append(st.Warnings, fmt.Sprintf("%s: %v; line %d left out", th.f.Path, err, th.line))
				continue
			}
			h.Text = text
		}
		if err := fn(&h); err != nil {
			return st, err
		}
	}
	return st, nil
}

// lineReader reads lines of many files by offset, keeping each file's
// handle until closed.
type lineReader struct {
	s    *Searcher
	hs   map[*File]*live.Handle
	srcs map[*File]io.ReaderAt
}

func newLineReader(s *Searcher) *lineReader {
	return &lineReader{s: s, hs: map[*File]*live.Handle{}, srcs: map[*File]io.ReaderAt{}}
}

// handle opens f as the search read it: its indexed file (renamed by a
// rotation, too), or, for a copy standing for the file its path holds now
// (atPathNow), that file.
func (r *lineReader) handle(f *File) (*live.Handle, error) {
	h, ok := r.hs[f]
	if !ok {
		var err error
		if f.atPathNow {
			h, err = r.s.logs.Check(f.lf)
		} else {
			h, err = r.s.logs.Stat(f.lf, true)
		}
		if err != nil {
			return nil, err
		}
		r.hs[f] = h
	}
	if h.File() == nil {
		return nil, h.Stale()
	}
	return h, nil
}

// read fills buf with the line at off of f; a line cut short by a file
// that shrank since the search is an error.
func (r *lineReader) read(f *File, off int64, buf []byte) ([]byte, error) {
	h, err := r.handle(f)
	if err != nil {
		return nil, err
	}
	if rec := f.Record(); r.s.mapReads && rec.Compression == "" && rec.Indexed >= mapMin {
		// As the search reads them (runIDsGuarded): a page newest first
		// spent an eighth of its CPU in 100 preads.
		if m := h.Mapped(); off >= 0 && off+int64(len(buf)) <= int64(len(m)) {
			if copyMapped(h, buf, m[off:]) {
				return buf, nil
			}
		}
	}
	src, ok := r.srcs[f]
	if !ok {
		var err error
		if src, err = r.s.source(f, h); err != nil {
			return nil, err
		}
		r.srcs[f] = src
	}
	n, err := src.ReadAt(buf, off)
	if n < len(buf) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("truncated during the search")
		}
		return nil, err
	}
	return buf, nil
}

// copyMapped fills buf from the mapping m of h's file, false when the
// file was truncated under the mapping (the read then goes by pread, which
// reports it).
func copyMapped(h *live.Handle, buf, m []byte) (ok bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if !h.Faulted(r) {
				panic(r)
			}
			ok = false
		}
	}()
	copy(buf, m)
	return true
}

func (r *lineReader) close() {
	for _, h := range r.hs {
		h.Close()
	}
}
