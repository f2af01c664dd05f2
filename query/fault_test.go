package query

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query/lang"
	"github.com/rs/zerolog"
)

// faultQueries exercise every part of a segment: dictionary blocks and
// their offsets (words, prefixes), trigram filters (substrings), postings (common
// and rare words), the offset index (every hit is located), and scans.
var faultQueries = []struct {
	mode lang.Mode
	fold bool
	q    string
	tr   *TimeRange // reads the line times and time groups
}{
	{lang.ModeQuery, true, "error", nil},
	{lang.ModeQuery, true, "conn*", nil},
	{lang.ModeQuery, true, `"upstream timed out"`, nil},
	{lang.ModeQuery, true, "timeout -upstream", nil},
	{lang.ModeQuery, true, "NOT info", nil},
	{lang.ModeLiteral, false, "eout", nil},
	{lang.ModeLiteral, false, "10.0.3.", nil},
	{lang.ModeLiteral, true, "GET /api", nil},
	{lang.ModeRegex, false, `[0-9]+ms`, nil},
	{lang.ModeRegex, false, `^2026-10-10T0[0-3]`, nil},
	{lang.ModeQuery, true, "error", &TimeRange{From: faultTime("2026-10-10T04:00:00Z"), To: faultTime("2026-10-10T12:00:00Z"), ExcludeUntimed: true}},
}

func faultTime(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UnixNano()
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
	st, err := s.Search(context.Background(), q, Options{Text: true, Time: fq.tr, Times: fq.tr != nil}, func(h *Hit) error {
		fmt.Fprintf(&b, "%s:%d:%s\n", h.File.Path, h.Line, h.Text)
		return nil
	})
	if err != nil {
		t.Fatalf("%v: %v", q, err)
	}
	if fq.tr != nil {
		// Counted alone, a window reads no line and leaves the files
		// unopened, until damage sends a task to read its span (run).
		cst, err := s.Search(context.Background(), q, Options{Time: fq.tr, PerFile: func(f *File, n int64) error {
			fmt.Fprintf(&b, "count %s:%d\n", f.Path, n)
			return nil
		}}, nil)
		if err != nil {
			t.Fatalf("%v counted: %v", q, err)
		}
		st.Damaged = append(st.Damaged, cst.Damaged...)
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
	n := 480 / raceScale
	if os.Getenv("LOGDEX_LONG") != "" {
		n = 4000
	}
	r := rand.New(rand.NewPCG(uint64(testSeed()), 17))
	caught, tried := map[string]int{}, map[string]int{}
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
		tried[mmapstore.SectionName(sec.kind)]++
		if damaged || len(ix.Damaged()) > 0 {
			caught[mmapstore.SectionName(sec.kind)]++
		}
		s.Close()
		ix.Close()
		must(t, os.WriteFile(sec.path, orig[sec.path], 0o644))
		os.Remove(filepath.Join(dir, mmapstore.QuarantineName))
	}
	// The table of NOTES-faults.md: flips per section, how many were
	// reported as damage (the rest changed bytes no query read, or bytes
	// whose change the format tolerates), answers all exact.
	names := make([]string, 0, len(tried))
	for name := range tried {
		names = append(names, name)
	}
	sort.Strings(names)
	var tab strings.Builder
	fmt.Fprintf(&tab, "%d flips, %d queries each, no panic, every answer exact\n| section | flips | reported damaged |\n| --- | --- | --- |\n", n, len(faultQueries))
	for _, name := range names {
		fmt.Fprintf(&tab, "| %s | %d | %d |\n", name, tried[name], caught[name])
	}
	t.Log(tab.String())
}

