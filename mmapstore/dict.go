package mmapstore

// The term dictionary of a segment: point and range lookups through the
// block keys and the dictionary blocks, packed (dictblock.go) or in vellum
// FSTs (dictfst.go), and the blocks' trigram filters.

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// checkDictionary checks that the dictionary sections fit the block count
// from the meta section: arithmetic only, nothing is read at open.
func (s *Segment) checkDictionary() error {
	n := s.nblocks
	if s.terms > 0 && n == 0 || uint64(n) > s.terms {
		return s.corrupt("meta", -1, "%d blocks for %d terms", n, s.terms)
	}
	if n > 0 && uint64(len(s.blocks.data)) < uint64(n+1)*4 {
		return s.corrupt("term blocks", int64(s.blocks.off), "%d bytes for %d blocks", len(s.blocks.data), n)
	}
	s.sliceWords = (n + 63) / 64
	if len(s.trigrams.data) != BloomBits*s.sliceWords*8 {
		return s.corrupt("trigram filters", int64(s.trigrams.off), "size %d does not fit %d blocks", len(s.trigrams.data), n)
	}
	if want := (n + 1) * 4; n == 0 && len(s.dictOffs.data) != 0 || n > 0 && len(s.dictOffs.data) != want {
		return s.corrupt("dictionary blocks", int64(s.dictOffs.off), "size %d does not fit %d blocks", len(s.dictOffs.data), n)
	}
	return nil
}

// NumBlocks is the number of dictionary blocks.
func (s *Segment) NumBlocks() int { return s.nblocks }

// blockKey returns the key of block b (at most its first term, and after
// the previous block's last term), aliasing the mapping: the
// block offsets are (nblocks+1) u32 offsets into the key bytes after them.
func (s *Segment) blockKey(b int) ([]byte, error) {
	if b < 0 || b >= s.nblocks {
		return nil, fmt.Errorf("block %d out of range", b)
	}
	offs, err := s.read(&s.blocks, uint64(b)*4, 8)
	if err != nil {
		return nil, err
	}
	o, e := binary.LittleEndian.Uint32(offs), binary.LittleEndian.Uint32(offs[4:])
	if e < o {
		return nil, s.damaged(s.corrupt("term blocks", int64(s.blocks.off)+int64(b)*4, "block %d key offsets out of order", b))
	}
	return s.read(&s.blocks, uint64(s.nblocks+1)*4+uint64(o), uint64(e-o))
}

// BlockKey returns the key of block b: block b holds the terms from its key
// up to the next block's (nil if it cannot be read).
func (s *Segment) BlockKey(b int) []byte {
	k, _ := s.blockKey(b)
	return k
}

// findBlock returns the last block whose key is at most term, or -1
// when term sorts before every block.
func (s *Segment) findBlock(term []byte) (int, error) {
	lo, hi := 0, s.nblocks // blocks in [lo, hi) are undecided; those before lo are <= term
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		k, err := s.blockKey(mid)
		if err != nil {
			return 0, err
		}
		if bytes.Compare(k, term) <= 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo - 1, nil
}

// dictBlock returns the encoded bytes of packed block b, from its entry
// and the next in section 13 (nblocks+1 u32 offsets into the dictionary
// section, FST-kind blocks flagged: dictfst.go).
func (s *Segment) dictBlock(b int, ent, next uint32) (data []byte, off uint64, err error) {
	o, e := ent, next&^fstBlock
	if e < o {
		return nil, 0, s.damaged(s.corrupt("dictionary blocks", int64(s.dictOffs.off)+int64(b)*4, "block %d offsets out of order", b))
	}
	data, err = s.read(&s.dict, uint64(o), uint64(e-o))
	return data, uint64(o), err
}

// blockTerms calls fn for the terms of block b in order until fn returns
// false: a packed block is decoded, an FST-kind block's range of its
// group's FST walked.
func (s *Segment) blockTerms(b int, fn func(term []byte, ref uint64) bool) error {
	ent, next, err := s.dictEntry(b)
	if err != nil {
		return err
	}
	if ent&fstBlock != 0 {
		return s.fstBlockTerms(b, ent&^fstBlock, fn)
	}
	data, off, err := s.dictBlock(b, ent, next)
	if err != nil {
		return err
	}
	if err := decodeDictBlock(data, fn); err != nil {
		return s.damaged(s.corrupt("term dictionary", int64(s.dict.off+off), "block %d: %v", b, err))
	}
	return nil
}

