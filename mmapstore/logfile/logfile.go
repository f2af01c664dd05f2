// Package logfile owns how logdex opens and recognizes a log file: only
// regular files, opened without blocking (a FIFO or device put in a log's
// place must not hang a search), beneath a root directory so that no
// symlink leads out of it, and known across runs by device, inode and a
// fingerprint of its first bytes.
//
// It lives under mmapstore, beside the token rule, because both the
// indexer (which records identities) and the query engine (which checks
// them against the files as they are now) need it, and their dependencies
// only point towards mmapstore.
package logfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"syscall"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/sys/unix"
)

// FingerprintLen is how many leading bytes identify a file beside its
// device and inode: it tells a rotated-and-recreated file (inode reused)
// from the one indexed before.
const FingerprintLen = 1024

// TailLen is how many bytes before the end of a file's indexed prefix are
// fingerprinted too: a file truncated and rewritten in place that starts
// as it did (a banner longer than FingerprintLen) and has grown past what
// was indexed is told from one appended to by them.
const TailLen = 256

// grepFirstRead is the size of GNU grep's first read of a file (its
// INITIAL_BUFSIZE, 96 KiB). grep decides that a file is binary on the
// buffer it has read: a NUL byte within the first 96 KiB makes the whole
// file binary, so grep prints none of its lines.
const grepFirstRead = 96 << 10

// ErrNotRegular is returned for anything but a regular file.
var ErrNotRegular = errors.New("not a regular file")

// Open opens name beneath dir for reading. It never blocks (O_NONBLOCK:
// opening a FIFO without a writer would) and returns only regular files,
// with their stat; nofollow refuses a symlink as the last component
// (ELOOP).
func Open(dir *os.Root, name string, nofollow bool) (*os.File, fs.FileInfo, error) {
	for attempt := 0; ; attempt++ {
		f, err := dir.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil, nil, err
		}
		f, st, err := keepRegular(f, name)
		if err != nil || !nofollow {
			return f, st, err
		}
		// os.Root follows a symlink in the last component whatever the
		// flags (O_NOFOLLOW is ignored), to any target beneath the root:
		// the name must still be the very file opened, not a symlink to
		// it. Looked at after the open, a swap either way shows as a
		// symlink or another file; another regular file is a rotation
		// between the two looks (renamed, created anew): open again.
		li, err := dir.Lstat(name)
		if err == nil && li.Mode().IsRegular() && os.SameFile(li, st) {
			return f, st, nil
		}
		f.Close()
		switch {
		case err != nil:
			return nil, nil, err
		case li.Mode().IsRegular() && attempt < 3:
			continue
		}
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: syscall.ELOOP}
	}
}

// keepRegular returns f and its stat when it is a regular file, and closes
// it otherwise: a FIFO or device opened without blocking is not read.
func keepRegular(f *os.File, name string) (*os.File, fs.FileInfo, error) {
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w", name, ErrNotRegular)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, st, nil
}

// StatIDs returns the device and inode of a stat result.
func StatIDs(info fs.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}

// Fingerprint hashes the first n bytes of r; a file shorter than n gives
// io.ErrUnexpectedEOF.
func Fingerprint(r io.ReaderAt, n int64) (uint64, error) {
	return hashAt(r, 0, n)
}

// TailFingerprint hashes the n bytes of r that end at end; a file shorter
// than end gives io.ErrUnexpectedEOF.
func TailFingerprint(r io.ReaderAt, end, n int64) (uint64, error) {
	return hashAt(r, end-n, n)
}

// hashAt hashes the n bytes of r at off.
func hashAt(r io.ReaderAt, off, n int64) (uint64, error) {
	buf := make([]byte, n)
	m, err := r.ReadAt(buf, off)
	if int64(m) < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	return xxhash.Sum64(buf), nil
}

// SameStart reports whether r still begins with the fpLen bytes whose
// fingerprint is fp (a file truncated and rewritten in place does not).
func SameStart(r io.ReaderAt, fpLen int64, fp uint64) (bool, error) {
	if fpLen <= 0 {
		return true, nil
	}
	got, err := Fingerprint(r, fpLen)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return false, nil
	}
	return err == nil && got == fp, err
}

// SameEnd reports whether the n bytes of r that end at end still hash to
// fp (n 0: nothing to compare).
func SameEnd(r io.ReaderAt, end, n int64, fp uint64) (bool, error) {
	if n <= 0 {
		return true, nil
	}
	got, err := TailFingerprint(r, end, n)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return false, nil
	}
	return err == nil && got == fp, err
}

