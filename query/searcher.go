// Package query owns answering searches over an open index: it parses the
// query language, narrows candidates per segment with the term dictionary
// and postings, verifies candidates by reading their lines (one positioned
// read each, through the offset index), scans what the index cannot narrow,
// and delivers hits in grep's order (path, then line).
package query

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/cespare/xxhash/v2"
	"github.com/logdex/logdex/mmapstore"
)

// File is an indexed log file as the searcher presents it.
type File struct {
	ID    uint64
	Path  string // display path, as grep -r prints it
	Rec   *mmapstore.FileRecord
	spans []spanRef                 // this file's line ranges, in file offset order
	state atomic.Pointer[fileState] // with a Watch: the last look at it
}

type spanRef struct {
	seg  int
	span int
}

// Searcher answers queries over one index snapshot. It reads log files only
// through the index's file table, opening them beneath their root without
// following symlinks out of it. Safe for concurrent use.
type Searcher struct {
	ix    *mmapstore.Index
	roots []mmapstore.Root
	files []*File // sorted by Path
	byID  map[uint64]*File

	mu       sync.Mutex
	dirs     map[int]*rootDir
	open     map[uint64]*sharedFile // open log files, by file id
	watch    *Watch
	lstats   atomic.Int64 // files looked at (for tests)
	noInline bool         // tests: always use the worker pipeline

	// Workers is the number of goroutines verifying and scanning (default
	// GOMAXPROCS).
	Workers int
}

type rootDir struct {
	dir  *os.Root
	real string // the directory's path, symlinks resolved
	name string // for a file root: its name in dir
	err  error
}

// NewSearcher prepares ix for searching. display, when not nil, gives the
// spelling of each root to print (the PATH arguments of this invocation).
func NewSearcher(ix *mmapstore.Index, display []string) *Searcher {
	s := &Searcher{ix: ix, byID: map[uint64]*File{}, dirs: map[int]*rootDir{},
		open: map[uint64]*sharedFile{}}
	s.roots = append(s.roots, ix.Manifest.Roots...)
	for i := range s.roots {
		if i < len(display) {
			s.roots[i].Given = display[i]
		}
	}
	for i := range ix.Manifest.Files {
		rec := &ix.Manifest.Files[i]
		f := &File{ID: rec.ID, Path: mmapstore.DisplayPath(s.roots[rec.Root], rec.Path), Rec: rec}
		s.files = append(s.files, f)
		s.byID[f.ID] = f
	}
	for si, seg := range ix.Segments {
		files := seg.Files()
		for spi, sp := range seg.Spans() {
			if f, ok := s.byID[files[sp.File].ID]; ok {
				f.spans = append(f.spans, spanRef{si, spi})
			}
		}
	}
	for _, f := range s.files {
		sort.Slice(f.spans, func(i, j int) bool {
			a, b := f.spans[i], f.spans[j]
			return ix.Segments[a.seg].Spans()[a.span].StartOffset < ix.Segments[b.seg].Spans()[b.span].StartOffset
		})
	}
	sort.SliceStable(s.files, func(i, j int) bool { return s.files[i].Path < s.files[j].Path })
	return s
}

// Index is the snapshot searched.
func (s *Searcher) Index() *mmapstore.Index { return s.ix }

// Files lists the indexed files in display order.
func (s *Searcher) Files() []*File { return s.files }

// FileByID finds a file by its index id.
func (s *Searcher) FileByID(id uint64) (*File, bool) {
	f, ok := s.byID[id]
	return f, ok
}

// Close releases the opened root directories (not the index).
func (s *Searcher) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.dirs {
		if d.dir != nil {
			d.dir.Close()
		}
	}
	s.dirs = map[int]*rootDir{}
	for id, sf := range s.open {
		s.dropLocked(id, sf)
	}
	return nil
}

func (s *Searcher) rootDir(i int) *rootDir {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.dirs[i]; ok {
		return d
	}
	d := &rootDir{}
	r := s.roots[i]
	real, err := filepath.EvalSymlinks(r.Abs)
	if err == nil {
		if r.IsFile {
			d.real, d.name = filepath.Dir(real), filepath.Base(real)
		} else {
			d.real = real
		}
		d.dir, d.err = os.OpenRoot(d.real)
	} else {
		d.err = err
	}
	s.dirs[i] = d
	return d
}

