package lang

import "testing"

// TestUnwidenPos: an offset into a widened pattern (each byte >= 0x80
// two bytes there) maps back to the byte of the pattern it lies in.
func TestUnwidenPos(t *testing.T) {
	for _, tc := range []struct {
		s    string
		w    int
		want int
	}{
		{"ab", 0, 0}, {"ab", 1, 1}, {"ab", 2, 2},
		{"é", 0, 0}, {"é", 1, 0}, {"é", 2, 1}, {"é", 3, 1}, {"é", 4, 2},
		{"a\xe9(", 1, 1}, {"a\xe9(", 3, 2}, {"a\xe9(", 4, 3},
	} {
		if got := unwidenPos(tc.s, tc.w); got != tc.want {
			t.Errorf("unwidenPos(%q, %d) = %d, want %d", tc.s, tc.w, got, tc.want)
		}
		if w := len(widen(tc.s)); tc.w > w {
			t.Fatalf("bad case %q %d", tc.s, tc.w)
		}
	}
}
