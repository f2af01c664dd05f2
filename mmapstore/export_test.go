package mmapstore

import (
	"encoding/binary"
	"sync/atomic"
	"time"
)

// Hooks for the external tests (package mmapstore_test), which build real
// indexes with the indexer package and so cannot live in this package.

func (w *Warmer) SetTestHooks(resident func(m *Mapping, off, n int64) (int64, error), touched func(kind uint32, off, n int64)) {
	if resident != nil {
		w.resident = resident
	}
	w.touched = func(_ *Segment, kind uint32, off, n int64) {
		if touched != nil {
			touched(kind, off, n)
		}
	}
}

func (w *Warmer) Planned() int64 { return w.planned() }

func StagePrio(kind uint32) int { p, _ := stagePrio(kind); return p }

// RegionPrios lists the planned regions' priorities in warm-up order.
func (w *Warmer) RegionPrios() []int {
	var out []int
	for _, r := range w.regions {
		out = append(out, r.prio)
	}
	return out
}

func (w *Warmer) RegionStates() []string {
	var out []string
	for _, r := range w.regions {
		out = append(out, r.state.Load().(string))
	}
	return out
}

func (w *Warmer) RegionSizes() []int64 {
	var out []int64
	for _, r := range w.regions {
		out = append(out, r.n)
	}
	return out
}

// SetFaults replaces the warmer's count of major page faults.
func (w *Warmer) SetFaults(f func() int64) { w.faults = f }

// SetPrefetchHook is told of every read a staged warmer issues.
func (w *Warmer) SetPrefetchHook(f func(off, n int64)) { w.prefetched = f }

func PrefetchHeads(dir string, refs []SegmentRef) { prefetchHeads(dir, refs) }

// TermBlocksResident is how much of the segment's term-block index is in
// the page cache, of how much.
func (s *Segment) TermBlocksResident() (resident, size int64) {
	e := s.entry(SectionTermBlocks)
	if e == nil || s.m == nil {
		return 0, 0
	}
	r, _ := s.m.Resident(int64(e.Offset), int64(e.Length))
	return r, int64(e.Length)
}

// SetTermBlocksCheck sets when PrefetchTermBlocks last looked at the term
// blocks (the zero time: never).
func (s *Segment) SetTermBlocksCheck(t time.Time) { setLooked(&s.blocksChecked, t) }

// LinesResident is how much of span si's offset index (the part
// PrefetchLines reads) is in the page cache, of how much.
func (s *Segment) LinesResident(si int) (resident, size int64) {
	_, lo, err := s.group(s.spans[si].FirstGroup)
	if err != nil || s.m == nil {
		return 0, 0
	}
	off, n := int64(s.lens.off)+int64(lo), int64(s.spanLensEnd(si)-lo)
	r, _ := s.m.Resident(off, n)
	return r, n
}

// HitsResident is how much of what locating lines of span si and reading
// their times reads is in the page cache, of how much: their groups'
// entries in the offset and time indexes, and, with entriesOnly unset (it
// reads the entries), the lengths and deltas those point at.
func (s *Segment) HitsResident(si int, lines []uint32, entriesOnly bool) (resident, size int64) {
	sp := &s.spans[si]
	count := func(sec *section, off, n uint64) {
		lo, hi := chunksAround(off, n, uint64(len(sec.data)))
		r, _ := s.m.Resident(int64(sec.off+lo), int64(hi-lo))
		resident, size = resident+r, size+int64(hi-lo)
	}
	for _, l := range lines {
		rel := l - sp.FirstLine
		g, k := sp.FirstGroup+rel/GroupSize, uint64(rel%GroupSize)
		count(&s.groups, uint64(g)*LineGroupSize, LineGroupSize)
		count(&s.timeGroups, uint64(g)*TimeGroupSize, TimeGroupSize)
		if entriesOnly {
			continue
		}
		if _, pos, err := s.group(g); err == nil {
			count(&s.lens, pos, min((k+1)*binary.MaxVarintLen64, uint64(len(s.lens.data))-pos))
		}
		if tg, err := s.TimeGroupOf(g); err == nil && k > 0 {
			count(&s.lineTimes, tg.pos, min(k*binary.MaxVarintLen64, uint64(len(s.lineTimes.data))-tg.pos))
		}
	}
	return resident, size
}