// Staleness of a file relative to its index record.
var (
	errDeleted  = errors.New("deleted since indexing")
	errReplaced = errors.New("replaced since indexing (rotated or truncated)")
)

// locate returns the directory f lies beneath and its name there.
func (s *Searcher) locate(f *File) (*os.Root, string, error) {
	d := s.rootDir(f.Rec.Root)
	if d.err != nil {
		return nil, "", d.err
	}
	if d.name != "" {
		return d.dir, d.name, nil
	}
	return d.dir, filepath.FromSlash(f.Rec.Path), nil
}

// OpenFile opens f beneath its root. The returned file may differ from the
// indexed one; Check tells.
func (s *Searcher) OpenFile(f *File) (*os.File, error) {
	fh, _, err := s.openFile(f, os.O_RDONLY)
	return fh, err
}

// openFile opens and stats f beneath its root; only a regular file will do.
func (s *Searcher) openFile(f *File, flag int) (*os.File, fs.FileInfo, error) {
	dir, name, err := s.locate(f)
	if err != nil {
		return nil, nil, err
	}
	fh, err := dir.OpenFile(name, flag, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := fh.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", f.Path)
	}
	if err != nil {
		fh.Close()
		return nil, nil, err
	}
	return fh, st, nil
}

// handle is an open log file checked against its index record.
type handle struct {
	f     *os.File
	size  int64
	stale error // nil when the file is the one indexed (possibly grown)
	// shared is set when f belongs to the searcher's open-file cache.
	shared *sharedFile
	s      *Searcher
	closed atomic.Bool
}

// check opens f and compares device, inode, size and fingerprint with the
// record. A file that is not the indexed one is still returned (stale set)
// so that it can be scanned as it is now, as grep would.
func (s *Searcher) check(f *File) (*handle, error) {
	fh, st, err := s.openFile(f, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return &handle{stale: errDeleted}, nil
	}
	if err != nil {
		return nil, err
	}
	h := &handle{f: fh, size: st.Size()}
	rec := f.Rec
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && (uint64(sys.Dev) != rec.Dev || sys.Ino != rec.Ino) {
		h.stale = errReplaced
		return h, nil
	}
	if h.size < rec.Indexed {
		h.stale = errReplaced
		return h, nil
	}
	if same, err := sameStart(fh, rec); err != nil {
		fh.Close()
		return nil, err
	} else if !same {
		h.stale = errReplaced
	}
	return h, nil
}

// sameStart reports whether r still begins with the bytes fingerprinted at
// indexing (a file truncated and rewritten in place does not).
func sameStart(r io.ReaderAt, rec *mmapstore.FileRecord) (bool, error) {
	if rec.FPLen <= 0 {
		return true, nil
	}
	buf := make([]byte, rec.FPLen)
	if n, err := r.ReadAt(buf, 0); int64(n) < rec.FPLen {
		if err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		return false, nil
	}
	return xxhash.Sum64(buf) == rec.FP, nil
}

// A search looks at every file it may answer from, so checking a file
// must be cheap. Files being read stay open between searches (no open,
// fstat, fingerprint read and close per query), and with a Watch what
// lstat said of a file is kept until inotify reports a change at or
// above its path, so an unchanged file costs no syscall at all.

// sharedFile is an open log file reused across searches; refs counts the
// handles using it (the cache's own reference included while cached).
type sharedFile struct {
	f        *os.File
	dev, ino uint64
	refs     int
}

// maxOpenFiles bounds the log files kept open between searches.
const maxOpenFiles = 256

// fileState is what lstat said of an indexed file's path.
type fileState struct {
	seq      uint64 // Watch sequence before the lstat
	path     string // the path watched
	err      error
	regular  bool
	dev, ino uint64
	size     int64
	mtime    int64
}

// SetWatch makes the searcher trust earlier looks at files that w reports
// unchanged. Call before searching.
func (s *Searcher) SetWatch(w *Watch) { s.watch = w }

// lookup lstats f's path beneath its root, or answers from an earlier
// lstat that the Watch vouches for.
func (s *Searcher) lookup(f *File) fileState {
	dir, name, err := s.locate(f)
	if err != nil {
		return fileState{err: err}
	}
	w := s.watch
	if w != nil {
		if st := f.state.Load(); st != nil && w.unchangedSince(st.path, st.seq) {
			return *st
		}
	}
	var st fileState
	if w != nil {
		st.seq = w.now()
	}
	s.lstats.Add(1)
	fi, err := dir.Lstat(name)
	if err != nil {
		st.err = err
	} else {
		st.regular, st.size, st.mtime = fi.Mode().IsRegular(), fi.Size(), fi.ModTime().UnixNano()
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
			st.dev, st.ino = uint64(sys.Dev), sys.Ino
		}
	}
	if w != nil {
		st.path = filepath.Join(s.rootDir(f.Rec.Root).real, name)
		f.state.Store(&st)
	}
	return st
}

