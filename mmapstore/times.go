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
	var res int64
	err = s.walkGroupTimes(sp.FirstGroup+rel/GroupSize, int(rel%GroupSize), func(k int, t int64) bool {
		res = t
		return true
	})
	return res, err == nil, err
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
	for rel := from; rel < sp.NumLines; {
		g := sp.FirstGroup + rel/GroupSize
		n := min(GroupSize, int(sp.NumLines-rel/GroupSize*GroupSize))
		stop := false
		err := s.walkGroupTimes(g, n-1, func(k int, t int64) bool {
			l := rel/GroupSize*GroupSize + uint32(k)
			if l < rel {
				return true
			}
			if !fn(sp.FirstLine+l, t) {
				stop = true
				return false
			}
			return true
		})
		if err != nil || stop {
			return err
		}
		rel = (rel/GroupSize + 1) * GroupSize
	}
	return nil
}

// walkGroupTimes decodes the times of lines 0..last of group g, calling fn
// for each in order (fn for a line before last may be skipped by returning
// true; false stops).
func (s *Segment) walkGroupTimes(g uint32, last int, fn func(k int, t int64) bool) error {
	tg, err := s.TimeGroupOf(g)
	if err != nil {
		return err
	}
	if !tg.Timed {
		return s.damaged(s.corrupt("time groups", int64(s.timeGroups.off)+int64(g)*TimeGroupSize, "group %d of a timed span has no times", g))
	}
	t := tg.Base
	if !fn(0, t) || last == 0 {
		return nil
	}
	b, err := s.readTail(&s.lineTimes, tg.pos, uint64(last)*binary.MaxVarintLen64)
	if err != nil {
		return err
	}
	for k := 1; k <= last; k++ {
		u, n := binary.Uvarint(b)
		if n <= 0 {
			return s.damaged(s.corrupt("line times", int64(s.lineTimes.off+tg.pos), "bad delta in group %d", g))
		}
		b = b[n:]
		d := unzigzag(u)
		if d > math.MaxInt64/tg.unit || d < math.MinInt64/tg.unit {
			return s.damaged(s.corrupt("line times", int64(s.lineTimes.off+tg.pos), "delta out of range in group %d", g))
		}
		t += d * tg.unit
		if t < tg.Min || t > tg.Max {
			return s.damaged(s.corrupt("line times", int64(s.lineTimes.off+tg.pos), "time outside its group's range in group %d", g))
		}
		if !fn(k, t) {
			return nil
		}
	}
	return nil
}

// GroupTimes appends to dst the times of the lines of the k-th line group
// of span si (up to GroupSize lines), decoding the group once: a task
// walking a span's lines in order reads each group's times once.
func (s *Segment) GroupTimes(si int, k uint32, dst []int64) ([]int64, error) {
	if err := s.check(); err != nil {
		return dst, err
	}
	sp := &s.spans[si]
	if !sp.Timed || k*GroupSize >= sp.NumLines {
		return dst, fmt.Errorf("span %d has no time group %d", si, k)
	}
	n := min(GroupSize, int(sp.NumLines-k*GroupSize))
	err := s.walkGroupTimes(sp.FirstGroup+k, n-1, func(_ int, t int64) bool {
		dst = append(dst, t)
		return true
	})
	return dst, err
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
