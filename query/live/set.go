// Package live owns the log files as they are now, as opposed to as the
// index saw them: opening them beneath their roots (never following a
// symlink out of one), keeping the ones being read open between searches,
// checking each against its index record (grown by appends, rotated,
// truncated, replaced, deleted), and the inotify Watch that lets a
// long-running server skip those checks for files nothing has touched.
package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
)

// Staleness of a file relative to its index record.
var (
	ErrDeleted  = errors.New("deleted since indexing")
	ErrReplaced = errors.New("replaced since indexing (rotated or truncated)")
	// ErrNotFile: the path names a symlink or a non-file now; grep -r
	// would not read it either.
	ErrNotFile = errors.New("no longer a regular file (symlinks are not followed)")
)

// Set is the log files of one index snapshot. Safe for concurrent use.
//
// A search looks at every file it may answer from, so checking a file
// must be cheap. Files being read stay open between searches (no open,
// fstat, fingerprint read and close per query), and with a Watch what
// lstat said of a file is kept until inotify reports a change at or
// above its path, so an unchanged file costs no syscall at all.
type Set struct {
	roots []mmapstore.Root

	mu     sync.Mutex
	dirs   map[int]*rootDir
	open   map[uint64]*sharedFile // open log files, by file id
	watch  *Watch
	lstats atomic.Int64 // files looked at (for tests)
	// listings: directories' names by inode, for files renamed since
	// indexing (under mu).
	listings map[dirKey]dirListing
	// seen: what an indexing run that just ended found at files' paths
	// (AssumeSeen), found by file id through seenIDs; read-only once set.
	seen    []logfile.Seen
	seenIDs mmapstore.IDIndex
}

type rootDir struct {
	dir  *os.Root
	real string // the directory's path, symlinks resolved
	name string // for a file root: its name in dir
	err  error
	// bare is real opened again as a bare descriptor (openDir), on first
	// use; nil when that failed or found another directory than dir.
	bareOnce sync.Once
	bare     *logfile.Dir
}

// openDir opens the directory rel (slash-separated) beneath root d: as a
// bare descriptor where openat2 serves (no network-poller system calls),
// else through d's os.Root. Both resolve rel as os.Root does. bare is
// opened by d's path, later than d's os.Root: it is used only if it is the
// same directory (a rename in between would make them differ).
func (d *rootDir) openDir(rel string) (*logfile.Dir, error) {
	d.bareOnce.Do(func() {
		bare, err := logfile.OpenRootDir(d.real)
		if err != nil {
			return
		}
		if fi, err := d.dir.Stat("."); err == nil && bare.SameAs(fi) {
			d.bare = bare
		} else {
			bare.Close()
		}
	})
	if d.bare != nil {
		if dir, ok := d.bare.OpenBeneath(rel); ok {
			return dir, nil
		}
	}
	return logfile.OpenDir(d.dir, rel)
}

// File is one indexed log file tracked by a Set.
type File struct {
	rec   *mmapstore.FileRecord     // never modified
	state atomic.Pointer[fileState] // with a Watch: the last look at it
}

// NewSet prepares the files beneath roots (the manifest's) for reading.
func NewSet(roots []mmapstore.Root) *Set {
	return &Set{roots: roots, dirs: map[int]*rootDir{}, open: map[uint64]*sharedFile{}}
}

// Track returns the live view of the file rec describes.
func (s *Set) Track(rec mmapstore.FileRecord) *File { return &File{rec: &rec} }

// TrackAll returns the live views of recs, which must not change while
// they are used (an open index's records): one allocation for all, where
// an index may list 100,000 files.
func (s *Set) TrackAll(recs []mmapstore.FileRecord) []File {
	fs := make([]File, len(recs))
	for i := range recs {
		fs[i].rec = &recs[i]
	}
	return fs
}

// Record is the file's index record.
func (f *File) Record() mmapstore.FileRecord { return *f.rec }

// SetWatch makes the set trust earlier looks at files that w reports
// unchanged. Call before use.
func (s *Set) SetWatch(w *Watch) { s.watch = w }

// Sync makes what the Watch vouches for current (Watch.Sync): call it
// when a search begins.
func (s *Set) Sync() {
	if s.watch != nil {
		s.watch.Sync()
	}
}

