package mmapstore

// The offset index: locating a line (file offset and length) by its id,
// walking a span's lines in order, and cutting spans into chunks.

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// LineLoc is where a line lives: its span and its bytes in the file.
type LineLoc struct {
	Span   int
	Offset int64 // file offset of the line's first byte
	Length int64 // bytes including the '\n'
}

// SpanOf returns the index of the span holding line id.
func (s *Segment) SpanOf(line uint32) int {
	return sort.Search(len(s.spans), func(i int) bool {
		return s.spans[i].FirstLine+s.spans[i].NumLines > line
	})
}

// PrefetchLines makes the offset index of span si resident when most of it
// is not: a query about to locate many lines of a cold segment reads it in
// one sequential pass instead of faulting page by page at random.
// Residency is looked at (one mincore) at most once a residencyRecheck
// per span: every page of a common word asks.
func (s *Segment) PrefetchLines(si int) error {
	if err := s.check(); err != nil {
		return err
	}
	if s.m == nil || si < 0 || si >= len(s.spans) || si >= len(s.linesChecked) {
		return nil
	}
	if !dueForLook(&s.linesChecked[si]) {
		return nil
	}
	sp := &s.spans[si]
	_, lo, err := s.group(sp.FirstGroup)
	if err != nil {
		return err
	}
	hi := s.spanLensEnd(si)
	base := int64(s.lens.off)
	off, n := base+int64(lo), int64(hi-lo)
	res, err := s.m.Resident(off, n)
	if err != nil || res*2 >= n {
		return err
	}
	coldReads.Add(1)
	return s.m.Prefetch(off, n, make([]byte, min(n, 1<<20)))
}

// PrefetchHits asks the kernel, in two batches, for what locating lines
// (of span si, ascending) and reading the times of the first timed of them
// will fault in, when it is not in memory: first their groups' entries in
// the offset and time indexes, then, those read, the line lengths and time
// deltas each line sums. A page of 100 hits on a cold index read them hit
// after hit, some 260 disk reads one at a time (a fault holds its
// thread's P); asked together, the disk serves them side by side.
// Residency is looked at (one mincore a section) at most once a
// residencyRecheck per span, unless the last look found the span cold:
// then every batch is looked at (a literal's candidates are verified in
// batches, and a span's later batches faulted their entries in one at a
// time).
func (s *Segment) PrefetchHits(si int, lines []uint32, timed int) {
	if s.m == nil || len(lines) < 2 || si < 0 || si >= len(s.hitsChecked) || s.check() != nil || s.Damage() != nil {
		return
	}
	sp := &s.spans[si]
	if !dueForLook(&s.hitsChecked[si]) {
		return
	}
	type group struct {
		g      uint32
		k      int // the furthest line of the group read
		timesK int // the furthest line whose time is read; -1: none
	}
	var groups []group
	for i, l := range lines {
		if l < sp.FirstLine || l-sp.FirstLine >= sp.NumLines {
			continue
		}
		rel := l - sp.FirstLine
		g, k := sp.FirstGroup+rel/GroupSize, int(rel%GroupSize)
		tk := -1
		if i < timed && sp.Timed {
			tk = k
		}
		if n := len(groups); n > 0 && groups[n-1].g == g {
			groups[n-1].k, groups[n-1].timesK = max(groups[n-1].k, k), max(groups[n-1].timesK, tk)
			continue
		}
		groups = append(groups, group{g, k, tk})
	}
	if len(groups) == 0 {
		return
	}
	// Each level is asked for unless every page it spreads over is
	// resident (askLevel).
	asked := map[int]bool{}
	var lineEnts, timeEnts []byteRange
	for _, gr := range groups {
		lineEnts = append(lineEnts, byteRange{uint64(gr.g) * LineGroupSize, LineGroupSize})
		if gr.timesK >= 0 {
			timeEnts = append(timeEnts, byteRange{uint64(gr.g) * TimeGroupSize, TimeGroupSize})
		}
	}
	cold := s.askLevel(&s.groups, lineEnts, asked)
	cold = s.askLevel(&s.timeGroups, timeEnts, asked) || cold
	defer func() {
		if cold {
			s.hitsChecked[si].Store(0) // the next batch is looked at too
		}
	}()
	// The entries read (the first waits for the disk, the rest came with
	// it), the bytes they point at.
	var lens, times []byteRange
	for _, gr := range groups {
		_, pos, err := s.group(gr.g)
		if err != nil {
			return
		}
		lens = append(lens, byteRange{pos, min(uint64(gr.k+1)*binary.MaxVarintLen64, uint64(len(s.lens.data))-pos)})
		if gr.timesK > 0 {
			tg, err := s.TimeGroupOf(gr.g)
			if err != nil || !tg.Timed {
				return
			}
			times = append(times, byteRange{tg.pos, min(uint64(gr.timesK)*binary.MaxVarintLen64, uint64(len(s.lineTimes.data))-tg.pos)})
		}
	}
	cold = s.askLevel(&s.lens, lens, asked) || cold
	cold = s.askLevel(&s.lineTimes, times, asked) || cold
}

