package indexer

// Compressed files (gzip, zstd, bzip2, xz) are read whole, once, as a
// stream of decompressed bytes (package compressed), cut into segments of
// SegmentBytes at line ends as they come; the restart points recorded on
// the way go into the segment that holds the file's last lines. A last
// line without a newline gets one (the file will not grow: it is indexed
// as the complete line it is, as zgrep prints it). Damaged input is
// indexed up to the damage, with a warning.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/compressed"
)

// buildStream indexes compressed file ri, with the term table terms, and
// returns its segments and the parts they hold.
func (u *update) buildStream(ctx context.Context, ri int, buf []byte, terms *termTable, progress func(int64)) ([]*mmapstore.SegmentRef, []*part, error) {
	rec := &u.next.Files[ri]
	kind, err := compressed.ParseKind(rec.Compression)
	if err != nil {
		return nil, nil, err
	}
	// The file planned, by its identity: logrotate may have renamed it
	// (app.log.1.gz to app.log.2.gz) and put another under its name.
	f, err := u.roots[rec.Root].openIdentity(rec)
	if err != nil {
		return nil, nil, readErr(rec, err)
	}
	defer f.Close()
	ix := compressed.NewIndexer(f, rec.Size, kind, compressed.DefaultInterval)
	var src io.Reader = ix
	// A zstd or xz file may have no restart point for a long way (one
	// frame or block): a seekable copy is written as it is read, kept only
	// if the table shows the need.
	var sh *shadowFile
	if kind == compressed.Zstd || kind == compressed.XZ {
		sh = newShadowFile(u.opt.Dir, rec.ID)
		defer sh.discard()
		src = io.TeeReader(ix, sh.w)
	}
	sa := newStreamAt(src, len(buf))
	sf := mmapstore.SegFile{ID: rec.ID, Root: rec.Root, Path: rec.Path, Size: rec.Size, MTime: rec.MTime, Dev: rec.Dev, Ino: rec.Ino, FPLen: rec.FPLen, FP: rec.FP}
	var refs []*mmapstore.SegmentRef
	var parts []*part
	var start int64
	lineNo := int64(1)
	timer := newLineTimer(nil, u.opt.Location, rec.MTime, 0, false)
	defer progress(rec.Size)
	for ctx.Err() == nil {
		b := newBuilder(terms)
		b.postings = u.opt.Postings
		timer.lt, timer.pending = b.lines, timer.pending[:0]
		complete, lines, nulAt, err := b.readPart(sa, sf, start, math.MaxInt64, lineNo, timer, buf, func(int64) {}, u.opt.SegmentBytes)
		if err != nil {
			return refs, parts, readErr(rec, err)
		}
		sa.commit(complete)
		done := sa.atEnd(complete)
		if done && errors.Is(sa.err, compressed.ErrTruncated) && beingWritten(f) {
			// Cut short and written to just now: gzip (logrotate's
			// compress) is still writing it, from a file that still holds
			// its lines. Indexed now, its lines would be found twice, and
			// it would be called damaged; the next run takes it whole.
			for _, r := range refs {
				removeSegment(u.opt.Dir, r.Name)
			}
			return nil, nil, errStillWritten
		}
		if done {
			if sa.err != nil {
				rec.Damage = sa.err.Error()
				u.log.Warn().Err(sa.err).Str("path", rec.Path).Int64("indexed", complete).Msg("compressed file damaged; indexing the lines before the damage")
			}
			if lines > 0 {
				t := ix.Table()
				if sh != nil && t.NeedsShadow() {
					if err := sh.keep(t); err != nil {
						u.log.Warn().Err(err).Str("path", rec.Path).Msg("cannot write a seekable copy; reads will decompress from the start")
					}
				}
				b.checkpoints = map[uint64][]byte{rec.ID: t.AppendBinary(nil)}
			}
		}
		if lines > 0 {
			// A temporary name: streams run in parallel, and their segments
			// are numbered once all are done, in file order (numberStreams),
			// so that a build stays deterministic.
			name := fmt.Sprintf("stream-%d-%d.ldx.part", ri, len(refs))
			st, err := b.write(filepath.Join(u.opt.Dir, name))
			if err != nil {
				return refs, parts, fmt.Errorf("write segment %s: %w", name, err)
			}
			refs = append(refs, &mmapstore.SegmentRef{Name: name, Lines: st.Lines, RawBytes: st.RawBytes, Size: st.Size, FileIDs: []uint64{rec.ID}})
			parts = append(parts, &part{workItem: workItem{rec: ri, start: start, end: complete, startLineNo: lineNo},
				lines: lines, complete: complete, nulAt: nulAt, timed: timer.any, first: timer.first, last: timer.carry, format: timer.p.Format()})
		}
		if done || lines == 0 {
			break
		}
		start, lineNo = complete, lineNo+lines
	}
	if ctx.Err() == nil && !sameFile(f, rec) {
		// (A file root's identity is only checked after the read.)
		return refs, parts, readErr(rec, errChangedUnder)
	}
	return refs, parts, ctx.Err()
}

// errStillWritten: a compressed file is being written (truncated, and
// modified within stillWrittenFor): the run leaves it for the next.
var errStillWritten = errors.New("compressed file still being written")

// stillWrittenFor is how recently a truncated compressed file must have
// been modified to be taken as still being written.
const stillWrittenFor = 5 * time.Second

// beingWritten reports whether f was modified within stillWrittenFor.
func beingWritten(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	d := time.Since(fi.ModTime())
	return d > -stillWrittenFor && d < stillWrittenFor
}

