package live

// The log files a Set keeps open between searches (at most maxOpenFiles),
// shared by the handles that read them.

import (
	"os"
	"sync"
	"unsafe"

	"github.com/logdex/logdex/mmapstore/logfile"
	"golang.org/x/sys/unix"
)

// sharedFile is an open log file reused across searches; refs counts the
// handles using it (the cache's own reference included while cached).
type sharedFile struct {
	f        *os.File
	dev, ino uint64
	refs     int
	// indexed is the size of the file's indexed bytes, the most a mapping
	// holds (bytes appended since are read with pread).
	indexed int64
	mapOnce sync.Once
	mapped  []byte // the indexed bytes mapped read-only; nil until asked, or when mapping failed
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
	sf := &sharedFile{f: fh, dev: dev, ino: ino, refs: 1, indexed: indexedSize(rec)}
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
		if sf.mapped != nil {
			unix.Munmap(sf.mapped)
		}
		sf.f.Close()
	}
}

// Mapped returns the file's indexed bytes mapped into memory (read-only,
// shared with the page cache), for reading hits without a syscall each:
// a page of 100 hits a few hundred KB apart was 100 preads. The mapping
// is made at the first ask and lives as long as the kept-open file, so
// later searches find its pages already mapped. It is nil when the
// handle is not the indexed file as indexed (stale), not a kept-open file,
// or when mapping failed: then read with File.
//
// A mapping does not shrink with its file: bytes past a truncation made
// after the check fault (SIGBUS) where pread would come up short. Read it
// under debug.SetPanicOnFault and ask Faulted about a recovered panic.
func (h *Handle) Mapped() []byte {
	if h == nil || h.shared == nil || h.stale != nil || h.closed.Load() {
		return nil
	}
	sf := h.shared
	sf.mapOnce.Do(func() {
		if sf.indexed <= 0 || int64(int(sf.indexed)) != sf.indexed {
			return
		}
		rc, err := sf.f.SyscallConn()
		if err != nil {
			return
		}
		rc.Control(func(fd uintptr) {
			if b, err := unix.Mmap(int(fd), 0, int(sf.indexed), unix.PROT_READ, unix.MAP_SHARED); err == nil {
				sf.mapped = b
			}
		})
	})
	return sf.mapped
}

// Faulted reports whether r, a value recovered from a panic while reading
// h's mapping under debug.SetPanicOnFault, is a memory fault inside that
// mapping: the file was truncated after it was checked.
func (h *Handle) Faulted(r any) bool {
	m := h.Mapped()
	e, ok := r.(interface{ Addr() uintptr })
	if !ok || len(m) == 0 {
		return false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	return e.Addr() >= base && e.Addr()-base < uintptr(len(m))
}
