package server

import (
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
// a small one and one of 256 MiB, and PaceGC's stop puts it back.
func TestRepaceGC(t *testing.T) {
	t.Setenv("GOGC", "") // (unset: PaceGC leaves a GOGC set alone)
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	runtime.GC()
	if got := repaceGC(100); got != gcMaxPercent {
		t.Errorf("small heap: %d, want %d", got, gcMaxPercent)
	}
	big := make([]byte, 256<<20)
	runtime.GC()
	if got := repaceGC(gcMaxPercent); got != 100 {
		t.Errorf("256 MiB live: %d, want 100", got)
	}
	runtime.KeepAlive(big)
	stop := PaceGC()
	stop()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("after stop: %d, want 100", got)
	}
}
