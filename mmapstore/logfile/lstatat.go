package logfile

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// Stat is what lstat says of a path, as the indexer records it.
type Stat struct {
	Regular  bool
	IsDir    bool
	Dev, Ino uint64
	Size     int64
	MTime    int64 // unix nanoseconds
}

// Dir is an open directory whose entries are looked at by name: one
// fstatat(2) or openat(2) each, where os.Root's methods given a nested path
// open every directory on the way again. Over 100,000 small files the
// difference is most of a search's system time.
type Dir struct {
	f  *os.File // nil for a bare descriptor (OpenRootDir, OpenBeneath)
	fd int
}

// OpenDir opens the directory rel (slash-separated) beneath root, as
// os.Root resolves it (no symlink out of the root).
func OpenDir(root *os.Root, rel string) (*Dir, error) {
	f, err := root.Open(filepath.FromSlash(rel))
	if err != nil {
		return nil, err
	}
	return &Dir{f: f}, nil
}

// OpenRootDir opens the directory at path, symlinks resolved, as a bare
// descriptor, for OpenBeneath.
func OpenRootDir(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return &Dir{fd: fd}, nil
}

// OpenBeneath opens the directory rel (slash-separated) beneath d as
// os.Root resolves it: openat2(2) with RESOLVE_BENEATH (no escape by "..",
// by an absolute symlink or by a /proc magic link). It holds a bare
// descriptor: an os.File tries the network poller for every directory
// (five system calls each, and the poller's set-up on the first), which a
// short search process paid for every directory it looked in. ok is false
// when openat2 fails for any reason (an old kernel, a path it refuses):
// the caller then asks OpenDir, whose answer, or error, is os.Root's.
func (d *Dir) OpenBeneath(rel string) (_ *Dir, ok bool) {
	if noOpenat2.Load() {
		return nil, false
	}
	var fd int
	err := d.do(func(dfd int) (err error) {
		fd, err = unix.Openat2(dfd, filepath.FromSlash(rel), &unix.OpenHow{
			Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
		})
		return err
	})
	if err == unix.ENOSYS || err == unix.EPERM {
		noOpenat2.Store(true) // an old kernel or a seccomp filter: every call would fail
	}
	if err != nil {
		return nil, false
	}
	return &Dir{fd: fd}, true
}

// noOpenat2 is set once openat2 is found missing or forbidden.
var noOpenat2 atomic.Bool

// SameAs reports whether d is the directory fi describes (same device and
// inode): a directory opened by path again is checked against the first
// opening, which a rename in between would make another.
func (d *Dir) SameAs(fi os.FileInfo) bool {
	want, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	var st unix.Stat_t
	if err := d.do(func(fd int) error { return unix.Fstat(fd, &st) }); err != nil {
		return false
	}
	return uint64(st.Dev) == uint64(want.Dev) && st.Ino == want.Ino
}

// DirOf wraps an open directory (the caller keeps closing it).
func DirOf(f *os.File) *Dir { return &Dir{f: f} }

// Close closes the directory.
func (d *Dir) Close() error {
	if d.f == nil {
		return unix.Close(d.fd)
	}
	return d.f.Close()
}

// do runs op on the directory's descriptor, again on EINTR.
func (d *Dir) do(op func(fd int) error) error {
	if d.f == nil {
		for {
			if err := op(d.fd); err != unix.EINTR {
				return err
			}
		}
	}
	rc, err := d.f.SyscallConn()
	if err != nil {
		return err
	}
	cerr := rc.Control(func(fd uintptr) {
		for {
			if err = op(int(fd)); err != unix.EINTR {
				break
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	return err
}

// Lstat lstats name, a single path component, in the directory.
func (d *Dir) Lstat(name string) (Stat, error) {
	var st unix.Stat_t
	if err := d.do(func(fd int) error { return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return Stat{}, &os.PathError{Op: "lstat", Path: name, Err: err}
	}
	return Stat{
		Regular: st.Mode&unix.S_IFMT == unix.S_IFREG, IsDir: st.Mode&unix.S_IFMT == unix.S_IFDIR,
		Dev: uint64(st.Dev), Ino: st.Ino, Size: st.Size,
		MTime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
	}, nil
}

// Open opens name, a single path component, in the directory as Open
// does with nofollow: never blocking, regular files only, no symlink.
func (d *Dir) Open(name string) (*os.File, os.FileInfo, error) {
	var nfd int
	err := d.do(func(fd int) (err error) {
		nfd, err = unix.Openat(fd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, nil, &os.PathError{Op: "openat", Path: name, Err: err}
	}
	return keepRegular(os.NewFile(uintptr(nfd), name), name)
}

// Seen is what the indexer's walk found at a file's path during a run: a
// search that begins right after the run (the CLI's default, which brings
// the index up to date first) takes it instead of looking at every file
// again. The answer is then as of the walk, a moment earlier in the same
// command, as grep's is as of when it read each file.
type Seen struct {
	ID   uint64 // the file's record
	Root int
	Path string // relative to the root, slash-separated
	Stat
}
