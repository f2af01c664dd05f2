package compressed

import (
	"compress/bzip2"
	"encoding/binary"
	"errors"
	"io"
	"math/bits"
)

// bzip2Stream decodes bzip2 with the standard library and checkpoints every
// block (up to 900 kB of input each, independent of the others).
//
// The library exposes no positions, but it reads its input byte by byte
// from an io.ByteReader and decodes a whole block before returning any of
// its bytes, one block per Read at most. So a Read that consumes input and
// returns data has just started a block whose 48-bit magic begins in the
// last byte consumed before that Read: at one of 8 bit positions, told
// apart by the magic itself (neither magic matches itself or the other at
// a shift under 8 bits; a test checks). A block is resumed by feeding the
// library a made-up stream: a "BZh" header, the file's bits from the block
// to the end of its stream, and an end-of-stream marker whose CRC covers
// only those blocks (stored in the checkpoint, since the stream CRC is a
// rotate-and-xor fold of the block CRCs).
type bzip2Stream struct {
	in  *input
	rec *recorder

	r    io.Reader
	out  int64
	err  error
	done bool

	// Index time: the stream being decoded.
	fold    uint32 // stream CRC fold of the blocks so far
	nblocks int
	level   uint8
	pending []pendingBzip2 // checkpoints in this stream awaiting its end
	synth   synthBzip2
}

// pendingBzip2 is a checkpoint whose CRC and length are known at its
// stream's end.
type pendingBzip2 struct {
	idx    int    // into rec.points
	prefix uint32 // stream fold before the checkpoint's block
	block  int    // the block's number in its stream
}

const (
	bzip2BlockMagic = 0x314159265359
	bzip2EOSMagic   = 0x177245385090
)

func newBzip2Stream(f io.ReaderAt, size int64, rec *recorder) *bzip2Stream {
	return &bzip2Stream{in: newInput(f, size), rec: rec}
}

func (b *bzip2Stream) reset(p point) error {
	b.out, b.err, b.done, b.fold, b.nblocks, b.pending = p.out, nil, false, 0, 0, b.pending[:0]
	b.in.seek(p.in)
	if p.typ == pointStart {
		b.r = bzip2.NewReader(b.in.br)
		return nil
	}
	b.synth = synthBzip2{src: b.in.br, skip: uint(p.bit), left: p.streamBits, eos: p.streamBits > 0, crc: p.crc}
	if end := 8*p.in + int64(p.bit) + p.streamBits; b.synth.eos {
		// The file's own end-of-stream magic, CRC and padding follow the
		// copied bits; the next stream starts after them.
		b.synth.after = (end+80+7)/8 - (end+7)/8
	}
	b.synth.emit(uint64('B')<<24|uint64('Z')<<16|uint64('h')<<8|uint64('0'+p.level), 32)
	b.r = bzip2.NewReader(&b.synth)
	return nil
}

func (b *bzip2Stream) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	before := b.in.pos()
	n, err := b.r.Read(p)
	if b.rec != nil && n > 0 && b.in.pos() > before {
		b.blockStarted(before)
	}
	b.out += int64(n)
	if err != nil {
		b.err = b.bzip2Err(err)
		if b.rec != nil {
			b.finalStreamEnd(err)
		}
	}
	return n, b.err
}

func (b *bzip2Stream) bzip2Err(err error) error {
	if err == io.EOF {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		if b.strayLastByte() {
			return &CorruptError{Kind: Bzip2, Offset: b.in.size - 1, Err: ErrTrailingGarbage}
		}
		return truncated(Bzip2, b.in.size)
	}
	var se bzip2.StructuralError
	if errors.As(err, &se) && string(se) == "bad magic value in continuation file" {
		return &CorruptError{Kind: Bzip2, Offset: b.in.pos() - 2, Err: ErrTrailingGarbage}
	}
	return &CorruptError{Kind: Bzip2, Offset: b.in.pos(), Err: err}
}

// magicAt reads the 48 bits at bit position q of the file.
func (b *bzip2Stream) magicAt(q int64) uint64 {
	if q < 0 {
		return 0
	}
	var buf [8]byte
	_, _ = b.in.f.ReadAt(buf[:], q/8) // a short read leaves zeros: no magic
	return binary.BigEndian.Uint64(buf[:]) << (q % 8) >> 16
}

// blockStarted records the block that the Read which began at compressed
// byte `before` started, if a checkpoint is due.
func (b *bzip2Stream) blockStarted(before int64) {
	q := int64(-1)
	if before == 0 {
		b.newStream(0)
		q = 32
	} else {
		for l := int64(0); l < 8 && q < 0; l++ {
			switch b.magicAt(8*before - l) {
			case bzip2BlockMagic:
				q = 8*before - l
			case bzip2EOSMagic:
				q = b.streamsFrom(8*before - l)
			}
		}
	}
	if q < 0 || b.magicAt(q) != bzip2BlockMagic {
		return // cannot place it; the previous checkpoint serves
	}
	var crcBuf [8]byte
	_, _ = b.in.f.ReadAt(crcBuf[:], (q+48)/8)
	crc := uint32(binary.BigEndian.Uint64(crcBuf[:]) << ((q + 48) % 8) >> 32)
	if b.rec.due(b.out) {
		b.pending = append(b.pending, pendingBzip2{idx: len(b.rec.points), prefix: b.fold, block: b.nblocks})
		b.rec.add(point{out: b.out, in: q / 8, bit: uint8(q % 8), typ: pointBlock, level: b.level})
	}
	b.fold = bits.RotateLeft32(b.fold, 1) ^ crc
	b.nblocks++
}

