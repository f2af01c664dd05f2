package mmapstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrClosed is returned by any use of a mapping, segment or index after Close.
var ErrClosed = errors.New("mmapstore: use after close")

// Mapping is a read-only shared memory map of a whole file. Index files are
// immutable once published, so a mapping never sees them shrink; log files
// are never mapped (a truncation under a mapping raises SIGBUS).
type Mapping struct {
	path string
	mu   sync.RWMutex
	data []byte
	size int64
	// fd is kept open (-1 once closed, or for an empty file): the warmer
	// reads through it (see Prefetch). A bare descriptor, not an os.File:
	// os.NewFile costs an fcntl(2) and a cleanup per segment opened.
	fd int
	// exact: fd was advised POSIX_FADV_RANDOM (Prefetch reads no more than asked)
	exact  atomic.Bool
	closed bool // (an empty file's mapping has no data or fd either)
}

// Map maps path read-only. An empty file gives an empty mapping.
func Map(path string) (*Mapping, error) {
	// Opened with open(2), not os.Open: os.Open tries to register every
	// file with the network poller (four more system calls, which fail
	// for a regular file, and the poller's set-up on the first), a cost a
	// search process paid for each segment.
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	m := &Mapping{path: path, fd: -1}
	if m.size, err = fileSize(fd, path); err == nil {
		m.data, err = mapFD(fd, path, m.size)
	}
	if err != nil || m.data == nil {
		unix.Close(fd)
		if err != nil {
			return nil, err
		}
		return m, nil // empty
	}
	m.fd = fd
	return m, nil
}

func fileSize(fd int, path string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return st.Size, nil
}

// mapFD maps the file open at fd, of size bytes, whole (nil when empty).
func mapFD(fd int, path string, size int64) ([]byte, error) {
	if size == 0 {
		return nil, nil
	}
	if size != int64(int(size)) {
		return nil, fmt.Errorf("map %s: file too large", path)
	}
	data, err := unix.Mmap(fd, 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	return data, nil
}

// loadFile returns path's bytes, read into memory when at most readMax,
// mapped otherwise; release unmaps them. Reading a small file costs fewer
// system calls than mapping it, and no unmapping, which flushes the TLB
// of every CPU running one of the process's threads.
func loadFile(path string, readMax int64) (b []byte, release func(), err error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	size, err := fileSize(fd, path)
	if err != nil {
		return nil, nil, err
	}
	if size > readMax {
		data, err := mapFD(fd, path, size)
		if err != nil {
			return nil, nil, err
		}
		return data, func() { unix.Munmap(data) }, nil
	}
	b = make([]byte, size)
	n, err := preadFull(fd, path, b, 0)
	if err != nil && err != io.EOF { // at EOF: shorter than it was a moment ago, what is there
		return nil, nil, err
	}
	return b[:n], func() {}, nil
}

// preadFull fills b from fd at off, again on EINTR and short reads; at the
// file's end it returns what it read and io.EOF.
func preadFull(fd int, path string, b []byte, off int64) (int, error) {
	for n := 0; n < len(b); {
		r, err := unix.Pread(fd, b[n:], off+int64(n))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return n, &os.PathError{Op: "read", Path: path, Err: err}
		case r == 0:
			return n, io.EOF
		}
		n += r
	}
	return len(b), nil
}

// Prefetch reads [off, off+n) of the file into buf's worth at a time,
// bringing it into the page cache the mapping shares: one read(2) of
// len(buf) bytes is one disk request, where touching the mapping (advised
// MADV_RANDOM) would fault page by page. The reads are exact: the file is
// advised POSIX_FADV_RANDOM first, so the kernel starts no read-ahead
// beyond them. Read-ahead would keep up to twice its window (8 MiB here)
// of I/O queued after every read, and a query's page fault meanwhile waits
// behind all of it; the caller chooses how much is in flight by len(buf).
func (m *Mapping) Prefetch(off, n int64, buf []byte) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return ErrClosed
	}
	if m.fd < 0 {
		if m.size == 0 {
			return nil
		}
		return ErrClosed
	}
	if !m.exact.Load() {
		// Only the file's reads change: faults on the mapping follow its
		// madvise (MADV_RANDOM), not the file's mode.
		unix.Fadvise(m.fd, 0, 0, unix.FADV_RANDOM)
		m.exact.Store(true)
	}
	for end := off + n; off < end; {
		k := min(int64(len(buf)), end-off)
		if _, err := preadFull(m.fd, m.path, buf[:k], off); err != nil {
			return err
		}
		off += k
	}
	return nil
}

// ReadAt reads len(p) bytes of the file at off with pread (not through the
// mapping); a read past the end is an error. ErrClosed when the mapping
// has no file descriptor (an empty or copied file).
func (m *Mapping) ReadAt(p []byte, off int64) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed || m.fd < 0 {
		return ErrClosed
	}
	if _, err := preadFull(m.fd, m.path, p, off); err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	return nil
}

// Path is the mapped file's path.
func (m *Mapping) Path() string { return m.path }

// Size is the mapped length in bytes.
func (m *Mapping) Size() int64 { return m.size }

// Bytes returns the mapped bytes. They are valid until Close.
func (m *Mapping) Bytes() []byte { return m.data }

// Advise applies madvise(advice) to [off, off+n) rounded out to pages.
func (m *Mapping) Advise(off, n int64, advice int) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return ErrClosed
	}
	if m.data == nil {
		if m.size == 0 {
			return nil
		}
		return ErrClosed
	}
	b, ok := pageRange(m.data, off, n)
	if !ok {
		return nil
	}
	return unix.Madvise(b, advice)
}

// Resident counts the bytes of [off, off+n) that are in the page cache,
// measured with mincore(2) (x/sys has no Linux wrapper for it).
func (m *Mapping) Resident(off, n int64) (int64, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return 0, ErrClosed
	}
	if m.data == nil {
		if m.size == 0 {
			return 0, nil
		}
		return 0, ErrClosed
	}
	b, ok := pageRange(m.data, off, n)
	if !ok {
		return 0, nil
	}
	ps := int64(os.Getpagesize())
	pages := (int64(len(b)) + ps - 1) / ps
	vec := make([]byte, pages)
	_, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0])))
	if e != 0 {
		return 0, fmt.Errorf("mincore %s: %w", m.path, e)
	}
	start := off &^ (ps - 1)
	end := min(off+n, m.size)
	var resident int64
	for i, v := range vec {
		if v&1 == 0 {
			continue
		}
		pgStart := start + int64(i)*ps
		resident += min(pgStart+ps, end) - max(pgStart, off)
	}
	return resident, nil
}

// pageRange returns data[off:off+n] extended to whole pages, clipped to data.
func pageRange(data []byte, off, n int64) ([]byte, bool) {
	if off < 0 || n <= 0 || off >= int64(len(data)) {
		return nil, false
	}
	ps := int64(os.Getpagesize())
	start := off &^ (ps - 1)
	end := min(off+n, int64(len(data)))
	return data[start:end], true
}

// Close unmaps. Prefetch, Advise and Resident then return ErrClosed and
// Bytes returns nil (segments check for closing before touching bytes);
// closing twice is a no-op.
func (m *Mapping) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	if m.data == nil {
		return nil
	}
	err := unix.Munmap(m.data)
	if m.fd >= 0 {
		unix.Close(m.fd)
		m.fd = -1
	}
	m.data = nil
	m.size = 0
	return err
}
