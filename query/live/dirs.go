package live

import (
	"strings"

	"github.com/logdex/logdex/mmapstore/logfile"
)

// Dirs keeps one directory open for a pass over files in path order (a
// search looks at every file it may answer from, sorted by path): each
// file is then one fstatat(2) (and one openat(2) when read) in its open
// directory, where a path beneath the root would open every directory on
// the way again. It is opened afresh by every pass, never kept between
// searches, so that a directory renamed or replaced since is seen as it is
// now. Not safe for concurrent use; nil is a valid Dirs that keeps none.
type Dirs struct {
	s    *Set
	root int
	rel  string // slash-separated, "." for the root directory
	dir  *logfile.Dir
	err  error
}

// Dirs returns a cursor for one pass; Close it after.
func (s *Set) Dirs() *Dirs { return &Dirs{s: s, root: -1} }

// Close closes the directory kept open.
func (c *Dirs) Close() {
	if c != nil && c.dir != nil {
		c.dir.Close()
		c.dir = nil
	}
}

// of returns f's directory, open, and its name there; nil when f is a file
// root or its directory cannot be opened (the caller then goes by the
// path, which reports the error as before).
func (c *Dirs) of(f *File) (*logfile.Dir, string) {
	if c == nil {
		return nil, ""
	}
	d := c.s.rootDir(f.rec.Root)
	if d.err != nil || d.name != "" {
		return nil, ""
	}
	dirRel, name := ".", f.rec.Path // (indexed paths are clean)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		dirRel, name = name[:i], name[i+1:]
	}
	if c.root != f.rec.Root || c.rel != dirRel {
		c.Close()
		c.root, c.rel = f.rec.Root, dirRel
		c.dir, c.err = logfile.OpenDir(d.dir, dirRel)
	}
	if c.err != nil {
		return nil, ""
	}
	return c.dir, name
}