// LookupsResident is how much of the dictionary blocks (FST groups) that
// looking terms up reads is in the page cache, of how much; with heads
// set (it looks the terms up, reading those blocks), their postings
// lists' heads too.
func (s *Segment) LookupsResident(terms [][]byte, heads bool) (resident, size int64) {
	count := func(sec *section, off, n uint64) {
		lo, hi := chunksAround(off, n, uint64(len(sec.data)))
		r, _ := s.m.Resident(int64(sec.off+lo), int64(hi-lo))
		resident, size = resident+r, size+int64(hi-lo)
	}
	for _, t := range terms {
		b, err := s.findBlock(t)
		if err != nil || b < 0 {
			continue
		}
		ent, next, err := s.dictEntry(b)
		if err != nil {
			continue
		}
		if ent&fstBlock == 0 {
			count(&s.dict, uint64(ent), uint64(next&^fstBlock-ent))
		} else {
			count(&s.dict, uint64(ent&^fstBlock), 1) // the group's first chunk
		}
		if heads {
			if ref, ok, err := s.Lookup(t); err == nil && ok {
				if _, inline, _ := s.inlineIDs(ref); !inline {
					count(&s.postings, ref>>2, 1)
				}
			}
		}
	}
	return resident, size
}

// LookupBlockChunks is the first chunk (its section offset) of the
// dictionary block or FST group each term's lookup reads.
func (s *Segment) LookupBlockChunks(terms [][]byte) []uint64 {
	var out []uint64
	for _, t := range terms {
		b, err := s.findBlock(t)
		if err != nil || b < 0 {
			continue
		}
		if ent, _, err := s.dictEntry(b); err == nil {
			out = append(out, uint64(ent&^fstBlock)/ChunkSize*ChunkSize)
		}
	}
	return out
}

// BlockChunks is the first chunk (its section offset) of each dictionary
// block or FST group of blocks.
func (s *Segment) BlockChunks(blocks []uint32) []uint64 {
	var out []uint64
	for _, b := range blocks {
		if ent, _, err := s.dictEntry(int(b)); err == nil {
			out = append(out, uint64(ent&^fstBlock)/ChunkSize*ChunkSize)
		}
	}
	return out
}

// DictChunkResident reports whether the dictionary's chunk at off is in
// the page cache.
func (s *Segment) DictChunkResident(off uint64) bool {
	return s.resident(&s.dict, off, min(ChunkSize, uint64(len(s.dict.data))-off))
}

// SetLookupsCheck sets when PrefetchLookups last looked (the zero time:
// never).
func (s *Segment) SetLookupsCheck(t time.Time) { setLooked(&s.lookupsChecked, t) }

// SetAskHook makes f see every range of a section asked for ahead (by
// section kind), until restore is called.
func SetAskHook(f func(kind uint32, lo, hi uint64)) (restore func()) {
	old := askHook
	askHook = f
	return func() { askHook = old }
}

// DiskWaits is what a staged warmer watches to yield the disk to queries.
func DiskWaits() int64 { return diskWaits() }

// SetHitsCheck sets when PrefetchHits last looked at span si (the zero
// time: never).
func (s *Segment) SetHitsCheck(si int, t time.Time) { setLooked(&s.hitsChecked[si], t) }

// SetLinesCheck sets when PrefetchLines last looked at span si (the zero
// time: never).
func (s *Segment) SetLinesCheck(si int, t time.Time) { setLooked(&s.linesChecked[si], t) }

// setLooked sets a dueForLook time (the zero time: never).
func setLooked(checked *atomic.Int64, t time.Time) {
	var ns int64
	if !t.IsZero() {
		ns = t.UnixNano()
	}
	checked.Store(ns)
}

// ListsResident is how many bytes of the chunks holding postings lists
// refs' heads are resident (mincore, nothing read).
func (s *Segment) ListsResident(refs []uint64) (resident, size int64) {
	count := func(off, n uint64) {
		lo, hi := chunksAround(off, n, uint64(len(s.postings.data)))
		r, _ := s.m.Resident(int64(s.postings.off+lo), int64(hi-lo))
		resident, size = resident+r, size+int64(hi-lo)
	}
	for _, ref := range refs {
		if r, ok := s.headRange(ref); ok {
			count(r.off, 1)
		}
	}
	return resident, size
}

// SetListsCheck sets when PrefetchLists last looked.
func (s *Segment) SetListsCheck(t time.Time) { setLooked(&s.listsChecked, t) }

// ReadTrigrams reads the trigram filters' bytes [off, off+n) through
// readCopy (copy) or read, and says whether their chunks are now verified.
func (s *Segment) ReadTrigrams(off, n uint64, copy bool) ([]byte, bool, error) {
	var b []byte
	var err error
	if copy {
		var buf []byte
		b, err = s.readCopy(&s.trigrams, off, n, &buf)
	} else {
		b, err = s.read(&s.trigrams, off, n)
	}
	ok := err == nil
	for c := int(off / ChunkSize); ok && c <= int((off+n-1)/ChunkSize); c++ {
		ok = bitSet(s.cs.chunkOK, s.trigrams.chunk0+c)
	}
	return b, ok, err
}
