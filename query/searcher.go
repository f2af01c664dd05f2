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
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"

	"github.com/cespare/xxhash/v2"
	"github.com/logdex/logdex/mmapstore"
)

// File is an indexed log file as the searcher presents it.
type File struct {
	ID    uint64
	Path  string // display path, as grep -r prints it
	Rec   *mmapstore.FileRecord
	spans []spanRef // this file's line ranges, in file offset order
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

	mu   sync.Mutex
	dirs map[int]*rootDir

	// Workers is the number of goroutines verifying and scanning (default
	// GOMAXPROCS).
	Workers int
}

type rootDir struct {
	dir  *os.Root
	name string // for a file root: its name in dir
	err  error
}

// NewSearcher prepares ix for searching. display, when not nil, gives the
// spelling of each root to print (the PATH arguments of this invocation).
func NewSearcher(ix *mmapstore.Index, display []string) *Searcher {
	s := &Searcher{ix: ix, byID: map[uint64]*File{}, dirs: map[int]*rootDir{}}
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
			d.dir, d.err = os.OpenRoot(filepath.Dir(real))
			d.name = filepath.Base(real)
		} else {
			d.dir, d.err = os.OpenRoot(real)
		}
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
	dir, name, err := s.locate(f)
	if err != nil {
		return nil, err
	}
	fh, err := dir.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		fh.Close()
		return nil, fmt.Errorf("%s: not a regular file", f.Path)
	}
	return fh, nil
}

// handle is an open log file checked against its index record.
type handle struct {
	f     *os.File
	size  int64
	stale error // nil when the file is the one indexed (possibly grown)
}

// check opens f and compares device, inode, size and fingerprint with the
// record. A file that is not the indexed one is still returned (stale set)
// so that it can be scanned as it is now, as grep would.
func (s *Searcher) check(f *File) (*handle, error) {
	fh, err := s.OpenFile(f)
	if errors.Is(err, os.ErrNotExist) {
		return &handle{stale: errDeleted}, nil
	}
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
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
	if rec.FPLen > 0 {
		buf := make([]byte, rec.FPLen)
		if n, err := fh.ReadAt(buf, 0); int64(n) < rec.FPLen {
			if err != nil && !errors.Is(err, io.EOF) {
				fh.Close()
				return nil, err
			}
			h.stale = errReplaced
		} else if xxhash.Sum64(buf) != rec.FP {
			h.stale = errReplaced
		}
	}
	return h, nil
}

// stat is check without opening when the file is unchanged and nothing
// needs reading: one stat per file and query.
func (s *Searcher) stat(f *File, mustRead bool) (*handle, error) {
	if !mustRead {
		dir, name, err := s.locate(f)
		if err != nil {
			return nil, err
		}
		fi, err := dir.Stat(name)
		if errors.Is(err, os.ErrNotExist) {
			return &handle{stale: errDeleted}, nil
		}
		if err != nil {
			return nil, err
		}
		if sys, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(sys.Dev) == f.Rec.Dev && sys.Ino == f.Rec.Ino &&
			fi.Size() == f.Rec.Indexed && fi.ModTime().UnixNano() == f.Rec.MTime {
			return &handle{size: fi.Size()}, nil
		}
	}
	return s.check(f)
}

func (h *handle) close() {
	if h != nil && h.f != nil {
		h.f.Close()
	}
}
