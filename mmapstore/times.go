package mmapstore

// The time index: every line of a timed span has a time (unix ns), found
// like its offset: through its group's entry (the time of the group's first
// line, the group's range, where its deltas start) and at most
// GroupSize-1 deltas. Group ranges let a time filter skip 64 lines at a
// time without decoding them.

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// TimeGroup is one SectionTimeGroups entry.
type TimeGroup struct {
	Timed    bool
	Base     int64 // time of the group's first line
	Min, Max int64
	pos      uint64
	unit     int64
}

var pow10 = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

// TimeGroupOf reads the time entry of line group g.
func (s *Segment) TimeGroupOf(g uint32) (TimeGroup, error) {
	e, err := s.read(&s.timeGroups, uint64(g)*TimeGroupSize, TimeGroupSize)
	if err != nil {
		return TimeGroup{}, err
	}
	tg := TimeGroup{pos: uint64(binary.LittleEndian.Uint32(e[24:]))}
	if e[29]&TimeUntimed != 0 {
		return tg, nil
	}
	tg.Timed = true
	tg.Base = int64(binary.LittleEndian.Uint64(e))
	tg.Min = int64(binary.LittleEndian.Uint64(e[8:]))
	tg.Max = int64(binary.LittleEndian.Uint64(e[16:]))
	if e[28] >= byte(len(pow10)) || tg.Min > tg.Max || tg.Base < tg.Min || tg.Base > tg.Max || tg.pos > uint64(len(s.lineTimes.data)) {
		return TimeGroup{}, s.damaged(s.corrupt("time groups", int64(s.timeGroups.off)+int64(g)*TimeGroupSize, "group %d inconsistent", g))
	}
	tg.unit = pow10[e[28]]
	return tg, nil
}

// timeAt returns the time of line k of line group g (k < GroupSize): the
// group's base plus its first k deltas, summed without keeping the times
// between (a hit needs one line of its group). The sum is checked once, at
// the end: the time must lie in the group's range, as every time of it
// does. (Checking each delta, as appendGroupTimes does for the times it
// keeps, and appending them, was most of a hit's cost.)
func (s *Segment) timeAt(g uint32, k int) (int64, error) {
	tg, b, err := s.groupDeltas(g, k)
	if err != nil {
		return 0, err
	}
	if k == 0 {
		return tg.Base, nil
	}
	bad := func(why string) error {
		return s.damaged(s.corrupt("line times", int64(s.lineTimes.off+tg.pos), "%s in group %d", why, g))
	}
	// |sum| stays below GroupSize<<56: no overflow.
	sum, i, b := sumZigzags(b, k)
	for ; i < k; i++ {
		var u uint64
		switch { // uvarints, the short ones inline
		case len(b) > 0 && b[0] < 0x80:
			u, b = uint64(b[0]), b[1:]
		case len(b) > 1 && b[1] < 0x80:
			u, b = uint64(b[0]&0x7f)|uint64(b[1])<<7, b[2:]
		default:
			var n int
			if u, n = binary.Uvarint(b); n <= 0 {
				return 0, bad("bad delta")
			}
			if u>>57 != 0 { // a jump of 2^56 units or more (a clock set): the checked decoder
				var buf [GroupSize]int64
				ts, err := s.appendGroupTimes(g, k, buf[:0])
				if err != nil {
					return 0, err
				}
				return ts[k], nil
			}
			b = b[n:]
		}
		sum += unzigzag(u)
	}
	if sum > math.MaxInt64/tg.unit || sum < math.MinInt64/tg.unit {
		return 0, bad("delta out of range")
	}
	d := sum * tg.unit
	if d > 0 && tg.Base > math.MaxInt64-d || d < 0 && tg.Base < math.MinInt64-d {
		return 0, bad("delta out of range")
	}
	if t := tg.Base + d; t >= tg.Min && t <= tg.Max {
		return t, nil
	}
	return 0, bad("time outside its group's range")
}

// TimeAt is the time of the n-th line (0-based) of the k-th line group of
// span si, decoding no more than that line needs (GroupTimes decodes them
// all, for a task walking a span's lines in order).
func (s *Segment) TimeAt(si int, k uint32, n int) (int64, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	sp := &s.spans[si]
	if !sp.Timed || k*GroupSize >= sp.NumLines || n < 0 || n >= min(GroupSize, int(sp.NumLines-k*GroupSize)) {
		return 0, fmt.Errorf("span %d has no line %d in time group %d", si, n, k)
	}
	return s.timeAt(sp.FirstGroup+k, n)
}

// LineTime returns the time of line id, ok false when its span is untimed.
func (s *Segment) LineTime(line uint32) (t int64, ok bool, err error) {
	if err := s.check(); err != nil {
		return 0, false, err
	}
	if line >= s.lines {
		return 0, false, s.corrupt("spans", -1, "line id %d beyond %d lines", line, s.lines)
	}
	sp := &s.spans[s.SpanOf(line)]
	if !sp.Timed {
		return 0, false, nil
	}
	rel := line - sp.FirstLine
	t, err = s.timeAt(sp.FirstGroup+rel/GroupSize, int(rel%GroupSize))
	return t, err == nil, err
}

