package indexer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
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

// TestMergeableWeighsFromManifest: a segment whose files are all live is
// weighed from the manifest's raw bytes without being opened, and that is
// what its spans add up to; one holding a retired file's lines is opened
// and weighed span by span.
func TestMergeableWeighsFromManifest(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	for i := range 3 {
		line := fmt.Sprintf("line %d of a file to weigh zqq\n", i)
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.log", i)), []byte(strings.Repeat(line, 3000)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opt := Options{Dir: dir, Roots: []string{root}, SegmentBytes: 32 << 10, Logger: zerolog.Nop(), NoMerge: true}
	if _, err := Update(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	m, err := mmapstore.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	spanBytes := func(ref mmapstore.SegmentRef) int64 {
		s, err := mmapstore.OpenSegment(filepath.Join(dir, ref.Name))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var n int64
		for _, sp := range s.Spans() {
			n += sp.EndOffset - sp.StartOffset
		}
		return n
	}
	u := &update{opt: opt, next: *m}
	live := map[uint64]int{}
	for i, f := range m.Files {
		live[f.ID] = i
	}
	for _, ref := range m.Segments {
		ms, ok := u.mergeable(ref, live)
		if want := spanBytes(ref); !ok || ms.live != want || ms.retired {
			t.Fatalf("%s: weighed %+v, %v; want %d live bytes", ref.Name, ms, ok, want)
		}
	}
	// Not opened: weighed the same with its file moved away.
	first := filepath.Join(dir, m.Segments[0].Name)
	if err := os.Rename(first, first+".away"); err != nil {
		t.Fatal(err)
	}
	ms, ok := u.mergeable(m.Segments[0], live)
	if err := os.Rename(first+".away", first); err != nil {
		t.Fatal(err)
	}
	if !ok || ms.live != m.Segments[0].RawBytes {
		t.Fatalf("%s, its file away: weighed %+v, %v; want it weighed from the manifest", m.Segments[0].Name, ms, ok)
	}
	// With the segment's files gone from the manifest, nothing of it is
	// live: it is opened (the file exists) and found retired.
	ref := m.Segments[0]
	gone := map[uint64]bool{}
	for _, id := range ref.FileIDs {
		gone[id] = true
	}
	for id := range live {
		if gone[id] {
			delete(live, id)
		}
	}
	if ms, ok := u.mergeable(ref, live); !ok || ms.live != 0 || !ms.retired {
		t.Fatalf("%s with its files retired: %+v, %v", ref.Name, ms, ok)
	}
}
