package mmapstore

// The segment encoder: every section in file order, as FORMAT.md lists
// them. It is one file past 500 lines so that the write order reads as the
// specification does; segment.go holds the decoder.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"maps"
	"os"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cespare/xxhash/v2"
)

// TermSource is a segment's dictionary in sorted order (byte-wise, no
// duplicates), with each term's postings as the indexer accumulated them.
// The writer reads it from two goroutines at once.
type TermSource interface {
	Len() int
	// Term returns the i-th term, the number of lines holding it, the first
	// of those line ids and the uvarint gaps to the others.
	Term(i int) (term []byte, n, first uint32, gaps []byte)
}

// Postings list encodings a writer may be told to use for every list;
// PostingsAuto (the default) picks the better one per list.
const (
	PostingsAuto    = ""
	PostingsVarint  = "varint"
	PostingsRoaring = "roaring"
)

// SegmentInput is everything one segment holds.
type SegmentInput struct {
	Lines *LineTable
	// Unindexed lists, ascending, the lines whose terms are not (all) in
	// the dictionary; every query verifies them.
	Unindexed []uint32
	Terms     TermSource
	// NumPostings is the number of (line, term) pairs, for the meta section.
	NumPostings uint64
	Postings    string // PostingsAuto, PostingsVarint or PostingsRoaring
	// Checkpoints holds, per compressed file whose last lines are in this
	// segment, its restart-point table (compressed.Table's encoding).
	Checkpoints map[uint64][]byte
}

// SegmentInfo is what writing a segment reports.
type SegmentInfo struct {
	Lines    uint32
	Terms    int
	RawBytes int64
	Size     int64
}

// WriteSegment encodes in as a segment file at path and publishes it
// atomically: written to path.tmp, fsynced, renamed. The caller fsyncs the
// directory before publishing a manifest that names it.
func WriteSegment(path string, in *SegmentInput) (SegmentInfo, error) {
	f, err := os.OpenFile(path+".tmp", os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return SegmentInfo{}, err
	}
	info, err := encodeSegment(f, in)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err != nil {
		os.Remove(path + ".tmp")
		return SegmentInfo{}, err
	}
	return info, nil
}

// EncodeSegment returns the bytes of the segment in (tests and fuzzing).
func EncodeSegment(in *SegmentInput) ([]byte, error) {
	var buf bytes.Buffer
	_, err := encodeSegment(&buf, in)
	return buf.Bytes(), err
}

// encodeSegment streams the sections in an order where each can be written
// as it is produced: postings before the dictionary that points into them.
func encodeSegment(out interface{ Write([]byte) (int, error) }, in *SegmentInput) (SegmentInfo, error) {
	lt := in.Lines
	w := newSectionWriter(out)

	nterms := in.Terms.Len()
	starts := blockStarts(nterms, func(i int) []byte { t, _, _, _ := in.Terms.Term(i); return t })
	// The block keys and trigram filters depend on the terms alone: build
	// them on another core while the postings and dictionary are written.
	type blockSections struct{ keys, filters []byte }
	blocksDone := make(chan blockSections, 1)
	go func() {
		keys, filters := termBlocks(starts, nterms, func(i int) []byte { t, _, _, _ := in.Terms.Term(i); return t })
		blocksDone <- blockSections{keys, filters}
	}()
	var meta []byte
	for _, kv := range [][2]uint64{
		{MetaLines, uint64(lt.lines)},
		{MetaTerms, uint64(nterms)},
		{MetaRawBytes, uint64(lt.rawBytes)},
		{MetaPostings, in.NumPostings},
		{MetaUnindexed, uint64(len(in.Unindexed))},
		{MetaMaxLineLen, uint64(lt.maxLine)},
		{MetaBlocks, uint64(len(starts))},
	} {
		meta = binary.AppendUvarint(meta, kv[0])
		meta = binary.AppendUvarint(meta, kv[1])
	}
	w.section(SectionMeta, meta)
	w.section(SectionFiles, appendFiles(nil, lt.files))
	w.section(SectionSpans, appendSpans(nil, lt.spans))
	w.chunkedSection(SectionLineGroups, lt.groups)
	w.chunkedSection(SectionLineLens, lt.lens)
	tgroups, tdeltas := timeSections(lt)
	w.chunkedSection(SectionTimeGroups, tgroups)
	w.chunkedSection(SectionLineTimes, tdeltas)
	w.chunkedSection(SectionCheckpoints, appendCheckpoints(nil, in.Checkpoints))
	w.section(SectionUnindexed, appendDeltaList(nil, in.Unindexed))

	refs, err := writePostings(w, in.Terms, in.Postings, packWidth(uint32(lt.lines)))
	if err != nil {
		<-blocksDone
		return SegmentInfo{}, err
	}

	// The dictionary: id-shaped blocks front-coded and bit-packed, runs of
	// the other blocks as vellum FSTs (dictfst.go), and each block's
	// offset and kind.
	offs, err := writeDictionary(w, in.Terms, starts, refs)
	if err != nil {
		<-blocksDone
		return SegmentInfo{}, err
	}
	w.chunkedSection(SectionDictBlocks, offs)

	bs := <-blocksDone
	w.chunkedSection(SectionTermBlocks, bs.keys)
	w.chunkedSection(SectionTrigrams, bs.filters)

	if err := w.finish(); err != nil {
		return SegmentInfo{}, err
	}
	return SegmentInfo{Lines: lt.lines, Terms: in.Terms.Len(), RawBytes: lt.rawBytes, Size: int64(w.off)}, nil
}

