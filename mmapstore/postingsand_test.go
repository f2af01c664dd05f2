package mmapstore

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// denseSegment is a segment of 800,000 lines with a word on every 7th
// line ("common", one-byte gaps: the walks skip eight at a time) and one
// on every 42nd of [160,000, 330,000) ("rare"), both as uvarint lists;
// ref is the common word's postings reference.
func denseSegment(tb testing.TB) (s *Segment, ref uint64, common, rare []uint32) {
	const lines = 800_000
	lt := NewLineTable()
	lt.BeginSpan(SegFile{ID: 1, Path: "a.log"}, 0, 1)
	for id := uint32(0); id < lines; id++ {
		lt.AddLine(100)
		if id%7 == 0 {
			common = append(common, id)
		}
		if id >= 160_000 && id < 330_000 && id%42 == 0 {
			rare = append(rare, id)
		}
	}
	lt.EndSpan()
	src := &mapTerms{m: map[string][]uint32{"common": common, "rare": rare}, keys: []string{"common", "rare"}}
	data, err := EncodeSegment(&SegmentInput{Lines: lt, Terms: src, NumPostings: uint64(len(common) + len(rare)), Postings: PostingsVarint})
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "seg.ldx")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	if s, err = OpenSegment(path); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	ref, ok, err := s.Lookup([]byte("common"))
	if !ok || err != nil {
		tb.Fatal(ok, err)
	}
	return s, ref, common, rare
}

// TestPostingsAndDense intersects a dense list, whose walk skips eight
// ids at a time below the next wanted one, with sets whose ids lie a few
// apart, far apart, in runs, and off the list.
func TestPostingsAndDense(t *testing.T) {
	s, ref, common, rare := denseSegment(t)
	all := roaring.BitmapOf(common...)
	r := rand.New(rand.NewPCG(7, 7))
	var random, runs, apart []uint32
	for id := uint32(0); id < s.NumLines(); id++ {
		if r.IntN(5) == 0 {
			random = append(random, id)
		}
		if id%5000 < 60 {
			runs = append(runs, id)
		}
		if id%9973 == 0 {
			apart = append(apart, id)
		}
	}
	for name, with := range map[string][]uint32{
		"rare": rare, "random": random, "runs": runs, "apart": apart,
		"one": {common[len(common)/2]}, "off the list": {1, 2, 3, 100_001, 799_999},
	} {
		w := roaring.BitmapOf(with...)
		got, err := s.PostingsAnd(ref, w)
		if want := roaring.And(all, w); err != nil || !got.Equals(want) {
			t.Errorf("%s: PostingsAnd = %d ids, %v; want %d", name, got.GetCardinality(), err, want.GetCardinality())
		}
	}
}

// BenchmarkPostingsAnd intersects the common word's list with the rarer
// word's lines, as a phrase's page does in the window it reaches.
func BenchmarkPostingsAnd(b *testing.B) {
	s, ref, _, rare := denseSegment(b)
	with := roaring.BitmapOf(rare...)
	b.ResetTimer()
	for range b.N {
		bm, err := s.PostingsAnd(ref, with)
		if err != nil || bm.GetCardinality() != uint64(len(rare)) {
			b.Fatal(err, bm.GetCardinality(), len(rare))
		}
	}
}
