package mmapstore

// The hybrid dictionary (format 5): id-shaped blocks (hex ids, ULIDs,
// numbers) are front-coded and bit-packed (dictblock.go), 4 or 5 bits a
// character, which no FST reaches on random ids; every other block's terms
// go to vellum FSTs, one per run of up to DictGroupBlocks such blocks,
// where ordinary words share their prefixes and suffixes. Section 13 holds
// each block's offset in the dictionary and, in its top bit, its kind.

import (
	"encoding/binary"
	"fmt"

	"github.com/blevesearch/vellum"
)

// DictGroupBlocks is the most consecutive FST-kind blocks one FST holds:
// an FST needs many keys to share their prefixes and suffixes, and a
// lookup still loads (and verifies) tens of KiB, not the dictionary.
const DictGroupBlocks = 64

const (
	// fstBlock flags, in a block's entry of section 13, a block whose
	// terms are in its group's FST; the entry's other bits are then the
	// offset of that FST, shared by every block of the group.
	fstBlock = 1 << 31
	// maxDictOffset is the largest offset an entry holds.
	maxDictOffset = fstBlock - 1
)

// idShaped reports whether terms [lo, hi) are ids: their front-coded
// suffixes use at most 32 distinct bytes (5 bits a symbol packed) and at
// least a quarter of their bytes are digits. Hex ids (10 of 16 symbols
// digits), ULIDs (10 of 32), numbers, dotted addresses and prefixed ids
// (`pay_` then hex: the prefix is front-coded away after the block's first
// term) qualify; a block of words may also use 32 letters or fewer, but
// hardly any digit, and keeps the FST's shared prefixes and suffixes.
func idShaped(lo, hi int, term func(int) []byte) bool {
	var used [256]bool
	var prev []byte
	total, digits := 0, 0
	for i := lo; i < hi; i++ {
		t := term(i)
		suffix := t[commonPrefix(prev, t):]
		for _, c := range suffix {
			used[c] = true
			if c >= '0' && c <= '9' {
				digits++
			}
		}
		total += len(suffix)
		prev = t
	}
	n := 0
	for _, u := range used {
		if u {
			n++
		}
	}
	return n <= 32 && digits*4 >= total
}

// writeDictionary writes the dictionary section (id-shaped blocks packed,
// runs of the others as FSTs) and returns section 13: nblocks+1 u32
// entries, each block's offset (its FST's for an FST-kind block, flagged
// fstBlock), then the section's end.
func writeDictionary(w *sectionWriter, terms TermSource, starts []int, refs []uint64) ([]byte, error) {
	nterms := terms.Len()
	term := func(i int) []byte { t, _, _, _ := terms.Term(i); return t }
	end := func(b int) int {
		if b+1 < len(starts) {
			return starts[b+1]
		}
		return nterms
	}
	packed := make([]bool, len(starts))
	for b, lo := range starts {
		packed[b] = idShaped(lo, end(b), term)
	}
	w.begin(SectionTermDict, true)
	offs := make([]byte, 0, 4*(len(starts)+1))
	base := w.off
	var blk []byte
	var err error
	for b := 0; b < len(starts); {
		off := w.off - base
		if off > maxDictOffset {
			return nil, fmt.Errorf("term dictionary over 2 GiB")
		}
		if packed[b] {
			offs = binary.LittleEndian.AppendUint32(offs, uint32(off))
			if blk, err = appendDictBlock(blk[:0], starts[b], end(b), term, refs); err != nil {
				return nil, fmt.Errorf("term dictionary: %w", err)
			}
			w.Write(blk)
			b++
			continue
		}
		e := b + 1
		for e < len(starts) && e-b < DictGroupBlocks && !packed[e] {
			e++
		}
		for range e - b {
			offs = binary.LittleEndian.AppendUint32(offs, uint32(off)|fstBlock)
		}
		if err := writeFST(w, term, refs, starts[b], end(e-1)); err != nil {
			return nil, err
		}
		b = e
	}
	if len(starts) > 0 {
		if w.off-base > maxDictOffset {
			return nil, fmt.Errorf("term dictionary over 2 GiB")
		}
		offs = binary.LittleEndian.AppendUint32(offs, uint32(w.off-base))
	}
	w.end()
	return offs, nil
}

