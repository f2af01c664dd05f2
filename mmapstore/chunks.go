package mmapstore

// Checksums verified on read. Every large section is checksummed per
// ChunkSize bytes (the chunk sums section), and the chunk sums themselves
// per SumPageChunks sums (the sum pages section, small, verified at open).
// A reader asks for a byte range through read, which verifies the chunks it
// covers the first time they are used and remembers them in a bitset: a
// cold query pays for the few chunks it touches, not for whole sections,
// and no byte of a large section is trusted before its checksum is. (The
// TOC's whole-section checksums remain for Verify.)

import (
	"encoding/binary"
	"errors"
	"runtime/debug"
	"slices"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
)

// section is one section of a mapped segment.
type section struct {
	kind   uint32
	off    uint64 // file offset
	data   []byte
	chunk0 int // index of its first chunk in the chunk sums; -1: checked whole at open
}

// chunkState is a segment's verification state.
type chunkState struct {
	sums    []byte // ChunkSums: xxhash64 per chunk of every chunked section, in TOC order
	pages   []byte // SumPages: xxhash64 per SumPageChunks sums (checked at open)
	nchunks int
	chunkOK []atomic.Uint64 // bit per verified chunk
	pageOK  []atomic.Uint64 // bit per verified page of sums
}

func chunksOf(n uint64) int { return int((n + ChunkSize - 1) / ChunkSize) }

func newBits(n int) []atomic.Uint64 { return make([]atomic.Uint64, (n+63)/64) }

func bitSet(b []atomic.Uint64, i int) bool { return b[i>>6].Load()&(1<<(i&63)) != 0 }

func setBit(b []atomic.Uint64, i int) {
	w := &b[i>>6]
	for {
		old := w.Load()
		if old&(1<<(i&63)) != 0 || w.CompareAndSwap(old, old|1<<(i&63)) {
			return
		}
	}
}

// read returns sec.data[off:off+n] once every chunk it covers is verified.
// The slice aliases the mapping. A range outside the section, or a chunk
// whose bytes do not match their checksum, is a corruption error (and
// quarantines the segment).
func (s *Segment) read(sec *section, off, n uint64) ([]byte, error) {
	b, ok := slice(sec.data, off, n)
	if !ok {
		return nil, s.damaged(s.corrupt(SectionName(sec.kind), int64(sec.off+off), "read of %d bytes out of bounds (section of %d)", n, len(sec.data)))
	}
	if sec.chunk0 < 0 || n == 0 {
		return b, nil
	}
	asked := false
	for c, last := int(off/ChunkSize), int((off+n-1)/ChunkSize); c <= last; c++ {
		if !bitSet(s.cs.chunkOK, sec.chunk0+c) {
			if !asked && c < last && s.m != nil {
				// A cold index would fault the chunks in one after
				// another, one disk read at a time (an FST of 7 pages,
				// a postings list of 20); asked for together, the disk
				// serves them side by side. Warm, it costs a page-cache
				// walk, once per chunk in the process's life.
				s.askRange(sec, uint64(c)*ChunkSize, uint64(last-c+1)*ChunkSize, nil)
				asked = true
			}
			if err := s.verifyChunk(sec, c); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// readTail is read of everything from off to at most max bytes.
func (s *Segment) readTail(sec *section, off, max uint64) ([]byte, error) {
	if off > uint64(len(sec.data)) {
		return s.read(sec, off, 1) // out of bounds: the error
	}
	return s.read(sec, off, min(max, uint64(len(sec.data))-off))
}

// verifyChunk checks chunk c of sec against its sum, the page of sums
// holding it first. It runs under SetPanicOnFault: the first touch of a
// page of a segment truncated behind our back must be an error, not a
// crash.
func (s *Segment) verifyChunk(sec *section, c int) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = s.damaged(s.corrupt(SectionName(sec.kind), int64(sec.off)+int64(c)*ChunkSize, "reading failed: %v", r))
		}
	}()
	lo := c * ChunkSize
	return s.verifyChunkBytes(sec, c, sec.data[lo:min(lo+ChunkSize, len(sec.data))])
}

