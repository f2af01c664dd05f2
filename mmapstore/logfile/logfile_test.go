package logfile

import (
	"strings"
	"testing"
)

func TestEndLinesAtNUL(t *testing.T) {
	for _, c := range []struct {
		in, out string
		first   int
	}{
		{"", "", -1},
		{"no nul\n", "no nul\n", -1},
		{"a\x00b\x00\x00c\n", "a\nb\n\nc\n", 1},
		{"\x00", "\n", 0},
	} {
		b := []byte(c.in)
		if got := EndLinesAtNUL(b); got != c.first || string(b) != c.out {
			t.Errorf("%q: %d %q, want %d %q", c.in, got, b, c.first, c.out)
		}
	}
}

// BenchmarkEndLinesAtNUL is the cost of looking for NULs in a search's
// 256 KiB scan block of log text (none found), the common case.
func BenchmarkEndLinesAtNUL(b *testing.B) {
	line := "2026-10-10T04:23:27.304Z ERROR [nio-8080-exec-118] ErrorHandler - req=fd74a8f356e1c5c8 unhandled exception\n"
	block := []byte(strings.Repeat(line, (256<<10)/len(line)))
	b.SetBytes(int64(len(block)))
	for b.Loop() {
		if EndLinesAtNUL(block) >= 0 {
			b.Fatal("found a NUL")
		}
	}
}
