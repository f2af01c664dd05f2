package compressed

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// pointType says how to restart decoding at a checkpoint.
type pointType uint8

const (
	// pointStart: a stream (gzip member, zstd frame, bzip2 or xz stream)
	// begins at byte in; a fresh decoder starts there.
	pointStart pointType = iota
	// pointBlock: an independent restart inside a stream (a deflate block
	// with its window, a bzip2 block, an xz block).
	pointBlock
	// pointRaw: from byte in to the end the file is copied verbatim (gzip's
	// trailing garbage, which `gzip -cdf` prints).
	pointRaw
	numPointTypes
)

// point is one checkpoint: decoding can restart at compressed position
// (in, bit) and yields the decompressed stream from offset out on.
type point struct {
	out, in int64
	typ     pointType
	bit     uint8 // gzip: low bits of byte in already consumed; bzip2: the block magic's first bit (0 = MSB)

	window []byte // gzip block: the last ≤32 KiB of output before out, flate-compressed

	level      uint8  // bzip2 block: the stream's block-size digit, 1..9
	streamBits int64  // bzip2 block: bits from the block to the stream's end-of-stream magic; 0 when it has none (damaged stream)
	crc        uint32 // bzip2 block: the stream CRC over this block and the stream's later blocks

	check uint8 // xz block: the stream's check type
}

// Table is the list of checkpoints of one compressed file, made by an
// Indexer and stored in the index (see AppendBinary). It describes exactly
// the decompressed bytes the Indexer yielded.
type Table struct {
	Kind           Kind
	Size           int64 // decompressed bytes described (and yielded at index time)
	CompressedSize int64 // size of the compressed file indexed
	Interval       int64 // the requested checkpoint spacing, in decompressed bytes
	points         []point

	// Shadow is the table of the file's seekable copy (see NeedsShadow),
	// nil when it has none; ShadowSum is the copy's xxhash64, which names
	// its file.
	Shadow    *Table
	ShadowSum uint64
}

// Len is the number of checkpoints.
func (t *Table) Len() int { return len(t.points) }

// find returns the index of the last checkpoint at or before out.
func (t *Table) find(out int64) int {
	return sort.Search(len(t.points), func(i int) bool { return t.points[i].out > out }) - 1
}

// tableVersion is the first byte of an encoded Table;
// tableVersionShadow that of one followed by its seekable copy's.
const (
	tableVersion       = 1
	tableVersionShadow = 2
)

// Bounds the decoder enforces, so a hostile table cannot ask for much.
const (
	maxWindow           = 32 << 10         // deflate's history
	maxCompressedWindow = maxWindow + 1024 // a flate-stored 32 KiB window fits easily
	maxOffset           = 1 << 62
)

// AppendBinary appends the encoding documented in the package doc to dst.
func (t *Table) AppendBinary(dst []byte) []byte {
	version := byte(tableVersion)
	if t.Shadow != nil {
		version = tableVersionShadow
	}
	dst = append(dst, version, byte(t.Kind))
	dst = binary.AppendUvarint(dst, uint64(t.Size))
	dst = binary.AppendUvarint(dst, uint64(t.CompressedSize))
	dst = binary.AppendUvarint(dst, uint64(t.Interval))
	dst = binary.AppendUvarint(dst, uint64(len(t.points)))
	var prevOut, prevIn int64
	for _, p := range t.points {
		dst = append(dst, byte(p.typ))
		dst = binary.AppendUvarint(dst, uint64(p.out-prevOut))
		dst = binary.AppendUvarint(dst, uint64(p.in-prevIn))
		prevOut, prevIn = p.out, p.in
		if p.typ != pointBlock {
			continue
		}
		switch t.Kind {
		case Gzip:
			dst = append(dst, p.bit)
			dst = binary.AppendUvarint(dst, uint64(len(p.window)))
			dst = append(dst, p.window...)
		case Bzip2:
			dst = append(dst, p.bit, p.level)
			dst = binary.AppendUvarint(dst, uint64(p.streamBits))
			dst = binary.BigEndian.AppendUint32(dst, p.crc)
		case XZ:
			dst = append(dst, p.check)
		}
	}
	if t.Shadow != nil {
		dst = binary.LittleEndian.AppendUint64(dst, t.ShadowSum)
		sh := t.Shadow.AppendBinary(nil)
		dst = binary.AppendUvarint(dst, uint64(len(sh)))
		dst = append(dst, sh...)
	}
	return dst
}

// tableReader reads an encoded table, remembering the first error.
type tableReader struct {
	b   []byte
	off int
	err error
}

func (r *tableReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("compressed: bad table at byte %d: %s", r.off, fmt.Sprintf(format, args...))
	}
}

func (r *tableReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail("unexpected end")
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

// uvarint reads a varint no larger than limit.
func (r *tableReader) uvarint(what string, limit int64) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 || n > 1 && r.b[r.off+n-1] == 0 {
		r.fail("bad varint for %s", what) // overflowing, cut, or not minimal
		return 0
	}
	if v > uint64(limit) {
		r.fail("%s %d exceeds %d", what, v, limit)
		return 0
	}
	r.off += n
	return int64(v)
}

