package indexer_test

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
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// segmentFiles lists the segment files in an index directory.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	must(t, err)
	return m
}

// TestManifestReadErrorKeepsIndex: a manifest that cannot be read for a
// reason other than damage or another format version (here: EISDIR, as
// EIO or EACCES would be) fails the run and leaves the index alone: no
// rebuild, no segment written or collected. Once readable, nothing needs
// indexing.
func TestManifestReadErrorKeepsIndex(t *testing.T) {
	root, dir := logTree(t, map[string]string{"a.log": "one\ntwo\n"})
	update(t, dir, root)
	segs := segmentFiles(t, dir)
	man := filepath.Join(dir, mmapstore.ManifestName)
	must(t, os.Rename(man, man+".aside"))
	must(t, os.Mkdir(man, 0o755))
	if _, err := indexer.Update(t.Context(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop()}); err == nil {
		t.Fatal("a run over an unreadable manifest succeeded")
	}
	if got := segmentFiles(t, dir); !slices.Equal(got, segs) {
		t.Fatalf("segments %v became %v", segs, got)
	}
	must(t, os.Remove(man))
	must(t, os.Rename(man+".aside", man))
	if res := update(t, dir, root); res.Changed || res.NewSegs != 0 {
		t.Fatalf("after the manifest came back: %+v", res)
	}
}

// TestMismatchedSegmentRebuilt: a segment that does not match its manifest
// is dropped by the next run and its files indexed again; the index then
// opens clean and answers every line.
func TestMismatchedSegmentRebuilt(t *testing.T) {
	root, dir := logTree(t, map[string]string{"a.log": "one\ntwo\n", "b.log": "three\n"})
	update(t, dir, root)
	m, err := mmapstore.ReadManifest(dir)
	must(t, err)
	m.Files[0].Lines++ // the segment holds fewer lines of it than the record says
	must(t, mmapstore.PublishManifest(dir, m))
	ix, err := mmapstore.Open(dir)
	must(t, err)
	if len(ix.Damaged()) != 1 {
		t.Fatalf("damaged %v", ix.Damaged())
	}
	ix.Close()
	if res := update(t, dir, root); !res.Changed || res.NewSegs != 1 {
		t.Fatalf("repair run: %+v", res)
	}
	got, st := searchAll(t, dir, root)
	if len(got) != 3 || len(st.Warnings) != 0 {
		t.Fatalf("after repair: %+v %v", got, st.Warnings)
	}
	ix, err = mmapstore.Open(dir)
	must(t, err)
	defer ix.Close()
	if len(ix.Damaged()) != 0 {
		t.Fatalf("still damaged: %v", ix.Damaged())
	}
}

// indexSmallSegments indexes n files of 2,000 lines each into segments of
// 32 KiB, returning the logs' root, the index and the options used.
func indexSmallSegments(t *testing.T, n int) (root, dir string, opt indexer.Options) {
	t.Helper()
	root, dir = t.TempDir(), t.TempDir()
	for i := range n {
		write(t, filepath.Join(root, fmt.Sprintf("f%d.log", i)), strings.Repeat(fmt.Sprintf("line of file %d zqq\n", i), 2000), os.O_TRUNC)
	}
	opt = indexer.Options{Dir: dir, Roots: []string{root}, SegmentBytes: 32 << 10, Logger: zerolog.Nop()}
	_, err := indexer.Update(context.Background(), opt)
	must(t, err)
	return root, dir, opt
}

