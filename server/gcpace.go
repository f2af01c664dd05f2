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
// the last collection found live before it collects again.
const gcHeadroom = 64 << 20

// gcMaxPercent is the highest GOGC percentage PaceGC sets: the runtime's
// smallest heap target (4 MiB × GOGC/100) is then gcHeadroom.
const gcMaxPercent = 100 * gcHeadroom / (4 << 20)

// pacer is the one pacing goroutine of the process, shared by every
// PaceGC caller until the last one stops (tests run serve more than once
// in a process, and two pacers would each take the other's percentage
// for their own).
var pacer struct {
	sync.Mutex
	users int
	orig  int
	done  chan struct{}
	wg    sync.WaitGroup
}

// PaceGC keeps the collector's heap target about gcHeadroom above the
// live heap, and at least twice it as GOGC=100 does, until stop, which
// puts the percentage back. A server's live heap is a few MB (the index is
// mapped, not on the heap) while an uncached page of 100 hits allocates
// tens of KB: at the default pace the runtime collected every 4 MB, 125
// times a second under load, and uncached word pages ran 16-28% slower
// (wrk, 64 connections: mallory 9,500-10,500 pages a second against
// 12,000 paced; README, The service). The percentage follows the live
// heap once a second, changing when it would move by more than an eighth;
// a GOMEMLIMIT still caps the heap (the percentage then drifts to its
// highest, harmlessly). A GOGC set in the environment is the user's
// choice and is left alone.
func PaceGC() (stop func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	pacer.Lock()
	defer pacer.Unlock()
	if pacer.users++; pacer.users == 1 {
		pacer.orig = debug.SetGCPercent(100)
		pacer.done = make(chan struct{})
		pacer.wg.Add(1)
		go pace(pacer.done)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			pacer.Lock()
			defer pacer.Unlock()
			if pacer.users--; pacer.users == 0 {
				close(pacer.done)
				pacer.wg.Wait()
				debug.SetGCPercent(pacer.orig)
				promtext.ReportGCPercent(0)
			}
		})
	}
}

func pace(done <-chan struct{}) {
	defer pacer.wg.Done()
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
}

// repaceGC sets the percentage for the live heap now, estimated from the
// target the last collection set with percentage cur (target over 1 +
// cur/100: the heap it marked, or more when the target was the runtime's
// minimum). One ReadMemStats a second (a pause of microseconds) spares
// serve's every process the runtime/metrics package.
func repaceGC(cur int) int {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.NextGC > 1<<50 { // (collection off: no target to go by)
		return cur
	}
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
