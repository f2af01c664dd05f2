package compressed

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"

	"github.com/ulikunitz/xz/lzma"
)

// xzStream decodes the xz container (streams, blocks, index, footer, padding;
// xz-file-format 1.2) around ulikunitz/xz's LZMA2 decoder. The container
// is parsed here, not by that package's xz reader, for two reasons: every
// xz block starts with a dictionary reset, so each block header is a
// checkpoint needing no window (xz -T0 and pixz write one block per few
// MiB); and the block header's dictionary size must be checked against
// MaxDecoderWindow before the decoder allocates it.
type xzStream struct {
	in  *input
	rec *recorder

	state    xzState
	out      int64
	check    uint8 // the current stream's check type
	flags    [2]byte
	whole    bool // the stream was decoded from its header: its index can be checked
	blocks   []xzRecord
	lz       io.Reader
	hash     hash.Hash
	blk      xzBlock
	streams  int
	err      error
	scratch  [64]byte
	crc64tab *crc64.Table
}

type xzState uint8

const (
	xzStreamHeader xzState = iota
	xzBlockOrIndex
	xzBlockData
)

// xzRecord is one index record: a block's unpadded and uncompressed sizes.
type xzRecord struct{ unpadded, uncompressed int64 }

// xzBlock is the block being decoded.
type xzBlock struct {
	start, dataStart int64 // compressed offsets of its header and data
	headerSize       int64
	compressedSize   int64 // -1 if the header does not say
	uncompressedSize int64 // -1 if the header does not say
	out              int64 // bytes yielded
}

var xzFooterMagic = []byte("YZ")

func newXZStream(f io.ReaderAt, size int64, rec *recorder) *xzStream {
	return &xzStream{in: newInput(f, size), rec: rec, crc64tab: crc64.MakeTable(crc64.ECMA)}
}

func (x *xzStream) reset(p point) error {
	x.out, x.err, x.blocks, x.streams = p.out, nil, x.blocks[:0], 0
	x.in.seek(p.in)
	if p.typ == pointStart {
		x.state = xzStreamHeader
		return nil
	}
	x.check, x.whole, x.state = p.check, false, xzBlockOrIndex
	x.streams = 1
	return nil
}

func (x *xzStream) Read(p []byte) (int, error) {
	for x.err == nil {
		switch x.state {
		case xzStreamHeader:
			x.err = x.streamHeader()
		case xzBlockOrIndex:
			x.err = x.blockOrIndex()
		case xzBlockData:
			n, err := x.lz.Read(p)
			x.out += int64(n)
			x.blk.out += int64(n)
			x.hash.Write(p[:n])
			if err == io.EOF {
				err = x.blockEnd()
			} else if err != nil {
				err = x.lzmaErr(err)
			}
			x.err = err
			if n > 0 {
				return n, nil
			}
		}
	}
	return 0, x.err
}

func (x *xzStream) lzmaErr(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
		return truncated(XZ, x.in.size)
	}
	return &CorruptError{Kind: XZ, Offset: x.in.pos(), Err: err}
}

// streamHeader reads a stream header, or the end of the file after stream
// padding (zero bytes in multiples of four).
func (x *xzStream) streamHeader() error {
	at := x.in.pos()
	if x.streams > 0 {
		zeros := 0
		for {
			b, err := x.in.br.ReadByte()
			if err == io.EOF {
				if zeros%4 != 0 {
					return corrupt(XZ, at, "stream padding of %d bytes is not a multiple of 4", zeros)
				}
				return io.EOF
			}
			if err != nil {
				return err
			}
			if b != 0 {
				_ = x.in.br.UnreadByte()
				break
			}
			zeros++
		}
		if zeros%4 != 0 {
			return corrupt(XZ, at, "stream padding of %d bytes is not a multiple of 4", zeros)
		}
		at = x.in.pos()
	}
	h := x.scratch[:12]
	if err := x.in.readFull(XZ, h); err != nil {
		if x.streams > 0 && !bytes.HasPrefix(xzMagic, h[:min(len(h), int(x.in.pos()-at))]) {
			return &CorruptError{Kind: XZ, Offset: at, Err: ErrTrailingGarbage}
		}
		return err
	}
	if !bytes.Equal(h[:6], xzMagic) {
		if x.streams > 0 {
			return &CorruptError{Kind: XZ, Offset: at, Err: ErrTrailingGarbage}
		}
		return corrupt(XZ, at, "bad stream header magic")
	}
	if crc32.ChecksumIEEE(h[6:8]) != binary.LittleEndian.Uint32(h[8:]) {
		return corrupt(XZ, at+6, "stream header CRC mismatch")
	}
	if h[6] != 0 || h[7]&0xf0 != 0 {
		return corrupt(XZ, at+6, "unsupported stream flags % x", h[6:8])
	}
	if x.rec.due(x.out) {
		x.rec.add(point{out: x.out, in: at, typ: pointStart})
	}
	copy(x.flags[:], h[6:8])
	x.check, x.whole, x.blocks = h[7], true, x.blocks[:0]
	x.streams++
	x.state = xzBlockOrIndex
	return nil
}