// Locate finds a line through the offset index: one restart point read and
// at most GroupSize-1 uvarint lengths decoded.
func (s *Segment) Locate(line uint32) (LineLoc, error) {
	if err := s.check(); err != nil {
		return LineLoc{}, err
	}
	if line >= s.lines {
		return LineLoc{}, fmt.Errorf("line id %d beyond %d lines", line, s.lines)
	}
	si := s.SpanOf(line)
	if si >= len(s.spans) {
		return LineLoc{}, s.corrupt("spans", -1, "no span holds line %d", line)
	}
	sp := &s.spans[si]
	rel := line - sp.FirstLine
	off, pos, err := s.group(sp.FirstGroup + rel/GroupSize)
	if err != nil {
		return LineLoc{}, err
	}
	// The group's lengths: at most GroupSize uvarints of up to 10 bytes.
	b, err := s.readTail(&s.lens, pos, uint64(rel%GroupSize+1)*binary.MaxVarintLen64)
	if err != nil {
		return LineLoc{}, err
	}
	// The lengths of the lines before it in the group, then its own.
	skip, b, ok := sumVarints(b, int(rel%GroupSize))
	v, w := binary.Uvarint(b)
	if !ok || w <= 0 {
		return LineLoc{}, s.damaged(s.corrupt("line lengths", int64(s.lens.off+pos), "bad length of line %d", line))
	}
	n := int64(v)
	if off < sp.StartOffset || off > sp.EndOffset || skip > uint64(sp.EndOffset-off) || !s.lineFits(sp, off+int64(skip), n) {
		return LineLoc{}, s.damaged(s.corrupt("line lengths", int64(s.lens.off+pos), "line %d does not fit its span", line))
	}
	return LineLoc{Span: si, Offset: off + int64(skip), Length: n}, nil
}

// lineFits reports whether a line of n bytes at off lies in span sp and is
// no longer than the segment's longest line (sums that cannot overflow:
// the bytes are not trusted, and a reader allocates n bytes).
func (s *Segment) lineFits(sp *Span, off, n int64) bool {
	return n >= 1 && off >= sp.StartOffset && off <= sp.EndOffset && n <= sp.EndOffset-off &&
		(s.maxLineLen == 0 || uint64(n) <= s.maxLineLen)
}

// group reads restart point g: the file offset of its first line and the
// position of that line's length in the line lengths section.
func (s *Segment) group(g uint32) (int64, uint64, error) {
	e, err := s.read(&s.groups, uint64(g)*LineGroupSize, LineGroupSize)
	if err != nil {
		return 0, 0, err
	}
	off := int64(binary.LittleEndian.Uint64(e))
	pos := uint64(binary.LittleEndian.Uint32(e[8:]))
	if pos >= uint64(len(s.lens.data)) || off < 0 {
		return 0, 0, s.damaged(s.corrupt("line groups", int64(s.groups.off)+int64(g)*LineGroupSize, "group %d points out of bounds", g))
	}
	return off, pos, nil
}

