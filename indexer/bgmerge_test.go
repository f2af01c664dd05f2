package indexer_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query"
	"github.com/rs/zerolog"
)

// liveLogs appends numbered lines to a few logs, as live runs see them.
type liveLogs struct {
	root string
	n    int
}

func (l *liveLogs) append(t *testing.T, name string, lines int) {
	t.Helper()
	var b strings.Builder
	for range lines {
		l.n++
		fmt.Fprintf(&b, "2026-11-30T10:%02d:%02dZ INFO bgmerge seq%06d in %s\n", l.n/60%60, l.n%60, l.n, name)
	}
	write(t, filepath.Join(l.root, name), b.String(), os.O_APPEND)
}

// liveUpdate is a serve live run: index and publish, no merging.
func liveUpdate(t *testing.T, dir, root string) *indexer.Result {
	t.Helper()
	res, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop(), MergeLater: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// verifyIndex checks the index in dir with mmapstore's consistency check,
// that it holds no merge temporaries or unlisted segments, and that it
// answers every line under root once, as grep reads them.
func verifyIndex(t *testing.T, step, dir, root string) {
	t.Helper()
	m, err := mmapstore.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	segs := make([]*mmapstore.Segment, len(m.Segments))
	listed := map[string]bool{}
	for i, ref := range m.Segments {
		listed[ref.Name] = true
		if segs[i], err = mmapstore.OpenSegment(filepath.Join(dir, ref.Name)); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		defer segs[i].Close()
	}
	for i, err := range mmapstore.CheckSegments(m, segs) {
		if err != nil {
			t.Fatalf("%s: segment %s: %v", step, m.Segments[i].Name, err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "merge-") || strings.HasPrefix(n, "seg-") && !listed[n] || strings.HasSuffix(n, ".tmp") {
			t.Errorf("%s: stray file %s in the index directory", step, n)
		}
	}
	got, _ := searchAll(t, dir, root)
	same(t, step, got, fileLines(t, root))
}

// smallSegments builds an index of many small segments (one per live
// run), enough for merges to be due.
func smallSegments(t *testing.T) (l *liveLogs, dir string) {
	l = &liveLogs{root: t.TempDir()}
	dir = t.TempDir()
	for run := range 12 {
		for _, name := range []string{"a.log", "b.log", "c.log"} {
			l.append(t, name, 20+run)
		}
		if res := liveUpdate(t, dir, l.root); run >= 9 && !res.MergeDue {
			t.Fatalf("run %d: %d segments and no merge due", run, res.Segments)
		}
	}
	return l, dir
}

// TestBackgroundMergeInterleaved changes the logs and indexes them (live
// runs, which take the index lock the merge does not hold) between a
// background merge's rewrite and its publish, and checks the merge
// publishes when that is safe, is abandoned when its inputs are gone, and
// leaves a sound index answering every line once either way.
func TestBackgroundMergeInterleaved(t *testing.T) {
	truncateB := func(t *testing.T, l *liveLogs, dir string) {
		must(t, os.Truncate(filepath.Join(l.root, "b.log"), 0))
		l.append(t, "b.log", 3)
	}
	tests := []struct {
		name      string
		meanwhile func(t *testing.T, l *liveLogs, dir string)
		published bool
		// beforeRead, when set, runs before the rewrite reads the logs
		beforeRead func(t *testing.T, l *liveLogs, dir string)
	}{
		{"nothing", func(*testing.T, *liveLogs, string) {}, true, nil},
		{"append", func(t *testing.T, l *liveLogs, dir string) {
			l.append(t, "a.log", 30)
			l.append(t, "d.log", 5)
			liveUpdate(t, dir, l.root)
		}, true, nil},
		{"rename", func(t *testing.T, l *liveLogs, dir string) {
			must(t, os.Rename(filepath.Join(l.root, "a.log"), filepath.Join(l.root, "a.log.1")))
			l.append(t, "a.log", 7)
			liveUpdate(t, dir, l.root)
		}, true, nil},
		{"truncate", func(t *testing.T, l *liveLogs, dir string) {
			must(t, os.Truncate(filepath.Join(l.root, "b.log"), 0))
			l.append(t, "b.log", 3)
			liveUpdate(t, dir, l.root)
		}, true, nil},
		{"delete", func(t *testing.T, l *liveLogs, dir string) {
			must(t, os.Remove(filepath.Join(l.root, "c.log")))
			liveUpdate(t, dir, l.root)
		}, true, nil},
		{"truncate unseen", func(t *testing.T, l *liveLogs, dir string) {
			// The index learns of it after the merge: the next run
			// retires the file's lines, merged or not.
			must(t, os.Truncate(filepath.Join(l.root, "b.log"), 0))
			l.append(t, "b.log", 4)
		}, true, nil},
		{"rebuilt", func(t *testing.T, l *liveLogs, dir string) {
			// A time zone change rebuilds the index: the merge's inputs
			// are gone.
			loc := time.FixedZone("X", 3600)
			if _, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{l.root}, Logger: zerolog.Nop(), MergeLater: true, Location: loc}); err != nil {
				t.Fatal(err)
			}
		}, false, nil},
		{"merged inline", func(t *testing.T, l *liveLogs, dir string) {
			// `logdex index` merges at the end of its run: the same
			// segments, merged first.
			update(t, dir, l.root)
		}, false, nil},
		// A file truncated before the rewrite reads it is left out of the
		// outputs: published once a live run retired it, else abandoned.
		{"truncated before the read, retired", func(t *testing.T, l *liveLogs, dir string) {
			liveUpdate(t, dir, l.root)
		}, true, truncateB},
		{"truncated before the read, not retired", func(*testing.T, *liveLogs, string) {}, false, truncateB},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, dir := smallSegments(t)
			before, err := mmapstore.ReadManifest(dir)
			must(t, err)
			calls := 0
			defer indexer.SetMergeHook(func(phase string) {
				switch {
				case phase == "chosen" && tc.beforeRead != nil:
					tc.beforeRead(t, l, dir)
				case phase == "rewritten":
					if calls++; calls == 1 {
						tc.meanwhile(t, l, dir)
					}
				}
			})()
			res, err := indexer.Merge(context.Background(), indexer.Options{Dir: dir, Logger: zerolog.Nop()})
			must(t, err)
			if calls == 0 {
				t.Fatalf("no merge was due in %d segments", len(before.Segments))
			}
			if tc.published != (res.Merged > 0) {
				t.Fatalf("merged %d segments; want published %v", res.Merged, tc.published)
			}
			verifyIndex(t, "after the merge", dir, l.root)
			liveUpdate(t, dir, l.root)
			verifyIndex(t, "after the next run", dir, l.root)
		})
	}
}