// EstimatePrefixTerms estimates, from the block keys alone, how many
// dictionary terms start with prefix: the blocks whose key range meets the
// prefix's, times the average block. It lets a query skip expanding a
// prefix that would cost more than it saves without walking it first. (A
// block key that cannot be read makes it answer "all of them".)
func (s *Segment) EstimatePrefixTerms(prefix []byte) int {
	if s.nblocks == 0 {
		return 0
	}
	first, err := s.findBlock(prefix)
	last := s.nblocks - 1
	if end := successor(prefix); end != nil && err == nil {
		last, err = s.findBlock(end)
	}
	if err != nil {
		return int(s.terms)
	}
	blocks := last - max(first, 0) + 1
	return int(uint64(blocks) * s.terms / uint64(s.nblocks))
}

// prefetchSlices asks the kernel for the trigram filter slices of hashes
// at once (MADV_WILLNEED, which queues their reads without waiting) when
// the first is not resident: a literal of 32 characters reads some 60
// slices per segment, and faulting them one after another on a cold index
// waits for each read in turn, where queued together the disk serves them
// side by side, with the pages of chunk sums that verify them. A warm
// index costs one mincore per lookup.
func (s *Segment) prefetchSlices(hashes []uint32, sliceBytes uint64) {
	if s.m == nil || len(hashes) < 2 || sliceBytes == 0 {
		return
	}
	at := func(h uint32) int64 { return int64(s.trigrams.off + uint64(h)*sliceBytes) }
	if res, err := s.m.Resident(at(hashes[0]), int64(sliceBytes)); err != nil || res == int64(sliceBytes) {
		return
	}
	coldReads.Add(1)
	// Whole chunks (askRanges): reading the slice verifies the chunks it
	// spans, and a section need not start on a page, so a chunk reaches a
	// page past the slice's own on either side. Asking for the slice's
	// bytes alone left those pages to fault in one by one (2,000 reads in
	// turn, most of a cold trace-id lookup).
	ranges := make([]byteRange, len(hashes))
	for i, h := range hashes {
		ranges[i] = byteRange{uint64(h) * sliceBytes, sliceBytes}
	}
	s.askRanges(&s.trigrams, ranges, map[int]bool{})
}

// askRange asks the kernel for sec's bytes [off, off+n), rounded out to
// the chunks reading them verifies, and for the pages of sums that verify
// them (asked as adviseSums says).
func (s *Segment) askRange(sec *section, off, n uint64, asked map[int]bool) {
	lo, hi := chunksAround(off, n, uint64(len(sec.data)))
	if hi <= lo {
		return
	}
	if askHook != nil {
		askHook(sec.kind, lo, hi)
	}
	s.m.Advise(int64(sec.off+lo), int64(hi-lo), unix.MADV_WILLNEED)
	s.adviseSums(sec, lo, hi, asked)
}

// askHook, when set (tests), sees every range askRange asks for.
var askHook func(kind uint32, lo, hi uint64)

// resident reports whether sec's bytes [off, off+n) are in the page cache
// (an error counts as resident: nothing is asked for).
func (s *Segment) resident(sec *section, off, n uint64) bool {
	res, err := s.m.Resident(int64(sec.off+off), int64(n))
	return err != nil || res == int64(n)
}

// adviseSums asks for the pages of chunk sums that verify sec's bytes
// [lo, hi) and were not checked yet (each is read, and checked, before the
// first of its chunks is used); asked, when not nil, keeps the pages asked
// for across calls.
func (s *Segment) adviseSums(sec *section, lo, hi uint64, asked map[int]bool) {
	sums := s.entry(SectionChunkSums)
	if sums == nil || sec.chunk0 < 0 || hi <= lo {
		return
	}
	for p := (sec.chunk0 + int(lo/ChunkSize)) / SumPageChunks; p <= (sec.chunk0+int((hi-1)/ChunkSize))/SumPageChunks; p++ {
		if asked[p] || bitSet(s.cs.pageOK, p) {
			continue
		}
		if asked != nil {
			asked[p] = true
		}
		s.m.Advise(int64(sums.Offset)+int64(p)*SumPageChunks*8, SumPageChunks*8, unix.MADV_WILLNEED)
	}
}

