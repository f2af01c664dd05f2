package mmapstore

// The segment decoder: opening a segment, checking its header, section
// table and cross-references, and decoding each section in place. Kept in
// one file (past 500 lines) so that it reads beside segwrite.go, section
// for section.

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cespare/xxhash/v2"
	"golang.org/x/sys/unix"
)

// SegFile is one entry of a segment's file table: the state of a log file
// when the segment was built.
type SegFile struct {
	ID    uint64 // stable id, also the key of the manifest's file records
	Root  int    // index into the manifest's roots
	Path  string // slash-separated, relative to the root ("" when the root is the file)
	Size  int64  // file size seen when indexing
	MTime int64  // unix nanoseconds
	Dev   uint64
	Ino   uint64
	FPLen int64  // bytes covered by FP
	FP    uint64 // xxhash64 of the file's first FPLen bytes
	Lines uint32 // lines of this file in this segment
}

// Span is a run of consecutive lines of one file inside a segment.
type Span struct {
	File        int    // index into the segment's Files
	FirstLine   uint32 // segment line id of the span's first line
	NumLines    uint32
	StartOffset int64 // byte offset of the first line in the file
	EndOffset   int64 // byte offset just past the last line's '\n'
	StartLineNo int64 // 1-based line number of the first line in the file
	FirstGroup  uint32
	// Timed spans give every line a time (SectionTimeGroups and
	// SectionLineTimes); MinTime and MaxTime (unix ns) bound them.
	Timed            bool
	MinTime, MaxTime int64
	// TimeSorted: the span's line groups follow each other in time (each
	// group's max ≤ the next group's min), so a time range's groups are
	// found by binary search.
	TimeSorted bool
}

// Segment is an open, mapped, immutable index segment. Its methods are safe
// for concurrent use; slices it returns alias the mapping and are valid until
// Close (the owning Index keeps readers and Close apart).
type Segment struct {
	name    string
	m       *Mapping
	data    []byte
	version uint32
	toc     []TOCEntry
	closed  atomic.Bool

	lines      uint32
	terms      uint64
	rawBytes   int64
	postingsN  uint64
	maxLineLen uint64

	files     []SegFile
	spans     []Span
	unindexed *roaring.Bitmap
	// linesChecked: per span, when PrefetchLines last looked at its
	// offset index (unix ns).
	linesChecked []atomic.Int64
	// hitsChecked: per span, when PrefetchHits last looked at its
	// offset and time indexes (unix ns).
	hitsChecked []atomic.Int64

	// Large sections, read through read (chunk checksums verified on use).
	groups, lens, postings, dict, dictOffs, blocks, trigrams section
	timeGroups, lineTimes                                    section
	ckpts                                                    section // checkpoint tables of compressed files

	nblocks    int      // dictionary blocks
	sliceWords int      // u64 words per trigram filter slice
	fsts       sync.Map // FST offset in the dictionary -> *vellum.FST, loaded on first use

	cs       chunkState
	verified atomic.Bool // Verify passed: every checksum checked
	// blocksChecked: when PrefetchTermBlocks last looked at the term-block
	// index (unix ns).
	blocksChecked atomic.Int64
	// lookupsChecked: when PrefetchLookups last looked at the residency
	// of what a lookup reads (unix ns).
	lookupsChecked atomic.Int64
	// listsChecked: the same for PrefetchLists.
	listsChecked atomic.Int64
	// refs counts the Indexes sharing this segment (an index re-opened
	// after a run keeps the segments it had); the last Close unmaps.
	refs     atomic.Int32
	damage   atomic.Pointer[error]
	onDamage func(*Segment) // set by the owning Index: records the quarantine
}

// OpenSegment maps path and validates its header, footer, table of contents
// and the checksums of its small sections. Large sections are checked by
// Verify (and by the warmer as it reads them).
func OpenSegment(path string) (*Segment, error) {
	m, err := Map(path)
	if err != nil {
		return nil, err
	}
	// Random access from the first touch: with the default read-ahead,
	// validating a cold segment's header, footer and small sections would
	// read megabytes around each of them. The staged warmer reads through
	// the file (exactly what it asks, see Prefetch); only eager warm-up
	// turns read-ahead back on.
	m.Advise(0, m.Size(), unix.MADV_RANDOM)
	s, err := parseSegment(path, m.Bytes())
	if err != nil {
		m.Close()
		return nil, err
	}
	s.m = m
	s.refs.Store(1)
	return s, nil
}

