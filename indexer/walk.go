package indexer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

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
type walker struct {
	ri      int
	dir     *os.Root
	skip    func(rel string, err error)
	fn      func(found)
	isIndex func(rel string) bool
}

// walk lists the directory rel ("." for the root) in name order, as
// fs.WalkDir does: a directory that cannot be read is skipped (an error
// only for the root).
func (w *walker) walk(rel string) error {
	d, err := w.dir.Open(rel)
	var names []string
	if err == nil {
		defer d.Close() // open while its entries are looked at
		// Names only: ReadDir of a directory opened in an os.Root lstats
		// every entry by itself, and Dir.Lstat below does once.
		names, err = d.Readdirnames(-1)
	}
	if err != nil {
		if rel == "." {
			return err
		}
		w.skip(rel, err)
		return nil
	}
	slices.Sort(names)
	dir := logfile.DirOf(d)
	for _, name := range names {
		p := name
		if rel != "." {
			p = rel + "/" + name
		}
		st, err := dir.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since the directory was read
		}
		if err != nil {
			w.skip(p, err)
			continue
		}
		switch {
		case st.IsDir: // not a symlink to one: those are not followed
			if !w.isIndex(p) {
				if err := w.walk(p); err != nil {
					return err
				}
			}
		case st.Regular:
			w.fn(found{root: w.ri, rel: p, dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.MTime})
		}
	}
	return nil
}
