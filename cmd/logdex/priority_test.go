package main

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestBackgroundProcs: serve adds a P per background thread (each live
// worker and the merge) only while a background job runs, keeps searches
// and live runs at one worker per CPU, and puts GOMAXPROCS back.
func TestBackgroundProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	cpus, live, bg := backgroundProcs()
	if cpus != startProcs || live != startProcs {
		t.Errorf("search workers %d, live workers %d; want %d each", cpus, live, startProcs)
	}
	want := func(what string, n int) {
		t.Helper()
		if got := runtime.GOMAXPROCS(0); got != n {
			t.Errorf("GOMAXPROCS %d %s, want %d", got, what, n)
		}
	}
	raised := cpus + live + 1 // the CPUs, the live workers and the merge
	run := bg.hold()
	want("during a live run", raised)
	merge := bg.hold()
	run()
	run() // a second release of the same hold changes nothing
	want("during a merge after the live run ended", raised)
	merge()
	want("with nothing in the background", cpus)
	bg.hold()
	bg.restore()
	want("after serve", startProcs)
}

// TestBackgroundProcsOnDemand: a live run raises GOMAXPROCS only once its
// first worker starts, once however many start, and a run that starts
// none leaves it alone.
func TestBackgroundProcsOnDemand(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	cpus, live, bg := backgroundProcs()
	defer bg.restore()
	raised := cpus + live + 1
	want := func(what string, n int) {
		t.Helper()
		if got := runtime.GOMAXPROCS(0); got != n {
			t.Errorf("GOMAXPROCS %d %s, want %d", got, what, n)
		}
	}
	_, release := bg.onDemand()
	want("before any worker started", cpus)
	release()
	want("after a run that started no worker", cpus)

	take, release := bg.onDemand()
	var wg sync.WaitGroup
	for range live {
		wg.Add(1)
		go func() { defer wg.Done(); take() }()
	}
	wg.Wait()
	want("while the run's workers run", raised)
	merge := bg.hold()
	release()
	release()
	want("during a merge after the run ended", raised)
	merge()
	want("with nothing in the background", cpus)
	take()
	want("after a take past the release", cpus)
}

// TestLiveWorkerStart: a live run after one that fell behind runs at
// normal priority; others at lowered priority.
func TestLiveWorkerStart(t *testing.T) {
	for _, tc := range []struct {
		prev    time.Duration
		lowered bool
	}{
		{0, true},
		{100 * time.Millisecond, true},
		{liveCatchUp - 1, true},
		{liveCatchUp, false},
		{5 * time.Second, false},
	} {
		if got := liveWorkerStart(tc.prev) != nil; got != tc.lowered {
			t.Errorf("after a run of %v: lowered priority %t, want %t", tc.prev, got, tc.lowered)
		}
	}
}

// TestMergeNice: merges yield (+10) until the segments pile up.
func TestMergeNice(t *testing.T) {
	for _, tc := range []struct{ segs, nice int }{{0, 10}, {9, 10}, {mergeBacklog - 1, 10}, {mergeBacklog, 0}, {100, 0}} {
		if got := mergeNice(tc.segs); got != tc.nice {
			t.Errorf("mergeNice(%d) = %d, want %d", tc.segs, got, tc.nice)
		}
	}
}
