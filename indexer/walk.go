package indexer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

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
	return fs.WalkDir(r.dir.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			skip(p, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if p != "." && idxReal != "" && filepath.Join(real, p) == idxReal {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted since the directory was read
		}
		if err != nil {
			skip(p, err)
			return nil
		}
		dev, ino := logfile.StatIDs(info)
		fn(found{root: ri, rel: p, dev: dev, ino: ino, size: info.Size(), mtime: info.ModTime().UnixNano()})
		return nil
	})
}