// verifyChunkBytes checks data, the bytes of chunk c of sec (mapped or
// read), against the chunk's sum, and marks the chunk verified.
func (s *Segment) verifyChunkBytes(sec *section, c int, data []byte) error {
	g := sec.chunk0 + c
	cs := &s.cs
	if g >= cs.nchunks {
		return s.damaged(s.corrupt("chunk sums", -1, "no sum for chunk %d", g))
	}
	if p := g / SumPageChunks; !bitSet(cs.pageOK, p) {
		lo := p * SumPageChunks * 8
		hi := min(lo+SumPageChunks*8, len(cs.sums))
		if xxhash.Sum64(cs.sums[lo:hi]) != binary.LittleEndian.Uint64(cs.pages[p*8:]) {
			return s.damaged(s.corrupt("chunk sums", int64(lo), "checksum mismatch"))
		}
		setBit(cs.pageOK, p)
	}
	if xxhash.Sum64(data) != binary.LittleEndian.Uint64(cs.sums[g*8:]) {
		return s.damaged(s.corrupt(SectionName(sec.kind), int64(sec.off)+int64(c)*ChunkSize, "checksum mismatch"))
	}
	setBit(cs.chunkOK, g)
	return nil
}

// readCopy is read for bytes used only until the next call with the same
// buf: when a chunk they lie in is not verified yet, the chunks are read
// into *buf with one pread and verified there, instead of being faulted
// in through the mapping page by page. A process's first touch of a
// mapped page is a page fault even when the page is cached, 3-10 µs each
// on a VM against 2-3 µs for a pread of three pages; a literal's trigram
// filter slices touched some 350 pages in a CLI search over 1 GiB. Once
// verified, chunks are read through the mapping as by read.
func (s *Segment) readCopy(sec *section, off, n uint64, buf *[]byte) ([]byte, error) {
	b, ok := slice(sec.data, off, n)
	if !ok || sec.chunk0 < 0 || n == 0 || s.m == nil {
		return s.read(sec, off, n) // (out of bounds: its error)
	}
	c0, c1 := int(off/ChunkSize), int((off+n-1)/ChunkSize)
	fresh := false
	for c := c0; c <= c1 && !fresh; c++ {
		fresh = !bitSet(s.cs.chunkOK, sec.chunk0+c)
	}
	if !fresh {
		return b, nil
	}
	lo, hi := uint64(c0)*ChunkSize, min(uint64(c1+1)*ChunkSize, uint64(len(sec.data)))
	*buf = slices.Grow((*buf)[:0], int(hi-lo))[:hi-lo]
	if err := s.m.ReadAt(*buf, int64(sec.off+lo)); err != nil {
		if errors.Is(err, ErrClosed) {
			return s.read(sec, off, n) // (not backed by a file descriptor)
		}
		return nil, s.damaged(s.corrupt(SectionName(sec.kind), int64(sec.off+lo), "reading failed: %v", err))
	}
	for c := c0; c <= c1; c++ {
		if !bitSet(s.cs.chunkOK, sec.chunk0+c) {
			clo := uint64(c)*ChunkSize - lo
			if err := s.verifyChunkBytes(sec, c, (*buf)[clo:min(clo+ChunkSize, hi-lo)]); err != nil {
				return nil, err
			}
		}
	}
	return (*buf)[off-lo : off-lo+n], nil
}

// verifyChunks checks every chunk of sec (for Verify and the warmer).
func (s *Segment) verifyChunks(sec *section) error {
	if sec.chunk0 < 0 {
		return nil
	}
	for c := range chunksOf(uint64(len(sec.data))) {
		if !bitSet(s.cs.chunkOK, sec.chunk0+c) {
			if err := s.verifyChunk(sec, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// damaged quarantines the segment with its first corruption and returns
// err: once a segment is found damaged, queries stop trusting it (they
// answer from its files instead) and the indexer rebuilds it.
func (s *Segment) damaged(err error) error {
	if s.damage.CompareAndSwap(nil, &err) && s.onDamage != nil {
		s.onDamage(s)
	}
	return err
}

// Damage is the first corruption found in the segment since it was
// opened, or nil.
func (s *Segment) Damage() error {
	if p := s.damage.Load(); p != nil {
		return *p
	}
	return nil
}

// Fault turns a panic recovered while reading the segment's bytes (a memory
// fault on a mapping whose file was truncated behind our back, under
// SetPanicOnFault) into a corruption error, and quarantines the segment.
func (s *Segment) Fault(r any) error {
	return s.damaged(s.corrupt("", -1, "reading failed: %v", r))
}
