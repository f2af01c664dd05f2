package compressed

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/flate"
)

// gzipStream decodes a chain of gzip members (RFC 1952) and, when recording,
// takes zran-style checkpoints at deflate block boundaries: the compressed
// bit position plus the 32 KiB of history the next block may refer to.
// The member headers and trailers are handled here, not by a gzip package,
// because the checkpoints need the deflate stream's position in the file.
type gzipStream struct {
	in  *input
	rec *recorder

	fl    io.ReadCloser // the inflater, kept across members and resets
	state gzState
	out   int64 // decompressed offset of the next byte yielded

	deflateStart int64 // compressed offset where the current member's deflate data starts
	whole        bool  // the member was decoded from its header, so its trailer can be checked
	crc          uint32
	memberOut    int64 // bytes of the current member yielded (mod 2^32 is ISIZE)
	garbageAt    int64 // compressed offset of trailing garbage
	err          error

	wbuf   bytes.Buffer  // compresses windows at index time
	wflate *flate.Writer // ...
}

type gzState uint8

const (
	gzHeader gzState = iota
	gzBody
	gzRaw
	gzDone
)

func newGzipStream(f io.ReaderAt, size int64, rec *recorder) *gzipStream {
	return &gzipStream{in: newInput(f, size), rec: rec}
}

// cpResetter is the flate decompressor's resume method (not in a public
// interface in klauspost/compress).
type cpResetter interface {
	ResetCP(r io.Reader, cp flate.InflateCheckpoint) error
}

func (g *gzipStream) reset(p point) error {
	g.err, g.out, g.memberOut, g.crc, g.whole = nil, p.out, 0, 0, false
	g.in.seek(p.in)
	switch p.typ {
	case pointStart:
		g.state = gzHeader
		return nil
	case pointRaw:
		g.state, g.garbageAt = gzRaw, p.in
		return nil
	}
	window, err := inflateWindow(p.window)
	if err != nil {
		return corrupt(Gzip, p.in, "checkpoint window: %v", err)
	}
	cp := flate.InflateCheckpoint{CompressedOffset: p.in, UncompressedOffset: p.out, BitOffset: p.bit, Window: window}
	if rs, ok := g.fl.(cpResetter); ok {
		err = rs.ResetCP(g.in.br, cp)
	} else {
		g.fl = flate.NewReaderOpts(g.in.br, flate.WithResumeFrom(cp))
	}
	if err != nil {
		return inputErr(Gzip, g.in.size, err)
	}
	g.deflateStart = 0 // offsets from this inflater are absolute
	g.state = gzBody
	return nil
}

func (g *gzipStream) Read(p []byte) (int, error) {
	for g.err == nil {
		switch g.state {
		case gzHeader:
			g.err = g.header()
		case gzBody:
			n, err := g.fl.Read(p)
			if n > 0 {
				g.out += int64(n)
				g.memberOut += int64(n)
				if g.whole {
					g.crc = crc32.Update(g.crc, crc32.IEEETable, p[:n])
				}
			}
			if err == io.EOF {
				err = g.trailer()
			} else if err != nil {
				err = g.flateErr(err)
			}
			g.err = err
			if n > 0 {
				return n, nil
			}
		case gzRaw:
			n, err := g.in.br.Read(p)
			g.out += int64(n)
			if err == io.EOF {
				err = &CorruptError{Kind: Gzip, Offset: g.garbageAt, Err: ErrTrailingGarbage}
			}
			g.err = err
			if n > 0 {
				return n, nil
			}
		case gzDone:
			g.err = io.EOF
		}
	}
	return 0, g.err
}

func (g *gzipStream) flateErr(err error) error {
	var ce flate.CorruptInputError
	if errors.As(err, &ce) {
		return corrupt(Gzip, g.deflateStart+int64(ce), "deflate data: %v", err)
	}
	return inputErr(Gzip, g.in.size, err)
}

// header parses a member header (RFC 1952 section 2.3) and starts inflating.
func (g *gzipStream) header() error {
	start := g.in.pos()
	var h [10]byte
	if err := g.in.readFull(Gzip, h[:]); err != nil {
		return err
	}
	if h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 {
		return corrupt(Gzip, start, "bad member header % x", h[:3])
	}
	flg := h[3]
	if flg&0xe0 != 0 {
		return corrupt(Gzip, start, "reserved header flags %#x", flg)
	}
	if flg&0x04 != 0 { // FEXTRA
		var xlen [2]byte
		if err := g.in.readFull(Gzip, xlen[:]); err != nil {
			return err
		}
		if _, err := g.in.br.Discard(int(binary.LittleEndian.Uint16(xlen[:]))); err != nil {
			return inputErr(Gzip, g.in.size, err)
		}
	}
	for _, bit := range []byte{0x08, 0x10} { // FNAME, FCOMMENT: zero-terminated
		if flg&bit == 0 {
			continue
		}
		if err := g.skipString(); err != nil {
			return err
		}
	}
	if flg&0x02 != 0 { // FHCRC
		if _, err := g.in.br.Discard(2); err != nil {
			return inputErr(Gzip, g.in.size, err)
		}
	}
	g.deflateStart = g.in.pos()
	g.whole, g.crc, g.memberOut = true, 0, 0
	if g.rec != nil {
		// The callback is per reader (Reset drops it), so each member gets
		// a new inflater when recording.
		g.fl = flate.NewReaderOpts(g.in.br, flate.WithEobCallback(g.checkpoint))
	} else if rs, ok := g.fl.(flate.Resetter); ok {
		_ = rs.Reset(g.in.br, nil) // never fails
	} else {
		g.fl = flate.NewReader(g.in.br)
	}
	g.state = gzBody
	return nil
}

