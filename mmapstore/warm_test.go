package mmapstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logdex/logdex/indexer"
	. "github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

// buildTestIndex indexes generated logs into nseg segments of 64 KiB.
func buildTestIndex(t *testing.T, nseg int) string {
	return buildTestIndexSized(t, nseg*64<<10-1000, 64<<10)
}

func buildTestIndexSized(t *testing.T, size int, segBytes int64) string {
	t.Helper()
	root := t.TempDir()
	writeTestLogs(t, root, size)
	dir := t.TempDir()
	if _, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, SegmentBytes: segBytes, Logger: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeTestLogs writes size bytes of log lines, a unique job id each, to
// dir/w.log.
func writeTestLogs(t *testing.T, dir string, size int) {
	t.Helper()
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "2026-11-29T10:%02d:%02dZ INFO worker-%d job=%x user=u%d took=%dms\n", i/60%60, i%60, i%7, i*104729, i%31, i%997)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "w.log"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// openEvicted builds an index of size bytes of logs in segments of
// segBytes, evicts it from the page cache and opens it (closed at the
// test's end).
func openEvicted(t *testing.T, size int, segBytes int64) *Index {
	t.Helper()
	dir := evictedIndexes.get(t, size, segBytes)
	if err := Evict(dir); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// evictedIndexes builds each size of openEvicted's indexes once: the tests
// only evict and read them, and building 16 MiB of logs under the race
// detector took seconds a test.
var evictedIndexes = &indexCache{dirs: map[[2]int64]string{}}

type indexCache struct {
	sync.Mutex
	dirs map[[2]int64]string // by size and segment bytes
}

func (c *indexCache) get(t *testing.T, size int, segBytes int64) string {
	t.Helper()
	c.Lock()
	defer c.Unlock()
	key := [2]int64{int64(size), segBytes}
	if dir, ok := c.dirs[key]; ok {
		return dir
	}
	root, err := os.MkdirTemp("", "logdex-evicted")
	if err != nil {
		t.Fatal(err)
	}
	logs, dir := filepath.Join(root, "logs"), filepath.Join(root, "index")
	writeTestLogs(t, logs, size)
	if _, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{logs}, SegmentBytes: segBytes, Logger: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	c.dirs[key] = dir
	return dir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range evictedIndexes.dirs {
		os.RemoveAll(filepath.Dir(dir))
	}
	os.Exit(code)
}

// fakeClock advances only when slept on.
type fakeClock struct {
	now   time.Time
	slept time.Duration
	naps  int
}

func (c *fakeClock) Now() time.Time { return c.now }
func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.now = c.now.Add(d)
	c.slept += d
	c.naps++
	return nil
}

func newTestWarmer(t *testing.T, ix *Index, opt WarmOptions) (*Warmer, *fakeClock, *[]uint32) {
	clk := &fakeClock{now: time.Unix(1e9, 0)}
	opt.Clock, opt.Logger = clk, zerolog.Nop()
	w := NewWarmer(ix, opt)
	w.SetFaults(func() int64 { return 0 }) // no query faults unless a test says so
	var kinds []uint32
	w.SetTestHooks(func(*Mapping, int64, int64) (int64, error) { return 0, nil }, // always cold
		func(kind uint32, _, _ int64) {
			if len(kinds) == 0 || kinds[len(kinds)-1] != kind {
				kinds = append(kinds, kind)
			}
		})
	return w, clk, &kinds
}

// warmIndex opens the test index built by the internal helper.
func warmIndex(t *testing.T) *Index {
	t.Helper()
	dir := buildTestIndex(t, 3)
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func TestWarmOrder(t *testing.T) {
	ix := warmIndex(t)
	w, _, kinds := newTestWarmer(t, ix, WarmOptions{Mode: WarmStaged, Chunk: 4096})
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Stages never go back: small sections (checksums included), offset
	// indexes, dictionaries, filters, line times, postings.
	prios := w.RegionPrios()
	for i := 1; i < len(prios); i++ {
		if prios[i] < prios[i-1] {
			t.Fatalf("stage order %v goes back at %d", prios, i)
		}
	}
	if len(*kinds) == 0 || StagePrio((*kinds)[0]) != 0 {
		t.Fatalf("first warmed %v, want the small sections first", *kinds)
	}
	st := w.Status()
	if st.State != StateDone || st.Warmed != st.Planned || st.Planned != st.Mapped-headerAndTOC(ix) {
		t.Fatalf("status after run: %+v", st)
	}
}

// headerAndTOC is the part of the segment files outside sections, which
// the warmer does not plan.
func headerAndTOC(ix *Index) int64 {
	var n int64
	for _, s := range ix.Segments() {
		var in int64
		for _, e := range s.Sections() {
			in += int64(e.Length)
		}
		n += s.Size() - in
	}
	return n
}

func TestWarmPacing(t *testing.T) {
	ix := warmIndex(t)
	const rate = 1e6 // 1 MB/s
	w, clk, _ := newTestWarmer(t, ix, WarmOptions{Mode: WarmStaged, Rate: rate, Chunk: 16 << 10})
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := time.Duration(float64(w.Planned()) / rate * float64(time.Second))
	if clk.slept < want*9/10 || clk.slept > want*11/10+time.Millisecond {
		t.Fatalf("slept %v for %d bytes at %v B/s, want about %v", clk.slept, w.Planned(), rate, want)
	}
	// Unpaced, no sleeping at all.
	w2, clk2, _ := newTestWarmer(t, ix, WarmOptions{Mode: WarmStaged, Chunk: 16 << 10})
	w2.Run(context.Background())
	if clk2.slept != 0 {
		t.Fatalf("unpaced warmer slept %v", clk2.slept)
	}
}

func TestWarmBudget(t *testing.T) {
	ix := warmIndex(t)
	full := NewWarmer(ix, WarmOptions{}).Planned()
	budget := full / 3
	w, _, _ := newTestWarmer(t, ix, WarmOptions{Mode: WarmStaged, MaxBytes: budget, Chunk: 4096})
	var touched int64
	w.SetTestHooks(nil, func(_ uint32, _, n int64) { touched += n })
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if touched > budget || w.Planned() > budget || touched != w.Planned() {
		t.Fatalf("touched %d, planned %d, budget %d", touched, w.Planned(), budget)
	}
	skipped := 0
	for _, s := range w.RegionStates() {
		if s == StateSkipped {
			skipped++
		}
	}
	if skipped == 0 {
		t.Fatal("nothing skipped under a third of the budget")
	}
}

func TestWarmYieldsToQueries(t *testing.T) {
	ix := warmIndex(t)
	const chunk = 1 << 20
	smallPieces := 0 // pieces of at most YieldPiece in chunks of at most chunk
	for _, n := range w0(ix).RegionSizes() {
		for ; n > 0; n -= chunk {
			smallPieces += int((min(n, chunk) + YieldPiece - 1) / YieldPiece)
		}
	}
	chunks := 0
	for _, n := range w0(ix).RegionSizes() {
		chunks += int((n + chunk - 1) / chunk)
	}
	for _, tc := range []struct {
		name         string
		busy         int
		faulting     bool
		naps, pieces int
		slept        time.Duration
	}{
		// Queries reading from disk: each piece waits YieldMax (they fault
		// all along), then the warmer reads a small piece.
		{"cold queries", 1, true, smallPieces * int(YieldMax/(500*time.Microsecond)), smallPieces, time.Duration(smallPieces) * YieldMax},
		// Warm queries leave the disk to the warmer: whole chunks, no wait.
		{"warm queries", 1, false, 0, chunks, 0},
		// Faults while no query runs are not queries waiting.
		{"idle", 0, true, 0, chunks, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, clk, _ := newTestWarmer(t, ix, WarmOptions{Mode: WarmStaged, Chunk: chunk, Busy: func() int { return tc.busy }})
			var faults int64
			w.SetFaults(func() int64 {
				if tc.faulting {
					faults++
				}
				return faults
			})
			var reads int
			w.SetPrefetchHook(func(off, n int64) { reads++ })
			if err := w.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if clk.naps != tc.naps || clk.slept != tc.slept || reads != tc.pieces {
				t.Fatalf("%d naps, %v asleep, %d reads; want %d naps, %v, %d reads", clk.naps, clk.slept, reads, tc.naps, tc.slept, tc.pieces)
			}
		})
	}
}

// TestWarmStartGrace: a staged warm-up with a StartGrace starts once the
// first searches are answered, or after the grace when none comes, or at
// 4 × the grace while searches keep running; its first read comes after.
func TestWarmStartGrace(t *testing.T) {
	ix := warmIndex(t)
	const grace = 100 * time.Millisecond
	for _, tc := range []struct {
		name  string
		busy  func(poll int) bool // a search runs at the poll'th look
		waits time.Duration       // asleep before the first read
	}{
		{"first search answered", func(p int) bool { return p >= 2 && p < 10 }, 10 * 500 * time.Microsecond},
		{"no search", func(int) bool { return false }, grace},
		{"searches all along", func(int) bool { return true }, 4 * grace},
	} {
		t.Run(tc.name, func(t *testing.T) {
			polls := 0
			busy := func() int {
				polls++
				if tc.busy(polls - 1) {
					return 1
				}
				return 0
			}
			w, clk, _ := newTestWarmer(t, ix, WarmOptions{Mode: WarmStaged, Busy: busy, StartGrace: grace})
			w.SetFaults(func() int64 { return 0 })
			first := time.Duration(-1)
			w.SetPrefetchHook(func(off, n int64) {
				if first < 0 {
					first = clk.slept
				}
			})
			if err := w.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if first != tc.waits {
				t.Fatalf("first read after %v asleep, want %v", first, tc.waits)
			}
		})
	}
	// Without a grace it starts at once (TestWarmYieldsToQueries counts
	// its naps exactly).
}

// w0 is a warmer of ix that is never run, to read its plan.
func w0(ix *Index) *Warmer { return NewWarmer(ix, WarmOptions{}) }

func TestWarmOff(t *testing.T) {
	ix := warmIndex(t)
	w, _, kinds := newTestWarmer(t, ix, WarmOptions{Mode: WarmOff})
	w.Run(context.Background())
	if len(*kinds) != 0 || w.Status().State != StateOff {
		t.Fatalf("off mode warmed %v, state %s", *kinds, w.Status().State)
	}
}

// TestWarmFromColdCache evicts a real index from the page cache, then
// watches residency rise to 100% as the warmer runs.
func TestWarmFromColdCache(t *testing.T) {
	// One segment of a few MB: opening it touches only its header, footer
	// and small sections (it is mapped MADV_RANDOM).
	ix := openEvicted(t, 12<<20, 64<<20)
	w := NewWarmer(ix, WarmOptions{Mode: WarmStaged, Logger: zerolog.Nop()})
	before := w.Status()
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	after := w.Status()
	if before.Resident*2 > before.Mapped {
		t.Fatalf("%d of %d bytes resident right after opening a cold index", before.Resident, before.Mapped)
	}
	if after.Resident != after.Mapped {
		t.Fatalf("resident %d of %d after warm-up (before: %d)", after.Resident, after.Mapped, before.Resident)
	}
	t.Logf("resident before %d, after %d of %d bytes; read %d", before.Resident, after.Resident, after.Mapped, after.Read)
}

// TestPrefetchHeads: after eviction, prefetchHeads brings every segment's
// first and last pages in (asynchronously: waited for) and little else.
// The files are mapped, not opened as segments: opening reads those pages.
func TestPrefetchHeads(t *testing.T) {
	dir := buildTestIndexSized(t, 3<<20, 1<<20)
	if err := Evict(dir); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	PrefetchHeads(dir, m.Segments)
	PrefetchHeads(t.TempDir(), m.Segments) // no such files: nothing to do
	segs, _ := filepath.Glob(filepath.Join(dir, "*.ldx"))
	if len(segs) < 2 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	for _, path := range segs {
		m, err := Map(path)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		for _, off := range []int64{0, m.Size() - 1} {
			deadline := time.Now().Add(5 * time.Second)
			for {
				r, err := m.Resident(off, 1)
				if err != nil {
					t.Fatal(err)
				}
				if r == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: byte %d not resident after prefetchHeads", path, off)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		if r, _ := m.Resident(0, m.Size()); r*2 > m.Size() {
			t.Errorf("%s: %d of %d bytes resident: more than the heads", path, r, m.Size())
		}
	}
}

// TestBlockCandidatesCold: on a segment evicted from the page cache (its
// trigram slices asked for together), the candidate blocks are those of
// the warm segment.
func TestBlockCandidatesCold(t *testing.T) {
	dir := buildTestIndexSized(t, 2<<20, 4<<20)
	needles := []string{"worker-3", "job=", "took=99", "u17 took", "INFO worker"}
	cands := func() [][]uint32 {
		ix, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		var out [][]uint32
		for _, s := range ix.Segments() {
			for _, n := range needles {
				for _, fix := range [][2]bool{{false, false}, {true, false}, {false, true}} {
					b, err := s.BlockCandidates([]byte(n), fix[0], fix[1])
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, b)
				}
			}
		}
		return out
	}
	warm := cands()
	if err := Evict(dir); err != nil {
		t.Fatal(err)
	}
	cold := cands()
	if fmt.Sprint(cold) != fmt.Sprint(warm) {
		t.Fatalf("cold candidates %v, warm %v", cold, warm)
	}
}

// TestPrefetchTermBlocks: on a segment evicted from the page cache, one
// call brings its whole term-block index in (asynchronously: waited for),
// which lookups binary-search; a call right after looks at nothing, and
// once that has aged, an index evicted again is asked for again.
func TestPrefetchTermBlocks(t *testing.T) {
	ix := openEvicted(t, 16<<20, 8<<20) // a unique id a line: many blocks
	waitResident := func(s *Segment) {
		t.Helper()
		waitForResident(t, s.Name()+": term blocks after PrefetchTermBlocks", s.TermBlocksResident, func(r, n int64) bool { return r == n })
	}
	for _, s := range ix.Segments() {
		r, n := s.TermBlocksResident()
		if n < 3*4096 {
			t.Fatalf("%s: term blocks of %d bytes, want a few pages", s.Name(), n)
		}
		if r == n {
			t.Skip("eviction left the term blocks in memory (a file system without a page cache to drop)")
		}
		s.PrefetchTermBlocks()
		waitResident(s)
	}
	if err := Evict(ix.Dir()); err != nil {
		t.Fatal(err)
	}
	s := ix.Segments()[0]
	s.SetTermBlocksCheck(time.Now())
	s.PrefetchTermBlocks() // looked at just now: nothing asked for
	time.Sleep(50 * time.Millisecond)
	if r, n := s.TermBlocksResident(); r == n {
		t.Fatalf("term blocks resident again at once (%d bytes): the recheck interval was not kept", r)
	}
	s.SetTermBlocksCheck(time.Time{})
	s.PrefetchTermBlocks()
	waitResident(s)
}

// TestPrefetchLines: a span's offset index is read in when it is not in
// memory, and residency is looked at again only after residencyRecheck
// (every page of a common word asks).
func TestPrefetchLines(t *testing.T) {
	ix := openEvicted(t, 16<<20, 8<<20)
	s := ix.Segments()[0]
	r, n := s.LinesResident(0)
	if n < 3*4096 {
		t.Fatalf("offset index of %d bytes, want a few pages", n)
	}
	if r*2 >= n {
		t.Skip("eviction left the offset index in memory (a file system without a page cache to drop)")
	}
	waitResident := func() {
		t.Helper()
		linesResident := func() (int64, int64) { return s.LinesResident(0) }
		waitForResident(t, "the offset index after PrefetchLines", linesResident, func(r, n int64) bool { return r*2 >= n })
	}
	s.SetLinesCheck(0, time.Now())
	if err := s.PrefetchLines(0); err != nil { // looked at just now: nothing read
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if r, n := s.LinesResident(0); r*2 >= n {
		t.Fatalf("offset index resident at once (%d of %d bytes): the recheck interval was not kept", r, n)
	}
	s.SetLinesCheck(0, time.Time{})
	if err := s.PrefetchLines(0); err != nil {
		t.Fatal(err)
	}
	waitResident()
}

// TestPrefetchHits: the offset and time index pages of a page's hits,
// scattered over a cold segment, are asked for together, and only when the
// span was not looked at within the recheck interval.
func TestPrefetchHits(t *testing.T) {
	ix := openEvicted(t, 16<<20, 8<<20)
	s := ix.Segments()[0]
	sp := s.Spans()[0]
	if !sp.Timed || sp.NumLines < 50*GroupSize*8 {
		t.Fatalf("span 0: %d lines, timed %v; want a timed span of many groups", sp.NumLines, sp.Timed)
	}
	var lines []uint32
	for i := range uint32(50) {
		lines = append(lines, sp.FirstLine+i*(sp.NumLines/50)+i%GroupSize)
	}
	skipIfResident(t)(s.HitsResident(0, lines, true))
	s.SetHitsCheck(0, time.Now())
	s.PrefetchHits(0, lines, len(lines)) // looked at just now: nothing asked
	time.Sleep(50 * time.Millisecond)
	if r, n := s.HitsResident(0, lines, true); r*2 >= n {
		t.Fatalf("entries resident at once (%d of %d bytes): the recheck interval was not kept", r, n)
	}
	s.SetHitsCheck(0, time.Time{})
	waits := DiskWaits()
	s.PrefetchHits(0, lines, len(lines))
	if DiskWaits() <= waits {
		t.Fatal("reads asked for ahead did not count as waiting for the disk (a staged warmer would not give way)")
	}
	waitForResident(t, "the hits' offsets and times after PrefetchHits",
		func() (int64, int64) { return s.HitsResident(0, lines, false) },
		func(r, n int64) bool { return r == n })
}

// TestPrefetchHitsColdBatches: a span found cold is looked at again for
// its next batch of lines, within the recheck interval: a literal's
// candidates are verified batch after batch, and the later batches'
// entries were read one fault at a time.
func TestPrefetchHitsColdBatches(t *testing.T) {
	ix := openEvicted(t, 16<<20, 8<<20)
	s := ix.Segments()[0]
	sp := s.Spans()[0]
	batch := func(k uint32) []uint32 { // in half k of the span
		var lines []uint32
		for i := range uint32(20) {
			lines = append(lines, sp.FirstLine+k*(sp.NumLines/2)+i*(sp.NumLines/40))
		}
		return lines
	}
	first, second := batch(0), batch(1)
	skipIfResident(t)(s.HitsResident(0, second, true))
	s.SetHitsCheck(0, time.Time{})
	s.PrefetchHits(0, first, len(first)) // cold: asked
	s.PrefetchHits(0, second, len(second))
	waitForResident(t, "the second batch's offsets and times, asked within the recheck interval of a cold look",
		func() (int64, int64) { return s.HitsResident(0, second, false) },
		func(r, n int64) bool { return r == n })
}

// TestAskRangesMerged: ranges a few chunks apart are asked for with one
// madvise (each is a system call that, reading, exits to the hypervisor on
// a VM): what locating lines of neighbouring groups reads (entries sixteen
// bytes apart, lengths and times close by) goes out as one ask a section.
func TestAskRangesMerged(t *testing.T) {
	ix := openEvicted(t, 16<<20, 8<<20)
	s := ix.Segments()[0]
	sp := s.Spans()[0]
	var lines []uint32
	for g := range uint32(40) {
		lines = append(lines, sp.FirstLine+g*GroupSize)
	}
	skipIfResident(t)(s.HitsResident(0, lines, true))
	asks := map[uint32]int{}
	restore := SetAskHook(func(kind uint32, lo, hi uint64) { asks[kind]++ })
	s.SetHitsCheck(0, time.Time{})
	s.PrefetchHits(0, lines, len(lines))
	restore()
	if len(asks) == 0 {
		t.Fatal("nothing asked for")
	}
	for kind, n := range asks {
		if n != 1 {
			t.Errorf("%s: %d asks for the ranges of 40 neighbouring lines, want 1", SectionName(kind), n)
		}
	}
}

// TestPrefetchLists: the heads of a union's postings lists, on a cold
// segment, are asked for together before they are decoded, counted as
// waiting for the disk; not looked at again within the recheck interval.
func TestPrefetchLists(t *testing.T) {
	ix := openEvicted(t, 16<<20, 8<<20)
	s := ix.Segments()[0]
	var refs []uint64
	// Numbers: every segment's timestamps hold them, on many lines.
	for i := 0; i < 60 && len(refs) < 8; i++ {
		if ref, ok, err := s.Lookup(fmt.Appendf(nil, "%02d", i)); err == nil && ok && ref&3 == 0 {
			refs = append(refs, ref)
		}
	}
	if len(refs) < 3 {
		t.Fatalf("%d words with postings lists, want several", len(refs))
	}
	skipIfResident(t)(s.ListsResident(refs))
	s.SetListsCheck(time.Now())
	s.PrefetchLists(refs) // looked at just now: nothing asked
	time.Sleep(50 * time.Millisecond)
	if r, n := s.ListsResident(refs); r*2 >= n {
		t.Fatalf("list heads resident at once (%d of %d bytes): the recheck interval was not kept", r, n)
	}
	s.SetListsCheck(time.Time{})
	waits := DiskWaits()
	var asked [][2]uint64
	restore := SetAskHook(func(kind uint32, lo, hi uint64) {
		if kind == SectionPostings {
			asked = append(asked, [2]uint64{lo, hi})
		}
	})
	s.PrefetchLists(refs)
	restore()
	if DiskWaits() <= waits {
		t.Fatal("lists asked for ahead did not count as waiting for the disk")
	}
	// Every head asked for.
	for _, ref := range refs {
		if !slices.ContainsFunc(asked, func(r [2]uint64) bool { return r[0] <= ref>>2 && ref>>2 < r[1] }) {
			t.Errorf("the list head at %d was not asked for (asked %v)", ref>>2, asked)
		}
	}
	waitForResident(t, "the lists' heads after PrefetchLists",
		func() (int64, int64) { return s.ListsResident(refs) },
		func(r, n int64) bool { return r == n })
}

// TestPrefetchLookups: the dictionary blocks and postings heads that
// looking several words up reads, on a cold segment, are asked for
// together, and counted as waiting for the disk; not again within the
// recheck interval.
func TestPrefetchLookups(t *testing.T) {
	ix := openEvicted(t, 16<<20, 8<<20)
	s := ix.Segments()[0]
	var terms [][]byte
	for _, w := range []string{"error", "timeout", "user", "connection", "session", "mallory", "checksum"} {
		terms = append(terms, []byte(w))
	}
	if r, n := s.LookupsResident(terms, false); n == 0 || r*2 >= n {
		t.Skipf("dictionary blocks %d of %d bytes resident after eviction", r, n)
	}
	s.SetLookupsCheck(time.Now())
	s.PrefetchLookups(terms) // looked at just now: nothing asked
	time.Sleep(50 * time.Millisecond)
	if r, n := s.LookupsResident(terms, false); r*2 >= n {
		t.Fatalf("dictionary blocks resident at once (%d of %d bytes): the recheck interval was not kept", r, n)
	}
	s.SetLookupsCheck(time.Time{})
	waits := DiskWaits()
	asked := map[uint32]int{}
	var dictAsks [][2]uint64
	restore := SetAskHook(func(kind uint32, lo, hi uint64) {
		asked[kind]++
		if kind == SectionTermDict {
			dictAsks = append(dictAsks, [2]uint64{lo, hi})
		}
	})
	s.PrefetchLookups(terms)
	restore()
	if DiskWaits() <= waits {
		t.Fatal("lookups asked for ahead did not count as waiting for the disk")
	}
	// The blocks and the heads asked for, before the lookups read them
	// (the blocks' entries are a small section, read when it opened).
	for _, kind := range []uint32{SectionTermDict, SectionPostings} {
		if asked[kind] == 0 {
			t.Errorf("%s not asked for (asked: %v)", SectionName(kind), asked)
		}
	}
	for _, c := range s.LookupBlockChunks(terms) {
		if !slices.ContainsFunc(dictAsks, func(r [2]uint64) bool { return r[0] <= c && c < r[1] }) {
			t.Errorf("the dictionary block at %d was not asked for (asked %v)", c, dictAsks)
		}
	}
	waitForResident(t, "the dictionary blocks and postings heads after PrefetchLookups",
		func() (int64, int64) { return s.LookupsResident(terms, true) },
		func(r, n int64) bool { return r == n })
}

// TestPrefetchBlocks: a substring's candidate dictionary blocks on a cold
// segment are asked for together before they are decoded; nothing is
// asked when the first is resident.
func TestPrefetchBlocks(t *testing.T) {
	ix := openEvicted(t, 16<<20, 8<<20)
	s := ix.Segments()[0]
	n := uint32(s.NumBlocks())
	if n < 8 {
		t.Fatalf("%d dictionary blocks, want several", n)
	}
	blocks := []uint32{1, n / 3, n / 2, n - 2}
	var asked [][2]uint64
	restore := SetAskHook(func(kind uint32, lo, hi uint64) {
		if kind == SectionTermDict {
			asked = append(asked, [2]uint64{lo, hi})
		}
	})
	defer restore()
	chunks := s.BlockChunks(blocks)
	if s.DictChunkResident(chunks[0]) {
		t.Skip("the blocks were resident after eviction")
	}
	s.PrefetchBlocks(blocks)
	for _, c := range chunks {
		if !slices.ContainsFunc(asked, func(r [2]uint64) bool { return r[0] <= c && c < r[1] }) {
			t.Errorf("the dictionary block at %d was not asked for (asked %v)", c, asked)
		}
	}
	// Decoded (resident now), they are not asked for again.
	for _, b := range blocks {
		if err := s.BlockTerms(int(b), func([]byte, uint64) bool { return true }); err != nil {
			t.Fatal(err)
		}
	}
	asked = nil
	s.PrefetchBlocks(blocks)
	if len(asked) != 0 {
		t.Fatalf("resident blocks asked for again: %v", asked)
	}
}

// waitForResident waits up to 5 s for resident's bytes to be enough (prefetches
// are asynchronous).
func waitForResident(t *testing.T, what string, resident func() (r, n int64), enough func(r, n int64) bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r, n := resident()
		if enough(r, n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d bytes resident", what, r, n)
		}
	}
}

// TestMappingAfterClose: a closed mapping says so to every use (a warmer
// that outlived it must not count a region as warmed), an empty file's
// mapping has nothing to do, and closing twice is a no-op.
func TestMappingAfterClose(t *testing.T) {
	dir := t.TempDir()
	full, empty := filepath.Join(dir, "full"), filepath.Join(dir, "empty")
	if err := os.WriteFile(full, make([]byte, 3*os.Getpagesize()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for _, tc := range []struct {
		path string
		want error
	}{{full, ErrClosed}, {empty, nil}} {
		m, err := Map(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if err := m.Prefetch(0, 1, buf); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: Prefetch after Close: %v, want ErrClosed", tc.path, err)
		}
		if err := m.Advise(0, 1, 0); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: Advise after Close: %v, want ErrClosed", tc.path, err)
		}
		if _, err := m.Resident(0, 1); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: Resident after Close: %v, want ErrClosed", tc.path, err)
		}
		if err := m.Close(); err != nil {
			t.Errorf("%s: second Close: %v", tc.path, err)
		}
	}
	m, err := Map(empty)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := m.Prefetch(0, 1, buf); err != nil {
		t.Errorf("Prefetch of an empty mapping: %v", err)
	}
	if r, err := m.Resident(0, 1); r != 0 || err != nil {
		t.Errorf("Resident of an empty mapping: %d, %v", r, err)
	}
}

// skipIfResident skips a test of cold reads when eviction left most of
// what it reads in memory (a file system without a page cache to drop).
// Called as skipIfResident(t)(s.HitsResident(...)).
func skipIfResident(t *testing.T) func(resident, size int64) {
	return func(resident, size int64) {
		t.Helper()
		if resident*2 >= size {
			t.Skip("eviction left the index in memory (a file system without a page cache to drop)")
		}
	}
}
