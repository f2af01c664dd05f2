package compressed

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"
)

// A seekable copy ("shadow") of a file whose own restart points lie too
// far apart: a zstd file written as one frame (what zstd and logrotate
// write), an xz file written as one block (xz without -T), whose middle no
// decoder can enter. While the file is indexed its decompressed bytes are
// also written here as independent zstd frames of ShadowFrame bytes each;
// the shadow's frame starts are its checkpoints, so a line is read by
// decoding at most half an interval of it. The index stores the shadow beside
// its segments; the file's own table keeps the shadow's (Table.Shadow).

// NeedsShadow reports whether the table's restart points leave a stretch
// of more than twice the interval (a read in it would decode more than
// that), so that a seekable copy is worth its space. Only zstd and xz
// files can lack them: a gzip file has a checkpoint at a deflate block
// end each interval, a bzip2 file one per block of at most 900 kB.
func (t *Table) NeedsShadow() bool {
	if t.Kind != Zstd && t.Kind != XZ || t.Interval <= 0 {
		return false
	}
	prev := int64(0)
	for _, p := range t.points {
		if p.out-prev > 2*t.Interval {
			return true
		}
		prev = p.out
	}
	return t.Size-prev > 2*t.Interval
}

// ShadowWriter writes a seekable copy of decompressed bytes to w: a zstd
// frame (with its content checksum) per interval. Write the bytes in order,
// Close, then take Table. For one goroutine.
type ShadowWriter struct {
	dst      io.Writer
	w        *bufio.Writer // on dst, from the first frame
	enc      *zstd.Encoder // made with the first frame
	interval int64
	buf      []byte // the current frame's bytes, up to interval
	frame    []byte // the last frame encoded
	hash     *xxhash.Digest
	out, in  int64
	points   []point
	err      error
	closed   bool
}

// ShadowFrame is the decompressed size of a seekable copy's frames: half
// an interval, because a read decodes and checks a whole frame, and a
// frame of a whole interval decoded more slowly per byte than the file's
// own interval (its 1 MiB of output and window outgrow the CPU's cache): a
// line near the end of a 102 MB copy read with a fresh reader took 0.60 ms
// with 1 MiB frames, 0.26 ms with 512 KiB ones, against 0.73 ms for one
// interval of the file itself; copies grew 0.3-2%.
const ShadowFrame = DefaultInterval / 2

// NewShadowWriter returns a ShadowWriter of frames of interval bytes
// (ShadowFrame when interval <= 0) onto w.
func NewShadowWriter(w io.Writer, interval int64) *ShadowWriter {
	if interval <= 0 {
		interval = ShadowFrame
	}
	// Nothing is allocated before the bytes come: the indexer makes one
	// for every zstd and xz file, and most rotated files are small and
	// need no copy (making the encoder and a frame's buffer up front cost
	// 19% of indexing 1,000 small .zst files).
	return &ShadowWriter{dst: w, interval: interval, hash: xxhash.New()}
}

// Write adds decompressed bytes. It never fails: the copy is optional,
// and a write error (a full disk) must not stop the indexing that feeds it
// (through an io.TeeReader); the error is kept for Close.
func (s *ShadowWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && s.err == nil {
		k := min(len(p), int(s.interval)-len(s.buf))
		s.buf = append(s.buf, p[:k]...)
		p = p[k:]
		if int64(len(s.buf)) == s.interval {
			s.flush()
		}
	}
	return n, nil
}

// flush encodes the buffered bytes as one frame.
func (s *ShadowWriter) flush() {
	if len(s.buf) == 0 || s.err != nil {
		return
	}
	if s.enc == nil {
		// The fastest level: the copy is read a frame at a time, and its
		// writing runs beside tokenizing, the indexer's real cost.
		s.enc, s.err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(true), zstd.WithWindowSize(1<<20))
		if s.err != nil {
			return
		}
		s.w = bufio.NewWriterSize(s.dst, 256<<10)
	}
	s.points = append(s.points, point{out: s.out, in: s.in, typ: pointStart})
	s.frame = s.enc.EncodeAll(s.buf, s.frame[:0])
	if _, s.err = s.w.Write(s.frame); s.err != nil {
		return
	}
	s.hash.Write(s.frame)
	s.out += int64(len(s.buf))
	s.in += int64(len(s.frame))
	s.buf = s.buf[:0]
}

// Close writes the last frame and flushes, and returns the first error of
// any write; it does not close the writer under it. Closing again only
// returns that error.
func (s *ShadowWriter) Close() error {
	if s.closed {
		return s.err
	}
	s.closed = true
	s.flush()
	if s.err == nil && s.w != nil {
		s.err = s.w.Flush()
	}
	if s.enc != nil {
		s.enc.Close()
	}
	return s.err
}