// TestBackgroundMergeCancelled: a merge cancelled between its rewrite and
// its publish leaves the index as it was and no file behind; a crashed
// merge's temporaries are removed by the next merge or run, but a run
// leaves those of a merge in progress alone.
func TestBackgroundMergeCancelled(t *testing.T) {
	l, dir := smallSegments(t)
	before, err := mmapstore.ReadManifest(dir)
	must(t, err)
	stale := filepath.Join(dir, "merge-00000000000000aa.ldx")
	write(t, stale, "left by a crash", os.O_TRUNC)
	write(t, stale+".tmp", "left by a crash", os.O_TRUNC)
	writing := filepath.Join(dir, "merge-00000000000000bb.ldx.tmp")
	ctx, cancel := context.WithCancel(context.Background())
	defer indexer.SetMergeHook(func(phase string) {
		if phase != "rewritten" {
			return
		}
		for _, p := range []string{stale, stale + ".tmp"} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("the merge left a dead merge's %s", filepath.Base(p))
			}
		}
		write(t, writing, "a merge's output being written", os.O_TRUNC)
		liveUpdate(t, dir, l.root)
		if _, err := os.Stat(writing); err != nil {
			t.Errorf("a run removed a running merge's temporary: %v", err)
		}
		cancel()
	})()
	_, err = indexer.Merge(ctx, indexer.Options{Dir: dir, Logger: zerolog.Nop()})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Merge: %v, want cancelled", err)
	}
	after, err := mmapstore.ReadManifest(dir)
	must(t, err)
	if after.Generation != before.Generation {
		t.Fatalf("generation %d to %d: a cancelled merge published", before.Generation, after.Generation)
	}
	// The merge that wrote it is gone (killed, as it were): the next run
	// removes it.
	liveUpdate(t, dir, l.root)
	verifyIndex(t, "cancelled", dir, l.root)
}

