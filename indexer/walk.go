package indexer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
)

// root is a PATH argument prepared for walking.
type root struct {
	mmapstore.Root
	dir  *os.Root // the directory (or the file's parent) opened safely
	name string   // when the root is a file: its name inside dir
}

// found is a regular file seen by the walk.
type found struct {
	root  int
	rel   string // "" for a file root
	dev   uint64
	ino   uint64
	size  int64
	mtime int64
}

// Resolve returns a PATH's absolute path, its real path (grep follows a
// symlink given on the command line; so do we) and whether it is a regular
// file; anything but a regular file or a directory is an error.
func Resolve(given string) (abs, real string, isFile bool, err error) {
	if abs, err = filepath.Abs(given); err != nil {
		return "", "", false, err
	}
	if real, err = filepath.EvalSymlinks(abs); err != nil {
		return "", "", false, err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", "", false, err
	}
	if !st.Mode().IsRegular() && !st.IsDir() {
		return "", "", false, fmt.Errorf("%s: not a regular file or directory", given)
	}
	return abs, real, st.Mode().IsRegular(), nil
}

func resolveRoot(given string) (*root, error) {
	abs, real, isFile, err := Resolve(given)
	if err != nil {
		return nil, err
	}
	r := &root{Root: mmapstore.Root{Given: given, Abs: abs, IsFile: isFile}}
	if isFile {
		r.dir, err = os.OpenRoot(filepath.Dir(real))
		r.name = filepath.Base(real)
	} else {
		r.dir, err = os.OpenRoot(real)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// openFound opens the file the walk found (its device and inode), at its
// name or under the name a rotation gave it since.
func (r *root) openFound(f found) (*os.File, error) { return r.openID(f.rel, f.dev, f.ino) }

// openIdentity opens rec's file (its device and inode) at its path, or
// under the name a rotation gave it since in the same directory.
func (r *root) openIdentity(rec *mmapstore.FileRecord) (*os.File, error) {
	return r.openID(rec.Path, rec.Dev, rec.Ino)
}

func (r *root) openID(rel string, dev, ino uint64) (*os.File, error) {
	f, err := r.open(rel)
	if err == nil {
		if r.IsFile {
			return f, nil // its identity is checked after the read
		}
		if fi, serr := f.Stat(); serr == nil {
			if d, i := logfile.StatIDs(fi); d == dev && i == ino {
				return f, nil
			}
		}
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) || r.IsFile {
		return nil, err
	}
	fh, _, _, err := logfile.OpenIdentity(r.dir, filepath.FromSlash(rel), dev, ino)
	return fh, err
}

// open opens a regular file of this root without following symlinks out
// of it.
func (r *root) open(rel string) (*os.File, error) {
	name := r.name
	if !r.IsFile {
		name = filepath.FromSlash(rel)
	}
	f, _, err := openLog(r.dir, name, false)
	return f, err
}

// openLog opens a log file (a variable: tests make files unreadable, which
// permissions cannot do for root).
var openLog = logfile.Open

// walk lists the regular files under r. Like grep -r, it does not follow
// symlinks met on the way (so none can lead outside the root), and it skips
// the index directory when that lies inside the root.
func walk(ri int, r *root, indexDir string, skip func(rel string, err error), fn func(found)) error {
	if r.IsFile {
		info, err := r.dir.Stat(r.name)
		if err != nil {
			return err
		}
		dev, ino := logfile.StatIDs(info)
		fn(found{root: ri, dev: dev, ino: ino, size: info.Size(), mtime: info.ModTime().UnixNano()})
		return nil
	}
	real, _ := filepath.EvalSymlinks(r.Abs)
	idxReal, _ := filepath.EvalSymlinks(indexDir)
	w := &walker{ri: ri, dir: r.dir, skip: skip, fn: fn, isIndex: func(rel string) bool {
		return idxReal != "" && filepath.Join(real, rel) == idxReal
	}}
	return w.walk(".")
}

// walker walks a root's directory tree through its os.Root (not io/fs,
// whose paths must be valid UTF-8: file names are bytes, and a directory
// whose name is not UTF-8 would be unreadable through it).
//
// Directories are read and their entries lstat'ed by walkWorkers
// goroutines (over 100,000 small files the lstat calls are most of a run
// that finds nothing new, and the CLI's default search makes one first),
// into a tree that is then passed on in the order of a sequential walk,
// so that what the walk reports does not depend on the scheduling.
type walker struct {
	ri      int
	dir     *os.Root
	skip    func(rel string, err error)
	fn      func(found)
	isIndex func(rel string) bool

	mu      sync.Mutex
	queue   []*dirNode // directories to read
	pending int        // directories queued or being read
	wake    *sync.Cond
}

// walkWorkers is how many goroutines read directories.
var walkWorkers = max(1, min(runtime.GOMAXPROCS(0), 4))

// dirNode is a directory read by the walk: its entries in name order.
type dirNode struct {
	rel     string // "." for the root
	err     error  // reading it failed
	entries []dirEntry
}

// dirEntry is a regular file found, a subdirectory, or an entry that could
// not be looked at (err).
type dirEntry struct {
	rel  string
	err  error
	file found
	sub  *dirNode // a directory's listing; nil for a file
}

// walk lists the directory tree at rel ("." for the root) in name order,
// as fs.WalkDir does: a directory that cannot be read is skipped (an error
// only for the root).
func (w *walker) walk(rel string) error {
	root := &dirNode{rel: rel}
	w.wake = sync.NewCond(&w.mu)
	w.queue, w.pending = []*dirNode{root}, 1
	var wg sync.WaitGroup
	for range walkWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for d := w.next(); d != nil; d = w.next() {
				subs := w.read(d)
				w.mu.Lock()
				w.queue = append(w.queue, subs...)
				w.pending += len(subs) - 1
				w.wake.Broadcast()
				w.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if root.err != nil {
		return root.err
	}
	w.report(root)
	return nil
}

// next takes a directory to read; nil when all are read.
func (w *walker) next() *dirNode {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.queue) == 0 && w.pending > 0 {
		w.wake.Wait()
	}
	if len(w.queue) == 0 {
		return nil
	}
	d := w.queue[len(w.queue)-1]
	w.queue = w.queue[:len(w.queue)-1]
	return d
}

// read lists d and looks at its entries; it returns the subdirectories to
// read.
func (w *walker) read(d *dirNode) []*dirNode {
	f, err := w.dir.Open(d.rel)
	var names []string
	if err == nil {
		defer f.Close() // open while its entries are looked at
		// Names only: ReadDir of a directory opened in an os.Root lstats
		// every entry by itself, and Dir.Lstat below does once.
		names, err = f.Readdirnames(-1)
	}
	if err != nil {
		d.err = err
		return nil
	}
	slices.Sort(names)
	dir := logfile.DirOf(f)
	var subs []*dirNode
	d.entries = make([]dirEntry, 0, len(names))
	// The entries' paths, in one string (not one allocation each).
	prefix := d.rel + "/"
	if d.rel == "." {
		prefix = ""
	}
	n := 0
	for _, name := range names {
		n += len(prefix) + len(name)
	}
	buf := make([]byte, 0, n)
	for _, name := range names {
		buf = append(append(buf, prefix...), name...)
	}
	all, off := string(buf), 0
	for _, name := range names {
		p := all[off : off+len(prefix)+len(name)]
		off += len(p)
		st, err := dir.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// deleted since the directory was read
		case err != nil:
			d.entries = append(d.entries, dirEntry{rel: p, err: err})
		case st.IsDir: // not a symlink to one: those are not followed
			if !w.isIndex(p) {
				sub := &dirNode{rel: p}
				subs = append(subs, sub)
				d.entries = append(d.entries, dirEntry{rel: p, sub: sub})
			}
		case st.Regular:
			d.entries = append(d.entries, dirEntry{rel: p, file: found{root: w.ri, rel: p, dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.MTime}})
		}
	}
	return subs
}

// report passes on what was found under d, in the order of a sequential
// walk.
func (w *walker) report(d *dirNode) {
	for i := range d.entries {
		e := &d.entries[i]
		switch {
		case e.err != nil:
			w.skip(e.rel, e.err)
		case e.sub != nil && e.sub.err != nil:
			w.skip(e.rel, e.sub.err)
		case e.sub != nil:
			w.report(e.sub)
		default:
			w.fn(e.file)
		}
	}
}
