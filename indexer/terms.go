package indexer

import (
	"bytes"
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
	arena  []byte
	ents   [][]termEnt // chunks of entChunk: growing never copies entries
	n      int
}

const entChunk = 1 << 14

func (t *termTable) ent(i int) *termEnt { return &t.ents[i/entChunk][i%entChunk] }

type slot struct {
	hidx uint64 // hash<<32 | entry index+1; 0 is empty
	pfx  uint64 // first 8 bytes of the term, zero padded (terms hold no 0 byte)
}

type termEnt struct {
	off            uint32 // term bytes: arena[off:off+len]
	len            uint32
	first, last, n uint32
	rest           []byte // uvarint gaps after the first line id
}

func newTermTable() *termTable {
	t := &termTable{seed: maphash.MakeSeed(), hash32: hash32}
	t.resize(1 << 16)
	return t
}

func hash32(seed maphash.Seed, term []byte) uint32 { return uint32(maphash.Bytes(seed, term) >> 32) }

func prefix8(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)
	}
	var p [8]byte
	copy(p[:], b)
	return binary.LittleEndian.Uint64(p[:])
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

func (t *termTable) term(i int) []byte {
	e := t.ent(i)
	return t.arena[e.off : e.off+e.len]
}

// add records that line id holds term; true if that is a new posting.
func (t *termTable) add(term []byte, id uint32) bool {
	h32 := t.hash32(t.seed, term)
	pfx := prefix8(term)
	for i := uint64(h32) & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.hidx == 0 {
			idx := uint32(t.n)
			*s = slot{uint64(h32)<<32 | uint64(idx+1), pfx}
			if t.n%entChunk == 0 {
				t.ents = append(t.ents, make([]termEnt, 0, entChunk))
			}
			c := &t.ents[len(t.ents)-1]
			*c = append(*c, termEnt{off: uint32(len(t.arena)), len: uint32(len(term)), first: id, last: id, n: 1})
			t.n++
			t.arena = append(t.arena, term...)
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
		if int(e.len) != len(term) || len(term) > 8 && !bytes.Equal(t.arena[e.off+8:e.off+e.len], term[8:]) {
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

// sorted orders the entries by term; most comparisons are settled by the
// first 8 bytes, compared as one integer.
func (t *termTable) sorted() sortedTerms {
	type termRef struct {
		pfx uint64
		idx uint32
	}
	refs := make([]termRef, t.n)
	for i := range refs {
		var p [8]byte
		copy(p[:], t.term(i))
		refs[i] = termRef{binary.BigEndian.Uint64(p[:]), uint32(i)}
	}
	slices.SortFunc(refs, func(a, c termRef) int {
		if a.pfx != c.pfx {
			if a.pfx < c.pfx {
				return -1
			}
			return 1
		}
		return bytes.Compare(t.term(int(a.idx)), t.term(int(c.idx)))
	})
	out := sortedTerms{text: make([]byte, 0, len(t.arena)), ents: make([]sortedEnt, len(refs))}
	for i, r := range refs {
		e := t.ent(int(r.idx))
		out.text = append(out.text, t.arena[e.off:e.off+e.len]...)
		out.ents[i] = sortedEnt{end: uint32(len(out.text)), n: e.n, first: e.first, rest: e.rest}
	}
	return out
}
