package compressed

import (
	"errors"
	"fmt"
	"io"
)

// Reader reads the decompressed content of an indexed file at any offset.
// Each ReadAt restarts at the nearest checkpoint at or before the offset,
// unless the decoder it kept from the previous ReadAt is already between
// that checkpoint and the offset: then it just continues, so reading many
// lines of one file in increasing offset order costs about one pass.
//
// A Reader is for one goroutine at a time (it keeps that decoder); it is
// cheap to create, and allocates its decoder on the first ReadAt.
type Reader struct {
	f    io.ReaderAt
	size int64
	kind Kind
	t    *Table

	s        stream
	pos      int64 // decompressed offset of the next byte s yields
	live     bool  // s is positioned and healthy
	restarts int   // resets done, for tests
	scratch  []byte
}

// NewReader returns a Reader over f, the compressed file of size bytes that
// was indexed into t. If the file is not what was indexed, reads return
// errors (or other bytes), never panic. A file that grew since is read
// as indexed (an appended gzip member is not in the table); a shorter one,
// or a kind other than the table's, is an error.
func NewReader(f io.ReaderAt, size int64, kind Kind, t *Table) *Reader {
	if t == nil {
		t = &Table{Kind: kind}
	}
	return &Reader{f: f, size: size, kind: kind, t: t}
}

// Size is the decompressed size recorded in the table.
func (r *Reader) Size() int64 { return r.t.Size }

// ReadAt reads len(p) decompressed bytes at decompressed offset off. It
// follows io.ReaderAt: a short read comes with an error, io.EOF at the end.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("compressed: negative offset")
	}
	if r.t.Kind != r.kind {
		return 0, fmt.Errorf("compressed: a %v table cannot read a %v file", r.t.Kind, r.kind)
	}
	if r.size < r.t.CompressedSize {
		return 0, &CorruptError{Kind: r.kind, Offset: r.size,
			Err: fmt.Errorf("file is %d bytes, shorter than the %d indexed", r.size, r.t.CompressedSize)}
	}
	if off >= r.t.Size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	want := p
	if int64(len(p)) > r.t.Size-off {
		want = p[:r.t.Size-off]
	}
	if err := r.seek(off); err != nil {
		return 0, err
	}
	n, err := io.ReadFull(r.s, want)
	r.pos += int64(n)
	if err != nil {
		return n, r.fail(err)
	}
	if len(want) < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// seek positions the kept decoder at off, restarting at a checkpoint when
// continuing is impossible or would decode more.
func (r *Reader) seek(off int64) error {
	i := r.t.find(off)
	if i < 0 {
		return fmt.Errorf("compressed: no checkpoint before offset %d", off)
	}
	cp := r.t.points[i]
	if !r.live || r.pos > off || cp.out > r.pos {
		if r.s == nil {
			s, err := newStream(r.t.Kind, r.f, r.size, nil)
			if err != nil {
				return err
			}
			r.s = s
		}
		if err := r.s.reset(cp); err != nil {
			return r.fail(err)
		}
		r.pos, r.live = cp.out, true
		r.restarts++
	}
	for r.pos < off {
		if r.scratch == nil {
			r.scratch = make([]byte, 64<<10)
		}
		n, err := io.ReadFull(r.s, r.scratch[:min(off-r.pos, int64(len(r.scratch)))])
		r.pos += int64(n)
		if err != nil {
			return r.fail(err)
		}
	}
	return nil
}

// fail drops the decoder after an error; the next ReadAt restarts.
func (r *Reader) fail(err error) error {
	r.live = false
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		// The table promised more bytes than the file decodes to.
		return &CorruptError{Kind: r.t.Kind, Offset: r.size,
			Err: fmt.Errorf("content ends at decompressed byte %d, before the indexed size %d", r.pos, r.t.Size)}
	}
	return err
}