// writeFST writes terms [lo, hi) with their postings references as one
// vellum FST.
func writeFST(w *sectionWriter, term func(int) []byte, refs []uint64, lo, hi int) error {
	// A smaller registry than vellum's default builds about twice as
	// fast for 1% more bytes (measured on generated logs, format 4).
	fb, err := vellum.New(w, &vellum.BuilderOpts{Encoder: 1, RegistryTableSize: 1000, RegistryMRUSize: 2})
	if err != nil {
		return err
	}
	for i := lo; i < hi; i++ {
		if err := fb.Insert(term(i), refs[i]); err != nil {
			return fmt.Errorf("term dictionary: %w", err)
		}
	}
	if err := fb.Close(); err != nil {
		return fmt.Errorf("term dictionary: %w", err)
	}
	return nil
}

// dictEntry returns block b's entry in section 13 and the next one.
func (s *Segment) dictEntry(b int) (ent, next uint32, err error) {
	if b < 0 || b >= s.nblocks {
		return 0, 0, fmt.Errorf("block %d out of range", b)
	}
	e, err := s.read(&s.dictOffs, uint64(b)*4, 8)
	if err != nil {
		return 0, 0, err
	}
	return binary.LittleEndian.Uint32(e), binary.LittleEndian.Uint32(e[4:]), nil
}

// groupFST returns the FST at offset off holding FST-kind block b, verifying
// its bytes on first use. The group ends where the entries after b first
// name another offset, at most DictGroupBlocks entries on.
func (s *Segment) groupFST(b int, off uint32) (*vellum.FST, error) {
	if f, ok := s.fsts.Load(off); ok {
		return f.(*vellum.FST), nil
	}
	n := min(DictGroupBlocks, s.nblocks-b)
	ents, err := s.read(&s.dictOffs, uint64(b+1)*4, uint64(n)*4)
	if err != nil {
		return nil, err
	}
	at := int64(s.dictOffs.off) + int64(b)*4
	end := off
	for i := 0; i < n && end == off; i++ {
		end = binary.LittleEndian.Uint32(ents[i*4:]) &^ fstBlock
	}
	if end <= off {
		return nil, s.damaged(s.corrupt("dictionary blocks", at, "block %d: FST group without an end after offset %d", b, off))
	}
	data, err := s.read(&s.dict, uint64(off), uint64(end-off)) // checksums verified before vellum reads a byte
	if err != nil {
		return nil, err
	}
	// vellum.Load keeps the slice: the dictionary is read in place.
	f, err := vellum.Load(data)
	if err != nil {
		return nil, s.damaged(s.corrupt("term dictionary", int64(s.dict.off)+int64(off), "FST of block %d: %v", b, err))
	}
	s.fsts.Store(off, f)
	return f, nil
}

// fstBlockTerms calls fn for the terms of FST-kind block b, those of its
// group's FST from the block's key up to the next block's.
func (s *Segment) fstBlockTerms(b int, off uint32, fn func(term []byte, ref uint64) bool) error {
	f, err := s.groupFST(b, off)
	if err != nil {
		return err
	}
	lo, err := s.blockKey(b)
	if err != nil {
		return err
	}
	var hi []byte
	if b+1 < s.nblocks {
		if hi, err = s.blockKey(b + 1); err != nil {
			return err
		}
	}
	it, err := f.Search(depthLimit{}, lo, hi)
	for err == nil {
		k, v := it.Current()
		if !fn(k, v) {
			return nil
		}
		err = it.Next()
	}
	if err != vellum.ErrIteratorDone {
		return s.damaged(s.corrupt("term dictionary", int64(s.dict.off)+int64(off), "FST of block %d: %v", b, err))
	}
	return nil
}

// depthLimit is a vellum automaton accepting every key of at most
// maxTermDepth bytes. Iterating through it bounds the walk: a point lookup
// is bounded by its key, but iterating a damaged FST whose transitions form
// a cycle would otherwise descend forever.
type depthLimit struct{}

const maxTermDepth = MaxTermLen + 1

func (depthLimit) Start() int { return 0 }

func (depthLimit) IsMatch(int) bool { return true }

func (depthLimit) CanMatch(d int) bool { return d <= maxTermDepth }

func (depthLimit) WillAlwaysMatch(int) bool { return false }

func (depthLimit) Accept(d int, _ byte) int { return d + 1 }
