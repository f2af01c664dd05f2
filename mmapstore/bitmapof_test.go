package mmapstore

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

// TestBitmapOfSorted holds the portable-format builder to roaring's own
// BitmapOf, for lists that make array containers, bitmap containers and
// the dense bitset path, and checks that the result can be changed in
// place like any bitmap.
func TestBitmapOfSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	spread := func(n int, max uint32) []uint32 {
		m := map[uint32]bool{}
		for len(m) < n {
			m[rng.Uint32N(max)] = true
		}
		ids := make([]uint32, 0, n)
		for id := range m {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	run := func(from, n uint32) []uint32 {
		ids := make([]uint32, n)
		for i := range ids {
			ids[i] = from + uint32(i)
		}
		return ids
	}
	cases := []struct {
		name string
		ids  []uint32
	}{
		{"empty", nil},
		{"one", []uint32{7}},
		{"zero and max low bits", []uint32{0, 65535, 65536, 131071}},
		{"sparse", spread(300, 50_000_000)},
		{"array at its largest", run(65536, 4096)},
		{"bitmap container", append(run(65536*3+5, 4097), 1<<29)},
		{"sparse with a dense container", append(spread(100, 65536*2), append(run(65536*4, 6000), spread(50, 1<<30)[45:]...)...)},
		{"dense", spread(20000, 200000)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ids := slices.Compact(slices.Clone(c.ids))
			slices.Sort(ids)
			ids = slices.Compact(ids)
			got, want := bitmapOfSorted(ids), roaring.BitmapOf(ids...)
			if !got.Equals(want) || got.GetCardinality() != uint64(len(ids)) {
				t.Fatalf("got %d ids, want %d", got.GetCardinality(), len(ids))
			}
			other := roaring.BitmapOf(spread(500, 1<<30)...)
			other.AddMany(ids[:len(ids)/2])
			if a, b := roaring.And(got, other), roaring.And(want, other); !a.Equals(b) {
				t.Fatal("And differs")
			}
			got.Add(3)
			want.Add(3)
			got.RemoveRange(0, 70000)
			want.RemoveRange(0, 70000)
			if !got.Equals(want) {
				t.Fatal("differs after changes in place")
			}
		})
	}
}

// BenchmarkBitmapOfSorted: a postings list of 550 ids in a segment of a
// million lines (a common word of one segment), through the portable
// layout and through BitmapOf.
func BenchmarkBitmapOfSorted(b *testing.B) {
	ids := make([]uint32, 550)
	for i := range ids {
		ids[i] = uint32(i * 1800)
	}
	b.Run("layout", func(b *testing.B) {
		for b.Loop() {
			bitmapOfSorted(ids)
		}
	})
	b.Run("BitmapOf", func(b *testing.B) {
		for b.Loop() {
			roaring.BitmapOf(ids...)
		}
	})
}
