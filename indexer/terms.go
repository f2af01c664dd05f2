package indexer

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"hash/maphash"
	"slices"
)

// termTable maps terms to their postings while a segment is built. It is
// an open-addressing hash table over an arena of term bytes: no per-term
// string or map entry. Each slot keeps the term's first 8 bytes, so most
// lookups (log tokens are short) compare without touching the arena, and
// an entry holds everything an update needs: about two cache misses per
// new token, and none for the hot ones.
type termTable struct {
	seed maphash.Seed
	// hash32 is the table's hash (tests force collisions through it).
	hash32 func(seed maphash.Seed, term []byte) uint32
	slots  []slot
	mask   uint64
	// arena holds the terms' bytes in chunks of arenaChunk (a term never
	// spans two; the chunks past the last in use are kept empty for the
	// next segment): appended to one slice, the bytes of a high-cardinality
	// segment's tens of millions of terms were copied at every doubling,
	// a tenth of indexing's CPU.
	arena     [][]byte
	arenaLast int         // the chunk being filled
	ents      [][]termEnt // chunks of entChunk, the first n/entChunk+1 in use: growing never copies entries
	n         int
	// touched sums what addBatch loads ahead of use (and is otherwise
	// unused): stored, the loads cannot be optimized away.
	touched uint64
}

const entChunk = 1 << 14

// arenaShift sizes the arena's chunks: an entry's off is its chunk's index
// << arenaShift | its offset in the chunk.
const (
	arenaShift = 20
	arenaChunk = 1 << arenaShift
)

func (t *termTable) ent(i int) *termEnt { return &t.ents[i/entChunk][i%entChunk] }

type slot struct {
	hidx uint64 // hash<<32 | entry index+1; 0 is empty
	pfx  uint64 // first 8 bytes of the term, zero padded (terms hold no 0 byte)
}

type termEnt struct {
	off            uint32 // term bytes: arena[off>>arenaShift][off&(arenaChunk-1):][:len]
	len            uint32
	first, last, n uint32
	rest           []byte // uvarint gaps after the first line id
}

func newTermTable() *termTable {
	t := &termTable{seed: maphash.MakeSeed(), hash32: hash32}
	t.resize(1 << 16)
	return t
}

// reset empties the table for another segment and keeps its memory: a
// worker builds its segments one after another, and each fresh table was
// grown by doubling, rehashing its slots each time, and faulted in page by
// page. Cleared chunks of entries stay allocated (with their length 0) for
// the entries to come.
func (t *termTable) reset() {
	clear(t.slots)
	for i := range t.ents {
		clear(t.ents[i]) // drops the postings the entries held
		t.ents[i] = t.ents[i][:0]
	}
	for i := range t.arena {
		t.arena[i] = t.arena[i][:0]
	}
	t.arenaLast = 0
	t.n = 0
}

func hash32(seed maphash.Seed, term []byte) uint32 { return uint32(maphash.Bytes(seed, term) >> 32) }

func prefix8(b []byte) uint64 {
	// Shorter terms load as two overlapping halves: no copy to a buffer.
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b)
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<(8*(n-4))
	case n >= 2:
		return uint64(binary.LittleEndian.Uint16(b)) | uint64(binary.LittleEndian.Uint16(b[n-2:]))<<(8*(n-2))
	case n == 1:
		return uint64(b[0])
	}
	return 0
}

// resize rehashes into n slots. A slot carries its term's hash, so the
// terms themselves are not read again (on a dictionary of random ids
// rehashing from the arena was a cache miss and a hash per term per
// doubling).
func (t *termTable) resize(n int) {
	old := t.slots
	t.slots = make([]slot, n)
	t.mask = uint64(n - 1)
	for _, s := range old {
		if s.hidx == 0 {
			continue
		}
		for j := s.hidx >> 32 & t.mask; ; j = (j + 1) & t.mask {
			if t.slots[j].hidx == 0 {
				t.slots[j] = s
				break
			}
		}
	}
}

func (t *termTable) term(i int) []byte { return t.entTerm(t.ent(i)) }

// entTerm returns the bytes of e's term.
func (t *termTable) entTerm(e *termEnt) []byte {
	o := e.off & (arenaChunk - 1)
	return t.arena[e.off>>arenaShift][o : o+e.len]
}

// store appends term to the arena and returns its off.
func (t *termTable) store(term []byte) uint32 {
	if len(t.arena) == 0 {
		t.arena = append(t.arena, make([]byte, 0, arenaChunk))
	}
	if len(t.arena[t.arenaLast])+len(term) > arenaChunk {
		t.arenaLast++
		if t.arenaLast == len(t.arena) {
			t.arena = append(t.arena, make([]byte, 0, arenaChunk))
		}
	}
	c := &t.arena[t.arenaLast]
	off := uint32(t.arenaLast)<<arenaShift | uint32(len(*c))
	*c = append(*c, term...)
	return off
}