// EndLinesAtNUL makes every NUL byte of b a '\n' and returns the index of
// the first (-1 when there is none). A NUL ends a line as '\n' does: grep,
// once it has found a file binary (a NUL in it), splits its lines at NULs
// too, so lines and counts agree with grep's; in a file without NULs
// nothing changes. Readers apply it to the bytes they read, before looking
// for line ends.
func EndLinesAtNUL(b []byte) int {
	first := bytes.IndexByte(b, 0)
	if first < 0 {
		return -1
	}
	for i := first; i < len(b); i++ {
		if b[i] == 0 {
			b[i] = '\n'
		}
	}
	return first
}

// BinaryFrom is the offset from which a file whose first NUL byte is at
// nulAt-1 (nulAt as FileRecord.NULAt: 0 when it has none) is binary, as
// grep sees it: a line whose end lies at or past it is not printed
// (grep says "binary file matches" instead). It is 0, the whole file,
// when that NUL lies in grep's first read; else the NUL's own offset.
// grep stops printing somewhat earlier there, at the start of its read
// holding the NUL; its later reads are a page shorter after a long
// partial line, and how long depends on its buffer's place in its page,
// which moves with the pattern (272 to 2,064 bytes measured with grep
// 3.8), so no rule without grep's heap reproduces it.
// math.MaxInt64 when there is no NUL.
func BinaryFrom(nulAt int64) int64 {
	switch {
	case nulAt <= 0:
		return math.MaxInt64
	case nulAt-1 < grepFirstRead:
		return 0
	}
	return nulAt - 1
}

// BinaryFromStart reports whether a NUL byte lies within grep's first read
// of r: grep then prints none of its lines (BinaryFrom is 0).
func BinaryFromStart(r io.ReaderAt) (bool, error) {
	buf := make([]byte, grepFirstRead)
	m, err := r.ReadAt(buf, 0)
	if m == 0 && err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	return bytes.IndexByte(buf[:m], 0) >= 0, nil
}

// HasHoles reports whether f, of the given size, is sparse: its holes
// read as runs of NUL bytes, each of which would end a line (a sparse
// lastlog is terabytes of them), so the indexer leaves such files out.
// Filesystems without SEEK_HOLE report none.
func HasHoles(f *os.File, size int64) bool {
	if size == 0 {
		return false
	}
	hole, err := unix.Seek(int(f.Fd()), 0, unix.SEEK_HOLE)
	return err == nil && hole < size
}

// OpenIdentity opens the file with device dev and inode ino that was at
// name beneath dir: at name, or, when a rotation renamed it since, under
// another name in the same directory (rotations rename within one). It
// returns the file, its stat and the name it was found at (slash
// separated, relative to dir); fs.ErrNotExist when it is in neither.
func OpenIdentity(dir *os.Root, name string, dev, ino uint64) (*os.File, fs.FileInfo, string, error) {
	f, fi, err := OpenAs(dir, name, dev, ino)
	if err == nil {
		return f, fi, filepath.ToSlash(name), nil
	} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, ErrNotRegular) {
		return nil, nil, "", err
	}
	l, err := DirInodes(dir, filepath.Dir(name))
	if err != nil {
		return nil, nil, "", err
	}
	if other, ok := l[[2]uint64{dev, ino}]; ok {
		if f, fi, err := OpenAs(dir, filepath.FromSlash(other), dev, ino); err == nil {
			return f, fi, other, nil
		}
	}
	return nil, nil, "", fmt.Errorf("%s: %w (not renamed within its directory either)", name, fs.ErrNotExist)
}

// OpenAs opens name beneath dir (not following a symlink) when it is the
// file with device dev and inode ino; fs.ErrNotExist when it holds
// another.
func OpenAs(dir *os.Root, name string, dev, ino uint64) (*os.File, fs.FileInfo, error) {
	f, fi, err := Open(dir, name, true)
	if err != nil {
		return nil, nil, err
	}
	if d, i := StatIDs(fi); d != dev || i != ino {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w (another file now)", name, fs.ErrNotExist)
	}
	return f, fi, nil
}

// DirInodes lists the regular files of the directory parent beneath dir by
// device and inode (names slash separated, relative to dir): one listing
// answers where every file of a directory went (OpenIdentity lists it for
// each file it looks for).
func DirInodes(dir *os.Root, parent string) (map[[2]uint64]string, error) {
	ents, err := fs.ReadDir(dir.FS(), filepath.ToSlash(parent))
	if err != nil {
		return nil, err
	}
	out := make(map[[2]uint64]string, len(ents))
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		name := filepath.Join(parent, e.Name())
		if li, err := dir.Lstat(name); err == nil {
			d, i := StatIDs(li)
			out[[2]uint64{d, i}] = filepath.ToSlash(name)
		}
	}
	return out, nil
}
