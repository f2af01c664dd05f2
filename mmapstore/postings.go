package mmapstore

// Postings lists: decoding a term's lines, or only those in a candidate
// set, from the postings section.

import (
	"encoding/binary"
	"runtime/debug"

	"github.com/RoaringBitmap/roaring/v2"
)

// DocFreq is the number of lines a postings reference holds.
func (s *Segment) DocFreq(ref uint64) (int, error) {
	if ref&PostingsInline != 0 {
		return 1, nil
	}
	if ref>>1 >= uint64(len(s.postings)) {
		return 0, s.corrupt("postings", int64(ref>>1), "reference out of bounds")
	}
	d := Decbuf{B: s.postings[ref>>1:]}
	h := d.Uvarint()
	if d.Err != nil || h>>1 > uint64(s.lines) {
		return 0, s.corrupt("postings", int64(ref>>1), "bad list header")
	}
	return int(h >> 1), nil
}

// Postings decodes a postings reference into a bitmap of line ids. Roaring
// lists are read in place from the mapping (copy-on-write): the result is
// valid only while the segment is open.
func (s *Segment) Postings(ref uint64) (bm *roaring.Bitmap, err error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if ref&PostingsInline != 0 {
		id := ref >> 1
		if id >= uint64(s.lines) {
			return nil, s.corrupt("term dictionary", -1, "inline line id %d beyond %d lines", id, s.lines)
		}
		return roaring.BitmapOf(uint32(id)), nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("postings", &err)
	off := ref >> 1
	if off >= uint64(len(s.postings)) {
		return nil, s.corrupt("postings", int64(off), "reference out of bounds")
	}
	d := Decbuf{B: s.postings[off:]}
	h := d.Uvarint()
	count := h >> 1
	if d.Err != nil || count > uint64(s.lines) || count < 2 {
		return nil, s.corrupt("postings", int64(off), "bad list header")
	}
	switch h & 1 {
	case EncDeltaVarint:
		ids, err := decodeDeltas(&d, int(count), s.lines)
		if err != nil {
			return nil, s.corrupt("postings", int64(off), "%v", err)
		}
		return roaring.BitmapOf(ids...), nil
	default: // EncRoaring
		n := d.Uvarint()
		if d.Err != nil {
			return nil, s.corrupt("postings", int64(off), "%v", d.Err)
		}
		start := off + uint64(len(s.postings[off:])-d.Len())
		start += pad8(s.postOff + start)
		buf, ok := slice(s.postings, start, n)
		if !ok {
			return nil, s.corrupt("postings", int64(off), "bitmap of %d bytes out of bounds", n)
		}
		bm := roaring.New()
		if _, err := bm.FromBuffer(buf); err != nil {
			return nil, s.corrupt("postings", int64(start), "%v", err)
		}
		if err := bm.Validate(); err != nil {
			return nil, s.corrupt("postings", int64(start), "%v", err)
		}
		if bm.GetCardinality() != count || (count > 0 && bm.Maximum() >= s.lines) {
			return nil, s.corrupt("postings", int64(start), "bitmap does not match its header")
		}
		return bm, nil
	}
}

// PostingsAnd returns the lines of a postings reference that are also in
// with, without building the whole list: uvarint lists are decoded and
// probed against with, roaring lists intersected in place. Intersecting a
// common word with a few candidates then costs a decode, not a bitmap.
func (s *Segment) PostingsAnd(ref uint64, with *roaring.Bitmap) (bm *roaring.Bitmap, err error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if ref&PostingsInline != 0 {
		b, err := s.Postings(ref)
		if err != nil {
			return nil, err
		}
		b.And(with)
		return b, nil
	}
	off := ref >> 1
	if off >= uint64(len(s.postings)) {
		return nil, s.corrupt("postings", int64(off), "reference out of bounds")
	}
	d := Decbuf{B: s.postings[off:]}
	h := d.Uvarint()
	if d.Err != nil || h&1 != EncDeltaVarint {
		all, err := s.Postings(ref)
		if err != nil {
			return nil, err
		}
		return roaring.And(all, with), nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("postings", &err)
	count := h >> 1
	if count > uint64(s.lines) || count < 2 || count > uint64(d.Len()) {
		return nil, s.corrupt("postings", int64(off), "bad list header")
	}
	// A short list probes with (Contains per id); a long one is merged with
	// with's ids in two sorted walks, a few ns an id.
	if count*8 < with.GetCardinality() {
		var kept []uint32
		ids, err := decodeDeltas(&d, int(count), s.lines)
		if err != nil {
			return nil, s.corrupt("postings", int64(off), "%v", err)
		}
		for _, id := range ids {
			if with.Contains(id) {
				kept = append(kept, id)
			}
		}
		return roaring.BitmapOf(kept...), nil
	}
	want := with.ToArray()
	var kept []uint32
	var id uint64
	k := 0
	b := d.B
	for i := uint64(0); i < count && k < len(want); i++ {
		// Inlined uvarint: most gaps fit one byte.
		var v uint64
		if len(b) > 0 && b[0] < 0x80 {
			v, b = uint64(b[0]), b[1:]
		} else {
			n := 0
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return nil, s.corrupt("postings", int64(off), "bad list entry")
			}
			b = b[n:]
		}
		if i > 0 {
			if v == 0 {
				return nil, s.corrupt("postings", int64(off), "zero gap")
			}
			v += id
		}
		if v >= uint64(s.lines) {
			return nil, s.corrupt("postings", int64(off), "bad list entry")
		}
		id = v
		for k < len(want) && uint64(want[k]) < id {
			k++
		}
		if k < len(want) && uint64(want[k]) == id {
			kept = append(kept, uint32(id))
			k++
		}
	}
	return roaring.BitmapOf(kept...), nil
}

func pad8(off uint64) uint64 { return (8 - off%8) % 8 }
