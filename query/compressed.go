package query

// Compressed logs: a gzip, zstd, bzip2 or xz file is indexed as its
// decompressed lines, and read back through its restart points (package
// compressed): a matched line costs at most one checkpoint interval of
// decompression, and a task reading many lines of one file in offset order
// decompresses it once.

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/compressed"
	"github.com/logdex/logdex/query/live"
)

// compressedInfo is what reading a compressed file takes, loaded once.
type compressedInfo struct {
	once  sync.Once
	kind  compressed.Kind
	table *compressed.Table
	err   error
}

// table loads f's restart points from the segment holding its last lines.
func (f *File) table() (*compressed.Table, compressed.Kind, error) {
	ci := &f.ci
	ci.once.Do(func() {
		rec := f.Record()
		if ci.kind, ci.err = compressed.ParseKind(rec.Compression); ci.err != nil {
			return
		}
		for i := len(f.spans) - 1; i >= 0 && ci.table == nil; i-- {
			b, ok, err := f.s.segs[f.spans[i].seg].Checkpoints(f.ID)
			if err != nil {
				ci.err = err
				return
			}
			if ok {
				ci.table, ci.err = compressed.DecodeTable(b)
			}
		}
		if ci.table == nil && ci.err == nil {
			ci.err = fmt.Errorf("%s: no restart points in the index", f.Path)
		}
	})
	return ci.table, ci.kind, ci.err
}

// source returns what reads f's lines at their offsets through h: the file
// itself, or for a compressed file its decompressed content (one reader
// per caller: it keeps its decoder between reads).
func (s *Searcher) source(f *File, h *live.Handle) (io.ReaderAt, error) {
	if f.Record().Compression == "" {
		return h.File(), nil
	}
	t, kind, err := f.table()
	if err != nil || s.damagedFiles[f.ID] {
		// Its restart points are lost with a damaged segment: decompress
		// from the start (reads come in offset order, so once per task).
		if kind, err = compressed.ParseKind(f.Record().Compression); err != nil {
			return nil, err
		}
		return &streamed{f: h.File(), size: h.Size(), kind: kind, logical: f.Record().Indexed}, nil
	}
	d := &decompressed{r: compressed.NewReader(h.File(), h.Size(), kind, t), size: t.Size, logical: f.Record().Indexed}
	if t.Shadow != nil {
		if sh := s.shadow(f.ID, t); sh != nil {
			// Read through the seekable copy; the file itself (its own
			// restart points) stays the fallback should the copy fail.
			d.fallback, d.r = d.r, compressed.NewShadowReader(sh, t.Shadow.CompressedSize, t.Shadow)
		}
	}
	return d, nil
}

// shadows holds the seekable copies a Searcher has opened, by file id (nil:
// missing or not what the table describes), closed with it.
type shadows struct {
	mu    sync.Mutex
	files map[uint64]*os.File
}

