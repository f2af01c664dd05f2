package live

import (
	"io/fs"
	"path"
	"path/filepath"

	"github.com/logdex/logdex/mmapstore/logfile"
)

// Renamed files: a rotation renames app.log to app.log.1 (and
// app.log.2.gz to app.log.3.gz) after it was indexed; its indexed lines
// are then read under the new name, found by inode in the same directory.

// Moved is the file's new name (relative to its root, slash-separated)
// when it was renamed since indexing, and is read there; "" otherwise.
func (h *Handle) Moved() string { return h.moved }

// moved finds f's indexed inode under another name in its directory (a
// rotation renamed app.log to app.log.1 since indexing) and returns a
// handle on it, or nil. Rotations rename within a directory; a file moved
// elsewhere counts as deleted until the next index run finds it.
func (s *Set) moved(f *File) *Handle {
	d := s.rootDir(f.rec.Root)
	if d.err != nil || d.name != "" {
		return nil // a file root has no directory of its own to look in
	}
	rel := f.rec.Path
	dirRel := path.Dir(rel)
	name := s.findInode(d, dirRel, f.rec.Dev, f.rec.Ino)
	if name == "" {
		return nil
	}
	newRel := path.Join(dirRel, name)
	fh, st, err := logfile.Open(d.dir, filepath.FromSlash(newRel), true)
	if err != nil {
		return nil
	}
	h := &Handle{f: fh, size: st.Size(), moved: newRel}
	h.dev, h.ino = logfile.StatIDs(st)
	if h.dev != f.rec.Dev || h.ino != f.rec.Ino || !sizeHolds(f.rec, h.size) {
		fh.Close() // renamed again meanwhile, or truncated
		return nil
	}
	if same, err := f.rec.SameContent(fh); err != nil || !same {
		fh.Close()
		return nil
	}
	return h
}

// findInode returns the name in dirRel (beneath root d) of the file with
// that device and inode, or "". Listings are kept while the watch vouches
// for the directory (one readdir serves every file rotated in it).
func (s *Set) findInode(d *rootDir, dirRel string, dev, ino uint64) string {
	key := dirKey{d, dirRel}
	var seq uint64
	if s.watch != nil {
		seq = s.watch.now()
		abs := filepath.Join(d.real, filepath.FromSlash(dirRel))
		s.mu.Lock()
		l, ok := s.listings[key]
		s.mu.Unlock()
		if ok && s.watch.listingUnchangedSince(abs, l.seq) {
			if name := l.names[[2]uint64{dev, ino}]; name != "" {
				return name
			}
			// Not there: the events of a rename may not be noted yet
			// (no Sync before this look); list again.
		}
	}
	ents, err := fs.ReadDir(d.dir.FS(), dirRel)
	if err != nil {
		return ""
	}
	names := map[[2]uint64]string{}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		fi, err := d.dir.Lstat(filepath.Join(filepath.FromSlash(dirRel), e.Name()))
		if err != nil {
			continue
		}
		dv, in := logfile.StatIDs(fi)
		names[[2]uint64{dv, in}] = e.Name()
	}
	if s.watch != nil {
		s.mu.Lock()
		if s.listings == nil {
			s.listings = map[dirKey]dirListing{}
		}
		if len(s.listings) >= maxListings {
			clear(s.listings)
		}
		s.listings[key] = dirListing{seq: seq, names: names}
		s.mu.Unlock()
	}
	return names[[2]uint64{dev, ino}]
}

type dirKey struct {
	root *rootDir
	dir  string
}

type dirListing struct {
	seq   uint64
	names map[[2]uint64]string // inode -> name
}

// maxListings bounds the directory listings kept.
const maxListings = 256