// addHashed records that line id holds term, whose hash and prefix8 are
// given; true if that is a new posting.
func (t *termTable) addHashed(term []byte, h32 uint32, pfx uint64, id uint32) bool {
	for i := uint64(h32) & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.hidx == 0 {
			idx := uint32(t.n)
			*s = slot{uint64(h32)<<32 | uint64(idx+1), pfx}
			ci := t.n / entChunk
			if ci == len(t.ents) {
				t.ents = append(t.ents, make([]termEnt, 0, entChunk))
			}
			c := &t.ents[ci]
			*c = append(*c, termEnt{off: t.store(term), len: uint32(len(term)), first: id, last: id, n: 1})
			t.n++
			if uint64(t.n)*2 > t.mask {
				t.resize(len(t.slots) * 2)
			}
			return true
		}
		if uint32(s.hidx>>32) != h32 || s.pfx != pfx {
			continue
		}
		e := t.ent(int(uint32(s.hidx) - 1))
		// Same hash and first 8 bytes: the same term only if the lengths
		// and the rest agree (an 8-byte term and a longer one sharing its
		// first 8 bytes are different terms).
		if int(e.len) != len(term) || len(term) > 8 && !bytes.Equal(t.entTerm(e)[8:], term[8:]) {
			continue
		}
		if e.last == id {
			return false
		}
		e.rest = binary.AppendUvarint(e.rest, uint64(id-e.last))
		e.last = id
		e.n++
		return true
	}
}

// termBatch holds the terms of a line, hashed, until they are added
// together: the table is far larger than the caches and most terms of a
// high-cardinality line (ids, timestamps, ports) are rare, so each costs a
// cache miss on its slot and another on its entry. Added one by one these
// misses follow each other; loading every slot of the batch first, then
// every entry they point to, lets the processor wait for them at once.
type termBatch struct {
	line  []byte // the line being indexed
	buf   []byte // copies of terms not in the line (folded, or compounds)
	terms []batchTerm
}

// batchTerm locates a term of the batch without a pointer (a pointer
// would cost a write barrier per term while the collector runs).
type batchTerm struct {
	pfx uint64
	h32 uint32
	loc uint32 // offset<<9 | length<<1 | 1 if in buf, not in line
}

// termBatchSize bounds a batch (a line may hold any number of terms); it
// is about what a processor keeps in flight.
const termBatchSize = 64

func (bt *termBatch) full() bool { return len(bt.terms) >= termBatchSize }

// pushLine adds the term line[start:end] (line shorter than 1 MiB, terms
// at most maxTermLen bytes long).
func (bt *termBatch) pushLine(t *termTable, start, end int) {
	term := bt.line[start:end]
	bt.terms = append(bt.terms, batchTerm{prefix8(term), t.hash32(t.seed, term), uint32(start)<<9 | uint32(end-start)<<1})
}

// pushCopy adds a copy of term.
func (bt *termBatch) pushCopy(t *termTable, term []byte) {
	at := len(bt.buf)
	bt.buf = append(bt.buf, term...)
	bt.terms = append(bt.terms, batchTerm{prefix8(term), t.hash32(t.seed, term), uint32(at)<<9 | uint32(len(term))<<1 | 1})
}

// term returns the bytes of term i.
func (bt *termBatch) term(i int) []byte {
	loc := bt.terms[i].loc
	src := bt.line
	if loc&1 != 0 {
		src = bt.buf
	}
	off := loc >> 9
	return src[off : off+loc>>1&0xff]
}

// addBatch adds the batch's terms for line id, returns the number of new
// postings and empties the batch.
func (t *termTable) addBatch(bt *termBatch, id uint32) (postings uint64) {
	// Touch each term's first slot, then the entry of those whose hash
	// matches: independent loads, whose misses overlap. The sum only keeps
	// the loads from being optimized away.
	var touch uint64
	for i := range bt.terms {
		touch += t.slots[uint64(bt.terms[i].h32)&t.mask].hidx
	}
	for i := range bt.terms {
		// An empty slot (hidx 0) matches a hash of 0 but has no entry.
		if s := t.slots[uint64(bt.terms[i].h32)&t.mask]; s.hidx != 0 && uint32(s.hidx>>32) == bt.terms[i].h32 {
			touch += uint64(t.ent(int(uint32(s.hidx) - 1)).last)
		}
	}
	t.touched += touch
	for i := range bt.terms {
		if t.addHashed(bt.term(i), bt.terms[i].h32, bt.terms[i].pfx, id) {
			postings++
		}
	}
	bt.terms, bt.buf = bt.terms[:0], bt.buf[:0]
	return postings
}

