package mmapstore

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime/debug"
	"sort"
	"sync/atomic"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/vellum"
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
	createdNs  int64
	postingsN  uint64
	maxLineLen uint64

	files      []SegFile
	spans      []Span
	groups     []byte
	lens       []byte
	fst        *vellum.FST
	postings   []byte
	postOff    uint64 // file offset of the postings section, for alignment checks
	blockOffs  []byte // (nblocks+1) u32 offsets into blockKeys
	blockKeys  []byte
	nblocks    int
	trigrams   []byte // BloomBits slices of sliceWords u64 words
	sliceWords int
	unindexed  *roaring.Bitmap
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
	// read megabytes around each of them. The warmer re-enables read-ahead
	// for the ranges it reads in order.
	m.Advise(0, m.Size(), unix.MADV_RANDOM)
	s, err := parseSegment(path, m.Bytes())
	if err != nil {
		m.Close()
		return nil, err
	}
	s.m = m
	return s, nil
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
		*err = s.corrupt(section, -1, "decoding failed: %v", r)
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
	if s.version < MinSegmentVersion || s.version > SegmentVersion {
		return nil, fmt.Errorf("%s: %w %d (this build reads %d..%d)", name, ErrVersion, s.version, MinSegmentVersion, SegmentVersion)
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
	// Small sections: checksum now, decode now.
	for _, kind := range []uint32{SectionMeta, SectionFiles, SectionSpans, SectionUnindexed} {
		if _, err := s.checkedSection(kind); err != nil {
			return nil, err
		}
	}
	if err := s.decodeMeta(); err != nil {
		return nil, err
	}
	if err := s.decodeFiles(); err != nil {
		return nil, err
	}
	if s.groups, err = s.section(SectionLineGroups); err != nil {
		return nil, err
	}
	if s.lens, err = s.section(SectionLineLens); err != nil {
		return nil, err
	}
	if err := s.decodeSpans(); err != nil {
		return nil, err
	}
	if err := s.decodeUnindexed(); err != nil {
		return nil, err
	}
	if s.postings, err = s.section(SectionPostings); err != nil {
		return nil, err
	}
	s.postOff = s.entry(SectionPostings).Offset
	if err := s.decodeBlocks(); err != nil {
		return nil, err
	}
	fstBytes, err := s.section(SectionFST)
	if err != nil {
		return nil, err
	}
	// vellum.Load keeps the slice: the dictionary is read in place.
	if s.fst, err = vellum.Load(fstBytes); err != nil {
		return nil, s.corrupt("term dictionary", int64(s.entry(SectionFST).Offset), "%v", err)
	}
	return s, nil
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

func (s *Segment) decodeBlocks() error {
	b, err := s.section(SectionTermBlocks)
	if err != nil {
		return err
	}
	d := Decbuf{B: b}
	n := d.Int(len(b) / 4)
	offs := d.Bytes((n + 1) * 4)
	if d.Err != nil {
		return s.corrupt("term blocks", -1, "%v", d.Err)
	}
	s.nblocks, s.blockOffs, s.blockKeys = n, offs, d.B
	for i := 0; i <= n; i++ {
		o := binary.LittleEndian.Uint32(offs[i*4:])
		if o > uint32(len(s.blockKeys)) || i > 0 && o < binary.LittleEndian.Uint32(offs[i*4-4:]) {
			return s.corrupt("term blocks", -1, "block %d key offset out of bounds", i)
		}
	}
	t, err := s.section(SectionTrigrams)
	if err != nil {
		return err
	}
	s.sliceWords = (n + 63) / 64
	if len(t) != BloomBits*s.sliceWords*8 {
		return s.corrupt("trigram filters", -1, "size %d does not fit %d blocks", len(t), n)
	}
	s.trigrams = t
	return nil
}

// BlockKey returns the first term of block b, aliasing the mapping.
func (s *Segment) BlockKey(b int) []byte {
	o := binary.LittleEndian.Uint32(s.blockOffs[b*4:])
	e := binary.LittleEndian.Uint32(s.blockOffs[b*4+4:])
	return s.blockKeys[o:e]
}

// EstimatePrefixTerms estimates, from the block keys alone, how many
// dictionary terms start with prefix: the blocks whose key range meets the
// prefix's, times the average block. It lets a query skip expanding a
// prefix that would cost more than it saves without walking it first.
func (s *Segment) EstimatePrefixTerms(prefix []byte) int {
	if s.nblocks == 0 {
		return 0
	}
	first := sort.Search(s.nblocks, func(b int) bool { return bytes.Compare(s.BlockKey(b), prefix) >= 0 })
	last := s.nblocks
	if end := successor(prefix); end != nil {
		last = sort.Search(s.nblocks, func(b int) bool { return bytes.Compare(s.BlockKey(b), end) >= 0 })
	}
	blocks := last - first + 1 // the block before first may hold some too
	return int(uint64(blocks) * s.terms / uint64(s.nblocks))
}

// BlockCandidates returns the dictionary blocks whose trigram filters
// admit every trigram of needle (padded with a 0 byte at the end when
// suffix is set, and at the start when prefix is set): a superset of the
// blocks holding a term that contains needle. needle must be at least 3
// bytes once padded.
func (s *Segment) BlockCandidates(needle []byte, prefix, suffix bool) ([]uint32, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	p := needle
	if prefix || suffix {
		p = make([]byte, 0, len(needle)+2)
		if prefix {
			p = append(p, 0)
		}
		p = append(p, needle...)
		if suffix {
			p = append(p, 0)
		}
	}
	if len(p) < 3 {
		return nil, fmt.Errorf("needle too short for trigrams")
	}
	acc := make([]uint64, s.sliceWords)
	for i := range acc {
		acc[i] = ^uint64(0)
	}
	if r := s.nblocks % 64; r != 0 {
		acc[len(acc)-1] = 1<<r - 1
	}
	seen := map[uint32]bool{}
	for i := 0; i+3 <= len(p); i++ {
		for _, h := range TrigramHashes(uint32(p[i])<<16 | uint32(p[i+1])<<8 | uint32(p[i+2])) {
			if seen[h] {
				continue
			}
			seen[h] = true
			slice := s.trigrams[int(h)*s.sliceWords*8:]
			for w := range acc {
				acc[w] &= binary.LittleEndian.Uint64(slice[w*8:])
			}
		}
	}
	var out []uint32
	for w, x := range acc {
		for x != 0 {
			b := bits.TrailingZeros64(x)
			out = append(out, uint32(w*64+b))
			x &= x - 1
		}
	}
	return out, nil
}

// BlockTerms calls fn for every term of block b with its postings
// reference, until fn returns false.
func (s *Segment) BlockTerms(b int, fn func(term []byte, ref uint64) bool) (err error) {
	if err := s.iterable(); err != nil {
		return err
	}
	if b < 0 || b >= s.nblocks {
		return fmt.Errorf("block %d out of range", b)
	}
	var end []byte
	if b+1 < s.nblocks {
		end = s.BlockKey(b + 1)
	}
	return s.rangeTerms(s.BlockKey(b), end, fn)
}

// rangeTerms calls fn for the terms in [lo, hi) (hi nil: to the end), in
// order, until fn returns false; bad bytes give a corruption error.
func (s *Segment) rangeTerms(lo, hi []byte, fn func(term []byte, ref uint64) bool) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("term dictionary", &err)
	it, err := s.fst.Search(depthLimit{}, lo, hi)
	for err == nil {
		k, v := it.Current()
		if !fn(k, v) {
			return nil
		}
		err = it.Next()
	}
	if err == vellum.ErrIteratorDone {
		return nil
	}
	return s.corrupt("term dictionary", -1, "%v", err)
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
		case MetaCreatedNs:
			s.createdNs = int64(v)
		case MetaPostings:
			s.postingsN = v
		case MetaMaxLineLen:
			s.maxLineLen = v
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
	for i := 0; i < n && d.Err == nil; i++ {
		var f SegFile
		f.ID = d.Uvarint()
		f.Root = d.Int(1 << 16)
		f.Path = string(d.Bytes(d.Int(d.Len())))
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
	return nil
}

func (s *Segment) decodeSpans() error {
	b, _ := s.section(SectionSpans)
	d := Decbuf{B: b}
	n := d.Int(len(b))
	s.spans = make([]Span, 0, n)
	var next uint32
	ngroups := uint64(len(s.groups) / LineGroupSize)
	for i := 0; i < n && d.Err == nil; i++ {
		var sp Span
		sp.File = d.Int(len(s.files) - 1)
		sp.FirstLine = next
		sp.NumLines = uint32(d.Int(int(s.lines - next)))
		sp.StartOffset = int64(d.Uvarint())
		sp.EndOffset = sp.StartOffset + int64(d.Uvarint())
		sp.StartLineNo = int64(d.Uvarint())
		sp.FirstGroup = uint32(d.Int(int(ngroups)))
		if d.Err != nil {
			break
		}
		if sp.NumLines == 0 || sp.EndOffset < sp.StartOffset || sp.StartLineNo < 1 ||
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
	return decodeDeltas(&d, n, limit)
}

func decodeDeltas(d *Decbuf, n int, limit uint32) ([]uint32, error) {
	if d.Err != nil {
		return nil, d.Err
	}
	if n > d.Len() { // every id takes at least one byte
		return nil, fmt.Errorf("%d ids in %d bytes", n, d.Len())
	}
	ids := make([]uint32, n)
	var prev uint64
	for i := range ids {
		v := d.Uvarint()
		if i > 0 {
			if v == 0 {
				d.Err = fmt.Errorf("zero gap")
			}
			v += prev
		}
		if v >= uint64(limit) {
			d.Err = fmt.Errorf("line id %d beyond %d lines", v, limit)
		}
		if d.Err != nil {
			return nil, d.Err
		}
		ids[i] = uint32(v)
		prev = v
	}
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

// NumBlocks is the number of dictionary blocks.
func (s *Segment) NumBlocks() int { return s.nblocks }

// Close unmaps the segment.
func (s *Segment) Close() error {
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

// Lookup finds term's postings reference.
func (s *Segment) Lookup(term []byte) (ref uint64, ok bool, err error) {
	if err := s.check(); err != nil {
		return 0, false, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("term dictionary", &err)
	ref, ok, err = s.fst.Get(term)
	if err != nil {
		return 0, false, s.corrupt("term dictionary", -1, "%v", err)
	}
	return ref, ok, nil
}

// depthLimit is a vellum automaton accepting every key of at most
// maxTermLen+1 bytes. Iterating through it bounds the walk: a point lookup
// is bounded by its key, but iterating a damaged FST whose transitions form
// a cycle would otherwise descend forever. (Verifying the dictionary's
// checksum first would read it whole, which a cold one-off query cannot
// afford.)
type depthLimit struct{}

const maxTermDepth = 256

func (depthLimit) Start() int               { return 0 }
func (depthLimit) IsMatch(int) bool         { return true }
func (depthLimit) CanMatch(d int) bool      { return d <= maxTermDepth }
func (depthLimit) WillAlwaysMatch(int) bool { return false }
func (depthLimit) Accept(d int, _ byte) int { return d + 1 }

func (s *Segment) iterable() error { return s.check() }

// PrefixTerms calls fn for every term starting with prefix, in order, until
// fn returns false. The term slice is only valid during the call.
func (s *Segment) PrefixTerms(prefix []byte, fn func(term []byte, ref uint64) bool) (err error) {
	if err := s.iterable(); err != nil {
		return err
	}
	return s.rangeTerms(prefix, successor(prefix), fn)
}

// successor returns the smallest key greater than every key with prefix p,
// or nil when there is none (p is all 0xff).
func successor(p []byte) []byte {
	q := bytes.Clone(p)
	for i := len(q) - 1; i >= 0; i-- {
		if q[i] < 0xff {
			q[i]++
			return q[:i+1]
		}
	}
	return nil
}

// DocFreq is the number of lines a postings reference holds.
func (s *Segment) DocFreq(ref uint64) (int, error) {
	if ref&PostingsInline != 0 {
		return 1, nil
	}
	if ref>>1 >= uint64(len(s.postings)) {
		return 0, s.corrupt("postings", int64(ref>>1), "reference out of bounds")
	}
	d := Decbuf{B: s.postings[ref>>1:]}
	h := d.Uvarint()
	if d.Err != nil || h>>1 > uint64(s.lines) {
		return 0, s.corrupt("postings", int64(ref>>1), "bad list header")
	}
	return int(h >> 1), nil
}

// Postings decodes a postings reference into a bitmap of line ids. Roaring
// lists are read in place from the mapping (copy-on-write): the result is
// valid only while the segment is open.
func (s *Segment) Postings(ref uint64) (bm *roaring.Bitmap, err error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if ref&PostingsInline != 0 {
		id := ref >> 1
		if id >= uint64(s.lines) {
			return nil, s.corrupt("term dictionary", -1, "inline line id %d beyond %d lines", id, s.lines)
		}
		return roaring.BitmapOf(uint32(id)), nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("postings", &err)
	off := ref >> 1
	if off >= uint64(len(s.postings)) {
		return nil, s.corrupt("postings", int64(off), "reference out of bounds")
	}
	d := Decbuf{B: s.postings[off:]}
	h := d.Uvarint()
	count := h >> 1
	if d.Err != nil || count > uint64(s.lines) || count < 2 {
		return nil, s.corrupt("postings", int64(off), "bad list header")
	}
	switch h & 1 {
	case EncDeltaVarint:
		ids, err := decodeDeltas(&d, int(count), s.lines)
		if err != nil {
			return nil, s.corrupt("postings", int64(off), "%v", err)
		}
		return roaring.BitmapOf(ids...), nil
	default: // EncRoaring
		n := d.Uvarint()
		if d.Err != nil {
			return nil, s.corrupt("postings", int64(off), "%v", d.Err)
		}
		start := off + uint64(len(s.postings[off:])-d.Len())
		start += pad8(s.postOff + start)
		buf, ok := slice(s.postings, start, n)
		if !ok {
			return nil, s.corrupt("postings", int64(off), "bitmap of %d bytes out of bounds", n)
		}
		bm := roaring.New()
		if _, err := bm.FromBuffer(buf); err != nil {
			return nil, s.corrupt("postings", int64(start), "%v", err)
		}
		if err := bm.Validate(); err != nil {
			return nil, s.corrupt("postings", int64(start), "%v", err)
		}
		if bm.GetCardinality() != count || (count > 0 && bm.Maximum() >= s.lines) {
			return nil, s.corrupt("postings", int64(start), "bitmap does not match its header")
		}
		return bm, nil
	}
}

// PostingsAnd returns the lines of a postings reference that are also in
// with, without building the whole list: uvarint lists are decoded and
// probed against with, roaring lists intersected in place. Intersecting a
// common word with a few candidates then costs a decode, not a bitmap.
func (s *Segment) PostingsAnd(ref uint64, with *roaring.Bitmap) (bm *roaring.Bitmap, err error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if ref&PostingsInline != 0 {
		b, err := s.Postings(ref)
		if err != nil {
			return nil, err
		}
		b.And(with)
		return b, nil
	}
	off := ref >> 1
	if off >= uint64(len(s.postings)) {
		return nil, s.corrupt("postings", int64(off), "reference out of bounds")
	}
	d := Decbuf{B: s.postings[off:]}
	h := d.Uvarint()
	if d.Err != nil || h&1 != EncDeltaVarint {
		all, err := s.Postings(ref)
		if err != nil {
			return nil, err
		}
		return roaring.And(all, with), nil
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("postings", &err)
	count := h >> 1
	if count > uint64(s.lines) || count < 2 || count > uint64(d.Len()) {
		return nil, s.corrupt("postings", int64(off), "bad list header")
	}
	// A short list probes with (Contains per id); a long one is merged with
	// with's ids in two sorted walks, a few ns an id.
	if count*8 < with.GetCardinality() {
		var kept []uint32
		ids, err := decodeDeltas(&d, int(count), s.lines)
		if err != nil {
			return nil, s.corrupt("postings", int64(off), "%v", err)
		}
		for _, id := range ids {
			if with.Contains(id) {
				kept = append(kept, id)
			}
		}
		return roaring.BitmapOf(kept...), nil
	}
	want := with.ToArray()
	var kept []uint32
	var id uint64
	k := 0
	b := d.B
	for i := uint64(0); i < count && k < len(want); i++ {
		// Inlined uvarint: most gaps fit one byte.
		var v uint64
		if len(b) > 0 && b[0] < 0x80 {
			v, b = uint64(b[0]), b[1:]
		} else {
			n := 0
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return nil, s.corrupt("postings", int64(off), "bad list entry")
			}
			b = b[n:]
		}
		if i > 0 {
			if v == 0 {
				return nil, s.corrupt("postings", int64(off), "zero gap")
			}
			v += id
		}
		if v >= uint64(s.lines) {
			return nil, s.corrupt("postings", int64(off), "bad list entry")
		}
		id = v
		for k < len(want) && uint64(want[k]) < id {
			k++
		}
		if k < len(want) && uint64(want[k]) == id {
			kept = append(kept, uint32(id))
			k++
		}
	}
	return roaring.BitmapOf(kept...), nil
}

func pad8(off uint64) uint64 { return (8 - off%8) % 8 }

// LineLoc is where a line lives: its span and its bytes in the file.
type LineLoc struct {
	Span   int
	Offset int64 // file offset of the line's first byte
	Length int64 // bytes including the '\n'
}

// SpanOf returns the index of the span holding line id.
func (s *Segment) SpanOf(line uint32) int {
	return sort.Search(len(s.spans), func(i int) bool {
		return s.spans[i].FirstLine+s.spans[i].NumLines > line
	})
}

// PrefetchLines makes the offset index of span si resident when most of it
// is not: a query about to locate many lines of a cold segment reads it in
// one sequential pass instead of faulting page by page at random.
func (s *Segment) PrefetchLines(si int) error {
	if err := s.check(); err != nil {
		return err
	}
	if s.m == nil || si < 0 || si >= len(s.spans) {
		return nil
	}
	sp := &s.spans[si]
	_, lo, err := s.group(sp.FirstGroup)
	if err != nil {
		return err
	}
	hi := uint64(len(s.lens))
	if si+1 < len(s.spans) {
		if _, h, err := s.group(s.spans[si+1].FirstGroup); err == nil {
			hi = h
		}
	}
	base := int64(s.entry(SectionLineLens).Offset)
	off, n := base+int64(lo), int64(hi-lo)
	res, err := s.m.Resident(off, n)
	if err != nil || res*2 >= n {
		return err
	}
	return s.m.Prefetch(off, n, make([]byte, min(n, 1<<20)))
}

// Locate finds a line through the offset index: one restart point read and
// at most GroupSize-1 uvarint lengths decoded.
func (s *Segment) Locate(line uint32) (LineLoc, error) {
	if err := s.check(); err != nil {
		return LineLoc{}, err
	}
	if line >= s.lines {
		return LineLoc{}, fmt.Errorf("line id %d beyond %d lines", line, s.lines)
	}
	si := s.SpanOf(line)
	if si >= len(s.spans) {
		return LineLoc{}, s.corrupt("spans", -1, "no span holds line %d", line)
	}
	sp := &s.spans[si]
	rel := line - sp.FirstLine
	off, pos, err := s.group(sp.FirstGroup + rel/GroupSize)
	if err != nil {
		return LineLoc{}, err
	}
	b := s.lens[pos:]
	var n int64
	for k := rel % GroupSize; ; k-- {
		// Inlined uvarint (the hot loop of locating lines): lengths below
		// 128 take one byte, most log lines two.
		var v uint64
		switch {
		case len(b) > 0 && b[0] < 0x80:
			v, b = uint64(b[0]), b[1:]
		case len(b) > 1 && b[1] < 0x80:
			v, b = uint64(b[0]&0x7f)|uint64(b[1])<<7, b[2:]
		default:
			var w int
			if v, w = binary.Uvarint(b); w <= 0 {
				return LineLoc{}, s.corrupt("line lengths", int64(pos), "bad length of line %d", line)
			}
			b = b[w:]
		}
		if k == 0 {
			n = int64(v)
			break
		}
		off += int64(v)
	}
	if n < 1 || off < sp.StartOffset || off+n > sp.EndOffset {
		return LineLoc{}, s.corrupt("line lengths", int64(pos), "line %d does not fit its span", line)
	}
	return LineLoc{Span: si, Offset: off, Length: n}, nil
}

// group reads restart point g: the file offset of its first line and the
// position of that line's length in the line lengths section.
func (s *Segment) group(g uint32) (int64, uint64, error) {
	e, ok := slice(s.groups, uint64(g)*LineGroupSize, LineGroupSize)
	if !ok {
		return 0, 0, s.corrupt("line groups", -1, "group %d out of bounds", g)
	}
	off := int64(binary.LittleEndian.Uint64(e))
	pos := uint64(binary.LittleEndian.Uint32(e[8:]))
	if pos >= uint64(len(s.lens)) || off < 0 {
		return 0, 0, s.corrupt("line groups", int64(g)*LineGroupSize, "group %d points out of bounds", g)
	}
	return off, pos, nil
}

// WalkLines calls fn for every line of span si from file-relative line index
// from (0-based within the span) onwards, decoding the offset index
// sequentially; fn returns false to stop.
func (s *Segment) WalkLines(si int, from uint32, fn func(line uint32, off, length int64) bool) error {
	if err := s.check(); err != nil {
		return err
	}
	if si < 0 || si >= len(s.spans) {
		return fmt.Errorf("span %d out of range", si)
	}
	sp := &s.spans[si]
	if from >= sp.NumLines {
		return nil
	}
	off, pos, err := s.group(sp.FirstGroup + from/GroupSize)
	if err != nil {
		return err
	}
	d := Decbuf{B: s.lens[pos:]}
	for k := from % GroupSize; k > 0; k-- {
		off += int64(d.Uvarint())
	}
	for rel := from; rel < sp.NumLines; rel++ {
		n := int64(d.Uvarint())
		if d.Err != nil || n < 1 || off+n > sp.EndOffset {
			return s.corrupt("line lengths", -1, "line %d does not fit its span", sp.FirstLine+rel)
		}
		if !fn(sp.FirstLine+rel, off, n) {
			return nil
		}
		off += n
	}
	return nil
}

// Verify checks every section's checksum, reading the whole file.
func (s *Segment) Verify() (err error) {
	if err := s.check(); err != nil {
		return err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("", &err)
	for _, e := range s.toc {
		if _, err := s.checkedSection(e.Kind); err != nil {
			return err
		}
	}
	return nil
}

// Chunk is a line-aligned byte range of a span, for reading it in pieces.
type Chunk struct {
	Start, End int64  // file offsets
	FirstLine  uint32 // segment line id of the chunk's first line
}

// SpanChunks cuts span si into chunks of about maxBytes at restart points
// of the offset index, so each chunk's first line number is known.
func (s *Segment) SpanChunks(si int, maxBytes int64) ([]Chunk, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if si < 0 || si >= len(s.spans) {
		return nil, fmt.Errorf("span %d out of range", si)
	}
	sp := &s.spans[si]
	groups := (sp.NumLines + GroupSize - 1) / GroupSize
	out := []Chunk{{Start: sp.StartOffset, FirstLine: sp.FirstLine}}
	for g := uint32(1); g < groups; g++ {
		off, _, err := s.group(sp.FirstGroup + g)
		if err != nil {
			return nil, err
		}
		if off < out[len(out)-1].Start || off > sp.EndOffset {
			return nil, s.corrupt("line groups", -1, "restart point %d out of order", sp.FirstGroup+g)
		}
		if off-out[len(out)-1].Start >= maxBytes {
			out[len(out)-1].End = off
			out = append(out, Chunk{Start: off, FirstLine: sp.FirstLine + g*GroupSize})
		}
	}
	out[len(out)-1].End = sp.EndOffset
	return out, nil
}