// xzCheckSize is the size of each check type (xz-file-format 2.1.1.2).
func xzCheckSize(t uint8) int {
	if t == 0 {
		return 0
	}
	return 4 << ((t - 1) / 3)
}

func (x *xzStream) newHash() hash.Hash {
	switch x.check {
	case 1:
		return crc32.NewIEEE()
	case 4:
		return crc64.New(x.crc64tab)
	case 10:
		return sha256.New()
	}
	return nil // none, or a check xz itself only warns about: skipped
}

// blockOrIndex reads a block header and starts its LZMA2 data, or reads
// the index and footer that end the stream.
func (x *xzStream) blockOrIndex() error {
	at := x.in.pos()
	first, err := x.in.br.ReadByte()
	if err != nil {
		return inputErr(XZ, x.in.size, err)
	}
	if first == 0 {
		return x.indexAndFooter(at)
	}
	hsize := (int(first) + 1) * 4
	h := make([]byte, hsize)
	h[0] = first
	if err := x.in.readFull(XZ, h[1:]); err != nil {
		return err
	}
	if crc32.ChecksumIEEE(h[:hsize-4]) != binary.LittleEndian.Uint32(h[hsize-4:]) {
		return corrupt(XZ, at, "block header CRC mismatch")
	}
	blk := xzBlock{start: at, dataStart: at + int64(hsize), headerSize: int64(hsize), compressedSize: -1, uncompressedSize: -1}
	r := &sliceReader{b: h[2 : hsize-4]}
	flags := h[1]
	if flags&0x3c != 0 {
		return corrupt(XZ, at+1, "reserved block flags %#x", flags)
	}
	if flags&0x40 != 0 {
		blk.compressedSize = r.varint()
	}
	if flags&0x80 != 0 {
		blk.uncompressedSize = r.varint()
	}
	var dictCap int64 = -1
	for range int(flags&3) + 1 {
		id, propSize := r.varint(), r.varint()
		props := r.take(propSize)
		if r.bad {
			break
		}
		if id != 0x21 || len(props) != 1 {
			return corrupt(XZ, at, "unsupported filter %#x (only LZMA2 is)", id)
		}
		if dictCap, err = lzma.DecodeDictCap(props[0]); err != nil {
			return corrupt(XZ, at, "%v", err)
		}
	}
	if r.bad || dictCap < 0 || !allZero(r.b[r.off:]) {
		return corrupt(XZ, at, "bad block header")
	}
	if flags&3 != 0 {
		return corrupt(XZ, at, "filter chains other than a lone LZMA2 are unsupported")
	}
	if dictCap > MaxDecoderWindow {
		return corrupt(XZ, at, "dictionary of %d bytes exceeds the %d-byte limit", dictCap, MaxDecoderWindow)
	}
	if x.rec.due(x.out) {
		x.rec.add(point{out: x.out, in: at, typ: pointBlock, check: x.check})
	}
	lz, err := lzma.Reader2Config{DictCap: int(max(dictCap, lzma.MinDictCap))}.NewReader2(x.in.br)
	if err != nil {
		return x.lzmaErr(err)
	}
	x.lz, x.blk, x.hash = lz, blk, x.newHash()
	if x.hash == nil {
		x.hash = nopHash{}
	}
	x.state = xzBlockData
	return nil
}

// blockEnd checks the block's sizes, padding and check after its data.
func (x *xzStream) blockEnd() error {
	b := &x.blk
	csize := x.in.pos() - b.dataStart
	if b.compressedSize >= 0 && b.compressedSize != csize {
		return corrupt(XZ, b.start, "block compressed size %d, header says %d", csize, b.compressedSize)
	}
	if b.uncompressedSize >= 0 && b.uncompressedSize != b.out {
		return corrupt(XZ, b.start, "block uncompressed size %d, header says %d", b.out, b.uncompressedSize)
	}
	pad := int((4 - csize%4) % 4)
	tail := x.scratch[:pad+xzCheckSize(x.check)]
	if err := x.in.readFull(XZ, tail); err != nil {
		return err
	}
	if !allZero(tail[:pad]) {
		return corrupt(XZ, b.dataStart+csize, "non-zero block padding")
	}
	if sum := x.hash.Sum(nil); len(sum) > 0 {
		got := tail[pad:]
		if x.check != 10 { // CRC32 and CRC64 are stored little-endian
			slicesReverse(sum)
		}
		if !bytes.Equal(sum, got) {
			return corrupt(XZ, b.dataStart+csize+int64(pad), "block check mismatch")
		}
	}
	x.blocks = append(x.blocks, xzRecord{unpadded: b.headerSize + csize + int64(xzCheckSize(x.check)), uncompressed: b.out})
	x.state = xzBlockOrIndex
	return nil
}