// PrefetchTermBlocks asks the kernel for the segment's whole term-block
// index (block keys and their offsets: 0.7 MB a segment of high-cardinality
// logs), and the pages of checksums that verify it, when it is not in
// memory. A term lookup binary-searches it: on a cold index some 25 pages
// faulted in one after another, per segment and, as faults hold their
// thread's P, two segments at a time; a search calls this for the
// segments it plans before looking terms up, so the reads go out
// together. Residency is looked at (one mincore) at most once a
// residencyRecheck: an index evicted later is asked for again.
func (s *Segment) PrefetchTermBlocks() {
	if s.m == nil || s.nblocks == 0 || s.check() != nil || s.Damage() != nil {
		return
	}
	if !dueForLook(&s.blocksChecked) {
		return
	}
	// The binary search's first probe: the middle block's offsets.
	if res, err := s.m.Resident(int64(s.blocks.off)+int64(s.nblocks/2)*4, 8); err != nil || res == 8 {
		return
	}
	coldReads.Add(1)
	s.m.Advise(int64(s.blocks.off), int64(len(s.blocks.data)), unix.MADV_WILLNEED)
	s.adviseSums(&s.blocks, 0, uint64(len(s.blocks.data)), nil)
}

// PrefetchLookups asks the kernel, level by level, for what looking terms
// up and reading their postings lists' heads will fault in, when it is not
// in memory: their blocks' dictionary entries, then the blocks (or FST
// groups) those point at, then, the terms looked up, the heads. A literal
// such as an IP address plans with several words' frequencies, each three
// reads one after another (entry, block, head): on a cold index those
// came a term at a time; asked together, a level at a time. Nothing is
// asked when the first word's block is resident, a level whose first range
// is resident is taken as resident (one mincore a level), and it looks at
// most once a residencyRecheck per segment; bad bytes are left for the
// lookups themselves to report. cold says the first word's block was not
// resident (so the other segments' likely are not either).
func (s *Segment) PrefetchLookups(terms [][]byte) (cold bool) {
	if s.m == nil || len(terms) < 2 || s.nblocks == 0 || s.check() != nil || s.Damage() != nil {
		return false
	}
	if !dueForLook(&s.lookupsChecked) {
		return false
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { recover() }() // advice only
	asked := map[int]bool{}
	// Warm (a fresh process on a warm page cache pays this per segment):
	// the first word's block resident, nothing more is looked at.
	if b, err := s.findBlock(terms[0]); err == nil && b >= 0 {
		if res, err := s.blockResident(b); err == nil && res {
			return false
		}
	}
	cold = true
	var blocks []int
	for _, t := range terms {
		if b, err := s.findBlock(t); err == nil && b >= 0 {
			blocks = append(blocks, b)
		}
	}
	if !s.askBlocks(blocks, asked) {
		return cold
	}
	var ranges []byteRange
	for i, t := range terms {
		ref, ok, err := s.Lookup(t)
		if err != nil || !ok {
			continue
		}
		if r, ok := s.headRange(ref); ok {
			ranges = append(ranges, r)
			if i == 0 && s.resident(&s.postings, r.off, r.n) {
				return cold // the heads are resident: no need to look the rest up
			}
		}
	}
	s.askLevel(&s.postings, ranges, asked)
	s.lookupsChecked.Store(0) // cold: the segment's next lookups are looked at too
	return cold
}

// blockResident tells whether the first page of dictionary block b (or of
// its FST group) is in memory.
func (s *Segment) blockResident(b int) (bool, error) {
	ent, _, err := s.dictEntry(b)
	if err != nil {
		return false, err
	}
	return s.resident(&s.dict, uint64(ent&^fstBlock), 1), nil
}

// askBlocks asks for dictionary blocks' entries, then for the blocks (or
// FST groups) they point at, each level unless its first range is
// resident; false when an entry could not be read.
func (s *Segment) askBlocks(blocks []int, asked map[int]bool) bool {
	var ranges []byteRange
	for _, b := range blocks {
		// The entry, and those after it that end an FST group.
		ranges = append(ranges, byteRange{uint64(b) * 4, uint64(min(DictGroupBlocks, s.nblocks-b)+1) * 4})
	}
	s.askLevel(&s.dictOffs, ranges, asked)
	ranges = ranges[:0]
	for _, b := range blocks {
		ent, next, err := s.dictEntry(b)
		if err != nil {
			return false
		}
		lo, hi := ent, next&^fstBlock
		if ent&fstBlock != 0 {
			lo = ent &^ fstBlock
			hi = lo
			n := min(DictGroupBlocks, s.nblocks-b)
			ents, err := s.read(&s.dictOffs, uint64(b+1)*4, uint64(n)*4)
			if err != nil {
				return false
			}
			for i := 0; i < n && hi == lo; i++ {
				hi = binary.LittleEndian.Uint32(ents[i*4:]) &^ fstBlock
			}
		}
		if hi > lo {
			ranges = append(ranges, byteRange{uint64(lo), uint64(hi - lo)})
		}
	}
	s.askLevel(&s.dict, ranges, asked)
	return true
}

// byteRange is n bytes at off of a section.
type byteRange struct{ off, n uint64 }

// askLevel asks for ranges of sec unless every page they spread over is
// resident (one mincore: the first range's page alone was often resident
// beside pages that were not).
func (s *Segment) askLevel(sec *section, ranges []byteRange, asked map[int]bool) (cold bool) {
	if len(ranges) == 0 {
		return false
	}
	lo, hi := ranges[0].off, ranges[0].off+ranges[0].n
	for _, r := range ranges[1:] {
		lo, hi = min(lo, r.off), max(hi, r.off+r.n)
	}
	if s.resident(sec, lo, min(hi, uint64(len(sec.data)))-lo) {
		return false
	}
	coldReads.Add(1)
	s.askRanges(sec, ranges, asked)
	return true
}

// askGap is the widest gap between two ranges askRanges asks for as one:
// on a VM each madvise that queues a read exits to the hypervisor, and a
// cold literal's first search made some 1,400 of them (a page's entries,
// sixteen bytes apart, a call each), more CPU than reading the few pages
// between neighbours costs the disk.
const askGap = 4 * ChunkSize

// askRanges asks for ranges of sec (askRange), those whose chunks lie
// within askGap of each other as one; ranges is reordered.
func (s *Segment) askRanges(sec *section, ranges []byteRange, asked map[int]bool) {
	slices.SortFunc(ranges, func(a, b byteRange) int { return cmp.Compare(a.off, b.off) })
	var lo, hi uint64
	for i, r := range ranges {
		rlo, rhi := chunksAround(r.off, r.n, uint64(len(sec.data)))
		if i > 0 && rlo <= hi+askGap {
			hi = max(hi, rhi)
			continue
		}
		if i > 0 {
			s.askRange(sec, lo, hi-lo, asked)
		}
		lo, hi = rlo, rhi
	}
	if len(ranges) > 0 {
		s.askRange(sec, lo, hi-lo, asked)
	}
}

// PrefetchBlocks asks the kernel for dictionary blocks bs (their entries,
// then the blocks or FST groups), when the first is not in memory: a
// substring's candidate blocks are decoded one after another, each two
// reads in turn on a cold index (a regex's words, a partial id); asked
// together, a level at a time. Bad bytes are left for the decoding to
// report.
func (s *Segment) PrefetchBlocks(bs []uint32) {
	if s.m == nil || len(bs) < 2 || s.check() != nil || s.Damage() != nil {
		return
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { recover() }() // advice only
	if res, err := s.blockResident(int(bs[0])); err != nil || res {
		return
	}
	blocks := make([]int, len(bs))
	for i, b := range bs {
		blocks[i] = int(b)
	}
	s.askBlocks(blocks, map[int]bool{})
}

// PrefetchLists asks the kernel for the heads of postings lists refs,
// when they are not in memory: a partial word's terms (the prefix "10"
// of an IP address matches hundreds) are decoded and united one after
// another, each list's head a read in turn on a cold index; asked
// together, the disk serves them side by side. (A body longer than its
// head's chunk is asked for whole as it is read; most are a few bytes.)
// Inline references need nothing; bad bytes are left for the decoding to
// report. Residency is looked at most once a residencyRecheck per
// segment while it is found resident.
func (s *Segment) PrefetchLists(refs []uint64) {
	if s.m == nil || len(refs) < 2 || s.check() != nil || s.Damage() != nil {
		return
	}
	if !dueForLook(&s.listsChecked) {
		return
	}
	var heads []byteRange
	for _, ref := range refs {
		if r, ok := s.headRange(ref); ok {
			heads = append(heads, r)
		}
	}
	if len(heads) >= 2 && s.askLevel(&s.postings, heads, map[int]bool{}) {
		s.listsChecked.Store(0) // cold: the next lists are looked at too
	}
}

// residencyRecheck is how long PrefetchTermBlocks and PrefetchLines trust
// what they found of a section's residency.
const residencyRecheck = time.Second

// dueForLook reports whether a section's residency is to be looked at
// now, given when it was last (unix ns, updated here): not within
// residencyRecheck, and not by a search beside this one.
func dueForLook(checked *atomic.Int64) bool {
	now := time.Now().UnixNano()
	last := checked.Load()
	return now-last >= int64(residencyRecheck) && checked.CompareAndSwap(last, now)
}

// chunksAround is [off, off+n) of a section secLen bytes long, rounded
// out to the chunks that reading it verifies.
func chunksAround(off, n, secLen uint64) (lo, hi uint64) {
	lo = off / ChunkSize * ChunkSize
	hi = min((off+n+ChunkSize-1)/ChunkSize*ChunkSize, secLen)
	return lo, hi
}

// maxNeedleTrigrams bounds the trigrams of a needle BlockCandidates tests.
const maxNeedleTrigrams = 16

// needleHashes returns the distinct filter hashes of needle's trigrams
// (at most maxNeedleTrigrams of them, the first and last among them),
// padded as BlockCandidates says.
func needleHashes(needle []byte, prefix, suffix bool) ([]uint32, error) {
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
	var hashes []uint32
	seen := map[uint32]bool{}
	// At most maxNeedleTrigrams trigrams, spread over the needle: a block
	// admitting them all is rarely one without the needle (its terms are
	// checked anyway), and each costs a pass over a filter slice (a
	// thousand 32-byte ids, grep -F -f, spent 0.5 s there).
	n := len(p) - 2
	step := max(1, (n+maxNeedleTrigrams-1)/maxNeedleTrigrams)
	for i := 0; i+3 <= len(p); i += step {
		if i+step+3 > len(p) && i+3 < len(p) {
			i = len(p) - 3 // the last trigram too (a suffix's padded end)
		}
		for _, h := range TrigramHashes(uint32(p[i])<<16 | uint32(p[i+1])<<8 | uint32(p[i+2])) {
			if !seen[h] {
				seen[h] = true
				hashes = append(hashes, h)
			}
		}
	}
	return hashes, nil
}

// BlockCandidates returns the dictionary blocks whose trigram filters
// admit the trigrams of needle that needleHashes tests (needle padded with
// a 0 byte at the end when suffix is set, and at the start when prefix is
// set): a superset of the blocks holding a term that contains needle.
// needle must be at least 3 bytes once padded.
func (s *Segment) BlockCandidates(needle []byte, prefix, suffix bool) ([]uint32, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	hashes, err := needleHashes(needle, prefix, suffix)
	if err != nil {
		return nil, err
	}
	sc := candScratch.Get().(*blockCandScratch)
	defer candScratch.Put(sc)
	sc.acc = slices.Grow(sc.acc[:0], s.sliceWords)[:s.sliceWords]
	acc := sc.acc
	for i := range acc {
		acc[i] = ^uint64(0)
	}
	if r := s.nblocks % 64; r != 0 {
		acc[len(acc)-1] = 1<<r - 1
	}
	sliceBytes := uint64(s.sliceWords) * 8
	s.prefetchSlices(hashes, sliceBytes)
	for _, h := range hashes {
		slice, err := s.readCopy(&s.trigrams, uint64(h)*sliceBytes, sliceBytes, &sc.buf)
		if err != nil {
			return nil, err
		}
		var left uint64
		for w := range acc {
			acc[w] &= binary.LittleEndian.Uint64(slice[w*8:])
			left |= acc[w]
		}
		if left == 0 {
			// No block admits the needle: the other slices need not be
			// read (nor their chunks checked). A 32-hex id was out after
			// 10-18 of its 30 slices in 6 of 9 segments.
			break
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

// blockCandScratch is BlockCandidates' working memory, reused across
// segments and searches: fresh, its ~10 KB a segment (over 1 GiB of
// logs) were fresh heap pages, each a page fault.
type blockCandScratch struct {
	acc []uint64
	buf []byte
}

var candScratch = sync.Pool{New: func() any { return new(blockCandScratch) }}

// BlockTerms calls fn for every term of block b with its postings
// reference, until fn returns false.
func (s *Segment) BlockTerms(b int, fn func(term []byte, ref uint64) bool) (err error) {
	if err := s.check(); err != nil {
		return err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("term dictionary", &err)
	return s.blockTerms(b, fn)
}

// rangeTerms calls fn for the terms in [lo, hi) (nil: unbounded), in
// order, until fn returns false; bad bytes give a corruption error. It
// decodes the blocks the range meets.
func (s *Segment) rangeTerms(lo, hi []byte, fn func(term []byte, ref uint64) bool) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("term dictionary", &err)
	b := 0
	if len(lo) > 0 {
		if b, err = s.findBlock(lo); err != nil {
			return err
		}
		b = max(b, 0)
	}
	for first := b; b < s.nblocks; b++ {
		if hi != nil && b > first {
			key, err := s.blockKey(b)
			if err != nil {
				return err
			}
			if bytes.Compare(key, hi) >= 0 {
				return nil
			}
		}
		stop := false
		err := s.blockTerms(b, func(t []byte, ref uint64) bool {
			if lo != nil && bytes.Compare(t, lo) < 0 {
				return true
			}
			if hi != nil && bytes.Compare(t, hi) >= 0 || !fn(t, ref) {
				stop = true
			}
			return !stop
		})
		if err != nil || stop {
			return err
		}
	}
	return nil
}

// Lookup finds term's postings reference: the block keys say which block
// may hold it, and decoding that block (or its group's FST) whether it
// does.
func (s *Segment) Lookup(term []byte) (ref uint64, ok bool, err error) {
	if err := s.check(); err != nil {
		return 0, false, err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer s.guard("term dictionary", &err)
	b, err := s.findBlock(term)
	if err != nil || b < 0 {
		return 0, false, err
	}
	ent, next, err := s.dictEntry(b)
	if err != nil {
		return 0, false, err
	}
	if ent&fstBlock != 0 {
		f, err := s.groupFST(b, ent&^fstBlock)
		if err != nil {
			return 0, false, err
		}
		if ref, ok, err = f.Get(term); err != nil {
			return 0, false, s.damaged(s.corrupt("term dictionary", int64(s.dict.off)+int64(ent&^fstBlock), "FST of block %d: %v", b, err))
		}
		return ref, ok, nil
	}
	data, off, err := s.dictBlock(b, ent, next)
	if err != nil {
		return 0, false, err
	}
	if ref, ok, err = lookupDictBlock(data, term); err != nil {
		return 0, false, s.damaged(s.corrupt("term dictionary", int64(s.dict.off+off), "block %d: %v", b, err))
	}
	return ref, ok, nil
}

// PrefixTerms calls fn for every term starting with prefix, in order, until
// fn returns false. The term slice is only valid during the call.
func (s *Segment) PrefixTerms(prefix []byte, fn func(term []byte, ref uint64) bool) (err error) {
	if err := s.check(); err != nil {
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
