package mmapstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

// kindsCase is a generated segment whose dictionary holds a run of more
// than DictGroupBlocks word blocks (two FST groups), hex ids and numbers
// (packed blocks) between them, and words again after; encoded and parsed.
func kindsCase(t *testing.T) (*segmentCase, []byte, *Segment) {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 12))
	var c *segmentCase
	for seed := uint64(0); c == nil || c.in.Lines.NumLines() == 0; seed++ {
		c = genSegment(rand.New(rand.NewPCG(seed, 13)), PostingsAuto)
	}
	lines := int(c.in.Lines.NumLines())
	seen := map[string]bool{}
	var terms [][]byte
	add := func(n int, gen func() string) {
		for range n {
			if s := gen(); !seen[s] {
				seen[s] = true
				terms = append(terms, []byte(s))
			}
		}
	}
	word := func(first string) func() string {
		return func() string {
			b := []byte(first)
			for range 2 + r.IntN(10) {
				b = append(b, "abcdefghijklmnopqrstuvwxyz_"[r.IntN(27)])
			}
			return string(b)
		}
	}
	add(5000, word("a"))
	add(1500, func() string { return fmt.Sprintf("id%032x", r.Uint64()) })
	add(800, func() string { return fmt.Sprint(1e6 + r.IntN(1e8)) })
	add(300, word("z"))
	slices.SortFunc(terms, bytes.Compare)
	sorted := &testTerms{}
	for _, term := range terms {
		sorted.terms = append(sorted.terms, term)
		sorted.ids = append(sorted.ids, []uint32{uint32(r.IntN(lines))})
	}
	c.terms, c.in.Terms = sorted, sorted
	data, err := EncodeSegment(c.in)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSegment("kinds", data)
	if err != nil {
		t.Fatal(err)
	}
	return c, data, s
}

// TestDictionaryKinds: id-shaped blocks are packed, the others in FSTs of
// at most DictGroupBlocks blocks each, and every reader finds every term
// through both.
func TestDictionaryKinds(t *testing.T) {
	c, _, s := kindsCase(t)
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
	checkSegment(t, "kinds", s, c)
	groups := map[uint32]int{} // FST offset -> blocks
	packed := 0
	for b := range s.NumBlocks() {
		ent, _, err := s.dictEntry(b)
		if err != nil {
			t.Fatal(err)
		}
		var bt [][]byte
		s.BlockTerms(b, func(term []byte, _ uint64) bool { bt = append(bt, bytes.Clone(term)); return true })
		id := idShaped(0, len(bt), func(i int) []byte { return bt[i] })
		if fst := ent&fstBlock != 0; fst == id {
			t.Fatalf("block %d (%q…): FST kind %v for id-shaped %v", b, bt[0], fst, id)
		}
		if ent&fstBlock != 0 {
			groups[ent&^fstBlock]++
		} else {
			packed++
		}
	}
	if len(groups) < 3 || packed < 10 {
		t.Fatalf("%d FST groups, %d packed blocks: the case does not mix the kinds", len(groups), packed)
	}
	for off, n := range groups {
		if n > DictGroupBlocks {
			t.Fatalf("FST at %d holds %d blocks", off, n)
		}
	}
}

// TestDictionaryTableCorrupt damages section 13 (the block kinds and
// offsets) under fixed checksums: every reader returns errors, never
// panics, and what they report is a corruption error.
func TestDictionaryTableCorrupt(t *testing.T) {
	c, data, s := kindsCase(t)
	tab := s.entry(SectionDictBlocks)
	nent := int(tab.Length / 4)
	mutations := []func(uint32) uint32{
		func(e uint32) uint32 { return e ^ fstBlock },
		func(uint32) uint32 { return 0 },
		func(uint32) uint32 { return fstBlock },
		func(uint32) uint32 { return maxDictOffset },
		func(e uint32) uint32 { return e + 1 },
		func(e uint32) uint32 { return e - 1 },
	}
	r := rand.New(rand.NewPCG(1, 2))
	n, stride := 48, 25
	if os.Getenv("LOGDEX_LONG") != "" {
		n, stride = 2000, 1
	}
	corrupt := 0
	for i := range n {
		k := r.IntN(nent)
		m := mutations[i%len(mutations)]
		seg := bytes.Clone(data)
		at := tab.Offset + uint64(k)*4
		binary.LittleEndian.PutUint32(seg[at:], m(binary.LittleEndian.Uint32(seg[at:])))
		fixChecksums(seg)
		ms, err := ParseSegment("mutated", seg)
		if err != nil {
			corrupt++
			continue
		}
		exerciseAll(ms)
		for j := 0; j < len(c.terms.terms); j += stride {
			term := c.terms.terms[j]
			if _, _, err := ms.Lookup(term); err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("entry %d: Lookup(%q): %v, not a corruption error", k, term, err)
				}
				corrupt++
				break
			}
		}
	}
	if corrupt == 0 {
		t.Fatal("no damaged table was reported")
	}
}