// indexAndFooter reads the index (its indicator byte at `at` was read)
// and the stream footer, checking them against the blocks seen.
func (x *xzStream) indexAndFooter(at int64) error {
	crc := crc32.NewIEEE()
	crc.Write([]byte{0})
	br := &hashByteReader{r: x.in.br, h: crc}
	n, err := readXZVarint(br)
	if err != nil {
		return x.indexErr(at, err)
	}
	if x.whole && n != uint64(len(x.blocks)) {
		return corrupt(XZ, at, "index lists %d blocks, the stream has %d", n, len(x.blocks))
	}
	for i := range n {
		u, err1 := readXZVarint(br)
		c, err2 := readXZVarint(br)
		if err = errors.Join(err1, err2); err != nil {
			return x.indexErr(at, err)
		}
		if x.whole && (int64(u) != x.blocks[i].unpadded || int64(c) != x.blocks[i].uncompressed) {
			return corrupt(XZ, at, "index record %d does not match block", i)
		}
	}
	for br.n%4 != 3 { // indicator byte + fields + padding is a multiple of 4
		b, err := br.ReadByte()
		if err != nil {
			return x.indexErr(at, err)
		}
		if b != 0 {
			return corrupt(XZ, at, "non-zero index padding")
		}
	}
	indexSize := br.n + 1 + 4
	want := crc.Sum32()
	tail := x.scratch[:4+12]
	if err := x.in.readFull(XZ, tail); err != nil {
		return err
	}
	if binary.LittleEndian.Uint32(tail[:4]) != want {
		return corrupt(XZ, at, "index CRC mismatch")
	}
	f := tail[4:]
	switch {
	case crc32.ChecksumIEEE(f[4:10]) != binary.LittleEndian.Uint32(f[:4]):
		return corrupt(XZ, at+indexSize, "stream footer CRC mismatch")
	case !bytes.Equal(f[10:], xzFooterMagic):
		return corrupt(XZ, at+indexSize, "bad stream footer magic")
	case (int64(binary.LittleEndian.Uint32(f[4:8]))+1)*4 != indexSize:
		return corrupt(XZ, at+indexSize, "footer's index size does not match")
	case x.whole && !bytes.Equal(f[8:10], x.flags[:]):
		return corrupt(XZ, at+indexSize, "footer flags differ from the header's")
	}
	x.state = xzStreamHeader
	return nil
}

func (x *xzStream) indexErr(at int64, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return truncated(XZ, x.in.size)
	}
	return corrupt(XZ, at, "index: %v", err)
}

// readXZVarint reads an xz multibyte integer (at most 9 bytes, minimal).
func readXZVarint(r io.ByteReader) (uint64, error) {
	var v uint64
	for i := range 9 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		if i > 0 && b == 0 {
			return 0, errors.New("non-minimal integer")
		}
		v |= uint64(b&0x7f) << (7 * i)
		if b&0x80 == 0 {
			return v, nil
		}
	}
	return 0, errors.New("integer longer than 9 bytes")
}

// sliceReader reads xz integers from a block header.
type sliceReader struct {
	b   []byte
	off int
	bad bool
}

func (s *sliceReader) ReadByte() (byte, error) {
	if s.off >= len(s.b) {
		return 0, io.ErrUnexpectedEOF
	}
	s.off++
	return s.b[s.off-1], nil
}

func (s *sliceReader) varint() int64 {
	v, err := readXZVarint(s)
	if err != nil || v > maxOffset {
		s.bad = true
	}
	return int64(v)
}

func (s *sliceReader) take(n int64) []byte {
	if s.bad || n > int64(len(s.b)-s.off) {
		s.bad = true
		return nil
	}
	s.off += int(n)
	return s.b[s.off-int(n) : s.off]
}

// hashByteReader hashes and counts the bytes read through it.
type hashByteReader struct {
	r io.ByteReader
	h hash.Hash32
	n int64
}

func (h *hashByteReader) ReadByte() (byte, error) {
	b, err := h.r.ReadByte()
	if err == nil {
		h.h.Write([]byte{b})
		h.n++
	}
	return b, err
}

type nopHash struct{}

func (nopHash) Write(p []byte) (int, error) { return len(p), nil }
func (nopHash) Sum(b []byte) []byte         { return b }
func (nopHash) Reset()                      {}
func (nopHash) Size() int                   { return 0 }
func (nopHash) BlockSize() int              { return 1 }

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func slicesReverse(b []byte) {
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
}