// retain adds a user to an open segment; false once it was closed.
func (s *Segment) retain() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// ParseSegment reads a segment held in memory (tests and fuzzing).
func ParseSegment(name string, data []byte) (*Segment, error) {
	return parseSegment(name, data)
}

func (s *Segment) corrupt(section string, off int64, format string, args ...any) error {
	return &CorruptionError{Path: s.name, Section: section, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// guard turns a panic or a memory fault while decoding mapped bytes into a
// corruption error. Faults are recoverable only with SetPanicOnFault, which
// is per goroutine, so it is set here around every decoding entry point.
func (s *Segment) guard(section string, err *error) {
	if r := recover(); r != nil {
		*err = s.damaged(s.corrupt(section, -1, "decoding failed: %v", r))
	}
}

func parseSegment(name string, data []byte) (seg *Segment, err error) {
	s := &Segment{name: name, data: data}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("", &err)

	if len(data) < HeaderSize+FooterSize {
		return nil, s.corrupt("header", 0, "file too short (%d bytes)", len(data))
	}
	if string(data[:8]) != SegmentMagic {
		return nil, s.corrupt("header", 0, "bad magic %q", data[:8])
	}
	s.version = binary.LittleEndian.Uint32(data[8:])
	if s.version < MinFormatVersion || s.version > FormatVersion {
		return nil, &VersionError{Path: name, Found: s.version}
	}
	foot := data[len(data)-FooterSize:]
	if string(foot[24:32]) != SegmentMagic {
		return nil, s.corrupt("footer", int64(len(data)-FooterSize), "bad magic (file truncated?)")
	}
	tocOff := binary.LittleEndian.Uint64(foot[0:])
	tocN := uint64(binary.LittleEndian.Uint32(foot[8:]))
	if v := binary.LittleEndian.Uint32(foot[12:]); v != s.version {
		return nil, s.corrupt("footer", int64(len(data)-FooterSize), "version %d differs from header's %d", v, s.version)
	}
	tocBytes, ok := slice(data[:len(data)-FooterSize], tocOff, tocN*TOCEntrySize)
	if !ok || tocN > 1<<16 {
		return nil, s.corrupt("footer", int64(len(data)-FooterSize), "table of contents out of bounds (offset %d, %d entries)", tocOff, tocN)
	}
	if sum := xxhash.Sum64(tocBytes); sum != binary.LittleEndian.Uint64(foot[16:]) {
		return nil, s.corrupt("table of contents", int64(tocOff), "checksum mismatch")
	}
	seen := map[uint32]bool{}
	for i := uint64(0); i < tocN; i++ {
		e := tocBytes[i*TOCEntrySize:]
		te := TOCEntry{
			Kind:   binary.LittleEndian.Uint32(e[0:]),
			Flags:  binary.LittleEndian.Uint32(e[4:]),
			Offset: binary.LittleEndian.Uint64(e[8:]),
			Length: binary.LittleEndian.Uint64(e[16:]),
			Sum:    binary.LittleEndian.Uint64(e[24:]),
		}
		if _, ok := slice(data[:tocOff], te.Offset, te.Length); !ok || te.Offset < HeaderSize {
			return nil, s.corrupt(SectionName(te.Kind), int64(te.Offset), "section out of bounds (length %d)", te.Length)
		}
		if seen[te.Kind] {
			return nil, s.corrupt(SectionName(te.Kind), int64(te.Offset), "duplicate section")
		}
		seen[te.Kind] = true
		s.toc = append(s.toc, te)
	}
	if err := s.openChunks(); err != nil {
		return nil, err
	}
	// Small sections: checksum now, decode now.
	if err := s.decodeMeta(); err != nil {
		return nil, err
	}
	if err := s.decodeFiles(); err != nil {
		return nil, err
	}
	for _, sec := range []struct {
		dst  *section
		kind uint32
	}{{&s.groups, SectionLineGroups}, {&s.lens, SectionLineLens}, {&s.postings, SectionPostings}, {&s.dict, SectionTermDict},
		{&s.dictOffs, SectionDictBlocks}, {&s.blocks, SectionTermBlocks}, {&s.trigrams, SectionTrigrams},
		{&s.timeGroups, SectionTimeGroups}, {&s.lineTimes, SectionLineTimes}, {&s.ckpts, SectionCheckpoints}} {
		if *sec.dst, err = s.chunked(sec.kind); err != nil {
			return nil, err
		}
	}
	if err := s.decodeSpans(); err != nil {
		return nil, err
	}
	if err := s.decodeUnindexed(); err != nil {
		return nil, err
	}
	if err := s.checkDictionary(); err != nil {
		return nil, err
	}
	return s, nil
}

// openChunks checks the table of contents' chunk bookkeeping and every
// section small enough to check whole (all but the chunked ones and the
// chunk sums, which are checked page by page on use): a segment opens at
// the cost of its small sections, whatever its size.
func (s *Segment) openChunks() error {
	var nchunks int
	for i := range s.toc {
		e := &s.toc[i]
		if e.Flags&TOCFlagChunked != 0 {
			nchunks += chunksOf(e.Length)
		}
	}
	for _, kind := range []uint32{SectionLineGroups, SectionLineLens, SectionPostings, SectionTermDict, SectionDictBlocks, SectionTermBlocks, SectionTrigrams, SectionTimeGroups, SectionLineTimes, SectionCheckpoints} {
		if e := s.entry(kind); e != nil && e.Flags&TOCFlagChunked == 0 {
			return s.corrupt(SectionName(kind), int64(e.Offset), "section not chunked")
		}
	}
	sums, err := s.section(SectionChunkSums)
	if err != nil {
		return err
	}
	if len(sums) != nchunks*8 {
		return s.corrupt("chunk sums", int64(s.entry(SectionChunkSums).Offset), "%d bytes for %d chunks", len(sums), nchunks)
	}
	for _, e := range s.toc {
		if e.Flags&TOCFlagChunked == 0 && e.Kind != SectionChunkSums {
			if _, err := s.checkedSection(e.Kind); err != nil {
				return err
			}
		}
	}
	pages, err := s.section(SectionSumPages)
	if err != nil {
		return err
	}
	npages := (nchunks + SumPageChunks - 1) / SumPageChunks
	if len(pages) != npages*8 {
		return s.corrupt("sum pages", int64(s.entry(SectionSumPages).Offset), "%d bytes for %d pages", len(pages), npages)
	}
	s.cs = chunkState{sums: sums, pages: pages, nchunks: nchunks, chunkOK: newBits(nchunks), pageOK: newBits(npages)}
	return nil
}

// chunked returns a chunked section with its first chunk's index.
func (s *Segment) chunked(kind uint32) (section, error) {
	c0 := 0
	for _, e := range s.toc {
		if e.Kind == kind {
			b, _ := slice(s.data, e.Offset, e.Length)
			return section{kind: kind, off: e.Offset, data: b, chunk0: c0}, nil
		}
		if e.Flags&TOCFlagChunked != 0 {
			c0 += chunksOf(e.Length)
		}
	}
	return section{}, s.corrupt(SectionName(kind), -1, "missing section")
}

func (s *Segment) entry(kind uint32) *TOCEntry {
	for i := range s.toc {
		if s.toc[i].Kind == kind {
			return &s.toc[i]
		}
	}
	return nil
}

func (s *Segment) section(kind uint32) ([]byte, error) {
	e := s.entry(kind)
	if e == nil {
		return nil, s.corrupt(SectionName(kind), -1, "missing section")
	}
	b, _ := slice(s.data, e.Offset, e.Length)
	return b, nil
}

func (s *Segment) checkedSection(kind uint32) ([]byte, error) {
	b, err := s.section(kind)
	if err != nil {
		return nil, err
	}
	if xxhash.Sum64(b) != s.entry(kind).Sum {
		return nil, s.corrupt(SectionName(kind), int64(s.entry(kind).Offset), "checksum mismatch")
	}
	return b, nil
}

func (s *Segment) decodeMeta() error {
	b, _ := s.section(SectionMeta)
	d := Decbuf{B: b}
	for d.Len() > 0 && d.Err == nil {
		tag, v := d.Uvarint(), d.Uvarint()
		switch tag {
		case MetaLines:
			if v > 1<<32-1 {
				return s.corrupt("meta", -1, "line count %d out of range", v)
			}
			s.lines = uint32(v)
		case MetaTerms:
			s.terms = v
		case MetaRawBytes:
			s.rawBytes = int64(v)
		case MetaPostings:
			s.postingsN = v
		case MetaMaxLineLen:
			s.maxLineLen = v
		case MetaBlocks:
			if v > 1<<31 {
				return s.corrupt("meta", -1, "block count %d out of range", v)
			}
			s.nblocks = int(v)
		}
	}
	if d.Err != nil {
		return s.corrupt("meta", -1, "%v", d.Err)
	}
	return nil
}

func (s *Segment) decodeFiles() error {
	b, _ := s.section(SectionFiles)
	d := Decbuf{B: b}
	n := d.Int(len(b))
	s.files = make([]SegFile, 0, n)
	// The paths go into one string, not one allocation per file (a
	// segment may hold 100,000 small files).
	paths := make([]byte, 0, len(b))
	ends := make([]int, 0, n)
	for i := 0; i < n && d.Err == nil; i++ {
		var f SegFile
		f.ID = d.Uvarint()
		f.Root = d.Int(1 << 16)
		paths = append(paths, d.Bytes(d.Int(d.Len()))...)
		ends = append(ends, len(paths))
		f.Size = int64(d.Uvarint())
		f.MTime = int64(d.Uvarint())
		f.Dev = d.Uvarint()
		f.Ino = d.Uvarint()
		f.FPLen = int64(d.Uvarint())
		f.FP = d.U64()
		f.Lines = uint32(d.Int(1<<32 - 1))
		s.files = append(s.files, f)
	}
	if d.Err != nil {
		return s.corrupt("files", -1, "%v", d.Err)
	}
	all, start := string(paths), 0
	for i := range s.files {
		s.files[i].Path = all[start:ends[i]]
		start = ends[i]
	}
	return nil
}

func (s *Segment) decodeSpans() error {
	b, _ := s.section(SectionSpans)
	d := Decbuf{B: b}
	n := d.Int(len(b))
	s.spans = make([]Span, 0, n)
	s.linesChecked = make([]atomic.Int64, n)
	s.hitsChecked = make([]atomic.Int64, n)
	var next uint32
	ngroups := uint64(len(s.groups.data) / LineGroupSize)
	for i := 0; i < n && d.Err == nil; i++ {
		var sp Span
		sp.File = d.Int(len(s.files) - 1)
		sp.FirstLine = next
		sp.NumLines = uint32(d.Int(int(s.lines - next)))
		start, length := d.Uvarint(), d.Uvarint()
		if start > math.MaxInt64 || length > math.MaxInt64-start {
			return s.corrupt("spans", -1, "span %d's bytes out of range", i)
		}
		sp.StartOffset, sp.EndOffset = int64(start), int64(start+length)
		sp.StartLineNo = int64(d.Uvarint())
		sp.FirstGroup = uint32(d.Int(int(ngroups)))
		flags := d.Uvarint()
		sp.TimeSorted = flags&2 != 0
		if sp.Timed = flags&1 != 0; sp.Timed {
			sp.MinTime = unzigzag(d.Uvarint())
			sp.MaxTime = unzigzag(d.Uvarint())
		}
		if d.Err != nil {
			break
		}
		if sp.Timed && sp.MinTime > sp.MaxTime {
			return s.corrupt("spans", -1, "span %d's time range inverted", i)
		}
		if sp.TimeSorted && !sp.Timed {
			return s.corrupt("spans", -1, "span %d sorted in time without times", i)
		}
		// (A span's line walks count in uint32: one of more than
		// MaxUint32-GroupSize lines would wrap.)
		if sp.NumLines == 0 || sp.NumLines > math.MaxUint32-GroupSize || sp.StartLineNo < 1 ||
			uint64(sp.FirstGroup)+uint64((sp.NumLines+GroupSize-1)/GroupSize) > ngroups {
			return s.corrupt("spans", -1, "span %d inconsistent", i)
		}
		next += sp.NumLines
		s.spans = append(s.spans, sp)
	}
	if d.Err != nil {
		return s.corrupt("spans", -1, "%v", d.Err)
	}
	if next != s.lines {
		return s.corrupt("spans", -1, "spans cover %d lines, segment has %d", next, s.lines)
	}
	return nil
}

func (s *Segment) decodeUnindexed() error {
	b, _ := s.section(SectionUnindexed)
	ids, err := decodeDeltaList(b, s.lines)
	if err != nil {
		return s.corrupt("unindexed lines", -1, "%v", err)
	}
	if len(ids) > 0 {
		s.unindexed = roaring.BitmapOf(ids...)
	}
	return nil
}

// decodeDeltaList reads a uvarint count and then that many ids as first
// value and gaps; ids must increase strictly and stay below limit.
func decodeDeltaList(b []byte, limit uint32) ([]uint32, error) {
	d := Decbuf{B: b}
	n := d.Int(len(b))
	return decodeDeltasTo(nil, &d, n, limit)
}

// decodeDeltasTo reads n ids as first value and gaps (increasing strictly,
// below limit) into dst's memory when it has room.
func decodeDeltasTo(dst []uint32, d *Decbuf, n int, limit uint32) ([]uint32, error) {
	if d.Err != nil {
		return nil, d.Err
	}
	if n > d.Len() { // every id takes at least one byte
		return nil, fmt.Errorf("%d ids in %d bytes", n, d.Len())
	}
	// A local slice, not d.B, in the loop: a list is up to millions of
	// varints, and a pointer store per varint (with a write barrier while
	// the GC runs) doubled the time of counting a common word.
	b := d.B
	ids := dst[:0]
	if cap(ids) < n {
		ids = make([]uint32, n)
	}
	ids = ids[:n]
	var prev uint64
	for i := range ids {
		var v uint64
		if len(b) > 0 && b[0] < 0x80 {
			v, b = uint64(b[0]), b[1:]
		} else if len(b) > 1 && b[1] < 0x80 { // a gap below 16384: most of a common word's
			v, b = uint64(b[0]&0x7f)|uint64(b[1])<<7, b[2:]
		} else {
			var k int
			if v, k = binary.Uvarint(b); k <= 0 {
				if k == 0 {
					return nil, errShort
				}
				return nil, errVarint
			}
			b = b[k:]
		}
		if i > 0 {
			if v == 0 {
				return nil, fmt.Errorf("zero gap")
			}
			v += prev
		}
		if v >= uint64(limit) {
			return nil, fmt.Errorf("line id %d beyond %d lines", v, limit)
		}
		ids[i] = uint32(v)
		prev = v
	}
	d.B = b
	return ids, nil
}

// Name is the segment's file path.
func (s *Segment) Name() string { return s.name }

// NumLines is the number of lines the segment indexes.
func (s *Segment) NumLines() uint32 { return s.lines }

// NumTerms is the number of distinct terms.
func (s *Segment) NumTerms() uint64 { return s.terms }

// RawBytes is the number of log bytes the segment covers.
func (s *Segment) RawBytes() int64 { return s.rawBytes }

// Size is the segment file's size.
func (s *Segment) Size() int64 { return int64(len(s.data)) }

// Files is the segment's file table.
func (s *Segment) Files() []SegFile { return s.files }

// Spans lists the segment's line ranges per file, in line id order.
func (s *Segment) Spans() []Span { return s.spans }

// Sections lists the table of contents, in file order.
func (s *Segment) Sections() []TOCEntry { return s.toc }

// Mapping is the underlying mapping (nil for ParseSegment).
func (s *Segment) Mapping() *Mapping { return s.m }

// Unindexed returns the lines whose tokens are not (all) in the dictionary
// (huge lines, huge tokens): every query must verify them. May be nil.
func (s *Segment) Unindexed() *roaring.Bitmap { return s.unindexed }

// Close unmaps the segment.
func (s *Segment) Close() error {
	if s.refs.Add(-1) > 0 {
		return nil // still used by another index
	}
	if s.closed.Swap(true) {
		return nil
	}
	if s.m != nil {
		return s.m.Close()
	}
	return nil
}

func (s *Segment) check() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// Verify checks every section's checksum and every chunk's, reading the
// whole file; the chunks are then known good for later reads.
func (s *Segment) Verify() (err error) {
	if err := s.check(); err != nil {
		return err
	}
	if s.verified.Load() {
		return nil
	}
	defer func() {
		if err == nil {
			s.verified.Store(true)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("", &err)
	for _, e := range s.toc {
		if _, err := s.checkedSection(e.Kind); err != nil {
			return s.damaged(err)
		}
	}
	for _, sec := range []*section{&s.groups, &s.lens, &s.postings, &s.dict, &s.dictOffs, &s.blocks, &s.trigrams, &s.timeGroups, &s.lineTimes, &s.ckpts} {
		if err := s.verifyChunks(sec); err != nil {
			return err
		}
	}
	return nil
}