func appendFiles(b []byte, files []SegFile) []byte {
	b = binary.AppendUvarint(b, uint64(len(files)))
	for _, f := range files {
		b = binary.AppendUvarint(b, f.ID)
		b = binary.AppendUvarint(b, uint64(f.Root))
		b = binary.AppendUvarint(b, uint64(len(f.Path)))
		b = append(b, f.Path...)
		b = binary.AppendUvarint(b, uint64(f.Size))
		b = binary.AppendUvarint(b, uint64(f.MTime))
		b = binary.AppendUvarint(b, f.Dev)
		b = binary.AppendUvarint(b, f.Ino)
		b = binary.AppendUvarint(b, uint64(f.FPLen))
		b = binary.LittleEndian.AppendUint64(b, f.FP)
		b = binary.AppendUvarint(b, uint64(f.Lines))
	}
	return b
}

func appendSpans(b []byte, spans []Span) []byte {
	b = binary.AppendUvarint(b, uint64(len(spans)))
	for _, sp := range spans {
		b = binary.AppendUvarint(b, uint64(sp.File))
		b = binary.AppendUvarint(b, uint64(sp.NumLines))
		b = binary.AppendUvarint(b, uint64(sp.StartOffset))
		b = binary.AppendUvarint(b, uint64(sp.EndOffset-sp.StartOffset))
		b = binary.AppendUvarint(b, uint64(sp.StartLineNo))
		b = binary.AppendUvarint(b, uint64(sp.FirstGroup))
		if sp.Timed {
			flags := uint64(1)
			if sp.TimeSorted {
				flags |= 2
			}
			b = binary.AppendUvarint(b, flags)
			b = binary.AppendUvarint(b, zigzag(sp.MinTime))
			b = binary.AppendUvarint(b, zigzag(sp.MaxTime))
		} else {
			b = binary.AppendUvarint(b, 0)
		}
	}
	return b
}

// appendCheckpoints encodes the checkpoint tables: a uvarint count, then
// per file (by id) its id, the offset of its table in the blob after the
// list and the table's length, then the tables.
func appendCheckpoints(b []byte, tables map[uint64][]byte) []byte {
	ids := slices.Sorted(maps.Keys(tables))
	b = binary.AppendUvarint(b, uint64(len(ids)))
	var off uint64
	for _, id := range ids {
		b = binary.AppendUvarint(b, id)
		b = binary.AppendUvarint(b, off)
		b = binary.AppendUvarint(b, uint64(len(tables[id])))
		off += uint64(len(tables[id]))
	}
	for _, id := range ids {
		b = append(b, tables[id]...)
	}
	return b
}

