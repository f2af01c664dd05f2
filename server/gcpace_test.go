package server

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestGCPercentFor: the target is gcHeadroom above a small live heap and
// twice a large one, within the runtime's own bounds.
func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, gcMaxPercent},
		{1 << 20, gcMaxPercent}, // (the runtime's minimum target is then gcHeadroom)
		{4 << 20, gcMaxPercent},
		{8 << 20, 800},
		{32 << 20, 200},
		{64 << 20, 100},
		{1 << 30, 100},
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// TestRepaceGC: the percentage follows the live heap the runtime reports,
// raised for the test binary's few MB and back to 100 for 256 MiB; stop
// puts back the percentage PaceGC found, once its last caller stops.
func TestRepaceGC(t *testing.T) {
	t.Setenv("GOGC", "") // (unset: PaceGC leaves a GOGC set alone)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64)) // (a GOMEMLIMIT would lower the target)
	runtime.GC()
	if got := repaceGC(100); got <= 200 {
		t.Errorf("a heap of a few MB: percentage %d, want it raised", got)
	}
	big := make([]byte, 256<<20)
	runtime.GC()
	if got := repaceGC(gcMaxPercent); got != 100 {
		t.Errorf("256 MiB live: %d, want 100", got)
	}
	runtime.KeepAlive(big)
	big = nil
	runtime.GC()

	debug.SetGCPercent(150)
	stop1, stop2 := PaceGC(), PaceGC()
	stop1()
	stop1() // (twice: once counts)
	if pacer.users != 1 {
		t.Errorf("%d users after one of two stopped", pacer.users)
	}
	stop2()
	if got := debug.SetGCPercent(100); got != 150 {
		t.Errorf("after stop: %d, want 150", got)
	}
}
