package query

// Time: selecting lines by time, giving hits their times, and counting
// matching lines per time bucket. Indexed lines take their time from the
// segment's time index (a group of 64 decoded once per task); lines read
// where the index has no times (appended since indexing, files replaced
// or with a damaged segment) are timed with the same parser the indexer
// uses.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logtime"
)

// TimeRange selects lines whose time is in [From, To) (unix ns; use
// math.MinInt64 and math.MaxInt64 for an open end). Lines of files without
// timestamps are kept unless ExcludeUntimed: a time filter drops them only
// when asked to.
type TimeRange struct {
	From, To       int64
	ExcludeUntimed bool
}

// keep reports whether a line with time t (timed false: none) is selected.
func (r *TimeRange) keep(t int64, timed bool) bool {
	if r == nil {
		return true
	}
	if !timed {
		return !r.ExcludeUntimed
	}
	return r.From <= t && t < r.To
}

// holdsSpan reports whether a line of span sp may be in the range: its
// times meet it, or it is untimed and untimed lines are kept.
func (r *TimeRange) holdsSpan(sp mmapstore.Span) bool {
	if sp.Timed {
		return r.meets(sp.MinTime, sp.MaxTime)
	}
	return r.keep(0, false)
}

// meets reports whether some time in [lo, hi] is in the range.
func (r *TimeRange) meets(lo, hi int64) bool {
	return r == nil || lo < r.To && hi >= r.From
}

// Histogram counts matching lines per time bucket: bucket i covers
// [Start+i*Step, Start+(i+1)*Step). Lines outside every bucket are counted
// in Before and After, lines without a time in Untimed.
type Histogram struct {
	Start, Step   int64
	Counts        []int64
	Before, After int64
	Untimed       int64
}

// add counts n lines at time t.
func (h *Histogram) add(t int64, timed bool, n int64) {
	if !timed {
		h.Untimed += n
		return
	}
	switch k := h.slot(t); {
	case k < 0:
		h.Before += n
	case k == int64(len(h.Counts)):
		h.After += n
	default:
		h.Counts[k] += n
	}
}

// slot is t's bucket, -1 before the first, len(Counts) after the last.
// (Unsigned: t-Start may pass the int64 range over centuries.)
func (h *Histogram) slot(t int64) int64 {
	if t < h.Start {
		return -1
	}
	return int64(min((uint64(t)-uint64(h.Start))/uint64(h.Step), uint64(len(h.Counts))))
}

// sameBucket reports whether times a <= b fall in one slot of h (one
// bucket, or both before or both after it).
func (h *Histogram) sameBucket(a, b int64) bool { return h.slot(a) == h.slot(b) }

// merge adds o's counts (a task's) to h.
func (h *Histogram) merge(o *Histogram) {
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
	h.Before += o.Before
	h.After += o.After
	h.Untimed += o.Untimed
}

// roundSteps are the bucket widths a histogram may take.
var roundSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour, 30 * 24 * time.Hour,
	91 * 24 * time.Hour, 365 * 24 * time.Hour,
}

// maxStepYears bounds a histogram step (146 years: twice it stays below
// the int64 of nanoseconds); only a range over centuries with a few
// buckets asked for gets more buckets than asked for then.
const maxStepYears = 146