// TestFaultWindowCountUnopened damages, one section at a time, every
// chunk of the sections a count of a time window reads: such a count reads
// no line, so its files are not opened (readsFile), and damage found while
// its tasks run (the line times of a window's edge groups) must still be
// answered from the files, which run then opens.
func TestFaultWindowCountUnopened(t *testing.T) {
	dir, _ := faultIndex(t)
	q, err := Compile([]string{"error"}, lang.ModeQuery, true)
	must(t, err)
	// Short windows across the logs' day: their edges fall inside groups.
	var windows []*TimeRange
	for m := int64(0); m < 24*60; m += 37 {
		from := faultTime("2026-10-10T00:00:00Z") + m*int64(time.Minute)
		windows = append(windows, &TimeRange{From: from, To: from + 13*int64(time.Minute)})
	}
	// counts also says whether any window's search met the damage.
	counts := func(t *testing.T, s *Searcher) (string, bool) {
		var b strings.Builder
		damaged := false
		for _, tr := range windows {
			st, err := s.Search(context.Background(), q, Options{Time: tr, PerFile: func(f *File, n int64) error {
				fmt.Fprintf(&b, "%d %s:%d\n", tr.From, f.Path, n)
				return nil
			}}, nil)
			if err != nil {
				t.Fatalf("window %d: %v", tr.From, err)
			}
			damaged = damaged || len(st.Damaged) > 0
		}
		return b.String(), damaged
	}
	s := openPinned(t, dir)
	want, _ := counts(t, s)
	s.Close()
	segs, err := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	must(t, err)
	for _, kind := range []uint32{mmapstore.SectionTimeGroups, mmapstore.SectionLineTimes} {
		t.Run(mmapstore.SectionName(kind), func(t *testing.T) {
			orig := map[string][]byte{}
			for _, p := range segs {
				b, err := os.ReadFile(p)
				must(t, err)
				orig[p] = b
				seg, err := mmapstore.ParseSegment(p, b)
				must(t, err)
				d := append([]byte(nil), b...)
				for _, e := range seg.Sections() {
					for off := e.Offset; e.Kind == kind && off < e.Offset+e.Length; off += mmapstore.ChunkSize {
						d[off] ^= 0x5a
					}
				}
				must(t, os.WriteFile(p, d, 0o644))
			}
			defer func() {
				for p, b := range orig {
					must(t, os.WriteFile(p, b, 0o644))
				}
				os.Remove(filepath.Join(dir, mmapstore.QuarantineName))
			}()
			ix, err := mmapstore.Open(dir)
			must(t, err)
			defer ix.Close()
			s := NewSearcher(ix, []string{"logs"})
			defer s.Close()
			got, damaged := counts(t, s)
			if !damaged {
				t.Fatal("no window met the damage: the fallback was not exercised")
			}
			if got != want {
				t.Fatalf("counts differ:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestFaultTruncations cuts segments at random lengths before they are
// opened (a copy cut short, a disk that lost the tail): every answer is
// exact and the damage reported. LOGDEX_LONG=1 tries ten times as many.
func TestFaultTruncations(t *testing.T) {
	dir, want := faultIndex(t)
	segs, err := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	must(t, err)
	n := 40 / raceScale
	if os.Getenv("LOGDEX_LONG") != "" {
		n = 400
	}
	r := rand.New(rand.NewPCG(uint64(testSeed()), 23))
	for i := range n {
		p := segs[i%len(segs)]
		orig, err := os.ReadFile(p)
		must(t, err)
		cut := r.Int64N(int64(len(orig)))
		must(t, os.Truncate(p, cut))
		ix, err := mmapstore.Open(dir)
		must(t, err)
		s := NewSearcher(ix, []string{"logs"})
		damaged := len(ix.Damaged()) > 0
		for qi := range faultQueries {
			got, st := answerFault(t, s, qi)
			if got != want[qi] {
				t.Fatalf("%s cut to %d of %d bytes: %s answers differently: %s", filepath.Base(p), cut, len(orig),
					faultQueries[qi].q, lineDiff(got, want[qi]))
			}
			damaged = damaged || len(st.Damaged) > 0
		}
		s.Close()
		ix.Close()
		if !damaged {
			t.Fatalf("%s cut to %d of %d bytes: not reported", filepath.Base(p), cut, len(orig))
		}
		must(t, os.WriteFile(p, orig, 0o644))
		os.Remove(filepath.Join(dir, mmapstore.QuarantineName))
	}
	t.Logf("%d truncations at random lengths: every answer exact, every one reported", n)
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

// TestFaultInconsistentIndex damages an index in ways every checksum
// accepts: a segment replaced by a copy of another, a manifest that lists
// a segment twice, swaps file ids or misstates a segment's size or line
// count, a segment deleted. Each must be found on open (cross-checked
// against the manifest) and answered exactly from the logs, reported as
// damage or refused as a corrupt index, never a silent wrong answer.
func TestFaultInconsistentIndex(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, dir string, m *mmapstore.Manifest)
	}{
		{"segment replaced by a copy of another", func(t *testing.T, dir string, m *mmapstore.Manifest) {
			b, err := os.ReadFile(filepath.Join(dir, m.Segments[1].Name))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(dir, m.Segments[0].Name), b, 0o644))
		}},
		{"manifest lists a segment twice", func(_ *testing.T, _ string, m *mmapstore.Manifest) {
			m.Segments = append(m.Segments, m.Segments[0])
		}},
		{"manifest swaps two files' ids", func(_ *testing.T, _ string, m *mmapstore.Manifest) {
			m.Files[0].ID, m.Files[1].ID = m.Files[1].ID, m.Files[0].ID
		}},
		{"manifest swaps two segments' file ids", func(_ *testing.T, _ string, m *mmapstore.Manifest) {
			a, b := &m.Segments[0], &m.Segments[len(m.Segments)-1]
			a.FileIDs, b.FileIDs = b.FileIDs, a.FileIDs
		}},
		{"manifest misstates a segment's size", func(_ *testing.T, _ string, m *mmapstore.Manifest) { m.Segments[0].Size += 8 }},
		{"manifest misstates a segment's lines", func(_ *testing.T, _ string, m *mmapstore.Manifest) { m.Segments[0].Lines-- }},
		{"manifest misstates a file's lines", func(_ *testing.T, _ string, m *mmapstore.Manifest) { m.Files[0].Lines++ }},
		{"segment deleted", func(t *testing.T, dir string, m *mmapstore.Manifest) {
			must(t, os.Remove(filepath.Join(dir, m.Segments[0].Name)))
		}},
		{"segment emptied", func(t *testing.T, dir string, m *mmapstore.Manifest) {
			must(t, os.Truncate(filepath.Join(dir, m.Segments[0].Name), 0))
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, want := faultIndex(t)
			m, err := mmapstore.ReadManifest(dir)
			must(t, err)
			if len(m.Segments) < 2 || len(m.Files) < 2 {
				t.Fatalf("want several segments and files, got %d and %d", len(m.Segments), len(m.Files))
			}
			c.damage(t, dir, m)
			must(t, mmapstore.PublishManifest(dir, m))
			ix, err := mmapstore.Open(dir)
			if err != nil {
				// Refused whole (the manifest contradicts itself): no answer
				// at all, and the next indexing run rebuilds.
				if !errors.Is(err, mmapstore.ErrCorrupt) && !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("open: %v, want a corrupt index or damaged segments", err)
				}
				t.Logf("outcome: index refused as corrupt (%v); the next index run rebuilds it", err)
				rebuildAndCompare(t, dir, want)
				return
			}
			s := NewSearcher(ix, []string{"logs"})
			damaged := len(ix.Damaged()) > 0
			for qi := range faultQueries {
				got, st := answerFault(t, s, qi)
				if got != want[qi] {
					t.Fatalf("%s answers differently (damaged at open: %v; by the search: %v): %s", faultQueries[qi].q,
						ix.Damaged(), st.Damaged, lineDiff(got, want[qi]))
				}
				damaged = damaged || len(st.Damaged) > 0
			}
			s.Close()
			ix.Close()
			if !damaged {
				t.Fatal("not reported as damage")
			}
			t.Logf("outcome: answers exact, damage reported (%v)", ixDamaged(dir))
			rebuildAndCompare(t, dir, want)
		})
	}
}

func ixDamaged(dir string) []error {
	ix, err := mmapstore.Open(dir)
	if err != nil {
		return []error{err}
	}
	defer ix.Close()
	return ix.Damaged()
}

// rebuildAndCompare runs the indexer over the damaged index: afterwards
// nothing is damaged and the answers are the undamaged index's.
func rebuildAndCompare(t *testing.T, dir string, want []string) {
	t.Helper()
	_, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{filepath.Join(pinnedDir, "logs")},
		SegmentBytes: 16 << 10, Logger: zerolog.Nop()})
	must(t, err)
	again := openPinned(t, dir)
	for qi := range faultQueries {
		if got, _ := answerFault(t, again, qi); got != want[qi] {
			t.Fatalf("%s after the rebuild answers differently", faultQueries[qi].q)
		}
	}
}

// lineDiff names the lines only one of two answers holds (a few).
func lineDiff(got, want string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	g, w := in(got), in(want)
	var b strings.Builder
	n := 0
	for l := range w {
		if !g[l] && n < 3 {
			fmt.Fprintf(&b, "\n missing %.120q", l)
			n++
		}
	}
	for l := range g {
		if !w[l] && n < 6 {
			fmt.Fprintf(&b, "\n extra %.120q", l)
			n++
		}
	}
	return b.String()
}
