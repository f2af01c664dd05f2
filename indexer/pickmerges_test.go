package indexer

import (
	"fmt"
	"slices"
	"testing"

	"github.com/logdex/logdex/mmapstore"
)

// TestPickMerges: tiers of mergeFactor small segments merge into sets of at
// most maxBytes; full-size segments are never rewritten just to be copied
// (a 1 GiB index of 128 MiB segments used to be rewritten on every run);
// mostly retired ones are rewritten, alone if need be.
func TestPickMerges(t *testing.T) {
	const maxBytes = 128 << 20
	seg := func(i int, live int64, retired bool) mergeSeg {
		ms := mergeSeg{ref: mmapstore.SegmentRef{Name: fmt.Sprintf("seg-%04d", i)}, live: live, retired: retired}
		for size := int64(mergeMinBytes); ms.live >= size*mergeFactor; size *= mergeFactor {
			ms.tier++
		}
		return ms
	}
	names := func(sets [][]mergeSeg) [][]string {
		var out [][]string
		for _, set := range sets {
			var ns []string
			for _, s := range set {
				ns = append(ns, s.ref.Name)
			}
			out = append(out, ns)
		}
		return out
	}
	var full, small, mixed []mergeSeg
	for i := range 9 {
		full = append(full, seg(i, maxBytes, false))
		small = append(small, seg(i, 2<<20, false))
	}
	mixed = append(mixed, seg(0, maxBytes, true), seg(1, maxBytes, false), seg(2, 2<<20, false))
	for _, c := range []struct {
		name  string
		cands []mergeSeg
		want  [][]string
	}{
		{"full-size segments stay", full, nil},
		{"a tier of small ones merges", small, [][]string{{"seg-0000", "seg-0001", "seg-0002", "seg-0003", "seg-0004", "seg-0005", "seg-0006", "seg-0007", "seg-0008"}}},
		{"too few small ones wait", small[:mergeFactor-1], nil},
		{"a retired full one is rewritten alone", mixed, [][]string{{"seg-0000"}}},
	} {
		if got := names(pickMerges(slices.Clone(c.cands), maxBytes, mergeFactor)); !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
