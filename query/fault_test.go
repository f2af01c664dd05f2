package query

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query/lang"
	"github.com/rs/zerolog"
)

// faultQueries exercise every part of a segment: dictionary groups and
// blocks (words, prefixes), trigram filters (substrings), postings (common
// and rare words), the offset index (every hit is located), and scans.
var faultQueries = []struct {
	mode lang.Mode
	fold bool
	q    string
}{
	{lang.ModeQuery, true, "error"},
	{lang.ModeQuery, true, "conn*"},
	{lang.ModeQuery, true, `"upstream timed out"`},
	{lang.ModeQuery, true, "timeout -upstream"},
	{lang.ModeQuery, true, "NOT info"},
	{lang.ModeLiteral, false, "eout"},
	{lang.ModeLiteral, false, "10.0.3."},
	{lang.ModeLiteral, true, "GET /api"},
	{lang.ModeRegex, false, `[0-9]+ms`},
	{lang.ModeRegex, false, `^2026-10-10T0[0-3]`},
}

// faultIndex builds an index of the pinned logs in small segments and
// returns its directory and the answers of faultQueries from it.
func faultIndex(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	_, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{filepath.Join(pinnedDir, "logs")},
		SegmentBytes: 16 << 10, Logger: zerolog.Nop()})
	must(t, err)
	s := openPinned(t, dir)
	want := make([]string, len(faultQueries))
	for i := range faultQueries {
		want[i], _ = answerFault(t, s, i)
	}
	return dir, want
}

func answerFault(t *testing.T, s *Searcher, i int) (string, *Stats) {
	t.Helper()
	fq := faultQueries[i]
	q, err := Compile([]string{fq.q}, fq.mode, fq.fold)
	must(t, err)
	var b strings.Builder
	st, err := s.Search(context.Background(), q, Options{Text: true}, func(h *Hit) error {
		fmt.Fprintf(&b, "%s:%d:%s\n", h.File.Path, h.Line, h.Text)
		return nil
	})
	if err != nil {
		t.Fatalf("%v: %v", q, err)
	}
	return b.String(), st
}

// TestFaultBitFlips flips random bytes in a built index, in every section
// of every segment, and checks that every query still answers exactly what
// the undamaged index answers (damage is found by the checksums and the
// lines are read from the logs instead), that nothing panics, and that
// damage met by a search is reported. LOGDEX_LONG=1 flips thousands.
func TestFaultBitFlips(t *testing.T) {
	dir, want := faultIndex(t)
	segs, err := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	must(t, err)
	orig := map[string][]byte{}
	var sections []struct {
		path     string
		kind     uint32
		off, len int64
	}
	for _, p := range segs {
		b, err := os.ReadFile(p)
		must(t, err)
		orig[p] = b
		s, err := mmapstore.ParseSegment(p, b)
		must(t, err)
		for _, e := range s.Sections() {
			if e.Length > 0 {
				sections = append(sections, struct {
					path     string
					kind     uint32
					off, len int64
				}{p, e.Kind, int64(e.Offset), int64(e.Length)})
			}
		}
	}
	n := 120
	if os.Getenv("LOGDEX_LONG") != "" {
		n = 4000
	}
	r := rand.New(rand.NewPCG(uint64(testSeed()), 17))
	caught := map[string]int{}
	for i := range n {
		sec := sections[i%len(sections)] // every section of every segment in turn
		b := append([]byte(nil), orig[sec.path]...)
		at := sec.off + r.Int64N(sec.len)
		b[at] ^= byte(1 + r.IntN(255))
		must(t, os.WriteFile(sec.path, b, 0o644))
		ix, err := mmapstore.Open(dir)
		must(t, err)
		s := NewSearcher(ix, []string{"logs"})
		var damaged bool
		for qi := range faultQueries {
			got, st := answerFault(t, s, qi)
			if got != want[qi] {
				t.Fatalf("flip %d at %s+%d (%s): %s answers differently:\n got %q\nwant %q",
					i, filepath.Base(sec.path), at, mmapstore.SectionName(sec.kind), faultQueries[qi].q, got, want[qi])
			}
			damaged = damaged || len(st.Damaged) > 0
		}
		if damaged || len(ix.Damaged()) > 0 {
			caught[mmapstore.SectionName(sec.kind)]++
		}
		s.Close()
		ix.Close()
		must(t, os.WriteFile(sec.path, orig[sec.path], 0o644))
		os.Remove(filepath.Join(dir, mmapstore.QuarantineName))
	}
	t.Logf("%d flips, all answers exact; damage reported per section: %v", n, caught)
}

// TestFaultTruncatedSegment truncates a segment under an open index: the
// mapping's pages past the new end fault, and searches must still answer
// exactly, reporting the damage, and the next indexing run rebuilds it.
func TestFaultTruncatedSegment(t *testing.T) {
	dir, want := faultIndex(t)
	ix, err := mmapstore.Open(dir)
	must(t, err)
	defer ix.Close()
	s := NewSearcher(ix, []string{"logs"})
	defer s.Close()
	segs, err := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	must(t, err)
	for _, p := range segs {
		fi, err := os.Stat(p)
		must(t, err)
		must(t, os.Truncate(p, fi.Size()/3))
	}
	damaged := false
	for qi := range faultQueries {
		got, st := answerFault(t, s, qi)
		if got != want[qi] {
			t.Fatalf("%s after truncation:\n got %q\nwant %q", faultQueries[qi].q, got, want[qi])
		}
		damaged = damaged || len(st.Damaged) > 0
	}
	if !damaged || len(ix.Damaged()) == 0 {
		t.Fatalf("truncated segments not reported as damaged")
	}
	if q := mmapstore.ReadQuarantine(dir); len(q) == 0 {
		t.Fatalf("damage not recorded for the next indexing run")
	}
	_, err = indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{filepath.Join(pinnedDir, "logs")},
		SegmentBytes: 16 << 10, Logger: zerolog.Nop()})
	must(t, err)
	again := openPinned(t, dir)
	if d := again.Index().Damaged(); len(d) > 0 {
		t.Fatalf("still damaged after a rebuild: %v", d)
	}
	for qi := range faultQueries {
		if got, _ := answerFault(t, again, qi); got != want[qi] {
			t.Fatalf("%s after the rebuild answers differently", faultQueries[qi].q)
		}
	}
}