// Table describes the copy written (after Close): a zstd table whose
// checkpoints are the frame starts.
func (s *ShadowWriter) Table() *Table {
	return &Table{Kind: Zstd, Size: s.out, CompressedSize: s.in, Interval: s.interval, points: s.points}
}

// Sum is the xxhash64 of the copy's bytes: it names the copy's file, so
// that a file indexed again never overwrites a copy an older index reads.
func (s *ShadowWriter) Sum() uint64 { return s.hash.Sum64() }

// ShadowReader reads a seekable copy at any decompressed offset, a whole
// frame at a time: each frame is decoded and its checksum verified before
// any of its bytes are handed out, so a copy damaged since it was written
// gives an error, never other bytes (a streaming decoder notices a bad
// checksum only at the frame's end, after yielding the bytes). The last
// frame decoded is kept for the reads that follow it. For one goroutine.
type ShadowReader struct {
	f    io.ReaderAt
	size int64 // the copy's size on disk
	t    *Table
	cur  int // frame in buf, -1 none
	buf  []byte
	comp []byte
}

// frameDecoders are the zstd decoders ShadowReaders decode frames with,
// shared: a search makes a reader for each span of a file it reads, and a
// decoder made for one read of a 1 MiB frame cost as much again as the
// decoding (a line near the end of a 102 MB copy: 0.99 ms with a new
// decoder, 0.49 ms with one reused).
var frameDecoders sync.Pool

// NewShadowReader returns a reader of the copy f (size bytes on disk)
// described by t, a Table's Shadow.
func NewShadowReader(f io.ReaderAt, size int64, t *Table) *ShadowReader {
	return &ShadowReader{f: f, size: size, t: t, cur: -1}
}

// ReadAt follows io.ReaderAt.
func (r *ShadowReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("compressed: negative offset")
	}
	if r.size != r.t.CompressedSize {
		return 0, &CorruptError{Kind: Zstd, Offset: r.size, Err: fmt.Errorf("seekable copy is %d bytes, not %d", r.size, r.t.CompressedSize)}
	}
	n := 0
	for n < len(p) {
		o := off + int64(n)
		if o >= r.t.Size {
			return n, io.EOF
		}
		i := r.t.find(o)
		if i < 0 {
			return n, fmt.Errorf("compressed: no checkpoint before offset %d", o)
		}
		if err := r.load(i); err != nil {
			return n, err
		}
		n += copy(p[n:], r.buf[o-r.t.points[i].out:])
	}
	return n, nil
}

// load decodes frame i into buf.
func (r *ShadowReader) load(i int) error {
	if r.cur == i {
		return nil
	}
	r.cur = -1
	p := r.t.points[i]
	endOut, endIn := r.t.Size, r.t.CompressedSize
	if i+1 < len(r.t.points) {
		endOut, endIn = r.t.points[i+1].out, r.t.points[i+1].in
	}
	if p.typ != pointStart || endOut-p.out > MaxDecoderWindow || endIn-p.in > MaxDecoderWindow {
		return &CorruptError{Kind: Zstd, Offset: p.in, Err: errors.New("not a frame of a seekable copy")}
	}
	r.comp = slices.Grow(r.comp[:0], int(endIn-p.in))[:endIn-p.in]
	if _, err := r.f.ReadAt(r.comp, p.in); err != nil {
		return &CorruptError{Kind: Zstd, Offset: p.in, Err: err}
	}
	dec, _ := frameDecoders.Get().(*zstd.Decoder)
	if dec == nil {
		d, err := newZstdDecoder()
		if err != nil {
			return err
		}
		dec = d
	}
	out, err := dec.DecodeAll(r.comp, slices.Grow(r.buf[:0], int(endOut-p.out)))
	frameDecoders.Put(dec)
	if err != nil {
		return &CorruptError{Kind: Zstd, Offset: p.in, Err: err}
	}
	if int64(len(out)) != endOut-p.out {
		return &CorruptError{Kind: Zstd, Offset: p.in, Err: fmt.Errorf("frame holds %d bytes, not %d", len(out), endOut-p.out)}
	}
	r.buf, r.cur = out, i
	return nil
}

// VerifyShadow decodes the seekable copy at path whole, checking every
// frame against t (a table holding the copy's: t.Shadow).
func VerifyShadow(path string, t *Table) error {
	if t.Shadow == nil {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() != t.Shadow.CompressedSize {
		return &CorruptError{Kind: Zstd, Offset: fi.Size(), Err: fmt.Errorf("seekable copy is %d bytes, not %d", fi.Size(), t.Shadow.CompressedSize)}
	}
	r := NewShadowReader(f, fi.Size(), t.Shadow)
	for i := range t.Shadow.points {
		if err := r.load(i); err != nil {
			return err
		}
	}
	return nil
}
