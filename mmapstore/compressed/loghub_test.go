package compressed

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/logdex/logdex/fixtures/loghub"
)

// TestLoghubSamples round-trips real logs from 16 systems through every
// tool (two of them by default).
func TestLoghubSamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(loghub.DirOrSkip(t), "*.log"))
	if len(files) == 0 {
		t.Skip("corpus is empty")
	}
	if !long {
		files = files[:min(2, len(files))]
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []compressCase{
			{"gzip", Gzip, cli("gzip", "-c")},
			{"zstd", Zstd, split(2, cli("zstd", "-q", "-c"))},
			{"bzip2", Bzip2, cli("bzip2", "-1", "-c")},
			{"xz", XZ, cli("xz", "-c", "-0", "--block-size=32KiB")},
		} {
			t.Run(filepath.Base(file)+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				comp := c.make(t, data)
				out, tab, err := index(c.kind, comp, 16<<10)
				if err != io.EOF || string(out) != string(data) {
					t.Fatalf("index: %v, %d of %d bytes", err, len(out), len(data))
				}
				checkReads(t, comp, tab, data, 8, 10)
			})
		}
	}
}