// TestBackgroundMergeConcurrent runs background merges in a loop while
// logs are appended to, rotated by rename, truncated and deleted, and
// live runs index them; the index stays sound and, in the end, answers
// every line once.
func TestBackgroundMergeConcurrent(t *testing.T) {
	rounds := 60
	if os.Getenv("LOGDEX_LONG") != "" {
		rounds = 600
	}
	r := rand.New(rand.NewPCG(testSeed(), 31))
	l := &liveLogs{root: t.TempDir()}
	dir := t.TempDir()
	names := []string{"a.log", "b.log", "c.log", "d.log"}
	for _, name := range names {
		l.append(t, name, 10)
	}
	liveUpdate(t, dir, l.root)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var merged, merges int
	// Held by a merge, and by a check of the index: a check without the
	// index lock must not race with a publish collecting segments.
	var checking sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			checking.Lock()
			res, err := indexer.Merge(context.Background(), indexer.Options{Dir: dir, SegmentBytes: 4 << 10, Logger: zerolog.Nop()})
			checking.Unlock()
			if err != nil {
				t.Error(err)
				return
			}
			merged += res.Merged
			merges++
			time.Sleep(time.Millisecond)
		}
	}()
	rotated := 0
	for round := range rounds {
		name := names[r.IntN(len(names))]
		switch k := r.IntN(20); {
		case k == 0:
			rotated++
			must(t, os.Rename(filepath.Join(l.root, name), filepath.Join(l.root, fmt.Sprintf("%s.%d", name, rotated))))
		case k == 1:
			must(t, os.Truncate(filepath.Join(l.root, name), 0))
		case k == 2 && rotated > 0:
			os.Remove(filepath.Join(l.root, fmt.Sprintf("%s.%d", names[r.IntN(len(names))], 1+r.IntN(rotated))))
		}
		for _, name := range names {
			l.append(t, name, 1+r.IntN(30))
		}
		liveUpdate(t, dir, l.root)
		if round%20 == 19 {
			checking.Lock()
			verifyIndex(t, fmt.Sprintf("round %d", round), dir, l.root)
			checking.Unlock()
		}
	}
	close(stop)
	wg.Wait()
	if merged == 0 {
		t.Fatalf("%d background merges merged nothing", merges)
	}
	liveUpdate(t, dir, l.root)
	verifyIndex(t, "final", dir, l.root)
	t.Logf("%d rounds, %d merge calls merged %d segments", rounds, merges, merged)
}

// TestMergeGenerationAddsNoLines: a generation that only merged holds no
// new line for a live tail (query.Searcher.Delta against the one before).
func TestMergeGenerationAddsNoLines(t *testing.T) {
	_, dir := smallSegments(t)
	prev, err := mmapstore.Open(dir)
	must(t, err)
	defer prev.Close()
	res, err := indexer.Merge(context.Background(), indexer.Options{Dir: dir, Logger: zerolog.Nop()})
	must(t, err)
	if res.Merged == 0 {
		t.Fatal("nothing merged")
	}
	ix, err := mmapstore.Open(dir)
	must(t, err)
	defer ix.Close()
	if ix.Generation() == prev.Generation() {
		t.Fatal("the merge published no new generation")
	}
	s := query.NewSearcher(ix, []string{"logs"})
	defer s.Close()
	if d := s.Delta(prev, nil); len(d.Lines) > 0 || len(d.Copies) > 0 {
		t.Fatalf("a merge's generation adds %v (copies %v)", d.Lines, d.Copies)
	}
}
