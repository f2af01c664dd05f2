package mmapstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// Segment file layout (FORMAT.md beside this file is the full specification):
//
//	header  16 B: magic "LOGDEXSG" | version u32 | flags u32
//	sections, each starting at an 8-byte aligned offset
//	TOC     32 B per section: kind u32 | flags u32 | offset u64 | length u64 | xxhash64 u64
//	footer  32 B: TOC offset u64 | TOC count u32 | version u32 | xxhash64(TOC) u64 | magic
//
// All integers are little-endian.
const (
	SegmentMagic = "LOGDEXSG"
	// FormatVersion is the index format written by this build; the
	// manifest and every segment carry it. Any change to what is written
	// bumps it, and an index of another version is rebuilt from the logs
	// (never read with the wrong decoder, never refused).
	//
	// Changelog:
	//   1: first release.
	//   2: tokens fold orbit-invariantly ('İ', alone in its case-folding
	//      orbit, no longer folds to 'i'); segments no longer record when
	//      they were built, so builds are deterministic.
	//   3: a checksum per 4 KiB chunk of the large sections; the dictionary
	//      in groups of FSTs; a length header on postings; the time index;
	//      compressed files' checkpoints; manifest fields for time,
	//      compression, damage and byte-exact paths. (These landed in
	//      steps under version 2 before any release left this repository;
	//      3 marks them so that every index written by those steps is
	//      rebuilt once, with one clear log line.)
	//   4: postings references carry two or three line ids packed in the
	//      FST value (PostingsPacked) when that is about as narrow as a
	//      list offset; list offsets move up one bit for the tag. Block
	//      keys are the shortest separators, not whole first terms. Spans
	//      say when their line groups are in time order (flag bit 1). The
	//      manifest's segment and file tables are binary (a JSON head
	//      keeps the small fields); a file table of 100,000 files was
	//      25 MB of JSON and half a second to decode.
	//   5: id-shaped dictionary blocks (hex ids, ULIDs, numbers) are
	//      front-coded with their suffixes bit-packed over the block's
	//      alphabet (4 bits a hex digit) and fixed-width prefix, suffix
	//      and reference fields; the other blocks' terms stay in vellum
	//      FSTs, one per run of up to 64 such blocks. Section 13 holds
	//      each block's kind and offset. The highcard index shrank from
	//      30% to 24% of the logs.
	//   6: file records carry a tail fingerprint (the bytes before the
	//      end of the indexed prefix): a file rewritten in place with the
	//      same first KiB, grown past that end, was taken for an append.
	//      Version 5 stays readable (its records have no tail yet).
	//   7: a compressed file whose restart points lie more than two
	//      intervals apart (a zstd file of one frame, an xz file of one
	//      block) has a seekable copy, shadow-<id>-<sum>.zst, named in its
	//      checkpoint table (table version 2). Versions 5 and 6 stay
	//      readable (their tables are all version 1).
	FormatVersion = 7
	// MinFormatVersion is the oldest version this build reads.
	MinFormatVersion = 5

	HeaderSize   = 16
	FooterSize   = 32
	TOCEntrySize = 32
)

// Section kinds. Readers skip kinds they do not know; adding one still bumps
// FormatVersion.
const (
	SectionMeta        uint32 = 1  // segment counters (tagged uvarints)
	SectionFiles       uint32 = 2  // file table
	SectionSpans       uint32 = 3  // per-file line ranges
	SectionLineGroups  uint32 = 4  // every GroupSize-th line: file offset + position in LineLens
	SectionLineLens    uint32 = 5  // uvarint length of every line, '\n' included
	SectionTermDict    uint32 = 6  // packed dictionary blocks and vellum FSTs: term -> postings reference
	SectionPostings    uint32 = 7  // postings lists
	SectionTermBlocks  uint32 = 8  // key of every dictionary block
	SectionUnindexed   uint32 = 9  // lines whose tokens were not (all) indexed
	SectionTrigrams    uint32 = 10 // bit-sliced bloom filters of each block's trigrams
	SectionChunkSums   uint32 = 11 // xxhash64 of every ChunkSize bytes of every chunked section
	SectionSumPages    uint32 = 12 // xxhash64 of every SumPageChunks chunk sums
	SectionDictBlocks  uint32 = 13 // per dictionary block: its kind and its (or its FST's) offset in SectionTermDict
	SectionTimeGroups  uint32 = 14 // per line group: time of its first line, min, max, where its deltas are
	SectionLineTimes   uint32 = 15 // per line: the zigzag uvarint delta of its time from the line before
	SectionCheckpoints uint32 = 16 // per compressed file ending here: its restart points (package compressed)
)

