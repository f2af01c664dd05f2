package main

import (
	"runtime"
	"testing"
	"time"
)

// TestBackgroundProcs: serve adds a P per background thread (each live
// worker and the merge), keeps searches and live runs at one worker per
// CPU, and puts GOMAXPROCS back.
func TestBackgroundProcs(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	cpus, live, restore := backgroundProcs()
	if got, want := runtime.GOMAXPROCS(0), cpus+live+1; got != want {
		t.Errorf("GOMAXPROCS %d during serve, want %d (%d CPUs + %d live workers + the merge)", got, want, cpus, live)
	}
	if cpus != startProcs || live != startProcs {
		t.Errorf("search workers %d, live workers %d; want %d each", cpus, live, startProcs)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after serve, want %d", got, before)
	}
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
