package mmapstore

import (
	"math"
	"testing"
)

// TestLineFits: a line's place, decoded from untrusted bytes, is checked
// with sums that cannot overflow (a wrapped sum let a line of 2^63 bytes
// through, and readers allocate a line's length).
func TestLineFits(t *testing.T) {
	sp := &Span{StartOffset: 100, EndOffset: 1000}
	for _, tc := range []struct {
		name    string
		off, n  int64
		maxLine uint64
		want    bool
	}{
		{"inside", 100, 900, 0, true},
		{"last byte", 999, 1, 0, true},
		{"past the end", 999, 2, 0, false},
		{"empty", 500, 0, 0, false},
		{"before the span", 99, 1, 0, false},
		{"after the span", 1001, 1, 0, false},
		{"wrapping length", 100, math.MaxInt64 - 50, 0, false},
		{"negative length", 100, -1, 0, false},
		{"longer than the longest line", 100, 65, 64, false},
		{"the longest line", 100, 64, 64, true},
	} {
		s := &Segment{maxLineLen: tc.maxLine}
		if got := s.lineFits(sp, tc.off, tc.n); got != tc.want {
			t.Errorf("%s: lineFits(%d, %d) = %v, want %v", tc.name, tc.off, tc.n, got, tc.want)
		}
	}
}
