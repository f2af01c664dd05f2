package compressed

import (
	"bufio"
	"errors"
	"io"
)

// stream decodes one compressed file from a checkpoint on. Each kind has
// one; the Indexer runs it from the start with a recorder, a Reader runs it
// from any checkpoint without one. Sharing the code means the query side
// decodes exactly what the index side saw.
type stream interface {
	// reset positions the stream at checkpoint p: the next Read yields the
	// decompressed bytes from p.out on.
	reset(p point) error
	io.Reader
}

func newStream(kind Kind, f io.ReaderAt, size int64, rec *recorder) (stream, error) {
	switch kind {
	case Gzip:
		return newGzipStream(f, size, rec), nil
	case Zstd:
		return newZstdStream(f, size, rec), nil
	case Bzip2:
		return newBzip2Stream(f, size, rec), nil
	case XZ:
		return newXZStream(f, size, rec), nil
	}
	return nil, errors.New("compressed: unknown kind " + kind.String())
}

// recorder collects checkpoints at index time, at most one per interval of
// decompressed bytes.
type recorder struct {
	interval int64
	points   []point
}

// due reports whether a checkpoint at decompressed offset out is wanted.
func (r *recorder) due(out int64) bool {
	if r == nil {
		return false
	}
	n := len(r.points)
	return n == 0 || out-r.points[n-1].out >= r.interval
}

func (r *recorder) add(p point) { r.points = append(r.points, p) }

// counter counts the bytes read through it.
type counter struct {
	r io.Reader
	n int64
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// input is a buffered, position-tracking view of the compressed file from
// some offset to its end. The *bufio.Reader is handed to decoders as is:
// flate and bzip2 read byte-wise from it without reading past their
// stream's end, and flate has a fast path for exactly this type.
type input struct {
	f     io.ReaderAt
	size  int64
	base  int64
	c     counter
	br    *bufio.Reader
	bsize int
}

const inputBufSize = 64 << 10

func newInput(f io.ReaderAt, size int64) *input {
	return &input{f: f, size: size, bsize: inputBufSize}
}

// seek makes the next byte read the one at compressed offset off.
func (in *input) seek(off int64) {
	in.base = off
	in.c = counter{r: io.NewSectionReader(in.f, off, max(0, in.size-off))}
	if in.br == nil {
		in.br = bufio.NewReaderSize(&in.c, in.bsize)
	} else {
		in.br.Reset(&in.c)
	}
}

// pos is the compressed offset of the next unread byte.
func (in *input) pos() int64 { return in.base + in.c.n - int64(in.br.Buffered()) }

// atEOF reports whether every compressed byte has been read.
func (in *input) atEOF() bool {
	_, err := in.br.Peek(1)
	return err != nil
}

// readFull reads len(p) bytes; running out of input is ErrTruncated.
func (in *input) readFull(kind Kind, p []byte) error {
	if _, err := io.ReadFull(in.br, p); err != nil {
		return inputErr(kind, in.size, err)
	}
	return nil
}

// inputErr turns a read error into ErrTruncated when the input ran out.
func inputErr(kind Kind, size int64, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return truncated(kind, size)
	}
	return err
}
