package mmapstore

// How a staged warmer reads: in pieces sized by what queries are doing,
// yielding the disk to queries that fault; and the start-up's prefetch of
// what opening a cold index reads.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// YieldPiece is what a staged warmer reads at once while queries read
// from disk (a whole chunk, 8 MiB, otherwise). Its reads are exact (no
// read-ahead, see Mapping.Prefetch), so what it has queued is what it
// asked for, and a query's page fault waits behind about a millisecond of
// warm-up I/O, never behind megabytes.
const YieldPiece = 512 << 10

// YieldMax is the longest a staged warmer waits for queries reading from
// disk before it reads a small piece anyway: warm-up slows down while
// cold queries run, yet still finishes. What this costs queries and the
// warm-up is measured by logdex-bench's warmup section (README,
// Performance).
const YieldMax = 4 * time.Millisecond

// yieldPoll is how often a yielding warmer looks whether queries still
// take page faults.
const yieldPoll = 500 * time.Microsecond

// nextPiece returns how much to read next, waiting first while queries
// read from disk. Queries reading a cold index fault its pages in; the
// warmer reads with read(2) and never faults, so a rising count of major
// faults in this process, while searches run, is queries waiting for the
// disk (as is a rising count of reads they asked for ahead: diskWaits).
// Warm queries leave the disk to the warmer.
func (w *Warmer) nextPiece(ctx context.Context, chunk int64) int64 {
	if w.opt.Mode != WarmStaged || w.faults == nil {
		return chunk
	}
	f := w.faults()
	busy := w.opt.Busy == nil || w.opt.Busy() > 0
	if f == w.lastFaults || !busy {
		w.lastFaults = f
		return chunk
	}
	for waited := time.Duration(0); waited < YieldMax; waited += yieldPoll {
		if w.opt.Clock.Sleep(ctx, yieldPoll) != nil {
			break
		}
		g := w.faults()
		if g == f || w.opt.Busy != nil && w.opt.Busy() == 0 {
			break // a quiet moment
		}
		f = g
	}
	w.lastFaults = f
	return min(chunk, YieldPiece)
}

// coldReads counts the reads queries asked for ahead of faulting, having
// found them not resident (the prefetches of filter slices, term-block
// indexes, a page's offsets and times, offset indexes read whole): a
// query waiting on those waits for the disk as a faulting one does, yet
// takes few major faults. (A read of unchecked chunks that asks for them
// together is not counted: what of it is not resident faults.)
var coldReads atomic.Int64

// diskWaits is this process's count of major page faults plus the reads
// its queries asked for: it rises while queries read from disk.
func diskWaits() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return coldReads.Load()
	}
	return ru.Majflt + coldReads.Load()
}

// isResident tells whether all of [off, off+n) is resident: a chunk partly
// resident skips the pieces that are.
func (w *Warmer) isResident(m *Mapping, off, n int64) bool {
	r, err := w.resident(m, off, n)
	return err == nil && r == n
}

// prefetchHeads asks the kernel (POSIX_FADV_WILLNEED, which queues the
// reads without waiting) for the first and last pages of the segments
// refs names in dir: the header, the table of contents and most of the
// small sections that opening a segment reads. Opening a cold index
// otherwise faults them in one segment after another, each fault waiting
// for the disk; queued together, the disk serves them side by side
// (OpenCold). It is advice, so errors are ignored.
func prefetchHeads(dir string, refs []SegmentRef) {
	const head, tail = 4096, 8192
	for _, ref := range refs {
		fd, err := unix.Open(filepath.Join(dir, ref.Name), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		unix.Fadvise(fd, 0, head, unix.FADV_WILLNEED)
		if ref.Size > head {
			unix.Fadvise(fd, max(ref.Size-tail, head), tail, unix.FADV_WILLNEED)
		}
		unix.Close(fd)
	}
}

// Evict asks the kernel to drop the index files' pages from the page cache
// (posix_fadvise DONTNEED; no root needed). Pages mapped and touched by a
// live mapping stay; evict before opening. For benchmarks and tests.
func Evict(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".ldx") && e.Name() != ManifestName {
			continue
		}
		f, err := os.Open(dir + "/" + e.Name())
		if err != nil {
			return err
		}
		err = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