// NewHistogram makes a histogram of at most n buckets (n+1 once aligned)
// over [from, to) with the smallest round step that fits, aligned on that
// step (in UTC); past n years, a whole number of years. The arithmetic is
// unsigned: a range may span the whole int64 of nanoseconds (1677-2262).
func NewHistogram(from, to int64, n int) *Histogram {
	n = max(n, 1)
	span := uint64(0)
	if to > from {
		span = uint64(to) - uint64(from)
	}
	buckets := func(span, s uint64) uint64 { return span/s + min(span%s, 1) }
	year := uint64(roundSteps[len(roundSteps)-1].Nanoseconds())
	step := year * min(max(buckets(span, year*uint64(n)), 1), maxStepYears)
	for _, d := range roundSteps {
		if s := uint64(d.Nanoseconds()); buckets(span, s) <= uint64(n) {
			step = s
			break
		}
	}
	st := int64(step)
	start := floorDiv(from, st) * st
	if start > from { // (floorDiv's product wrapped below MinInt64)
		start += st
	}
	k := uint64(1)
	if to > start {
		k = max(buckets(uint64(to)-uint64(start), step), 1)
	}
	return &Histogram{Start: start, Step: st, Counts: make([]int64, k)}
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// spanTimes gives the lines of one span of a segment their times, decoding
// a group of the time index at a time.
type spanTimes struct {
	seg   *mmapstore.Segment
	si    int
	sp    mmapstore.Span
	group int64 // the group decoded into times, -1 none
	times []int64
	// entry is group entryK's time entry (its range), -1 none.
	entryK int64
	entry  mmapstore.TimeGroup
}

func newSpanTimes(seg *mmapstore.Segment, si int) *spanTimes {
	return &spanTimes{seg: seg, si: si, sp: seg.Spans()[si], group: -1, entryK: -1}
}

// groupOf returns the time entry of line id's group and the segment line
// that starts the next group (ok false: an untimed span).
func (st *spanTimes) groupOf(id uint32) (tg mmapstore.TimeGroup, next uint32, ok bool, err error) {
	if !st.sp.Timed {
		return tg, 0, false, nil
	}
	k := (id - st.sp.FirstLine) / mmapstore.GroupSize
	if int64(k) != st.entryK {
		if st.entry, err = st.seg.TimeGroupOf(st.sp.FirstGroup + k); err != nil {
			st.entryK = -1
			return tg, 0, false, err
		}
		st.entryK = int64(k)
	}
	return st.entry, st.sp.FirstLine + (k+1)*mmapstore.GroupSize, st.entry.Timed, nil
}

// window narrows [lo, hi), segment lines of the span, to the groups that
// may hold lines of tr: in a span whose groups follow each other in time
// (Span.TimeSorted), groups' mins and maxes both only grow, so the first
// group ending at or after tr.From and the first starting at or after
// tr.To are found by search, reading a few entries instead of one per
// group with candidates. The search starts where the span's time range
// puts each bound (log times grow about evenly) and gallops from there:
// in a fresh process every entry read is a page touched and a chunk
// verified, and a binary search over the whole span read ten times more.
func (st *spanTimes) window(tr *TimeRange, lo, hi uint32) (uint32, uint32, error) {
	if tr == nil || !st.sp.TimeSorted || hi <= lo {
		return lo, hi, nil
	}
	first, last := (lo-st.sp.FirstLine)/mmapstore.GroupSize, (hi-1-st.sp.FirstLine)/mmapstore.GroupSize
	ngroups := (st.sp.NumLines + mmapstore.GroupSize - 1) / mmapstore.GroupSize
	var err error
	search := func(t int64, pred func(tg mmapstore.TimeGroup) bool) uint32 {
		// The group the bound would fall in were times even over the span.
		guess := 0
		if span := float64(st.sp.MaxTime) - float64(st.sp.MinTime); span > 0 {
			frac := min(max((float64(t)-float64(st.sp.MinTime))/span, 0), 1)
			guess = int(frac*float64(ngroups-1)) - int(first)
		}
		return first + uint32(searchFrom(int(last-first+1), guess, func(k int) bool {
			if err != nil {
				return true
			}
			tg, e := st.seg.TimeGroupOf(st.sp.FirstGroup + first + uint32(k))
			if e != nil {
				err = e
				return true
			}
			return pred(tg)
		}))
	}
	gLo := search(tr.From, func(tg mmapstore.TimeGroup) bool { return tg.Max >= tr.From })
	gHi := search(tr.To, func(tg mmapstore.TimeGroup) bool { return tg.Min >= tr.To })
	if err != nil {
		return lo, hi, err
	}
	if gHi <= gLo {
		return lo, lo, nil
	}
	return max(lo, st.sp.FirstLine+gLo*mmapstore.GroupSize), min(hi, st.sp.FirstLine+gHi*mmapstore.GroupSize), nil
}

// searchFrom is sort.Search(n, pred) probing outward from guess in
// doubling steps, then by bisection between the last two probes: with a
// guess near the answer it reads a few entries near it, and at worst
// about twice what sort.Search does.
func searchFrom(n, guess int, pred func(int) bool) int {
	if n <= 0 {
		return 0
	}
	guess = min(max(guess, 0), n-1)
	between := func(lo, hi int) int { // the first true in (lo, hi], hi true or n
		return lo + 1 + sort.Search(hi-lo-1, func(k int) bool { return pred(lo + 1 + k) })
	}
	if pred(guess) {
		hi := guess // true
		for step := 1; ; step *= 2 {
			lo := hi - step
			if lo < 0 {
				return between(-1, hi)
			}
			if !pred(lo) {
				return between(lo, hi)
			}
			hi = lo
		}
	}
	lo := guess // false
	for step := 1; ; step *= 2 {
		hi := lo + step
		if hi >= n {
			return between(lo, n)
		}
		if pred(hi) {
			return between(lo, hi)
		}
		lo = hi
	}
}

// countSorted counts the members of cands in [lo, hi) that lie in tr,
// and into h when not nil: lines of a span whose groups are in time order,
// the range narrowed by window when tr is set. Every group but the first
// and the last then lies wholly in tr (its min is at least the first's
// max, its max at most the last's min), so their lines are counted at
// once, by rank; only the two edge groups' lines are timed. Groups' mins
// and maxes both only grow, so with a histogram the groups after one that
// lie in its bucket are found by a search for the first reaching past
// it, and counted at once too; only groups straddling a bucket's end are
// timed besides (a common word's histogram read a time group entry for
// each of its 2.9M lines).
func (st *spanTimes) countSorted(tr *TimeRange, h *Histogram, cands *roaring.Bitmap, lo, hi uint32) (int64, error) {
	if hi <= lo {
		return 0, nil
	}
	var n int64
	timeEach := func(from, to uint32) error {
		it := cands.Iterator()
		for it.AdvanceIfNeeded(from); it.HasNext(); {
			id := it.Next()
			if id >= to {
				break
			}
			ts, timed, err := st.at(id)
			if err != nil {
				return err
			}
			if tr.keep(ts, timed) {
				if h != nil {
					h.add(ts, timed, 1)
				}
				n++
			}
		}
		return nil
	}
	gs := uint32(mmapstore.GroupSize)
	groupStart := func(id uint32) uint32 { return id - (id-st.sp.FirstLine)%gs }
	firstEnd := min(hi, groupStart(lo)+gs)
	lastStart := max(groupStart(hi-1), firstEnd)
	if err := timeEach(lo, firstEnd); err != nil {
		return 0, err
	}
	group := func(k uint32) (mmapstore.TimeGroup, error) { return st.seg.TimeGroupOf(st.sp.FirstGroup + k) }
	kEnd := (lastStart - st.sp.FirstLine) / gs // interior groups: [k, kEnd)
	if h == nil {
		n += int64(rangeCard(cands, firstEnd, lastStart))
	}
	for k := (firstEnd - st.sp.FirstLine) / gs; h != nil && k < kEnd; {
		tg, err := group(k)
		if err != nil {
			return 0, err
		}
		start := st.sp.FirstLine + k*gs
		slot := h.slot(tg.Min)
		if h.slot(tg.Max) != slot {
			if err := timeEach(start, start+gs); err != nil {
				return 0, err
			}
			k++
			continue
		}
		end := k + 1 + uint32(searchFrom(int(kEnd-k-1), 0, func(i int) bool {
			if err != nil {
				return true
			}
			var g mmapstore.TimeGroup
			if g, err = group(k + 1 + uint32(i)); err != nil {
				return true
			}
			return h.slot(g.Max) != slot
		}))
		if err != nil {
			return 0, err
		}
		c := int64(rangeCard(cands, start, st.sp.FirstLine+end*gs))
		h.add(tg.Min, true, c)
		n += c
		k = end
	}
	if err := timeEach(lastStart, hi); err != nil {
		return 0, err
	}
	return n, nil
}

// at returns the time of segment line id (in the span).
func (st *spanTimes) at(id uint32) (int64, bool, error) {
	if !st.sp.Timed {
		return 0, false, nil
	}
	rel := id - st.sp.FirstLine
	k := int(rel % mmapstore.GroupSize)
	g := int64(rel / mmapstore.GroupSize)
	if g != st.group {
		// A new group: only the line asked for (hits far apart need one
		// line of each group); a later line of the same group decodes
		// all of it at once.
		t, err := st.seg.TimeAt(st.si, uint32(g), k)
		if err != nil {
			st.group = -1
			return 0, false, err
		}
		st.group, st.times = g, st.times[:0]
		return t, true, nil
	}
	if k >= len(st.times) {
		var err error
		if st.times, err = st.seg.GroupTimes(st.si, uint32(g), st.times[:0]); err != nil {
			st.group = -1
			return 0, false, err
		}
		if k >= len(st.times) {
			st.group = -1
			return 0, false, fmt.Errorf("line %d beyond its time group", id)
		}
	}
	return st.times[k], true, nil
}

// readTimer times lines read without the index's times, in order, as the
// indexer times them: a line without a timestamp takes the previous
// line's, and lines before a file's first timestamp take that one's
// (seedFirst).
type readTimer struct {
	p      *logtime.Parser
	opts   logtime.Options
	carry  int64
	have   bool
	seeded bool // seedFirst has looked
}

func newReadTimer(loc *time.Location, rec mmapstore.FileRecord, carry bool) *readTimer {
	opts := logtime.Options{Location: loc, ModTime: time.Unix(0, rec.MTime)}
	rt := &readTimer{p: logtime.NewParser(opts), opts: opts}
	if carry && rec.Timed {
		rt.carry, rt.have = rec.LastTime, true
	}
	return rt
}

// seedFirst gives the lines before the first timestamp of src's bytes
// [from, to) that timestamp, as the indexer gives a part's first lines
// (src is a file or a decompressed stream). It reads ahead until it finds
// one, at most maxSeedBytes: lines before a timestamp further on stay
// untimed. Its own parser looks ahead, leaving rt's to read the lines in
// order.
func (rt *readTimer) seedFirst(src io.ReaderAt, from, to int64) error {
	if rt.seeded || rt.have {
		return nil
	}
	rt.seeded = true
	p := logtime.NewParser(rt.opts)
	n := min(to-from, maxSeedBytes)
	r := bufio.NewReaderSize(io.NewSectionReader(src, from, n), int(min(n, maxSeedLine))+1)
	for {
		line, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			line = nil // (not timed: the indexer does not read such a line's time)
			_, err = r.ReadSlice('\n')
		}
		if len(line) > 0 {
			if t, ok := p.Parse(bytes.TrimSuffix(line, []byte{'\n'})); ok {
				rt.carry, rt.have = t, true
				return nil
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
	}
}

// maxSeedBytes bounds seedFirst's look ahead; lines longer than the
// indexer times are passed over, as it passes over them.
const (
	maxSeedBytes = 64 << 20
	maxSeedLine  = mmapstore.MaxIndexedLine
)

func (rt *readTimer) line(text []byte) (int64, bool) {
	if t, ok := rt.p.Parse(text); ok {
		rt.carry, rt.have = t, true
	}
	return rt.carry, rt.have
}

// unbounded is a TimeRange that keeps every line.
var unbounded = TimeRange{From: math.MinInt64, To: math.MaxInt64}

// timeLines lists the lines of seg that may lie in tr, as increasing,
// apart ranges: the spans whose times meet it (untimed ones unless it
// excludes them), narrowed by binary search in spans whose groups are in
// time order. all reports that they are every line of the segment.
func timeLines(seg *mmapstore.Segment, tr *TimeRange) (ranges []mmapstore.LineRange, all bool, err error) {
	spans := seg.Spans()
	for si, sp := range spans {
		lo, hi := sp.FirstLine, sp.FirstLine+sp.NumLines
		switch {
		case !tr.holdsSpan(sp):
			continue
		case sp.TimeSorted:
			if lo, hi, err = newSpanTimes(seg, si).window(tr, lo, hi); err != nil {
				return nil, false, err
			}
			if hi <= lo {
				continue
			}
		}
		if n := len(ranges); n > 0 && ranges[n-1].Hi == lo {
			ranges[n-1].Hi = hi
		} else {
			ranges = append(ranges, mmapstore.LineRange{Lo: lo, Hi: hi})
		}
	}
	all = len(ranges) == 1 && ranges[0].Lo == 0 && ranges[0].Hi == seg.NumLines()
	return ranges, all, nil
}