func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }
func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// timeSections encodes the time index: per line group of the offset index
// (64 lines of one span), the time of its first line, its range and where
// its lines' deltas start, then for every other line the zigzag uvarint of
// its time minus the previous line's, in the group's unit (the largest
// power of ten, up to a second, dividing every delta: millisecond logs
// take a byte or two a line).
func timeSections(lt *LineTable) (groups, deltas []byte) {
	for _, sp := range lt.spans {
		for g := uint32(0); g*GroupSize < sp.NumLines; g++ {
			first := sp.FirstLine + g*GroupSize
			ts := lt.times[first : first+min(GroupSize, sp.NumLines-g*GroupSize)]
			var e [TimeGroupSize]byte
			binary.LittleEndian.PutUint32(e[24:], uint32(len(deltas)))
			if !sp.Timed {
				e[29] = TimeUntimed
				groups = append(groups, e[:]...)
				continue
			}
			unit, exp := int64(1e9), byte(9)
			for k := 1; k < len(ts); k++ {
				for (ts[k]-ts[k-1])%unit != 0 {
					unit, exp = unit/10, exp-1
				}
			}
			binary.LittleEndian.PutUint64(e[0:], uint64(ts[0]))
			binary.LittleEndian.PutUint64(e[8:], uint64(slices.Min(ts)))
			binary.LittleEndian.PutUint64(e[16:], uint64(slices.Max(ts)))
			e[28] = exp
			groups = append(groups, e[:]...)
			for k := 1; k < len(ts); k++ {
				deltas = binary.AppendUvarint(deltas, zigzag((ts[k]-ts[k-1])/unit))
			}
		}
	}
	return groups, deltas
}

// appendDeltaList encodes ascending ids as a count, the first id, then gaps
// (what decodeDeltaList reads).
func appendDeltaList(b []byte, ids []uint32) []byte {
	b = binary.AppendUvarint(b, uint64(len(ids)))
	prev := uint32(0)
	for i, id := range ids {
		if i == 0 {
			b = binary.AppendUvarint(b, uint64(id))
		} else {
			b = binary.AppendUvarint(b, uint64(id-prev))
		}
		prev = id
	}
	return b
}

// writePostings writes the postings section and returns each term's
// postings reference. Lists dense enough for roaring's bitmap or run containers to beat
// one uvarint per line are written as roaring; the rest as gaps.
func writePostings(w *sectionWriter, terms TermSource, force string, packW uint) ([]uint64, error) {
	refs := make([]uint64, terms.Len())
	w.begin(SectionPostings, true)
	base := w.off
	var hdr []byte
	var ids []uint32
	for i := range refs {
		_, n, first, rest := terms.Term(i)
		if n == 1 {
			refs[i] = uint64(first)<<1 | PostingsInline
			continue
		}
		refs[i] = (w.off - base) << 2
		// Two or three lines go in the reference itself whenever they
		// fit: a dictionary block stores wide references at their own
		// width (narrowWidth), so this costs their bits, not their
		// block's, and saves a list (smaller on both generated corpora
		// than packing only when about as narrow as a list offset).
		if n <= 3 && force != PostingsVarint && force != PostingsRoaring {
			if v, ok := packIDs(decodeGaps(ids[:0], first, rest), packW); ok {
				refs[i] = v<<2 | PostingsPacked
				continue
			}
		}
		varintSize := uint64(uvarintLen(uint64(first)) + len(rest))
		// Whichever is smaller, but long lists go to roaring even at up to
		// 1.5× the bytes: they are read in place (no decoding) and
		// intersected by containers, which is what makes queries that
		// combine common words fast.
		var rsize uint64
		useRoaring := false
		if n >= 64 { // shorter lists are never roaring: no need to size them
			rsize = roaringSize(first, rest) + 8
			useRoaring = rsize < varintSize || n >= 4096 && rsize*2 < varintSize*3
		}
		switch force {
		case PostingsVarint:
			useRoaring = false
		case PostingsRoaring:
			useRoaring = true
		}
		if useRoaring {
			ids = decodeGaps(ids[:0], first, rest)
			bm := roaring.BitmapOf(ids...)
			bm.RunOptimize()
			if sz := bm.GetSerializedSizeInBytes(); sz+8 <= rsize || force == PostingsRoaring {
				hdr = binary.AppendUvarint(hdr[:0], uint64(n)<<1|EncRoaring)
				hdr = binary.AppendUvarint(hdr, sz)
				w.Write(hdr)
				w.padSection()
				if _, err := bm.WriteTo(w); err != nil {
					return nil, err
				}
				continue
			}
		}
		hdr = binary.AppendUvarint(hdr[:0], uint64(n)<<1|EncDeltaVarint)
		hdr = binary.AppendUvarint(hdr, uint64(uvarintLen(uint64(first))+len(rest)))
		hdr = binary.AppendUvarint(hdr, uint64(first))
		w.Write(hdr)
		w.Write(rest)
	}
	w.end()
	return refs, w.err
}

