package query

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

// TestReadLinesLongLines: lines longer than many reads come back whole,
// at their offsets, with the lines around them, whether the long line is
// passed on or only skipped, and as the unterminated last line.
func TestReadLinesLongLines(t *testing.T) {
	long := strings.Repeat("x", 1<<20+7) // 16 reads and a bit
	lines := []string{"one", long, "three", strings.Repeat("y", 200_000), "five", "z" + long}
	content := strings.Join(lines, "\n") // the last line has no '\\n'
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(logs, 0o755))
	must(t, os.WriteFile(filepath.Join(logs, "a.log"), []byte(content), 0o644))
	_, err := indexer.Update(context.Background(), indexer.Options{Dir: filepath.Join(dir, "idx"), Roots: []string{logs}, Logger: zerolog.Nop()})
	must(t, err)
	ix, err := mmapstore.Open(filepath.Join(dir, "idx"))
	must(t, err)
	s := NewSearcher(ix, []string{"logs"})
	defer func() { s.Close(); ix.Close() }()
	f := s.Files()[0]
	offsets := make([]int64, len(lines))
	for i := 1; i < len(lines); i++ {
		offsets[i] = offsets[i-1] + int64(len(lines[i-1])) + 1
	}
	for _, c := range []struct{ from, to int64 }{{1, 6}, {2, 2}, {3, 3}, {1, 3}, {3, 5}, {4, 4}, {5, 6}, {6, 6}, {6, 9}} {
		var got []Line
		must(t, s.ReadLines(context.Background(), f, c.from, c.to, func(l Line) error {
			l.Text = append([]byte(nil), l.Text...)
			got = append(got, l)
			return nil
		}))
		want := min(c.to, int64(len(lines))) - c.from + 1
		if int64(len(got)) != want {
			t.Fatalf("lines %d-%d: got %d lines, want %d", c.from, c.to, len(got), want)
		}
		for i, l := range got {
			no := c.from + int64(i)
			if l.No != no || l.Offset != offsets[no-1] || string(l.Text) != lines[no-1] {
				t.Fatalf("lines %d-%d: line %d (offset %d, %d bytes), want line %d (offset %d, %d bytes)",
					c.from, c.to, l.No, l.Offset, len(l.Text), no, offsets[no-1], len(lines[no-1]))
			}
		}
	}
}
