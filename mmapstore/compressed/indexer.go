package compressed

import (
	"errors"
	"io"
)

// DefaultInterval is the checkpoint spacing used when none is given: one
// checkpoint per MiB of decompressed output. A line then costs decoding at
// most ~1 MiB plus one deflate block for gzip (a few ms), and the stored
// gzip windows add ~0.6% to the decompressed size (measurements in the
// package doc).
const DefaultInterval = 1 << 20

// Indexer decompresses a file once, from start to end, and records
// checkpoints on the way. Read it to the end (until it returns an error),
// then take its Table. It is for one goroutine.
type Indexer struct {
	kind Kind
	size int64
	rec  *recorder
	s    stream
	out  int64
	err  error
}

// NewIndexer returns an Indexer over the compressed file f of size bytes,
// of the given kind (see Sniff), recording a checkpoint at the first
// restart point at least interval decompressed bytes after the previous
// one (interval <= 0 means DefaultInterval).
func NewIndexer(f io.ReaderAt, size int64, kind Kind, interval int64) *Indexer {
	if interval <= 0 {
		interval = DefaultInterval
	}
	ix := &Indexer{kind: kind, size: size, rec: &recorder{interval: interval}}
	s, err := newStream(kind, f, size, ix.rec)
	if err == nil && size > 0 {
		ix.rec.add(point{typ: pointStart})
		err = s.reset(point{typ: pointStart})
	}
	ix.s, ix.err = s, err
	if size == 0 && err == nil {
		ix.err = io.EOF // an empty file is empty content, as `gzip -cdf` has it
	}
	return ix
}

// Read yields the decompressed bytes. After the last one it returns io.EOF;
// on damaged input it returns, after every byte decoded before the damage,
// an error wrapping ErrTruncated or a *CorruptError (whose Err is
// ErrTrailingGarbage when only bytes after the last stream are bad).
func (ix *Indexer) Read(p []byte) (int, error) {
	if ix.err != nil {
		return 0, ix.err
	}
	n, err := ix.s.Read(p)
	ix.out += int64(n)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = truncated(ix.kind, ix.size)
		}
		ix.err = err
	}
	return n, err
}

// Table returns the checkpoints of the bytes yielded so far; after Read
// returned an error it describes the whole yielded content, damaged input
// included, so the yielded prefix stays searchable.
func (ix *Indexer) Table() *Table {
	t := &Table{Kind: ix.kind, Size: ix.out, CompressedSize: ix.size, Interval: ix.rec.interval}
	for _, p := range ix.rec.points {
		if p.out <= ix.out && p.in <= ix.size {
			t.points = append(t.points, p)
		}
	}
	return t
}