func decodeGaps(dst []uint32, first uint32, rest []byte) []uint32 {
	dst = append(dst, first)
	id := first
	for len(rest) > 0 {
		v, n := binary.Uvarint(rest)
		rest = rest[n:]
		id += uint32(v)
		dst = append(dst, id)
	}
	return dst
}

// roaringSize estimates the serialized size of a run-optimized roaring
// bitmap of the list without building it: per container of 2^16 ids the
// smallest of an array (2 bytes an id), a bitmap (8 KiB) and runs (4 bytes
// a run), plus 8 bytes of headers each.
func roaringSize(first uint32, rest []byte) uint64 {
	size := uint64(8)
	key := first >> 16
	prev := first
	card, runs := uint64(1), uint64(1)
	flush := func() {
		size += 8 + min(2*card, 8192, 2+4*runs)
	}
	for len(rest) > 0 {
		v, n := binary.Uvarint(rest)
		rest = rest[n:]
		id := prev + uint32(v)
		if id>>16 != key {
			flush()
			key, card, runs = id>>16, 0, 1
		} else if v != 1 {
			runs++
		}
		card++
		prev = id
	}
	flush()
	return size
}

func uvarintLen(v uint64) int {
	return len(binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64), v))
}

// blockStarts cuts the sorted dictionary into blocks (a new block after
// BlockBytes of term text or BlockTerms terms) and returns the index of
// each block's first term.
func blockStarts(nterms int, term func(int) []byte) []int {
	var starts []int
	for i, size := 0, 0; i < nterms; i++ {
		if i == 0 || size >= BlockBytes || i-starts[len(starts)-1] >= BlockTerms {
			starts = append(starts, i)
			size = 0
		}
		size += len(term(i))
	}
	return starts
}

// blockKey is the key of block b starting at term st: the shortest prefix
// of that term sorting after the previous block's last term. Any key
// between the two bounds the block alike, and dense ids (hex, numbers)
// share long prefixes with their neighbours: the key is a few bytes
// instead of a whole id.
func blockKey(b, st int, term func(int) []byte) []byte {
	t := term(st)
	if b == 0 {
		return t
	}
	l := commonPrefix(term(st-1), t)
	return t[:min(l+1, len(t))]
}

// termBlocks returns the term blocks section ((n+1) u32 offsets, then the
// key of every block) and the bit-sliced trigram filters section.
func termBlocks(starts []int, nterms int, term func(int) []byte) ([]byte, []byte) {
	n := len(starts)
	var keys []byte
	var blob []byte
	for b, st := range starts {
		keys = binary.LittleEndian.AppendUint32(keys, uint32(len(blob)))
		blob = append(blob, blockKey(b, st, term)...)
	}
	if n > 0 {
		keys = binary.LittleEndian.AppendUint32(keys, uint32(len(blob)))
	}
	keys = append(keys, blob...)

	words := (n + 63) / 64
	slices := make([]uint64, BloomBits*words)
	// Filters are built 64 blocks at a time in a tile holding one word of
	// every slice (it stays in L1), then the tile goes to the slices: one
	// scattered write per slice for 64 blocks, not one per bit set.
	var tile [BloomBits]uint64
	for b, st := range starts {
		end := nterms
		if b+1 < n {
			end = starts[b+1]
		}
		bit := uint64(1) << (b % 64)
		for i := st; i < end; i++ {
			// Trigrams of the term padded with a 0 byte at both ends,
			// rolled through a 24-bit code.
			t := term(i)
			g := uint32(t[0])
			for k := 1; k <= len(t); k++ {
				var c uint32
				if k < len(t) {
					c = uint32(t[k])
				}
				g = (g<<8 | c) & 0xFFFFFF
				for _, h := range TrigramHashes(g) {
					tile[h] |= bit
				}
			}
		}
		if b%64 == 63 || b == n-1 {
			for j, x := range tile {
				slices[j*words+b/64] = x
			}
			clear(tile[:])
		}
	}
	out := make([]byte, 0, len(slices)*8)
	for _, x := range slices {
		out = binary.LittleEndian.AppendUint64(out, x)
	}
	return keys, out
}

// sectionWriter streams a segment file: header, 8-byte aligned sections with
// a running checksum each (and per ChunkSize bytes for chunked sections),
// then the chunk sums, their page sums, the table of contents and footer.
// It keeps the first error, like zoekt's section writer, so callers check
// once.
type sectionWriter struct {
	bw   *bufio.Writer
	off  uint64
	toc  []TOCEntry
	cur  *TOCEntry
	hash *xxhash.Digest
	err  error

	chunk     *xxhash.Digest // the current chunk of a chunked section
	chunkFill int            // bytes in it
	sums      []byte         // chunk sums so far
}