// skipString skips a zero-terminated header field, however long.
func (g *gzipStream) skipString() error {
	for {
		_, err := g.in.br.ReadSlice(0)
		if err == nil {
			return nil
		}
		if err != bufio.ErrBufferFull {
			return inputErr(Gzip, g.in.size, err)
		}
	}
}

// trailer checks the member's CRC-32 and size, then decides what follows:
// the end, another member, zero padding to the end (ignored, as gzip -d
// and zcat ignore it), or garbage that is copied verbatim.
func (g *gzipStream) trailer() error {
	at := g.in.pos()
	var t [8]byte
	if err := g.in.readFull(Gzip, t[:]); err != nil {
		return err
	}
	if g.whole {
		if crc := binary.LittleEndian.Uint32(t[:4]); crc != g.crc {
			return corrupt(Gzip, at, "member CRC-32 is %08x, data has %08x", crc, g.crc)
		}
		if isize := binary.LittleEndian.Uint32(t[4:]); isize != uint32(g.memberOut) {
			return corrupt(Gzip, at, "member size field is %d, data has %d (mod 2^32)", isize, uint32(g.memberOut))
		}
	}
	next := g.in.pos()
	head, _ := g.in.br.Peek(2)
	switch {
	case len(head) == 0:
		g.state = gzDone
		return io.EOF
	case bytes.Equal(head, gzipMagic):
		if g.rec.due(g.out) {
			g.rec.add(point{out: g.out, in: next, typ: pointStart})
		}
		g.state = gzHeader
	case head[0] == 0 && g.zerosToEnd(next):
		// Zero padding (tape or block padding), which gzip -d ignores.
		g.state = gzDone
		return io.EOF
	default:
		if g.rec != nil {
			g.rec.add(point{out: g.out, in: next, typ: pointRaw})
		}
		g.state, g.garbageAt = gzRaw, next
	}
	return nil
}

// zerosToEnd reports whether the file holds only zero bytes from compressed
// offset off to its end. It reads the file directly, leaving the input
// where it is.
func (g *gzipStream) zerosToEnd(off int64) bool {
	var buf [4 << 10]byte
	for off < g.in.size {
		n, _ := g.in.f.ReadAt(buf[:min(int64(len(buf)), g.in.size-off)], off)
		if n == 0 || !allZero(buf[:n]) {
			return false
		}
		off += int64(n)
	}
	return true
}

// checkpoint is the inflater's end-of-block callback at index time.
func (g *gzipStream) checkpoint(cp flate.InflateCheckpoint) {
	out := g.out - g.memberOut + cp.UncompressedOffset
	if cp.Final || !g.rec.due(out) {
		// After the final block comes the trailer; the next member's
		// start is the restart point there.
		return
	}
	g.rec.add(point{
		out:    out,
		in:     g.deflateStart + cp.CompressedOffset,
		typ:    pointBlock,
		bit:    cp.BitOffset,
		window: g.deflateWindow(cp.Window),
	})
}

// deflateWindow compresses a checkpoint's window: log text shrinks 4-10x,
// and the windows are nearly all of a table's size.
func (g *gzipStream) deflateWindow(w []byte) []byte {
	g.wbuf.Reset()
	if g.wflate == nil {
		g.wflate, _ = flate.NewWriter(&g.wbuf, 6) // valid level; 9 saves ~12% more for 3x the time
	} else {
		g.wflate.Reset(&g.wbuf)
	}
	_, _ = g.wflate.Write(w) // writes to a bytes.Buffer do not fail
	_ = g.wflate.Close()
	return bytes.Clone(g.wbuf.Bytes())
}

// inflateWindow undoes deflateWindow on bytes from a table, which may be
// anything: it never yields more than a window.
func inflateWindow(b []byte) ([]byte, error) {
	fr := flate.NewReader(bytes.NewReader(b))
	w, err := io.ReadAll(io.LimitReader(fr, maxWindow+1))
	if err != nil {
		return nil, err
	}
	if len(w) > maxWindow {
		return nil, errors.New("window longer than 32 KiB")
	}
	return w, nil
}