// StartSync is Sync without the wait (Watch.StartSync): wait returns
// once it is done.
func (s *Set) StartSync() (wait func()) {
	if s.watch == nil {
		return func() {}
	}
	done := s.watch.StartSync()
	return func() { <-done }
}

// ChangeSeq syncs (unless synced: the caller just did) and returns the
// Watch's change sequence: while it stays the same, no file beneath the
// roots changed. ok is false when no watch vouches for that.
func (s *Set) ChangeSeq(synced bool) (seq uint64, ok bool) {
	if s.watch == nil || !synced && !s.watch.Sync() {
		return 0, false
	}
	return s.watch.now(), s.watch.Err() == nil
}

// AssumeSeen makes the set take what an indexing run found at files' paths
// (indexer.Result.Seen) as their lstat, for a search that begins right
// after the run: its answer is then as of the run's walk, moments earlier
// in the same command. A file whose record names another path (a run since
// moved it) is looked at. Call before use; not for long-lived sets.
func (s *Set) AssumeSeen(seen []logfile.Seen) {
	s.seen = seen
	s.seenIDs = mmapstore.NewIDIndex(len(seen), func(i int) uint64 { return seen[i].ID })
}

// Lookups counts the files looked at with lstat (for tests).
func (s *Set) Lookups() int64 { return s.lstats.Load() }

// Close closes the root directories and the files kept open.
func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.dirs {
		if d.dir != nil {
			d.dir.Close()
		}
		if d.bare != nil {
			d.bare.Close()
		}
	}
	s.dirs = map[int]*rootDir{}
	for id, sf := range s.open {
		s.dropLocked(id, sf)
	}
	return nil
}