func newSectionWriter(out interface{ Write([]byte) (int, error) }) *sectionWriter {
	w := &sectionWriter{bw: bufio.NewWriterSize(out, 1<<20), hash: xxhash.New(), chunk: xxhash.New()}
	var hdr [HeaderSize]byte
	copy(hdr[:], SegmentMagic)
	binary.LittleEndian.PutUint32(hdr[8:], FormatVersion)
	w.raw(hdr[:])
	return w
}

func (w *sectionWriter) raw(p []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(p)
	w.off += uint64(n)
	w.err = err
}

// Write appends to the current section.
func (w *sectionWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.hash.Write(p)
	if w.cur.Flags&TOCFlagChunked != 0 {
		for q := p; len(q) > 0; {
			k := min(len(q), ChunkSize-w.chunkFill)
			w.chunk.Write(q[:k])
			w.chunkFill += k
			q = q[k:]
			if w.chunkFill == ChunkSize {
				w.flushChunk()
			}
		}
	}
	w.raw(p)
	return len(p), w.err
}

func (w *sectionWriter) flushChunk() {
	w.sums = binary.LittleEndian.AppendUint64(w.sums, w.chunk.Sum64())
	w.chunk.Reset()
	w.chunkFill = 0
}

var zero8 [8]byte

func (w *sectionWriter) pad() {
	if p := (8 - w.off%8) % 8; p > 0 {
		w.raw(zero8[:p])
	}
}

// padSection pads the current section so the next byte is 8-byte aligned in
// the file (roaring bitmaps are read in place and must be aligned).
func (w *sectionWriter) padSection() {
	if p := (8 - w.off%8) % 8; p > 0 {
		w.Write(zero8[:p])
	}
}

func (w *sectionWriter) begin(kind uint32, chunked bool) {
	w.pad()
	e := TOCEntry{Kind: kind, Offset: w.off}
	if chunked {
		e.Flags = TOCFlagChunked
	}
	w.toc = append(w.toc, e)
	w.cur = &w.toc[len(w.toc)-1]
	w.hash.Reset()
}

func (w *sectionWriter) end() {
	if w.cur.Flags&TOCFlagChunked != 0 && w.chunkFill > 0 {
		w.flushChunk()
	}
	w.cur.Length = w.off - w.cur.Offset
	w.cur.Sum = w.hash.Sum64()
	w.cur = nil
}

// section writes a whole small section (checked whole at open).
func (w *sectionWriter) section(kind uint32, p []byte) {
	w.begin(kind, false)
	w.Write(p)
	w.end()
}

// chunkedSection writes a whole section checked per chunk on use.
func (w *sectionWriter) chunkedSection(kind uint32, p []byte) {
	w.begin(kind, true)
	w.Write(p)
	w.end()
}

// finish writes the chunk sums and their page sums, the table of contents
// and the footer, then flushes.
func (w *sectionWriter) finish() error {
	sums := w.sums
	var pages []byte
	for p := 0; p < len(sums); p += SumPageChunks * 8 {
		pages = binary.LittleEndian.AppendUint64(pages, xxhash.Sum64(sums[p:min(p+SumPageChunks*8, len(sums))]))
	}
	w.section(SectionChunkSums, sums)
	w.section(SectionSumPages, pages)
	w.pad()
	tocOff := w.off
	toc := make([]byte, 0, len(w.toc)*TOCEntrySize)
	for _, e := range w.toc {
		toc = binary.LittleEndian.AppendUint32(toc, e.Kind)
		toc = binary.LittleEndian.AppendUint32(toc, e.Flags)
		toc = binary.LittleEndian.AppendUint64(toc, e.Offset)
		toc = binary.LittleEndian.AppendUint64(toc, e.Length)
		toc = binary.LittleEndian.AppendUint64(toc, e.Sum)
	}
	w.raw(toc)
	var foot [FooterSize]byte
	binary.LittleEndian.PutUint64(foot[0:], tocOff)
	binary.LittleEndian.PutUint32(foot[8:], uint32(len(w.toc)))
	binary.LittleEndian.PutUint32(foot[12:], FormatVersion)
	binary.LittleEndian.PutUint64(foot[16:], xxhash.Sum64(toc))
	copy(foot[24:], SegmentMagic)
	w.raw(foot[:])
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}