func (r *tableReader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b)-r.off {
		r.fail("unexpected end")
		return nil
	}
	b := append([]byte(nil), r.b[r.off:r.off+n]...)
	r.off += n
	return b
}

// DecodeTable decodes an encoding made by AppendBinary. Every field is
// checked; any bad byte gives an error, never a panic or a huge allocation.
func DecodeTable(b []byte) (*Table, error) {
	r := &tableReader{b: b}
	version := r.byte()
	if r.err == nil && version != tableVersion && version != tableVersionShadow {
		return nil, fmt.Errorf("compressed: unknown table version %d", version)
	}
	t := &Table{Kind: Kind(r.byte())}
	if r.err == nil && (t.Kind == None || t.Kind > XZ) {
		r.fail("unknown kind %d", t.Kind)
	}
	t.Size = r.uvarint("size", maxOffset)
	t.CompressedSize = r.uvarint("compressed size", maxOffset)
	t.Interval = r.uvarint("interval", maxOffset)
	// Every checkpoint takes at least three bytes, which bounds the count.
	n := r.uvarint("checkpoint count", int64(len(b)-r.off)/3)
	if r.err == nil && (n == 0) != (t.CompressedSize == 0) {
		r.fail("%d checkpoints for %d compressed bytes", n, t.CompressedSize)
	}
	if r.err == nil && n == 0 && t.Size != 0 {
		r.fail("no checkpoints for %d bytes", t.Size)
	}
	if r.err == nil {
		t.points = make([]point, 0, n)
	}
	var prevOut, prevIn int64
	for i := int64(0); i < n && r.err == nil; i++ {
		var p point
		p.typ = pointType(r.byte())
		p.out = prevOut + r.uvarint("decompressed offset delta", t.Size-prevOut)
		p.in = prevIn + r.uvarint("compressed offset delta", t.CompressedSize-prevIn)
		prevOut, prevIn = p.out, p.in
		if r.err != nil {
			break
		}
		if i == 0 && (p.typ != pointStart || p.out != 0 || p.in != 0) {
			r.fail("first checkpoint is not the start of the file")
		}
		switch {
		case p.typ >= numPointTypes:
			r.fail("unknown checkpoint type %d", p.typ)
		case p.typ == pointRaw && t.Kind != Gzip:
			r.fail("verbatim checkpoint in a %s table", t.Kind)
		case p.typ == pointBlock && t.Kind == Zstd:
			r.fail("block checkpoint in a zstd table")
		case p.typ == pointBlock:
			decodeBlockPoint(r, t, &p)
		}
		t.points = append(t.points, p)
	}
	if r.err == nil && version == tableVersionShadow {
		decodeShadow(r, t)
	}
	if r.err == nil && r.off != len(b) {
		r.fail("%d trailing bytes", len(b)-r.off)
	}
	if r.err != nil {
		return nil, r.err
	}
	return t, nil
}

func decodeBlockPoint(r *tableReader, t *Table, p *point) {
	left := t.CompressedSize - p.in // compressed bytes from the checkpoint on
	switch t.Kind {
	case Gzip:
		if p.bit = r.byte(); p.bit > 7 {
			r.fail("bit offset %d", p.bit)
		}
		p.window = r.bytes(int(r.uvarint("window length", maxCompressedWindow)))
	case Bzip2:
		if p.bit = r.byte(); p.bit > 7 {
			r.fail("bit offset %d", p.bit)
		}
		if p.level = r.byte(); p.level < 1 || p.level > 9 {
			r.fail("bzip2 level %d", p.level)
		}
		p.streamBits = r.uvarint("stream bits", min(maxOffset, left*8))
		if c := r.bytes(4); c != nil {
			p.crc = binary.BigEndian.Uint32(c)
		}
	case XZ:
		if p.check = r.byte(); p.check > 15 {
			r.fail("xz check type %d", p.check)
		}
	}
	if r.err == nil && left <= 0 {
		r.fail("block checkpoint at the end of the file")
	}
}

// decodeShadow reads the seekable copy's sum and table after a table's
// checkpoints: a zstd table of frame starts only, describing the same
// decompressed bytes, itself without a copy.
func decodeShadow(r *tableReader, t *Table) {
	sum := r.bytes(8)
	sh := r.bytes(int(r.uvarint("shadow table length", int64(len(r.b)-r.off))))
	if r.err != nil {
		return
	}
	if len(sh) == 0 || sh[0] != tableVersion {
		r.fail("shadow table not of version %d", tableVersion)
		return
	}
	st, err := DecodeTable(sh)
	if err != nil {
		r.fail("shadow table: %v", err)
		return
	}
	if st.Kind != Zstd || st.Size != t.Size {
		r.fail("shadow table of kind %v and size %d for %d bytes", st.Kind, st.Size, t.Size)
		return
	}
	t.Shadow, t.ShadowSum = st, binary.LittleEndian.Uint64(sum)
}
