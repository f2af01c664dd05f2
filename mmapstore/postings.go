package mmapstore

// Postings lists: decoding a term's lines, or only those in a candidate
// set, from the postings section. A list starts with uvarint(count<<1 |
// encoding) and uvarint(body length), so its bytes are verified before any
// is decoded.

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/logdex/logdex/mmapstore/wordwise"
)

// postingsList is a decoded list header with its verified body.
type postingsList struct {
	count uint64
	enc   uint64
	body  []byte
	off   uint64 // of the body in the section
}

// inlineIDs returns the line ids a reference holds in itself (one line, or
// two or three packed), ok false for a list reference.
func (s *Segment) inlineIDs(ref uint64) (ids []uint32, ok bool, err error) {
	switch {
	case ref&PostingsInline != 0:
		id := ref >> 1
		if id >= uint64(s.lines) {
			return nil, true, s.damaged(s.corrupt("term dictionary", -1, "inline line id %d beyond %d lines", id, s.lines))
		}
		return []uint32{uint32(id)}, true, nil
	case ref&postingsTag == PostingsPacked:
		ids, good := unpackIDs(ref>>2, s.lines)
		if !good {
			return nil, true, s.damaged(s.corrupt("term dictionary", -1, "bad packed line ids %#x for %d lines", ref>>2, s.lines))
		}
		return ids, true, nil
	}
	return nil, false, nil
}

// list reads the header and the (verified) body of the list at a list
// reference.
func (s *Segment) list(ref uint64) (postingsList, error) {
	l, n, err := s.listHead(ref)
	if err != nil {
		return l, err
	}
	l.body, err = s.read(&s.postings, l.off, n)
	return l, err
}

// listHeadMax is the most bytes a list's header takes.
const listHeadMax = 2 * binary.MaxVarintLen64

// headRange is where the header of the postings list at ref lies, for
// asking for it ahead: false for a reference that holds its ids itself
// (inline, packed) or points past the section (left for the reading to
// report).
func (s *Segment) headRange(ref uint64) (byteRange, bool) {
	off := ref >> 2
	if ref&postingsTag != 0 || off >= uint64(len(s.postings.data)) {
		return byteRange{}, false
	}
	return byteRange{off, min(listHeadMax, uint64(len(s.postings.data))-off)}, true
}

// listHead reads the header of the list at a list reference: the body's
// place and length n, not read yet (l.body nil).
func (s *Segment) listHead(ref uint64) (l postingsList, n uint64, err error) {
	if ref&postingsTag != 0 {
		return l, 0, s.damaged(s.corrupt("term dictionary", -1, "bad postings reference %#x", ref))
	}
	off := ref >> 2
	hdr, err := s.readTail(&s.postings, off, listHeadMax)
	if err != nil {
		return l, 0, err
	}
	d := Decbuf{B: hdr}
	h := d.Uvarint()
	n = d.Uvarint()
	l = postingsList{count: h >> 1, enc: h & 1, off: off + uint64(len(hdr)-d.Len())}
	if d.Err != nil || l.count > uint64(s.lines) || l.count < 2 {
		return l, 0, s.damaged(s.corrupt("postings", int64(s.postings.off+off), "bad list header"))
	}
	if l.enc == EncRoaring {
		l.off += pad8(s.postings.off + l.off)
	}
	return l, n, nil
}

// walkWindow is how many bytes of a uvarint list walkDeltas verifies at a
// time (two chunks).
const walkWindow = 2 * ChunkSize

