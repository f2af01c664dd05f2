package server

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/logdex/logdex/server/internal/promtext"
)

// gcHeadroom is how far a serving process lets its Go heap grow past what
// the last collection found live before it collects again, at least.
const gcHeadroom = 64 << 20

// gcMaxPercent is the highest GOGC percentage PaceGC sets: the runtime's
// smallest heap target (4 MiB × GOGC/100) is then gcHeadroom.
const gcMaxPercent = 100 * gcHeadroom / (4 << 20)

// PaceGC keeps the collector's heap target at least gcHeadroom above the
// live heap, and at least twice it as GOGC=100 does, until stop, which
// puts the percentage back. A server's live heap is a few MB (the index is
// mapped, not on the heap) while an uncached page of 100 hits allocates
// about 70 KB: at the default pace the runtime collected every 4 MB, 125
// times a second under load, and an uncached word page cost 18-20% more
// CPU (wrk, 64 connections: 9,500 pages a second against 11,400 with the
// target raised; README, Performance). A GOGC set in the environment is
// the user's choice and is left alone.
func PaceGC() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	orig := debug.SetGCPercent(100)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		pct := 100
		for {
			pct = repaceGC(pct)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		debug.SetGCPercent(orig)
		promtext.ReportGCPercent(0)
	}
}

// repaceGC sets the percentage for the live heap now, the heap the last
// collection marked (or more, when the target was the runtime's minimum):
// its target over 1 + cur/100. One ReadMemStats a second (a pause of
// microseconds) spares serve's every process the runtime/metrics package.
func repaceGC(cur int) int {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	next := gcPercentFor(ms.NextGC * 100 / uint64(100+cur))
	if d := next - cur; d*8 > cur || -d*8 > cur { // (a change of more than an eighth)
		debug.SetGCPercent(next)
		promtext.ReportGCPercent(next)
		return next
	}
	return cur
}

// gcPercentFor is the GOGC percentage whose target is gcHeadroom above
// live bytes, and at least twice them.
func gcPercentFor(live uint64) int {
	if live == 0 {
		return gcMaxPercent
	}
	return int(min(max(100*gcHeadroom/live, 100), gcMaxPercent))
}