// TimeGroupSize is the width of one SectionTimeGroups entry: base i64 |
// min i64 | max i64 | position of its deltas u32 | unit exponent u8 | flags
// u8 | zero u16. A group of an untimed span has flag TimeUntimed.
const (
	TimeGroupSize = 32
	TimeUntimed   = 1
)

// TOCFlagChunked marks a section checksummed per ChunkSize bytes in
// SectionChunkSums (verified as it is read); other sections are checked
// whole when the segment is opened.
const TOCFlagChunked = 1

// Chunked sections are checksummed per ChunkSize bytes (a page: a cold
// read verifies what it faults in anyway), and the chunk sums per
// SumPageChunks sums (a page of them).
const (
	ChunkSize     = 4096
	SumPageChunks = 512
)

// SectionName names a section kind for messages.
func SectionName(kind uint32) string {
	switch kind {
	case SectionMeta:
		return "meta"
	case SectionFiles:
		return "files"
	case SectionSpans:
		return "spans"
	case SectionLineGroups:
		return "line groups"
	case SectionLineLens:
		return "line lengths"
	case SectionTermDict:
		return "term dictionary"
	case SectionPostings:
		return "postings"
	case SectionTermBlocks:
		return "term blocks"
	case SectionTrigrams:
		return "trigram filters"
	case SectionUnindexed:
		return "unindexed lines"
	case SectionChunkSums:
		return "chunk sums"
	case SectionSumPages:
		return "sum pages"
	case SectionDictBlocks:
		return "dictionary blocks"
	case SectionTimeGroups:
		return "time groups"
	case SectionLineTimes:
		return "line times"
	case SectionCheckpoints:
		return "checkpoints"
	}
	return fmt.Sprintf("section %d", kind)
}

// GroupSize is the number of lines between restart points of the offset
// index: locating a line decodes at most GroupSize-1 line lengths.
const GroupSize = 64

// LineGroupSize is the width of one SectionLineGroups entry.
const LineGroupSize = 16

// MaxIndexedLine is the longest line (without its '\n') the indexer
// tokenizes and times: longer lines are located but listed unindexed
// (FORMAT.md, "Tokens and terms"), and readers that time lines as the
// indexer does pass over them too.
const MaxIndexedLine = 1 << 20

// Meta tags (SectionMeta is a list of uvarint tag, uvarint value pairs).
const (
	MetaLines    = 1
	MetaTerms    = 2
	MetaRawBytes = 3
	// 4 was the creation time (version 1); builds are deterministic now.
	MetaPostings   = 5 // total postings (line, term) pairs
	MetaUnindexed  = 6
	MetaMaxLineLen = 7
	MetaBlocks     = 8 // dictionary blocks
)

// The dictionary is cut into blocks of consecutive terms (about
// BlockBytes of term text, at most BlockTerms terms). For substring lookups
// each block has a bloom filter of the trigrams of its terms, each term
// padded with a 0 byte at both ends; the filters are stored bit-sliced:
// slice j holds bit j of every block's filter, so testing a needle's
// trigrams ANDs a few slices instead of reading every filter.
const (
	BlockBytes  = 512
	BlockTerms  = 64
	BloomBits   = 2048 // bits per block filter (a power of two)
	BloomHashes = 2
)

// TrigramHashes returns the filter bits of trigram code g (three bytes
// a<<16|b<<8|c).
func TrigramHashes(g uint32) [BloomHashes]uint32 {
	const shift = 32 - 11 // log2(BloomBits) = 11
	return [BloomHashes]uint32{(g * 0x9E3779B1) >> shift, ((g ^ 0x5bd1e995) * 0x85EBCA77) >> shift}
}

// Postings references, stored beside each term in its dictionary block.
// Bit 0 set: the term occurs on exactly one line, whose id is value>>1.
// Bits 1..0 = 10: on two or three lines packed in value>>2 (PackedIDs). Bits 1..0 = 00: value>>2 is the
// offset of the postings list inside SectionPostings. Most terms of
// high-cardinality logs (ids) occur on one to three lines: inline, they
// cost a few bytes of reference instead of a list and its offset.
const (
	PostingsInline = 1
	PostingsPacked = 2
	postingsTag    = 3 // the tag bits
)

// packWidth is the bits of one packed line id in a segment of lines lines:
// every id and gap is below lines.
func packWidth(lines uint32) uint {
	if lines < 2 {
		return 0
	}
	return uint(bits.Len32(lines - 1))
}

// packIDs packs two or three ascending line ids as
// first | gap1<<w | gap2<<2w (gap2 = 0 for two), false when they do not
// fit in 62 bits.
func packIDs(ids []uint32, w uint) (uint64, bool) {
	if len(ids) < 2 || len(ids) > 3 || w == 0 {
		return 0, false
	}
	v := uint64(ids[0]) | uint64(ids[1]-ids[0])<<w
	if len(ids) == 3 {
		gap2 := uint64(ids[2] - ids[1])
		if 2*w+uint(bits.Len64(gap2)) > 62 {
			return 0, false
		}
		v |= gap2 << (2 * w)
	} else if 2*w > 62 {
		return 0, false
	}
	return v, true
}

