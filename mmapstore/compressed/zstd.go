package compressed

import (
	"bytes"
	"errors"
	"io"

	"github.com/klauspost/compress/zstd"
)

// MaxDecoderWindow bounds the history a zstd frame or an xz block may ask
// the decoder to keep (and so the memory a hostile file can make it
// allocate). 64 MiB covers xz -9 and zstd up to level 19 and --long=26;
// zstd --ultra -22 and --long=27 files are refused as corrupt.
const MaxDecoderWindow = 64 << 20

// zstdStream decodes zstd frames. Frames are independent, so their starts
// are the checkpoints; nothing inside a frame is a restart point the
// library exposes (a block needs the window, entropy tables and repeat
// offsets before it). At index time each frame is first walked block
// header by block header to find its end without decoding, then decoded
// on its own; at query time the decoder simply runs on to the end.
type zstdStream struct {
	f    io.ReaderAt
	size int64
	rec  *recorder

	dec       *zstd.Decoder
	pos       int64 // index time: compressed offset of the next frame
	frameEnd  int64
	inFrame   bool
	walkErr   error // damage the walk found at the end of the current section
	out       int64
	frames    int
	err       error
	hdrBuf    [zstd.HeaderMaxSize]byte
	blockHead [3]byte
}

func newZstdStream(f io.ReaderAt, size int64, rec *recorder) *zstdStream {
	return &zstdStream{f: f, size: size, rec: rec}
}

func (z *zstdStream) decoder() (*zstd.Decoder, error) {
	if z.dec == nil {
		d, err := newZstdDecoder()
		if err != nil {
			return nil, err
		}
		z.dec = d
	}
	return z.dec, nil
}

// newZstdDecoder is the decoder of files and seekable copies alike:
// synchronous (no goroutines, bounded buffers), its window and memory
// bounded by MaxDecoderWindow.
func newZstdDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(MaxDecoderWindow), zstd.WithDecoderMaxMemory(MaxDecoderWindow))
}

func (z *zstdStream) reset(p point) error {
	z.out, z.pos, z.inFrame, z.walkErr, z.err, z.frames = p.out, p.in, false, nil, nil, 0
	if z.rec != nil {
		return nil
	}
	d, err := z.decoder()
	if err != nil {
		return err
	}
	z.inFrame = true
	return d.Reset(io.NewSectionReader(z.f, p.in, max(0, z.size-p.in)))
}

func (z *zstdStream) Read(p []byte) (int, error) {
	for z.err == nil {
		if !z.inFrame {
			z.err = z.nextFrame()
			continue
		}
		n, err := z.dec.Read(p)
		z.out += int64(n)
		if err == io.EOF && z.rec != nil {
			z.inFrame, z.pos = false, z.frameEnd
			err = z.walkErr
		} else if err != nil {
			err = z.decodeErr(err)
		}
		z.err = err
		if n > 0 {
			return n, nil
		}
	}
	return 0, z.err
}

func (z *zstdStream) decodeErr(err error) error {
	if z.walkErr != nil {
		return z.walkErr // the decoder stopped at the damage the walk found
	}
	if err == io.EOF {
		return err
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return truncated(Zstd, z.size)
	}
	return &CorruptError{Kind: Zstd, Offset: z.pos, Err: err}
}

// nextFrame finds the frame at z.pos (index time) and starts decoding it.
func (z *zstdStream) nextFrame() error {
	for {
		if z.pos >= z.size {
			return io.EOF
		}
		var h zstd.Header
		n, _ := z.f.ReadAt(z.hdrBuf[:min(int64(len(z.hdrBuf)), z.size-z.pos)], z.pos)
		err := h.Decode(z.hdrBuf[:n])
		switch {
		case errors.Is(err, zstd.ErrMagicMismatch) && z.frames > 0:
			return &CorruptError{Kind: Zstd, Offset: z.pos, Err: ErrTrailingGarbage}
		case errors.Is(err, io.ErrUnexpectedEOF) && z.frames > 0 && !zstdMagicPrefix(z.hdrBuf[:min(n, 4)]):
			return &CorruptError{Kind: Zstd, Offset: z.pos, Err: ErrTrailingGarbage}
		case errors.Is(err, io.ErrUnexpectedEOF):
			return truncated(Zstd, z.size)
		case err != nil:
			return &CorruptError{Kind: Zstd, Offset: z.pos, Err: err}
		}
		z.frames++
		if h.Skippable {
			z.pos += 8 + int64(h.SkippableSize)
			if z.pos > z.size {
				return truncated(Zstd, z.size)
			}
			continue
		}
		z.frameEnd, z.walkErr = z.walk(z.pos+int64(h.HeaderSize), h.HasCheckSum)
		if z.rec.due(z.out) {
			z.rec.add(point{out: z.out, in: z.pos, typ: pointStart})
		}
		d, err := z.decoder()
		if err != nil {
			return err
		}
		z.inFrame = true
		return d.Reset(io.NewSectionReader(z.f, z.pos, z.frameEnd-z.pos))
	}
}

// walk follows the block headers from off to the end of the frame. On
// damage it returns where the damage starts and the error to report once
// the bytes before it are decoded.
func (z *zstdStream) walk(off int64, checksum bool) (int64, error) {
	for {
		if z.size-off < 3 {
			return z.size, truncated(Zstd, z.size)
		}
		if _, err := z.f.ReadAt(z.blockHead[:], off); err != nil {
			return off, inputErr(Zstd, z.size, err)
		}
		h := uint32(z.blockHead[0]) | uint32(z.blockHead[1])<<8 | uint32(z.blockHead[2])<<16
		last, typ, size := h&1 != 0, (h>>1)&3, int64(h>>3)
		switch typ {
		case 1: // RLE: one byte repeated size times
			size = 1
		case 3:
			return off, corrupt(Zstd, off, "reserved block type")
		}
		off += 3 + size
		if off > z.size {
			return z.size, truncated(Zstd, z.size)
		}
		if last {
			break
		}
	}
	if checksum {
		off += 4
		if off > z.size {
			return z.size, truncated(Zstd, z.size)
		}
	}
	return off, nil
}

// zstdMagicPrefix reports whether b could begin a frame or skippable frame.
func zstdMagicPrefix(b []byte) bool {
	skippable := []byte{0x50, 0x2a, 0x4d, 0x18}
	if len(b) > 0 && b[0]&0xf0 == 0x50 {
		return bytes.HasPrefix(skippable[1:], b[1:])
	}
	return bytes.HasPrefix(zstdMagic, b)
}

// ZstdWindow is the window size the first frame of the zstd file f asks
// for, after any skippable frames.
func ZstdWindow(f io.ReaderAt) (int64, error) {
	var off int64
	for range 64 {
		var b [zstd.HeaderMaxSize]byte
		n, err := f.ReadAt(b[:], off)
		if n == 0 {
			return 0, err
		}
		var hdr zstd.Header
		if err := hdr.Decode(b[:n]); err != nil {
			return 0, err
		}
		if !hdr.Skippable {
			return int64(hdr.WindowSize), nil
		}
		off += 8 + int64(hdr.SkippableSize)
	}
	return 0, errors.New("compressed: no zstd frame after 64 skippable ones")
}