// streamAt lets readPart, which reads at increasing offsets, read a
// stream: it keeps only the bytes readPart may ask for again, and after
// the stream's last byte supplies a newline if the stream did not end with
// one. readPart reads into its behind-byte buffer after the bytes it
// carries over (a partial line), so a read of len(p) bytes at off means it
// holds the behind-len(p) bytes before off and may start its next part at
// one of them, never earlier. Keeping everything up to the segment's end
// instead grew the window to a segment (128 MiB) per stream, and its
// regrowing copies cost more CPU than decompressing.
type streamAt struct {
	r      io.Reader
	behind int    // readPart's buffer size
	buf    []byte // the window's backing array
	base   int64  // stream offset of win[0]
	win    []byte // buf[i:j]: read from r, not yet dropped
	eof    bool
	err    error // a damage error from the stream (the data before it was yielded)
	last   byte  // the stream's last byte so far
}

// newStreamAt reads r for a readPart whose buffer is behind bytes long.
func newStreamAt(r io.Reader, behind int) *streamAt {
	return &streamAt{r: r, behind: behind}
}

// minFill is the least read from the decompressor at a time.
const minFill = 256 << 10

func (s *streamAt) ReadAt(p []byte, off int64) (int, error) {
	if off < s.base {
		return 0, fmt.Errorf("stream read at %d, before %d", off, s.base)
	}
	s.commit(min(off-int64(max(0, s.behind-len(p))), s.base+int64(len(s.win))))
	for !s.eof && off+int64(len(p)) > s.base+int64(len(s.win)) {
		s.fill(max(int(off+int64(len(p))-s.base)-len(s.win), minFill))
	}
	if off >= s.base+int64(len(s.win)) {
		return 0, io.EOF
	}
	n := copy(p, s.win[off-s.base:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fill reads up to n more bytes into the window, moving it to the front of
// buf (or to a larger buf) when they would not fit after it.
func (s *streamAt) fill(n int) {
	at := len(s.win)
	if at+n > cap(s.win) {
		if at+n > len(s.buf) {
			s.buf = make([]byte, max(at+n, 2*s.behind+minFill))
		}
		s.win = s.buf[:copy(s.buf, s.win)]
	}
	s.win = s.win[:at+n]
	m, err := io.ReadFull(s.r, s.win[at:])
	s.win = s.win[:at+m]
	if m > 0 {
		s.last = s.win[len(s.win)-1]
	}
	if err == nil {
		return
	}
	s.eof = true
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		s.err = err
	}
	if s.base+int64(len(s.win)) > 0 && s.last != '\n' {
		s.win = append(s.win, '\n') // the last line, completed
	}
}

// commit drops the window's bytes before off: they will not be read again.
func (s *streamAt) commit(off int64) {
	if k := off - s.base; k > 0 && k <= int64(len(s.win)) {
		s.win = s.win[k:]
		s.base = off
	}
}

// atEnd reports whether nothing follows off in the stream.
func (s *streamAt) atEnd(off int64) bool {
	if off < s.base+int64(len(s.win)) {
		return false
	}
	if !s.eof {
		s.fill(1)
	}
	return off >= s.base+int64(len(s.win))
}

// numberStreams gives the compressed files' segments their numbers, after
// every other segment of the run, in file order.
func (u *update) numberStreams(refs map[int][]*mmapstore.SegmentRef) error {
	for _, ri := range u.streams {
		for _, ref := range refs[ri] {
			name := fmt.Sprintf("seg-%016x.ldx", u.segID.Add(1)-1)
			if err := os.Rename(filepath.Join(u.opt.Dir, ref.Name), filepath.Join(u.opt.Dir, name)); err != nil {
				return err
			}
			ref.Name = name
			u.segments = append(u.segments, *ref)
			u.newSegs = append(u.newSegs, name)
			u.res.NewSegs++
		}
	}
	return nil
}

// shadowFile is a seekable copy being written (package compressed,
// ShadowWriter) under a temporary name in the index directory. The file
// is created with the first bytes the writer hands on (its first frame,
// a megabyte of text in): most rotated files are smaller, need no copy,
// and so never touch the directory.
type shadowFile struct {
	dir  string
	id   uint64
	f    *os.File
	w    *compressed.ShadowWriter
	kept bool
}

func newShadowFile(dir string, id uint64) *shadowFile {
	s := &shadowFile{dir: dir, id: id}
	s.w = compressed.NewShadowWriter(s, compressed.ShadowFrame)
	return s
}

// Write creates the temporary file on first use.
func (s *shadowFile) Write(p []byte) (int, error) {
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, fmt.Sprintf("shadow-%d-*.part", s.id))
		if err != nil {
			return 0, err
		}
		s.f = f
	}
	return s.f.Write(p)
}

// keep finishes the copy of the bytes t describes, publishes it under its
// name (synced first: the index that names it is published after) and
// records it in t.
func (s *shadowFile) keep(t *compressed.Table) error {
	if err := s.w.Close(); err != nil {
		return err
	}
	st := s.w.Table()
	if st.Size != t.Size || s.f == nil {
		return fmt.Errorf("seekable copy holds %d bytes of %d", st.Size, t.Size)
	}
	// (CreateTemp's 0600: readable as the segments are.)
	if err := s.f.Chmod(0o644); err != nil {
		return err
	}
	if err := s.f.Sync(); err != nil {
		return err
	}
	if err := os.Rename(s.f.Name(), filepath.Join(s.dir, mmapstore.ShadowName(s.id, s.w.Sum()))); err != nil {
		return err
	}
	s.kept = true
	t.Shadow, t.ShadowSum = st, s.w.Sum()
	return nil
}

// discard removes the copy unless kept. (An unkept writer is dropped
// unclosed: closing would flush its buffered frames to a file only to
// remove it.)
func (s *shadowFile) discard() {
	if s.f == nil {
		return
	}
	s.f.Close()
	if !s.kept {
		os.Remove(s.f.Name())
	}
}