// unpackIDs decodes packIDs' value, checking every id is below lines.
func unpackIDs(v uint64, lines uint32) ([]uint32, bool) {
	w := packWidth(lines)
	if w == 0 || 2*w > 62 {
		return nil, false
	}
	mask := uint64(1)<<w - 1
	first, gap1, gap2 := v&mask, v>>w&mask, v>>(2*w)
	if gap1 == 0 || first+gap1 >= uint64(lines) || gap2 >= uint64(lines) || first+gap1+gap2 >= uint64(lines) {
		return nil, false
	}
	ids := []uint32{uint32(first), uint32(first + gap1)}
	if gap2 != 0 {
		ids = append(ids, uint32(first+gap1+gap2))
	}
	return ids, true
}

// Postings list encodings (low bit of the list header uvarint).
const (
	EncDeltaVarint = 0 // count uvarints: first id, then gaps
	EncRoaring     = 1 // uvarint byte length, zero padding to 8-byte file alignment, roaring portable format
)

// ErrCorrupt is matched by every CorruptionError with errors.Is.
var ErrCorrupt = errors.New("index corrupt")

// ErrVersion reports a format version this build cannot read; it is
// matched by every *VersionError.
var ErrVersion = errors.New("unsupported index format version")

// VersionError says which file has which version.
type VersionError struct {
	Path  string
	Found uint32
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("%s: index format version %d (this build reads %d..%d)", e.Path, e.Found, MinFormatVersion, FormatVersion)
}

func (e *VersionError) Is(target error) bool { return target == ErrVersion }

// CorruptionError says which file and which part of it is damaged.
type CorruptionError struct {
	Path    string
	Section string
	Offset  int64
	Msg     string
}

func (e *CorruptionError) Error() string {
	s := "corrupt index file " + e.Path
	if e.Section != "" {
		s += ": " + e.Section
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf(" at offset %d", e.Offset)
	}
	return s + ": " + e.Msg
}

func (e *CorruptionError) Is(target error) bool { return target == ErrCorrupt }

// TOCEntry locates one section.
type TOCEntry struct {
	Kind   uint32
	Flags  uint32 // TOCFlagChunked
	Offset uint64
	Length uint64
	Sum    uint64
}

// Decbuf decodes little-endian and varint fields from a byte slice and keeps
// the first error, so callers check once after a run of reads (as
// Prometheus' tsdb/encoding.Decbuf does).
type Decbuf struct {
	B   []byte
	Err error
}

var errShort = errors.New("unexpected end of data")
var errVarint = errors.New("invalid varint")
var errTrailing = errors.New("bytes left after the last entry")

func (d *Decbuf) Uvarint() uint64 {
	if d.Err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		if n == 0 {
			d.Err = errShort
		} else {
			d.Err = errVarint
		}
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Int converts a uvarint to int, failing on values beyond max.
func (d *Decbuf) Int(max int) int {
	v := d.Uvarint()
	if d.Err == nil && (max < 0 || v > uint64(max)) {
		d.Err = fmt.Errorf("value %d out of range (max %d)", v, max)
		return 0
	}
	return int(v)
}

func (d *Decbuf) U64() uint64 {
	if d.Err != nil {
		return 0
	}
	if len(d.B) < 8 {
		d.Err = errShort
		return 0
	}
	v := binary.LittleEndian.Uint64(d.B)
	d.B = d.B[8:]
	return v
}

// U16 and U32 read little-endian fixed-width integers (roaring's
// serialization uses them).
func (d *Decbuf) U16() uint16 {
	if b := d.Bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (d *Decbuf) U32() uint32 {
	if b := d.Bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

// Bytes returns the next n bytes, aliasing the underlying (possibly mapped)
// memory: valid only as long as it is.
func (d *Decbuf) Bytes(n int) []byte {
	if d.Err != nil {
		return nil
	}
	if n < 0 || n > len(d.B) {
		d.Err = errShort
		return nil
	}
	b := d.B[:n:n]
	d.B = d.B[n:]
	return b
}

// Len is the number of bytes left.
func (d *Decbuf) Len() int { return len(d.B) }

// slice returns b[off:off+n] or false when that range is out of bounds,
// overflow included (zoekt's indexfile.Read and codesearch's slice check the
// same way).
func slice(b []byte, off, n uint64) ([]byte, bool) {
	end := off + n
	if end < off || end > uint64(len(b)) {
		return nil, false
	}
	return b[off:end:end], true
}