// stat checks f against its index record, from lookup when the path holds
// the indexed inode, and returns a handle that can read it when mustRead.
// Anything unusual (replaced, a symlink now, unreadable) takes the full
// check.
func (s *Searcher) stat(f *File, mustRead bool) (*handle, error) {
	st := s.lookup(f)
	if errors.Is(st.err, os.ErrNotExist) {
		s.forget(f.ID)
		return &handle{stale: errDeleted}, nil
	}
	if st.err != nil || !st.regular || st.dev != f.Rec.Dev || st.ino != f.Rec.Ino {
		s.forget(f.ID)
		return s.check(f)
	}
	unchanged := st.size == f.Rec.Indexed && st.mtime == f.Rec.MTime
	if unchanged && !mustRead {
		return unchangedHandle, nil
	}
	sf, err := s.shared(f)
	if err != nil {
		return s.check(f)
	}
	h := &handle{f: sf.f, size: st.size, shared: sf, s: s}
	switch {
	case st.size < f.Rec.Indexed:
		h.stale = errReplaced
	case !unchanged:
		// Changed in place: grown by appends, or truncated and rewritten
		// (copytruncate), which the first bytes tell apart.
		if same, err := sameStart(sf.f, f.Rec); err != nil {
			h.close()
			return nil, err
		} else if !same {
			h.stale = errReplaced
		}
	}
	return h, nil
}

// unchangedHandle stands for every file found as indexed when nothing
// needs reading (it holds nothing to close).
var unchangedHandle = &handle{}

// shared returns the open file for f (the indexed inode), opening it when
// needed, with a reference for the caller.
func (s *Searcher) shared(f *File) (*sharedFile, error) {
	s.mu.Lock()
	if sf, ok := s.open[f.ID]; ok && sf.dev == f.Rec.Dev && sf.ino == f.Rec.Ino {
		sf.refs++
		s.mu.Unlock()
		return sf, nil
	}
	s.mu.Unlock()
	fh, st, err := s.openFile(f, os.O_RDONLY|syscall.O_NOFOLLOW)
	if err != nil {
		return nil, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || uint64(sys.Dev) != f.Rec.Dev || sys.Ino != f.Rec.Ino {
		fh.Close()
		return nil, errReplaced
	}
	sf := &sharedFile{f: fh, dev: uint64(sys.Dev), ino: sys.Ino, refs: 1}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.open[f.ID]; ok {
		if old.dev == sf.dev && old.ino == sf.ino {
			// Another search opened it meanwhile: use that one.
			fh.Close()
			old.refs++
			return old, nil
		}
		s.dropLocked(f.ID, old)
	}
	if len(s.open) >= maxOpenFiles {
		for id, o := range s.open {
			if o.refs == 1 {
				s.dropLocked(id, o)
				break
			}
		}
	}
	if len(s.open) < maxOpenFiles {
		sf.refs++ // the cache's reference
		s.open[f.ID] = sf
	}
	return sf, nil
}

// forget closes the kept-open file of id, if any, once its users are
// done: a deleted log must not stay allocated on disk because logdex
// holds it open.
func (s *Searcher) forget(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sf, ok := s.open[id]; ok {
		s.dropLocked(id, sf)
	}
}

// dropLocked removes sf from the cache; it closes when its last user is
// done.
func (s *Searcher) dropLocked(id uint64, sf *sharedFile) {
	delete(s.open, id)
	s.unrefLocked(sf)
}

func (s *Searcher) unrefLocked(sf *sharedFile) {
	if sf.refs--; sf.refs == 0 {
		sf.f.Close()
	}
}

// close is idempotent: every task of a file holds the same handle.
func (h *handle) close() {
	switch {
	case h == nil || h.f == nil || !h.closed.CompareAndSwap(false, true):
	case h.shared != nil:
		h.s.mu.Lock()
		h.s.unrefLocked(h.shared)
		h.s.mu.Unlock()
	default:
		h.f.Close()
	}
}