// TestQuarantineDuringRun: a segment a reader finds damaged while a run
// goes on (after the run read the quarantine list) stays listed after the
// run publishes, and the next run rebuilds it (the list was removed
// whole, and the damage then reported until a restart).
func TestQuarantineDuringRun(t *testing.T) {
	root, dir, opt := indexSmallSegments(t, 4)
	m, err := mmapstore.ReadManifest(dir)
	must(t, err)
	victim := m.Segments[0].Name
	// A run with work to do, during which a reader quarantines victim.
	write(t, filepath.Join(root, "f0.log"), "one more line zqq\n", os.O_APPEND)
	var once sync.Once
	opt.Progress = func(int64, int64) {
		once.Do(func() {
			f, err := os.OpenFile(filepath.Join(dir, mmapstore.QuarantineName), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			must(t, err)
			fmt.Fprintln(f, victim)
			f.Close()
		})
	}
	res, err := indexer.Update(context.Background(), opt)
	must(t, err)
	if !res.Changed {
		t.Fatal("the run published nothing")
	}
	if q := mmapstore.ReadQuarantine(dir); len(q) != 1 || q[0] != victim {
		t.Fatalf("quarantine after the run: %v, want %s still listed", q, victim)
	}
	opt.Progress = nil
	_, err = indexer.Update(context.Background(), opt)
	must(t, err)
	m, err = mmapstore.ReadManifest(dir)
	must(t, err)
	for _, s := range m.Segments {
		if s.Name == victim {
			t.Fatalf("%s still in the index after the next run", victim)
		}
	}
	// The list may still name it: a name no segment has is ignored, and
	// nothing is rebuilt again.
	if res, err := indexer.Update(context.Background(), opt); err != nil || res.Changed {
		t.Fatalf("the run after the rebuild: %+v, %v; want nothing to do", res, err)
	}
	if got, _ := searchAll(t, dir, root); len(got) != 8001 {
		t.Fatalf("%d lines after the rebuild, want 8001", len(got))
	}
}

// TestPublishFailedLeavesNoSegments: a run whose manifest cannot be
// written (here its temp name is taken by a directory; a full disk does
// the same) removes the segments it wrote: nothing names them, and runs
// failing one after another each left a run's worth behind.
func TestPublishFailedLeavesNoSegments(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, "a.log"), strings.Repeat("first run zqp\n", 1000), os.O_TRUNC)
	update(t, dir, root)
	before, _ := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	write(t, filepath.Join(root, "b.log"), strings.Repeat("second run zqp\n", 1000), os.O_TRUNC)
	blocker := filepath.Join(dir, mmapstore.ManifestName+".tmp")
	must(t, os.MkdirAll(filepath.Join(blocker, "x"), 0o755))
	_, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop()})
	if !errors.Is(err, mmapstore.ErrNotPublished) {
		t.Fatalf("run: %v, want ErrNotPublished", err)
	}
	if after, _ := filepath.Glob(filepath.Join(dir, "seg-*.ldx")); len(after) != len(before) {
		t.Fatalf("segments after the failed publish: %v, want the %d before it", after, len(before))
	}
	must(t, os.RemoveAll(blocker))
	update(t, dir, root)
	if got, _ := searchAll(t, dir, root); len(got) != 2000 {
		t.Fatalf("%d lines once published, want 2000", len(got))
	}
}

// TestLockWaitCancelled: a run waiting for another process's index lock
// gives up when its context ends (serve shutting down while a long
// `logdex index` holds the lock), and takes the lock once it is free.
func TestLockWaitCancelled(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, "a.log"), "one line zql\n", os.O_TRUNC)
	update(t, dir, root)
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_RDWR, 0)
	must(t, err)
	must(t, unix.Flock(int(f.Fd()), unix.LOCK_EX)) // another process's run
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = indexer.Update(ctx, indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop()})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("run waiting for the lock: %v after %v, want the context's end", err, time.Since(t0))
	}
	done := make(chan error, 1)
	go func() {
		_, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop()})
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	f.Close() // the other run ends
	select {
	case err := <-done:
		must(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the run did not take the lock once it was free")
	}
}

// TestUpdateWithOpenIndex: a run given the index its caller holds open
// checks that index's segments as they are (a segment file moved away
// meanwhile is not looked for), leaves them open for the caller, and still
// drops one found damaged while in use; without it, the moved file is a
// damaged segment, rebuilt from the logs.
func TestUpdateWithOpenIndex(t *testing.T) {
	root, dir, opt := indexSmallSegments(t, 3)
	ix, err := mmapstore.Open(dir)
	must(t, err)
	defer ix.Close()
	segs := ix.Segments()
	if len(segs) < 2 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	// The caller's mapping stays valid with its file moved away.
	victim := segs[0].Name()
	must(t, os.Rename(victim, victim+".away"))
	held := opt
	held.Open = ix
	res, err := indexer.Update(context.Background(), held)
	must(t, err)
	if res.Changed {
		t.Fatal("a run given the open index re-opened a segment file")
	}
	for _, s := range segs {
		if _, err := s.Locate(0); err != nil {
			t.Fatalf("segment %s after the run: %v (closed by the run?)", s.Name(), err)
		}
	}
	must(t, os.Rename(victim+".away", victim))

	// Found damaged while in use: dropped and rebuilt, the caller's
	// segment left for the caller to close.
	f, err := os.OpenFile(filepath.Join(dir, mmapstore.QuarantineName), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	must(t, err)
	fmt.Fprintln(f, filepath.Base(segs[1].Name()))
	f.Close()
	res, err = indexer.Update(context.Background(), held)
	must(t, err)
	if !res.Changed {
		t.Fatal("a quarantined segment of the open index was kept")
	}
	if _, err := segs[1].Locate(0); err != nil {
		t.Fatalf("the quarantined segment was closed by the run: %v", err)
	}
	if got, _ := searchAll(t, dir, root); len(got) != 6000 {
		t.Fatalf("%d lines after the rebuild, want 6000", len(got))
	}

	// Without the open index, a segment file gone is damage: rebuilt.
	m, err := mmapstore.ReadManifest(dir)
	must(t, err)
	gone := filepath.Join(dir, m.Segments[0].Name)
	must(t, os.Rename(gone, gone+".away"))
	defer os.Rename(gone+".away", gone)
	if res, err := indexer.Update(context.Background(), opt); err != nil || !res.Changed {
		t.Fatalf("a run without the open index, a segment file gone: %+v, %v; want a rebuild", res, err)
	}
}
