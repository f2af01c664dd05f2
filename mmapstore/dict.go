package mmapstore

// The term dictionary of a segment: point and range lookups through the
// vellum FST, the dictionary blocks and their trigram filters.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"runtime/debug"
	"sort"

	"github.com/blevesearch/vellum"
)

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

// NumBlocks is the number of dictionary blocks.
func (s *Segment) NumBlocks() int { return s.nblocks }

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

func (depthLimit) Start() int { return 0 }

func (depthLimit) IsMatch(int) bool { return true }

func (depthLimit) CanMatch(d int) bool { return d <= maxTermDepth }

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