// streamsFrom closes the stream whose end-of-stream magic is at bit e and
// walks the (possibly empty) streams after it; it returns the bit position
// of the next block's magic, or -1.
func (b *bzip2Stream) streamsFrom(e int64) int64 {
	for {
		b.streamEnd(e)
		h := (e + 80 + 7) / 8
		var head [4]byte
		if _, err := b.in.f.ReadAt(head[:], h); err != nil || string(head[:3]) != "BZh" || head[3] < '1' || head[3] > '9' {
			return -1
		}
		b.newStream(h)
		switch b.magicAt(8*h + 32) {
		case bzip2BlockMagic:
			return 8*h + 32
		case bzip2EOSMagic:
			e = 8*h + 32
		default:
			return -1
		}
	}
}

func (b *bzip2Stream) newStream(h int64) {
	var head [4]byte
	_, _ = b.in.f.ReadAt(head[:], h)
	b.level, b.fold, b.nblocks, b.pending = head[3]-'0', 0, 0, b.pending[:0]
	if b.rec.due(b.out) && h > 0 {
		b.rec.add(point{out: b.out, in: h, typ: pointStart})
	}
}

// streamEnd completes the pending checkpoints of the stream whose
// end-of-stream magic is at bit e.
func (b *bzip2Stream) streamEnd(e int64) {
	for _, p := range b.pending {
		cp := &b.rec.points[p.idx]
		cp.streamBits = e - (8*cp.in + int64(cp.bit))
		cp.crc = b.fold ^ bits.RotateLeft32(p.prefix, (b.nblocks-p.block)%32)
	}
	b.pending = b.pending[:0]
}

// finalStreamEnd finds the last stream's end after the library stopped
// with err: at the end of the file, or 2 bytes before where garbage begins.
func (b *bzip2Stream) finalStreamEnd(err error) {
	end := b.in.size
	var ce *CorruptError
	switch {
	case errors.As(b.err, &ce) && errors.Is(ce, ErrTrailingGarbage):
		end = ce.Offset
	case err != io.EOF:
		return // damaged: the stream has no end; its checkpoints run to the damage
	}
	for l := int64(0); l < 8; l++ {
		if e := 8*end - 80 - l; b.magicAt(e) == bzip2EOSMagic {
			b.streamEnd(e)
			return
		}
	}
}

// synthBzip2 is the made-up stream that resumes at a block: the header
// bits emitted first, then the source's bits after skipping `skip`, `left`
// of them (or all, to the end, if !eos), then the end-of-stream magic with
// crc, padding, and after that the source's following bytes unchanged.
type synthBzip2 struct {
	src  io.ByteReader
	skip uint
	left int64
	eos  bool
	crc  uint32

	acc    uint64 // pending output bits, the oldest highest
	nacc   uint
	ready  []byte
	buf    [16]byte
	closed bool  // the made-up part is all emitted: pass the source through
	after  int64 // source bytes to drop before passing through
	err    error
}

func (s *synthBzip2) emit(v uint64, n uint) {
	s.acc = s.acc<<n | v&(1<<n-1)
	s.nacc += n
	for s.nacc >= 8 {
		s.nacc -= 8
		s.ready = append(s.ready, byte(s.acc>>s.nacc))
	}
}

func (s *synthBzip2) ReadByte() (byte, error) {
	for len(s.ready) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		if s.closed {
			for ; s.after > 0; s.after-- {
				if _, err := s.src.ReadByte(); err != nil {
					return 0, err
				}
			}
			return s.src.ReadByte()
		}
		s.ready = s.buf[:0]
		s.fill()
	}
	c := s.ready[0]
	s.ready = s.ready[1:]
	return c, nil
}

func (s *synthBzip2) Read(p []byte) (int, error) {
	for i := range p {
		c, err := s.ReadByte()
		if err != nil {
			if i > 0 {
				return i, nil
			}
			return 0, err
		}
		p[i] = c
	}
	return len(p), nil
}

// fill moves one source byte (or the ending) into ready.
func (s *synthBzip2) fill() {
	if !s.eos || s.left > 0 {
		c, err := s.src.ReadByte()
		if err != nil {
			s.err = err
			if !s.eos {
				s.flushPad()
			}
			return
		}
		k := 8 - s.skip
		v := uint64(c) & (1<<k - 1)
		s.skip = 0
		if s.eos && s.left < int64(k) {
			v >>= k - uint(s.left)
			k = uint(s.left)
		}
		s.left -= int64(k)
		s.emit(v, k)
		return
	}
	s.emit(bzip2EOSMagic, 48)
	s.emit(uint64(s.crc), 32)
	s.flushPad()
	s.closed = true
}

func (s *synthBzip2) flushPad() {
	if s.nacc > 0 {
		s.emit(0, 8-s.nacc)
	}
}

// strayLastByte reports whether the file ends in one byte, not 'B', after a
// complete stream: the library reads it as the start of another stream and
// calls the missing second byte a truncation.
func (b *bzip2Stream) strayLastByte() bool {
	var last [1]byte
	if _, err := b.in.f.ReadAt(last[:], b.in.size-1); err != nil || last[0] == 'B' {
		return false
	}
	for l := int64(0); l < 8; l++ {
		if b.magicAt(8*(b.in.size-1)-80-l) == bzip2EOSMagic {
			return true
		}
	}
	return false
}