// shadow opens file id's seekable copy in the index directory (once), or
// returns nil when it is missing or not the size its table says: reads
// then decompress the file itself.
func (s *Searcher) shadow(id uint64, t *compressed.Table) *os.File {
	s.sh.mu.Lock()
	defer s.sh.mu.Unlock()
	if f, ok := s.sh.files[id]; ok {
		return f
	}
	if s.sh.files == nil {
		s.sh.files = map[uint64]*os.File{}
	}
	f, err := os.OpenFile(filepath.Join(s.ix.Dir(), mmapstore.ShadowName(id, t.ShadowSum)), os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err == nil {
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() != t.Shadow.CompressedSize {
			f.Close()
			f = nil
		}
	} else {
		f = nil
	}
	s.sh.files[id] = f
	return f
}

// closeShadows closes the seekable copies opened.
func (s *Searcher) closeShadows() {
	s.sh.mu.Lock()
	defer s.sh.mu.Unlock()
	for _, f := range s.sh.files {
		if f != nil {
			f.Close()
		}
	}
	s.sh.files = nil
}

// streamed reads a compressed file's content by decompressing it from the
// start, forward; an earlier offset starts over. Past the decompressed
// bytes it supplies the newline the indexer did, up to logical.
type streamed struct {
	f       io.ReaderAt
	size    int64
	kind    compressed.Kind
	logical int64
	r       io.Reader
	pos     int64
	skip    []byte
}

func (s *streamed) ReadAt(p []byte, off int64) (int, error) {
	if s.r == nil || off < s.pos {
		s.r, s.pos = compressed.NewIndexer(s.f, s.size, s.kind, math.MaxInt64), 0
	}
	for s.pos < off {
		if s.skip == nil {
			s.skip = make([]byte, 64<<10)
		}
		n, err := s.r.Read(s.skip[:min(int64(len(s.skip)), off-s.pos)])
		s.pos += int64(n)
		if errors.Is(err, compressed.ErrTruncated) && s.pos < s.logical-1 {
			return 0, io.EOF // truncated since it was checked, before off: nothing there
		}
		if err != nil {
			break
		}
	}
	n := 0
	if s.pos == off {
		var err error
		n, err = io.ReadFull(s.r, p)
		s.pos += int64(n)
		if errors.Is(err, compressed.ErrTruncated) && off+int64(n) < s.logical-1 {
			return n, io.EOF // truncated since it was checked: read short, as a plain file
		}
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF && off+int64(n) < s.logical-1 {
			return n, err // damaged before the lines indexed end
		}
	}
	for n < len(p) && off+int64(n) < s.logical && off+int64(n) >= s.pos {
		p[n] = '\n'
		n++
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// decompressed is a compressed file's content as indexed: the decompressed
// bytes, and the newline the indexer supplied after a last line without
// one.
type decompressed struct {
	r       io.ReaderAt // a compressed.Reader, or a ShadowReader of its copy
	size    int64       // decompressed bytes
	logical int64       // with the supplied newline: size or size+1
	// fallback reads the file itself when r reads its seekable copy: a
	// copy that fails (damaged since it was written) is dropped for it.
	fallback io.ReaderAt
}

func (d *decompressed) ReadAt(p []byte, off int64) (int, error) {
	n := 0
	if off < d.size {
		var err error
		want := p[:min(int64(len(p)), d.size-off)]
		n, err = d.r.ReadAt(want, off)
		if err != nil && err != io.EOF && d.fallback != nil {
			d.r, d.fallback = d.fallback, nil
			n, err = d.r.ReadAt(want, off)
		}
		if errors.Is(err, compressed.ErrTruncated) {
			return n, io.EOF // truncated since it was checked: read short, as a plain file
		}
		if err != nil && err != io.EOF {
			return n, err
		}
	}
	for n < len(p) && off+int64(n) < d.logical {
		p[n] = '\n'
		n++
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// ReadCompressed opens f's decompressed content for reading by offset (the
// caller closes the returned file), with its size as indexed (its lines,
// the last one's newline supplied when it had none) and the size of the
// content itself as far as indexed (what zcat prints: without that
// newline, when known).
func (s *Searcher) ReadCompressed(f *File) (r io.ReaderAt, fh *os.File, indexed, content int64, err error) {
	h, err := s.logs.Check(f.lf)
	if err != nil {
		return nil, nil, 0, 0, err
	}
	if h.Stale() != nil {
		h.Close()
		return nil, nil, 0, 0, h.Stale()
	}
	if r, err = s.source(f, h); err != nil {
		h.Close()
		return nil, nil, 0, 0, err
	}
	indexed, content = f.Record().Indexed, f.Record().Indexed
	if d, ok := r.(*decompressed); ok {
		content = min(content, d.size)
	}
	return r, h.File(), indexed, content, nil
}

// ZstdWindow is the window the first frame of zstd file f asks for (after
// any skippable frames): what a client decoding it needs.
func ZstdWindow(f io.ReaderAt) (int64, error) { return compressed.ZstdWindow(f) }