// walkDeltas calls fn with the ids of the uvarint list at l (from
// listHead, n body bytes) that are at least from, in order, checking each,
// until fn says no more; fn also says the next id it wants at least, and
// the walk skips to it. The body is verified a window at a time as the
// walk reaches it: a walk that stops early checks (and touches) only the
// bytes it read.
func (s *Segment) walkDeltas(l postingsList, n uint64, from uint32, fn func(id uint32) (next uint32, more bool)) error {
	at := int64(s.postings.off + l.off)
	body, ok := slice(s.postings.data, l.off, n)
	switch {
	case !ok:
		_, err := s.read(&s.postings, l.off, n) // the out-of-bounds error
		return err
	case l.count > n:
		return s.damaged(s.corrupt("postings", at, "%d ids in %d bytes", l.count, n))
	}
	var id uint64
	var cur, end uint64 // body[cur:end] is verified and not yet decoded
	refill := func() error {
		if end-cur < binary.MaxVarintLen64 && end < n {
			step := min(n-end, walkWindow)
			if _, err := s.read(&s.postings, l.off+end, step); err != nil {
				return err
			}
			end += step
		}
		return nil
	}
	// near: eight gaps from here reached from, so no later eight do
	// until from moves (each gap is at least 1: one decoded takes g off the
	// distance and the next eight lose g and gain a gap). Trying again at
	// every id cost most of intersecting two common words' lists, whose
	// ids lie a few apart.
	near := false
	for i := uint64(0); i < l.count; i++ {
		if err := refill(); err != nil {
			return err
		}
		// Below from, eight one-byte gaps at a time (a time window's
		// lines lie deep in a common word's list, a rare word's next line
		// many ids ahead in a common one's): no continuation bit, no zero
		// gap, and their sum keeps the id below from.
		for !near && i > 0 && id < uint64(from) && i+8 < l.count && end-cur >= 8 {
			w := binary.LittleEndian.Uint64(body[cur:])
			if w&wordwise.Highs != 0 || wordwise.Zeros(w) != 0 {
				break
			}
			sum := byteSum(w)
			if id+sum >= uint64(from) {
				near = true
				break
			}
			id += sum
			cur += 8
			i += 8
			if err := refill(); err != nil {
				return err
			}
		}
		b := body[cur:end]
		// Inlined uvarint: most gaps fit one byte.
		var v uint64
		if len(b) > 0 && b[0] < 0x80 {
			v = uint64(b[0])
			cur++
		} else {
			k := 0
			if v, k = binary.Uvarint(b); k <= 0 {
				return s.damaged(s.corrupt("postings", at, "bad list entry"))
			}
			cur += uint64(k)
		}
		if i > 0 {
			if v == 0 {
				return s.damaged(s.corrupt("postings", at, "zero gap"))
			}
			v += id
		}
		if v >= uint64(s.lines) {
			return s.damaged(s.corrupt("postings", at, "line id %d beyond %d lines", v, s.lines))
		}
		id = v
		if id >= uint64(from) {
			next, more := fn(uint32(id))
			if !more {
				return nil
			}
			near = near && next == from
			from = next
		}
	}
	if cur != n {
		return s.damaged(s.corrupt("postings", at, "%v", errTrailing))
	}
	return nil
}

// DocFreq is the number of lines a postings reference holds.
func (s *Segment) DocFreq(ref uint64) (int, error) {
	if ids, ok, err := s.inlineIDs(ref); ok {
		return len(ids), err
	}
	hdr, err := s.readTail(&s.postings, ref>>2, binary.MaxVarintLen64)
	if err != nil {
		return 0, err
	}
	h, n := binary.Uvarint(hdr)
	if n <= 0 || h>>1 > uint64(s.lines) {
		return 0, s.damaged(s.corrupt("postings", int64(s.postings.off+ref>>2), "bad list header"))
	}
	return int(h >> 1), nil
}

// CountIn is how many lines of a postings reference lie in [lo, hi),
// counted without building the list's bitmap: the list's header says it
// for the whole segment; else the list is read for counting (NewCounter,
// which a caller counting several ranges keeps instead). Counting a common
// word's hits past a page built a bitmap of its every list (most of the
// cost of decoding it).
func (s *Segment) CountIn(ref uint64, lo, hi uint32) (uint64, error) {
	if lo == 0 && hi >= s.lines {
		c, err := s.DocFreq(ref)
		return uint64(c), err
	}
	c, err := s.NewCounter(ref, nil)
	return c.In(lo, hi), err
}

// A Counter counts the lines of one postings list in ranges of its
// segment: the list read once (a uvarint one decoded, a roaring one read in
// place), each count then a bisection or a rank.
type Counter struct {
	ids []uint32 // increasing
	bm  *roaring.Bitmap
}

// In is how many of the list's lines lie in [lo, hi).
func (c *Counter) In(lo, hi uint32) uint64 {
	if lo >= hi {
		return 0
	}
	if c.bm != nil {
		n := c.bm.Rank(hi - 1)
		if lo > 0 {
			n -= c.bm.Rank(lo - 1)
		}
		return n
	}
	from, _ := slices.BinarySearch(c.ids, lo)
	to, _ := slices.BinarySearch(c.ids, hi)
	return uint64(to - from)
}

// IDs is the storage of a Counter's decoded ids, for a later NewCounter to
// decode into once this one is done with.
func (c *Counter) IDs() []uint32 { return c.ids }

