package scan

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestBytewise: lines with a byte >= 0x80 are matched byte by byte (as
// grep in the C locale), ASCII lines by the UTF-8 matcher; buffer scans,
// counts and match offsets agree with matching line by line, and a scan
// stops when told to.
func TestBytewise(t *testing.T) {
	// "a..b": two bytes between a and b. Widened: a, two runes, b.
	m, err := NewBytewise(`a..b`)
	if err != nil {
		t.Fatal(err)
	}
	lines := [][]byte{
		[]byte("xa\xc3\xa8by"), // aèb: è is two bytes
		[]byte("axxb"),
		[]byte("axb"),
		[]byte("a\xc3b"), // one stray byte
		[]byte("\xff\xfe a\xffzb"),
		[]byte("plain ascii"),
	}
	want := []bool{true, true, false, false, true, false}
	for i, l := range lines {
		if got := m.Match(l); got != want[i] {
			t.Errorf("Match(%q) = %v, want %v", l, got, want[i])
		}
	}
	if got := m.AppendMatches(nil, lines[0]); !slices.Equal(got, [][2]int{{1, 5}}) {
		t.Errorf("AppendMatches(%q) = %v, want [[1 5]] (byte offsets of the line)", lines[0], got)
	}
	if got := m.AppendMatches(nil, lines[4]); !slices.Equal(got, [][2]int{{3, 7}}) {
		t.Errorf("AppendMatches(%q) = %v, want [[3 7]]", lines[4], got)
	}
	buf := append(bytes.Join(lines, []byte("\n")), '\n')
	var starts []int
	m.ScanLines(buf, func(s, e int) bool {
		starts = append(starts, s)
		if !m.Match(buf[s:e]) {
			t.Errorf("ScanLines reported %q, which does not match", buf[s:e])
		}
		return true
	})
	var wantStarts []int
	pos := 0
	for i, l := range lines {
		if want[i] {
			wantStarts = append(wantStarts, pos)
		}
		pos += len(l) + 1
	}
	if !slices.Equal(starts, wantStarts) {
		t.Errorf("ScanLines found lines at %v, want %v", starts, wantStarts)
	}
	if n := m.CountLines(buf); n != 3 {
		t.Errorf("CountLines = %d, want 3", n)
	}
	if n := m.CountLines(buf[:len(buf)-1]); n != 3 {
		t.Errorf("CountLines without the last newline = %d, want 3", n)
	}
	calls := 0
	m.ScanLines(buf, func(int, int) bool { calls++; return false })
	if calls != 1 {
		t.Errorf("ScanLines went on after fn returned false: %d calls", calls)
	}
}

// TestIsASCII: every length up to 80 bytes, with one non-ASCII byte at
// every position or none.
func TestIsASCII(t *testing.T) {
	for n := range 81 {
		line := []byte(strings.Repeat("a", n))
		if !IsASCII(line) {
			t.Fatalf("%d ASCII bytes: not ASCII", n)
		}
		for i := range n {
			line[i] = 0x80 | byte(i)
			if IsASCII(line) {
				t.Fatalf("%d bytes, byte %d is %#x: ASCII", n, i, line[i])
			}
			line[i] = 'a'
		}
	}
}

// BenchmarkIsASCII checks a JSON log line of 500 bytes, as verifying a
// phrase's candidates does for each.
func BenchmarkIsASCII(b *testing.B) {
	line := []byte(strings.Repeat(`{"level":"error","msg":"pool exhausted"}`, 13))[:500]
	for b.Loop() {
		if !IsASCII(line) {
			b.Fatal("not ASCII")
		}
	}
}