func (t *termTable) len() int { return t.n }

// sortedTerms is the table's dictionary in byte order, as the segment
// writer takes it. It is a copy laid out in that order: the writer reads
// the dictionary several times (blocks, postings, dictionary, filters), and
// reading the table's entries in sorted order would be a cache miss per
// term each time.
type sortedTerms struct {
	text []byte // the terms concatenated
	ents []sortedEnt
}

type sortedEnt struct {
	end      uint32 // of the term in text
	n, first uint32
	rest     []byte
}

func (s sortedTerms) Len() int { return len(s.ents) }

func (s sortedTerms) Term(i int) ([]byte, uint32, uint32, []byte) {
	e := &s.ents[i]
	start := uint32(0)
	if i > 0 {
		start = s.ents[i-1].end
	}
	return s.text[start:e.end], e.n, e.first, e.rest
}

// sorted orders the entries by term. The order comes from radix-sorting
// 8-byte chunks of the terms, big-endian and zero padded (terms hold no 0
// byte): first chunk 0 of every term, then, within each run of terms that
// share their chunks so far, the next chunk. A comparison sort called back
// into the arena for every pair sharing its first 8 bytes (numbers, long
// ids), a cache miss each, and cost a fifth of building a high-cardinality
// segment.
//
// The result and the sort's scratch space are allocated anew: kept in the
// table from segment to segment they added ~100 MB a worker to the live
// heap during the whole build, for no measured gain.
func (t *termTable) sorted() sortedTerms {
	buf := make([]termRef, 2*t.n)
	refs, tmp := buf[:t.n], buf[t.n:]
	for i := range refs {
		refs[i] = termRef{chunk8(t.term(i), 0), uint32(i)}
	}
	t.sortRefs(refs, tmp, 0)
	size := 0
	for _, c := range t.arena {
		size += len(c)
	}
	out := sortedTerms{text: make([]byte, 0, size), ents: make([]sortedEnt, t.n)}
	for i, r := range refs {
		e := t.ent(int(r.idx))
		out.text = append(out.text, t.entTerm(e)...)
		out.ents[i] = sortedEnt{end: uint32(len(out.text)), n: e.n, first: e.first, rest: e.rest}
	}
	return out
}

// termRef is a term (its entry index) and its chunk at the depth being
// sorted.
type termRef struct {
	key uint64
	idx uint32
}

// chunk8 returns bytes [off, off+8) of term as a big-endian integer, zero
// padded: integers compare as the bytes do.
func chunk8(term []byte, off int) uint64 {
	if off+8 <= len(term) {
		return binary.BigEndian.Uint64(term[off:])
	}
	var p [8]byte
	if off < len(term) {
		copy(p[:], term[off:])
	}
	return binary.BigEndian.Uint64(p[:])
}

// sortRefs sorts refs, all of whose terms share bytes [0, off), by their
// terms; refs' keys are the terms' chunks at off. tmp is scratch space of
// the same length.
func (t *termTable) sortRefs(refs, tmp []termRef, off int) {
	if off > maxTermLen {
		// Only terms holding 0 bytes (none are indexed) tie this far.
		slices.SortFunc(refs, func(a, c termRef) int { return bytes.Compare(t.term(int(a.idx)), t.term(int(c.idx))) })
		return
	}
	if len(refs) <= 64 {
		slices.SortFunc(refs, func(a, c termRef) int { return cmp.Compare(a.key, c.key) })
	} else {
		radixSortRefs(refs, tmp)
	}
	for i := 0; i < len(refs); {
		j := i + 1
		for j < len(refs) && refs[j].key == refs[i].key {
			j++
		}
		if j-i > 1 {
			for k := i; k < j; k++ {
				refs[k].key = chunk8(t.term(int(refs[k].idx)), off+8)
			}
			t.sortRefs(refs[i:j], tmp[i:j], off+8)
		}
		i = j
	}
}

// radixSortRefs sorts refs by key, least significant byte first, skipping
// the bytes every key shares; tmp is scratch space of the same length.
func radixSortRefs(refs, tmp []termRef) {
	var counts [8][256]int
	for _, r := range refs {
		for d := range 8 {
			counts[d][byte(r.key>>(8*d))]++
		}
	}
	src, dst := refs, tmp
	for d := range 8 {
		c := &counts[d]
		if c[byte(src[0].key>>(8*d))] == len(src) {
			continue // every key has this byte
		}
		sum := 0
		for i, n := range c {
			c[i] = sum
			sum += n
		}
		for _, r := range src {
			b := byte(r.key >> (8 * d))
			dst[c[b]] = r
			c[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &refs[0] {
		copy(refs, src)
	}
}
