package query

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query/lang"
	"github.com/rs/zerolog"
)

// TestLookAhead: a search whose words' lookups are cold in the segment it
// plans first asks for them in the other segments too, before it plans
// them, and waits for those asks before it returns.
func TestLookAhead(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	if _, err := loggen.Generate(logs, loggen.Options{TotalBytes: 4 << 20, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, "index")
	if _, err := indexer.Update(context.Background(), indexer.Options{Dir: idx, Roots: []string{logs}, SegmentBytes: 512 << 10, Logger: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	if err := mmapstore.Evict(idx); err != nil {
		t.Fatal(err)
	}
	ix, err := mmapstore.Open(idx)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	segs := ix.Segments()
	if len(segs) < 4 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	resident := func() (sum int64) {
		for _, seg := range segs[1:] {
			m := seg.Mapping()
			r, _ := m.Resident(0, m.Size())
			sum += r
		}
		return sum
	}
	texts := [][]byte{[]byte("connection"), []byte("reset"), []byte("timeout"), []byte("error")}
	if !segs[0].PrefetchLookups(texts) {
		t.Skip("the first segment's lookups were resident after eviction (a file system without a page cache to drop)")
	}
	before := resident()
	s := NewSearcher(ix, nil)
	la := newLookAhead(s, nil)
	la.cold(segs[0], texts)
	la.cold(segs[0], texts) // once a search for the same words
	for deadline := time.Now().Add(5 * time.Second); resident() <= before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the other segments' lookups were not asked for: %d bytes resident before and after", before)
		}
	}
	la.wait()
	la.cold(segs[0], [][]byte{[]byte("other"), []byte("words")}) // after wait: nothing starts
	if len(la.seen) != 1 {
		t.Errorf("asked for %d sets of words, want 1", len(la.seen))
	}

	// A search on the evicted index, whose plans ask ahead while it reads
	// the same segments, answers as it does warm (and, under -race, the
	// asks and the planning share the segments safely).
	q, err := Compile([]string{"connection reset"}, lang.ModeLiteral, true)
	if err != nil {
		t.Fatal(err)
	}
	count := func() (int, int64) {
		n := 0
		st, err := s.Search(context.Background(), q, Options{Limit: 20, TotalBudget: 64 << 10, CountAll: true}, func(*Hit) error { n++; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return n, st.Total
	}
	if err := mmapstore.Evict(idx); err != nil {
		t.Fatal(err)
	}
	coldN, coldTotal := count()
	warmN, warmTotal := count()
	if coldN == 0 || coldN != warmN || coldTotal != warmTotal {
		t.Fatalf("cold search: %d hits, total %d; warm: %d, %d", coldN, coldTotal, warmN, warmTotal)
	}
}