func (s *Set) rootDir(i int) *rootDir {
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

// locate returns the directory f lies beneath and its name there.
func (s *Set) locate(f *File) (*os.Root, string, error) {
	d := s.rootDir(f.rec.Root)
	if d.err != nil {
		return nil, "", d.err
	}
	if d.name != "" {
		return d.dir, d.name, nil
	}
	return d.dir, filepath.FromSlash(f.rec.Path), nil
}

// Open opens f beneath its root: the indexed file, at its path or, when a
// rotation renamed it since, under its new name in its directory (the
// offsets a search gave are its own); else what its path holds now, which
// may differ from the indexed file (Check tells), but never through a
// symlink put in its place (os.Root keeps its target beneath the root,
// which may still be another log, or any file beside a log given alone).
func (s *Set) Open(f *File) (*os.File, error) {
	dir, name, err := s.locate(f)
	if err != nil {
		return nil, err
	}
	fh, st, err := logfile.Open(dir, name, true)
	if err == nil {
		if dev, ino := logfile.StatIDs(st); dev == f.rec.Dev && ino == f.rec.Ino {
			return fh, nil
		}
	}
	if h := s.moved(f); h != nil {
		if fh != nil {
			fh.Close()
		}
		return h.f, nil
	}
	return fh, err
}

// Handle is an open log file checked against its index record.
type Handle struct {
	f     *os.File
	size  int64
	stale error // nil when the file is the one indexed (possibly grown)
	// shared is set when f belongs to the set's open-file cache.
	shared *sharedFile
	s      *Set
	closed atomic.Bool
	// dev, ino identify f (when not nil).
	dev, ino uint64
	// moved is the name the indexed file has now, when a rotation renamed
	// it (relative to its root, slash-separated).
	moved string
}

// Holds reports whether f's indexed bytes are still in its file, read
// afresh (no cached state): the indexed inode, at its path or renamed in
// its directory, at least as long as indexed and starting as it did. A
// reader that must not pass on lines of a file truncated while it read
// them asks after reading.
func (s *Set) Holds(f *File) bool {
	dir, name, err := s.locate(f)
	if err != nil {
		return false
	}
	fh, fi, _, err := logfile.OpenIdentity(dir, name, f.rec.Dev, f.rec.Ino)
	if err != nil {
		return false
	}
	defer fh.Close()
	if !sizeHolds(f.rec, fi.Size()) {
		return false
	}
	same, err := f.rec.SameContent(fh)
	return err == nil && same
}

// Identity is the device and inode of the open file (ok false: none).
func (h *Handle) Identity() (dev, ino uint64, ok bool) { return h.dev, h.ino, h.f != nil }

// File is the open file, nil when it could not be opened (Stale says why).
func (h *Handle) File() *os.File { return h.f }

// Size is the file's size when it was checked.
func (h *Handle) Size() int64 { return h.size }

// Stale is nil when the file is the one indexed (possibly grown), else
// ErrDeleted, ErrReplaced or the error that kept it from being checked.
func (h *Handle) Stale() error { return h.stale }

// Check opens f and compares device, inode, size and fingerprint with the
// record. A file that is not the indexed one is still returned (Stale set)
// so that it can be read as it is now, as grep would.
func (s *Set) Check(f *File) (*Handle, error) {
	dir, name, err := s.locate(f)
	if err != nil {
		return nil, err
	}
	// A symlink in the file's place is not followed (grep -r does not read
	// it either): logfile.Open refuses one; when the open fails, what is
	// there says why (a symlink leading out of the root, or nowhere, is
	// not a file; nothing there is a deletion).
	fh, st, err := logfile.Open(dir, name, true)
	if err != nil {
		switch fi, lerr := dir.Lstat(name); {
		case lerr == nil && !fi.Mode().IsRegular(), errors.Is(err, syscall.ELOOP), errors.Is(err, logfile.ErrNotRegular):
			return &Handle{stale: ErrNotFile}, nil
		case errors.Is(err, os.ErrNotExist):
			return &Handle{stale: ErrDeleted}, nil
		}
		return nil, err
	}
	h := &Handle{f: fh, size: st.Size()}
	h.dev, h.ino = logfile.StatIDs(st)
	rec := f.rec
	if dev, ino := h.dev, h.ino; dev != rec.Dev || ino != rec.Ino || !sizeHolds(rec, h.size) {
		h.stale = ErrReplaced
		return h, nil
	}
	if same, err := rec.SameContent(fh); err != nil {
		fh.Close()
		return nil, err
	} else if !same {
		h.stale = ErrReplaced
	}
	return h, nil
}

// fileState is what lstat said of an indexed file's path.
type fileState struct {
	seq  uint64 // Watch sequence before the lstat
	path string // the path watched
	err  error
	logfile.Stat
}

// lookup lstats f's path beneath its root, or answers from an earlier
// lstat that the Watch vouches for.
func (s *Set) lookup(c *Dirs, f *File) fileState {
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
	if i, ok := s.seenIDs.Find(f.rec.ID); ok && s.seen[i].Root == f.rec.Root && s.seen[i].Path == f.rec.Path {
		sn := &s.seen[i]
		st.Stat = sn.Stat
		return st
	}
	if ls, err, ok := c.lookedAt(f); ok {
		st.err, st.Stat = err, ls
		return st
	}
	ls, err := s.lstatIn(c, f, dir, name)
	st.err, st.Stat = err, ls
	if w != nil {
		st.path = filepath.Join(s.rootDir(f.rec.Root).real, name)
		f.state.Store(&st)
	}
	return st
}

// lstatIn lstats f (at name beneath dir) in c's open directory, or by its
// path when c has none for it.
func (s *Set) lstatIn(c *Dirs, f *File, dir *os.Root, name string) (logfile.Stat, error) {
	s.lstats.Add(1)
	if d, base := c.of(f); d != nil {
		return d.Lstat(base)
	}
	fi, err := dir.Lstat(name)
	if err != nil {
		return logfile.Stat{}, err
	}
	dev, ino := logfile.StatIDs(fi)
	return logfile.Stat{Regular: fi.Mode().IsRegular(), IsDir: fi.IsDir(), Dev: dev, Ino: ino, Size: fi.Size(), MTime: fi.ModTime().UnixNano()}, nil
}

// Stat checks f against its index record, from lookup when the path holds
// the indexed inode, and returns a handle that can read it when mustRead.
// Anything unusual (replaced, a symlink now, unreadable) takes the full
// Check.
func (s *Set) Stat(f *File, mustRead bool) (*Handle, error) { return s.StatIn(nil, f, mustRead) }

// StatIn is Stat looking f up in c's open directory (a pass over files in
// path order).
func (s *Set) StatIn(c *Dirs, f *File, mustRead bool) (*Handle, error) {
	st := s.lookup(c, f)
	rec := f.rec
	if errors.Is(st.err, os.ErrNotExist) {
		s.forget(rec.ID)
		if h := s.moved(f); h != nil {
			return h, nil
		}
		return &Handle{stale: ErrDeleted}, nil
	}
	if st.err != nil || !st.Regular || st.Dev != rec.Dev || st.Ino != rec.Ino {
		s.forget(rec.ID)
		if h := s.moved(f); h != nil {
			return h, nil
		}
		return s.Check(f)
	}
	unchanged := st.Size == indexedSize(rec) && st.MTime == rec.MTime
	if unchanged && !mustRead {
		return unchangedHandle, nil
	}
	sf, err := s.shared(c, f)
	if err != nil {
		return s.Check(f)
	}
	h := &Handle{f: sf.f, size: st.Size, shared: sf, s: s, dev: sf.dev, ino: sf.ino}
	switch {
	case !sizeHolds(rec, st.Size):
		h.stale = ErrReplaced
	case !unchanged:
		// Changed in place: grown by appends, or truncated and rewritten
		// (copytruncate), which the fingerprints tell apart.
		if same, err := rec.SameContent(sf.f); err != nil {
			h.Close()
			return nil, err
		} else if !same {
			h.stale = ErrReplaced
		}
	}
	return h, nil
}

// unchangedHandle stands for every file found as indexed when nothing
// needs reading (it holds nothing to close).
var unchangedHandle = &Handle{}

// Close releases the handle. It is idempotent: every task of a file holds
// the same handle.
func (h *Handle) Close() {
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

// ErrMoved is returned by Reopen when the path now names another file
// than the handle's and the handle's own could not be reopened.
var ErrMoved = errors.New("the checked file is no longer at its path")

// procSelfFD reopens a descriptor's file (a variable: tests take it away).
var procSelfFD = "/proc/self/fd/"

// Reopen returns a descriptor of its own (own file offset, for seek and
// sendfile; the handle's may be shared by concurrent searches) on the very
// file h checked, even when its path names another file by now (rotated
// since the check). It reopens the descriptor through /proc/self/fd, which
// names the open inode, not a path; without /proc it opens f's path again
// and accepts it only when device and inode are the checked file's
// (ErrMoved otherwise). The caller closes the result.
func (s *Set) Reopen(f *File, h *Handle) (*os.File, error) {
	if h == nil || h.f == nil {
		return nil, fmt.Errorf("reopen: %w", os.ErrClosed)
	}
	want, err := h.f.Stat()
	if err != nil {
		return nil, err
	}
	var fh *os.File
	rc, err := h.f.SyscallConn()
	if err == nil {
		cerr := rc.Control(func(fd uintptr) {
			fh, err = os.OpenFile(procSelfFD+strconv.FormatUint(uint64(fd), 10), os.O_RDONLY, 0)
		})
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		fh, err = s.Open(f)
	}
	if err != nil {
		return nil, err
	}
	got, err := fh.Stat()
	if err == nil && !os.SameFile(want, got) {
		err = ErrMoved
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
}

// Failed is a handle for a file that could not be checked: nothing to
// read, Stale says why.
func Failed(err error) *Handle { return &Handle{stale: err} }

// sizeHolds reports whether a file of that size may still hold rec's
// indexed bytes: at least its indexed prefix (a log grows), or for a
// compressed file, indexed whole and never grown, exactly its size.
func sizeHolds(rec *mmapstore.FileRecord, size int64) bool {
	if rec.Compression != "" {
		return size == rec.Size
	}
	return size >= rec.Indexed
}

// indexedSize is the size a file had where the index covers it: the
// indexed prefix, or a compressed file's whole (compressed) size, which is
// indexed whole and never grows.
func indexedSize(rec *mmapstore.FileRecord) int64 {
	if rec.Compression != "" {
		return rec.Size
	}
	return rec.Indexed
}
