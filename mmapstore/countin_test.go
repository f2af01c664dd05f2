package mmapstore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCountIn counts lists of every encoding (one id, two or three
// packed, uvarint, roaring, a run of every line) over ranges in them, at
// their ends, outside them, empty and whole, against the ids in the range.
func TestCountIn(t *testing.T) {
	const lines = 70_000 // (past one roaring container)
	r := rand.New(rand.NewPCG(3, 9))
	words := map[string][]uint32{
		"one":   {41_000},
		"two":   {5, 69_999},
		"three": {0, 30_000, 65_536},
		"every": nil,
	}
	var sparse []uint32
	for id := uint32(0); id < lines; id++ {
		words["every"] = append(words["every"], id)
		if r.IntN(40) == 0 {
			sparse = append(sparse, id)
		}
	}
	words["sparse"] = sparse
	var keys []string
	for k := range words {
		keys = append(keys, k)
	}
	for _, enc := range []string{PostingsAuto, PostingsVarint, PostingsRoaring} {
		s := countSegment(t, lines, words, keys, enc)
		for w, ids := range words {
			ref, ok, err := s.Lookup([]byte(w))
			if !ok || err != nil {
				t.Fatal(w, ok, err)
			}
			ranges := [][2]uint32{{0, lines}, {0, 0}, {lines, lines + 5}, {0, lines + 100}, {7, 3}, {ids[0], ids[0] + 1},
				{ids[0] + 1, lines}, {0, ids[len(ids)-1]}, {65_536, lines}, {0, 65_536}}
			for range 40 {
				lo := uint32(r.IntN(lines + 10))
				ranges = append(ranges, [2]uint32{lo, lo + uint32(r.IntN(lines))})
			}
			for _, rg := range ranges {
				var want uint64
				for _, id := range ids {
					if rg[0] <= id && id < rg[1] {
						want++
					}
				}
				if got, err := s.CountIn(ref, rg[0], rg[1]); got != want || err != nil {
					t.Errorf("%q %q: CountIn [%d, %d) = %d, %v; want %d", enc, w, rg[0], rg[1], got, err, want)
				}
			}
		}
	}
}

// countSegment encodes a segment of lines lines holding words, its lists
// in encoding enc.
func countSegment(t *testing.T, lines uint32, words map[string][]uint32, keys []string, enc string) *Segment {
	t.Helper()
	lt := NewLineTable()
	lt.BeginSpan(SegFile{ID: 1, Path: "a.log"}, 0, 1)
	for range lines {
		lt.AddLine(60)
	}
	lt.EndSpan()
	var n uint64
	for _, ids := range words {
		n += uint64(len(ids))
	}
	data, err := EncodeSegment(&SegmentInput{Lines: lt, Terms: &mapTerms{m: words, keys: slices.Sorted(slices.Values(keys))}, NumPostings: n, Postings: enc})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), fmt.Sprintf("seg-%s.ldx", enc))
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
