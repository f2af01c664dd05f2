package live

// The log files a Set keeps open between searches (at most maxOpenFiles),
// shared by the handles that read them.

import (
	"os"

	"github.com/logdex/logdex/mmapstore/logfile"
)

// sharedFile is an open log file reused across searches; refs counts the
// handles using it (the cache's own reference included while cached).
type sharedFile struct {
	f        *os.File
	dev, ino uint64
	refs     int
}

// maxOpenFiles bounds the log files kept open between searches.
const maxOpenFiles = 256

// shared returns the open file for f (the indexed inode), opening it when
// needed, with a reference for the caller.
func (s *Set) shared(c *Dirs, f *File) (*sharedFile, error) {
	rec := f.rec
	s.mu.Lock()
	if sf, ok := s.open[rec.ID]; ok && sf.dev == rec.Dev && sf.ino == rec.Ino {
		sf.refs++
		s.mu.Unlock()
		return sf, nil
	}
	s.mu.Unlock()
	var fh *os.File
	var st os.FileInfo
	var err error
	if d, base := c.of(f); d != nil {
		fh, st, err = d.Open(base)
	} else {
		dir, name, lerr := s.locate(f)
		if lerr != nil {
			return nil, lerr
		}
		fh, st, err = logfile.Open(dir, name, true)
	}
	if err != nil {
		return nil, err
	}
	dev, ino := logfile.StatIDs(st)
	if dev != rec.Dev || ino != rec.Ino {
		fh.Close()
		return nil, ErrReplaced
	}
	sf := &sharedFile{f: fh, dev: dev, ino: ino, refs: 1}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.open[rec.ID]; ok {
		if old.dev == sf.dev && old.ino == sf.ino {
			// Another search opened it meanwhile: use that one.
			fh.Close()
			old.refs++
			return old, nil
		}
		s.dropLocked(rec.ID, old)
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
		s.open[rec.ID] = sf
	}
	return sf, nil
}

// forget closes the kept-open file of id, if any, once its users are
// done: a deleted log must not stay allocated on disk because logdex
// holds it open.
func (s *Set) forget(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sf, ok := s.open[id]; ok {
		s.dropLocked(id, sf)
	}
}

// dropLocked removes sf from the cache; it closes when its last user is
// done.
func (s *Set) dropLocked(id uint64, sf *sharedFile) {
	delete(s.open, id)
	s.unrefLocked(sf)
}

func (s *Set) unrefLocked(sf *sharedFile) {
	if sf.refs--; sf.refs == 0 {
		sf.f.Close()
	}
}