// NewCounter reads the list at ref for counting, decoding a uvarint list
// into buf's storage: the Counter is good while the segment is open and
// buf not used again.
func (s *Segment) NewCounter(ref uint64, buf []uint32) (c Counter, err error) {
	c.ids = buf[:0]
	if err := s.check(); err != nil {
		return c, err
	}
	if ids, ok, err := s.inlineIDs(ref); ok {
		c.ids = append(c.ids, ids...)
		return c, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("postings", &err)
	l, err := s.list(ref)
	if err != nil {
		return c, err
	}
	if l.enc == EncRoaring {
		bm, err := s.Postings(ref)
		c.bm = bm
		return c, err
	}
	c.ids, err = s.decodeIDs(l, c.ids)
	return c, err
}

// decodeIDs decodes the uvarint list l (read, with its body) into buf's
// storage.
func (s *Segment) decodeIDs(l postingsList, buf []uint32) ([]uint32, error) {
	d := Decbuf{B: l.body}
	ids, err := decodeDeltasTo(buf, &d, int(l.count), s.lines)
	if err == nil && d.Len() != 0 {
		err = errTrailing
	}
	if err != nil {
		return ids[:0], s.damaged(s.corrupt("postings", int64(s.postings.off+l.off), "%v", err))
	}
	return ids, nil
}

// Postings decodes a postings reference into a bitmap of line ids. Roaring
// lists are read in place from the mapping (copy-on-write): the result is
// valid only while the segment is open.
func (s *Segment) Postings(ref uint64) (bm *roaring.Bitmap, err error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if ids, ok, err := s.inlineIDs(ref); ok {
		if err != nil {
			return nil, err
		}
		return roaring.BitmapOf(ids...), nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("postings", &err)
	l, err := s.list(ref)
	if err != nil {
		return nil, err
	}
	at := int64(s.postings.off + l.off)
	if l.enc == EncDeltaVarint {
		buf := idBufs.Get().(*[]uint32)
		ids, err := s.decodeIDs(l, *buf)
		if err == nil {
			bm = bitmapOfSorted(ids) // (which keeps nothing of ids)
		}
		if cap(ids) <= maxPooledIDs {
			*buf = ids[:0]
			idBufs.Put(buf)
		}
		return bm, err
	}
	bm = roaring.New()
	if _, err := bm.FromBuffer(l.body); err != nil {
		return nil, s.damaged(s.corrupt("postings", at, "%v", err))
	}
	if err := checkRoaring(l.body, l.count, s.lines); err != nil {
		return nil, s.damaged(s.corrupt("postings", at, "%v", err))
	}
	return bm, nil
}

// idBufs recycles the ids a delta-coded list is decoded into on its way
// to a bitmap: a common word's lists were a few tens of KB of garbage per
// search.
var idBufs = sync.Pool{New: func() any { return new([]uint32) }}

// maxPooledIDs bounds the id buffers kept for reuse.
const maxPooledIDs = 1 << 16

// checkRoaring checks a roaring list as stored (the portable format that
// FromBuffer reads) in one pass over its containers: keys increase, an
// array's values increase, a run container's runs are sorted, apart and
// inside their container, a bitmap container holds as many bits as its
// header says, the ids number count and stay below lines. roaring's own
// Validate compares every run of a container with every other, which for
// the run-length lists of common numbers cost milliseconds a list; a pass
// over the ids instead would cost as much for a word on every line.
func checkRoaring(b []byte, count uint64, lines uint32) error {
	d := Decbuf{B: b}
	cookie := d.U32()
	var size int
	var runFlags []byte
	switch {
	case d.Err != nil:
		return fmt.Errorf("bitmap: %v", d.Err)
	case cookie&0xFFFF == 12347: // runs, arrays and bitmaps
		size = int(cookie>>16) + 1
		runFlags = d.Bytes((size + 7) / 8)
	case cookie == 12346: // arrays and bitmaps only
		size = int(d.U32())
	default:
		return fmt.Errorf("bitmap: unknown cookie %#x", cookie)
	}
	if d.Err != nil || size > 1<<16 {
		return fmt.Errorf("bitmap: bad header")
	}
	header := d.Bytes(4 * size)
	if runFlags == nil || size >= 4 {
		d.Bytes(4 * size) // offsets, not needed in a sequential read
	}
	var total uint64
	last := int64(-1) // the largest id so far
	for i := 0; i < size && d.Err == nil; i++ {
		key := int64(binary.LittleEndian.Uint16(header[4*i:]))
		card := int(binary.LittleEndian.Uint16(header[4*i+2:])) + 1
		if key<<16 <= last {
			return fmt.Errorf("bitmap: container keys out of order")
		}
		base := key << 16
		switch {
		case runFlags != nil && runFlags[i/8]&(1<<(i%8)) != 0:
			runs := d.Bytes(4 * int(d.U16()))
			n := 0
			for k := 0; k+4 <= len(runs); k += 4 {
				start := int64(binary.LittleEndian.Uint16(runs[k:]))
				length := int64(binary.LittleEndian.Uint16(runs[k+2:])) + 1
				if base+start <= last+1 && last >= base || start+length > 1<<16 {
					return fmt.Errorf("bitmap: runs overlap, touch or leave their container")
				}
				last = base + start + length - 1
				n += int(length)
			}
			if n == 0 {
				return fmt.Errorf("bitmap: empty run container")
			}
			card = n
		case card > 4096:
			words := d.Bytes(8192)
			n, top := 0, -1
			for w := 0; w+8 <= len(words); w += 8 {
				if v := binary.LittleEndian.Uint64(words[w:]); v != 0 {
					n += bits.OnesCount64(v)
					top = w*8 + 63 - bits.LeadingZeros64(v)
				}
			}
			if n != card {
				return fmt.Errorf("bitmap: container holds %d ids, its header says %d", n, card)
			}
			last = base + int64(top)
		default:
			vals := d.Bytes(2 * card)
			for k := 0; k+2 <= len(vals); k += 2 {
				v := base + int64(binary.LittleEndian.Uint16(vals[k:]))
				if v <= last {
					return fmt.Errorf("bitmap: ids out of order")
				}
				last = v
			}
		}
		total += uint64(card)
	}
	switch {
	case d.Err != nil:
		return fmt.Errorf("bitmap: %v", d.Err)
	case total != count:
		return fmt.Errorf("bitmap holds %d ids, its header says %d", total, count)
	case last >= int64(lines):
		return fmt.Errorf("line id %d beyond %d lines", last, lines)
	}
	return nil
}

// PostingsAnd returns the lines of a postings reference that are also in
// with, without building the whole list: uvarint lists are decoded and
// probed against with, roaring lists intersected in place. Intersecting a
// common word with a few candidates then costs a decode, not a bitmap.
func (s *Segment) PostingsAnd(ref uint64, with *roaring.Bitmap) (bm *roaring.Bitmap, err error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if ref&postingsTag != 0 {
		b, err := s.Postings(ref)
		if err != nil {
			return nil, err
		}
		b.And(with)
		return b, nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("postings", &err)
	l, n, err := s.listHead(ref)
	if err != nil {
		return nil, err
	}
	if l.enc == EncRoaring {
		all, err := s.Postings(ref)
		if err != nil {
			return nil, err
		}
		return roaring.And(all, with), nil
	}
	// A short list probes with (Contains per id); a long one is merged with
	// with's ids in two sorted walks, a few ns an id.
	if l.count*8 < with.GetCardinality() {
		if l.body, err = s.read(&s.postings, l.off, n); err != nil {
			return nil, err
		}
		d := Decbuf{B: l.body}
		ids, err := decodeDeltasTo(nil, &d, int(l.count), s.lines)
		if err != nil {
			return nil, s.damaged(s.corrupt("postings", int64(s.postings.off+l.off), "%v", err))
		}
		var kept []uint32
		for _, id := range ids {
			if with.Contains(id) {
				kept = append(kept, id)
			}
		}
		return bitmapOfSorted(kept), nil
	}
	want := with.ToArray()
	// Room for the usual result at once (grown by append, it was a tenth
	// of the merge); a larger one still grows.
	kept := make([]uint32, 0, min(uint64(len(want)), l.count, 1<<12))
	k := 0
	if len(want) > 0 {
		err = s.walkDeltas(l, n, want[0], func(id uint32) (uint32, bool) {
			for k < len(want) && want[k] < id {
				k++
			}
			if k < len(want) && want[k] == id {
				kept = append(kept, id)
				k++
			}
			if k == len(want) {
				return 0, false
			}
			return want[k], true
		})
	}
	if err != nil {
		return nil, err
	}
	return bitmapOfSorted(kept), nil
}

func pad8(off uint64) uint64 { return (8 - off%8) % 8 }

// bitmapOfSorted builds the bitmap of increasing ids. A list denser than
// one id in 64 goes through a plain bitset (one store per id, then whole
// containers at once): adding ids one by one cost most of counting a
// common word. A sparser one is laid out in roaring's portable format
// (array containers, or bitmap ones past 4096 ids) and read back with
// FromBuffer: a few ns an id against ~20 for BitmapOf, whose every Add
// searches and updates its container (planning a word of 5,000 lines
// over 9 segments spent 15% of an uncached page there).
func bitmapOfSorted(ids []uint32) *roaring.Bitmap {
	if len(ids) == 0 {
		return roaring.New()
	}
	if len(ids) >= 4096 && uint64(len(ids))*64 >= uint64(ids[len(ids)-1]) {
		words := make([]uint64, ids[len(ids)-1]/64+1)
		for _, id := range ids {
			words[id/64] |= 1 << (id % 64)
		}
		return roaring.FromDense(words, false)
	}
	// The containers: the ids under each distinct high 16 bits.
	type cont struct{ key, from, to int }
	var conts []cont
	for i := 0; i < len(ids); {
		key := ids[i] >> 16
		j := i + 1
		for j < len(ids) && ids[j]>>16 == key {
			j++
		}
		conts = append(conts, cont{int(key), i, j})
		i = j
	}
	const arrayMax = 4096 // roaring's largest array container
	size := 8 + 8*len(conts)
	for _, c := range conts {
		if n := c.to - c.from; n > arrayMax {
			size += 8192
		} else {
			size += 2 * n
		}
	}
	buf := make([]byte, size)
	le := binary.LittleEndian
	le.PutUint32(buf, 12346) // no run containers, offsets follow the keys
	le.PutUint32(buf[4:], uint32(len(conts)))
	off := 8 + 8*len(conts)
	for k, c := range conts {
		n := c.to - c.from
		le.PutUint16(buf[8+4*k:], uint16(c.key))
		le.PutUint16(buf[10+4*k:], uint16(n-1))
		le.PutUint32(buf[8+4*len(conts)+4*k:], uint32(off))
		if n > arrayMax {
			bits := buf[off : off+8192]
			for _, id := range ids[c.from:c.to] {
				lo := id & 0xFFFF
				bits[lo/8] |= 1 << (lo % 8)
			}
			off += 8192
			continue
		}
		for _, id := range ids[c.from:c.to] {
			le.PutUint16(buf[off:], uint16(id))
			off += 2
		}
	}
	bm := roaring.New()
	if _, err := bm.FromBuffer(buf); err != nil {
		// (Not reached: the layout above is valid by construction.)
		return roaring.BitmapOf(ids...)
	}
	return bm
}

// LineRange is the segment lines [Lo, Hi).
type LineRange struct{ Lo, Hi uint32 }

// PostingsIn returns the lines of a postings reference that lie in ranges
// (increasing, apart). A uvarint list is decoded only up to the end of
// the last range, without building the whole list: a time window over a
// common word then costs a walk over its gaps, not a bitmap of every line
// holding it. The list's bytes are verified as for Postings.
func (s *Segment) PostingsIn(ref uint64, ranges []LineRange) (*roaring.Bitmap, error) {
	if len(ranges) == 0 {
		return roaring.New(), s.check()
	}
	if ref&postingsTag == 0 {
		if bm, ok, err := s.deltasIn(ref, ranges); ok || err != nil {
			return bm, err
		}
	}
	// Inline ids and roaring lists: built whole (roaring in place).
	return s.PostingsAnd(ref, RangesBitmap(ranges))
}

// deltasIn is PostingsIn for a uvarint list (ok false: another encoding).
func (s *Segment) deltasIn(ref uint64, ranges []LineRange) (bm *roaring.Bitmap, ok bool, err error) {
	if err := s.check(); err != nil {
		return nil, true, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("postings", &err)
	l, n, err := s.listHead(ref)
	if err != nil || l.enc != EncDeltaVarint {
		return nil, err != nil, err
	}
	var kept []uint32
	k := 0
	err = s.walkDeltas(l, n, ranges[0].Lo, func(id uint32) (uint32, bool) {
		for k < len(ranges) && id >= ranges[k].Hi {
			k++
		}
		if k == len(ranges) {
			return 0, false
		}
		if id >= ranges[k].Lo {
			kept = append(kept, id)
		}
		return ranges[k].Lo, true
	})
	switch {
	case err != nil:
		return nil, true, err
	case len(kept) == 0:
		return roaring.New(), true, nil
	}
	return bitmapOfSorted(kept), true, nil
}

// RangesBitmap is the bitmap of the lines of ranges.
func RangesBitmap(ranges []LineRange) *roaring.Bitmap {
	bm := roaring.New()
	for _, r := range ranges {
		bm.AddRange(uint64(r.Lo), uint64(r.Hi))
	}
	return bm
}