// WalkTimes calls fn with the time of every line of span si from its line
// from (0-based within the span) on, in order, until fn returns false. It
// does nothing for an untimed span.
func (s *Segment) WalkTimes(si int, from uint32, fn func(line uint32, t int64) bool) error {
	if err := s.check(); err != nil {
		return err
	}
	sp := &s.spans[si]
	if !sp.Timed {
		return nil
	}
	var buf [GroupSize]int64
	for rel := from; rel < sp.NumLines; {
		g0 := rel / GroupSize * GroupSize // the group's first line
		n := min(GroupSize, int(sp.NumLines-g0))
		ts, err := s.appendGroupTimes(sp.FirstGroup+rel/GroupSize, n-1, buf[:0])
		if err != nil {
			return err
		}
		for k := rel - g0; k < uint32(n); k++ {
			if !fn(sp.FirstLine+g0+k, ts[k]) {
				return nil
			}
		}
		rel = g0 + GroupSize
	}
	return nil
}

// groupDeltas reads the time entry of line group g of a timed span and
// the bytes that hold at least its first n deltas (none for n 0).
func (s *Segment) groupDeltas(g uint32, n int) (TimeGroup, []byte, error) {
	tg, err := s.TimeGroupOf(g)
	if err != nil {
		return tg, nil, err
	}
	if !tg.Timed {
		return tg, nil, s.damaged(s.corrupt("time groups", int64(s.timeGroups.off)+int64(g)*TimeGroupSize, "group %d of a timed span has no times", g))
	}
	if n == 0 {
		return tg, nil, nil
	}
	b, err := s.readTail(&s.lineTimes, tg.pos, uint64(n)*binary.MaxVarintLen64)
	return tg, b, err
}

// appendGroupTimes appends the times of lines 0..last of group g to dst,
// each delta and time checked (timeAt sums to one line unchecked): a plain
// loop, as a callback per line cost as much as the decoding.
func (s *Segment) appendGroupTimes(g uint32, last int, dst []int64) ([]int64, error) {
	tg, b, err := s.groupDeltas(g, last)
	if err != nil {
		return dst, err
	}
	if cap(dst)-len(dst) <= last {
		dst = slices.Grow(dst, GroupSize) // once, not a doubling per power of two
	}
	t := tg.Base
	dst = append(dst, t)
	// The bounds a delta must keep to, divided once per group: two
	// divisions per line were most of the decoding's cost.
	dmax, dmin := math.MaxInt64/tg.unit, math.MinInt64/tg.unit
	for k := 1; k <= last; k++ {
		var u uint64
		switch { // uvarints, the short ones inline
		case len(b) > 0 && b[0] < 0x80:
			u, b = uint64(b[0]), b[1:]
		case len(b) > 1 && b[1] < 0x80:
			u, b = uint64(b[0]&0x7f)|uint64(b[1])<<7, b[2:]
		case len(b) > 2 && b[2] < 0x80:
			u, b = uint64(b[0]&0x7f)|uint64(b[1]&0x7f)<<7|uint64(b[2])<<14, b[3:]
		default:
			var n int
			if u, n = binary.Uvarint(b); n <= 0 {
				return dst, s.damaged(s.corrupt("line times", int64(s.lineTimes.off+tg.pos), "bad delta in group %d", g))
			}
			b = b[n:]
		}
		d := unzigzag(u)
		if d > dmax || d < dmin {
			return dst, s.damaged(s.corrupt("line times", int64(s.lineTimes.off+tg.pos), "delta out of range in group %d", g))
		}
		t += d * tg.unit
		if t < tg.Min || t > tg.Max {
			return dst, s.damaged(s.corrupt("line times", int64(s.lineTimes.off+tg.pos), "time outside its group's range in group %d", g))
		}
		dst = append(dst, t)
	}
	return dst, nil
}

// GroupTimes appends to dst the times of the lines of the k-th line group
// of span si (up to GroupSize), decoding the group once: a task walking a
// span's lines in order reads each group's times once (TimeAt gives one
// line).
func (s *Segment) GroupTimes(si int, k uint32, dst []int64) ([]int64, error) {
	if err := s.check(); err != nil {
		return dst, err
	}
	sp := &s.spans[si]
	if !sp.Timed || k*GroupSize >= sp.NumLines {
		return dst, fmt.Errorf("span %d has no time group %d", si, k)
	}
	return s.appendGroupTimes(sp.FirstGroup+k, min(GroupSize, int(sp.NumLines-k*GroupSize))-1, dst)
}

// TZ is the zone the index's times were computed in, for timestamps that
// do not write one ("UTC" when not recorded).
func (ix *Index) TZ() string { return cmp.Or(ix.manifest.TZ, "UTC") }

// TimeRange is the range of the times of every timed line of the index
// (ok false when there is none), from the spans' ranges.
func (ix *Index) TimeRange() (lo, hi int64, ok bool) {
	lo, hi = math.MaxInt64, math.MinInt64
	for _, s := range ix.segments {
		for _, sp := range s.spans {
			if sp.Timed {
				lo, hi, ok = min(lo, sp.MinTime), max(hi, sp.MaxTime), true
			}
		}
	}
	return lo, hi, ok
}