// spanLensEnd is where span si's line lengths end in their section: where
// the next span's begin, or the section's end.
func (s *Segment) spanLensEnd(si int) uint64 {
	if si+1 < len(s.spans) {
		if _, h, err := s.group(s.spans[si+1].FirstGroup); err == nil {
			return h
		}
	}
	return uint64(len(s.lens.data))
}

// WalkLines calls fn for every line of span si from file-relative line index
// from (0-based within the span) onwards, decoding the offset index
// sequentially; fn returns false to stop.
func (s *Segment) WalkLines(si int, from uint32, fn func(line uint32, off, length int64) bool) error {
	if err := s.check(); err != nil {
		return err
	}
	if si < 0 || si >= len(s.spans) {
		return fmt.Errorf("span %d out of range", si)
	}
	sp := &s.spans[si]
	if from >= sp.NumLines {
		return nil
	}
	off, pos, err := s.group(sp.FirstGroup + from/GroupSize)
	if err != nil {
		return err
	}
	if off < sp.StartOffset || off > sp.EndOffset {
		return s.damaged(s.corrupt("line groups", int64(s.groups.off), "span %d's group %d starts outside it", si, from/GroupSize))
	}
	end := s.spanLensEnd(si)
	if end < pos {
		return s.damaged(s.corrupt("line groups", int64(s.groups.off), "span %d's lengths out of order", si))
	}
	lens, err := s.read(&s.lens, pos, end-pos)
	if err != nil {
		return err
	}
	d := Decbuf{B: lens}
	for k := from % GroupSize; k > 0; k-- {
		n := d.Uvarint()
		if n > uint64(sp.EndOffset-off) {
			return s.damaged(s.corrupt("line lengths", int64(s.lens.off+pos), "line %d does not fit its span", sp.FirstLine+from))
		}
		off += int64(n)
	}
	for rel := from; rel < sp.NumLines; rel++ {
		n := int64(d.Uvarint())
		if d.Err != nil || !s.lineFits(sp, off, n) {
			return s.damaged(s.corrupt("line lengths", int64(s.lens.off+pos), "line %d does not fit its span", sp.FirstLine+rel))
		}
		if !fn(sp.FirstLine+rel, off, n) {
			return nil
		}
		off += n
	}
	return nil
}

// Chunk is a line-aligned byte range of a span, for reading it in pieces.
type Chunk struct {
	Start, End int64  // file offsets
	FirstLine  uint32 // segment line id of the chunk's first line
}

// SpanChunks cuts span si into chunks of about maxBytes at restart points
// of the offset index, so each chunk's first line number is known.
func (s *Segment) SpanChunks(si int, maxBytes int64) ([]Chunk, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if si < 0 || si >= len(s.spans) {
		return nil, fmt.Errorf("span %d out of range", si)
	}
	sp := &s.spans[si]
	groups := (sp.NumLines + GroupSize - 1) / GroupSize
	out := []Chunk{{Start: sp.StartOffset, FirstLine: sp.FirstLine}}
	for g := uint32(1); g < groups; g++ {
		off, _, err := s.group(sp.FirstGroup + g)
		if err != nil {
			return nil, err
		}
		if off < out[len(out)-1].Start || off > sp.EndOffset {
			return nil, s.damaged(s.corrupt("line groups", int64(s.groups.off), "restart point %d out of order", sp.FirstGroup+g))
		}
		if off-out[len(out)-1].Start >= maxBytes {
			out[len(out)-1].End = off
			out = append(out, Chunk{Start: off, FirstLine: sp.FirstLine + g*GroupSize})
		}
	}
	out[len(out)-1].End = sp.EndOffset
	return out, nil
}
