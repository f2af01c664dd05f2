package mmapstore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLoadFile reads a small file and maps a large one, with the same
// bytes either way, and reports a missing file as os.ErrNotExist.
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		size    int
		readMax int64
	}{
		{"empty read", 0, 1 << 10},
		{"small read", 1000, 1 << 10},
		{"read at the limit", 1 << 10, 1 << 10},
		{"mapped past the limit", 5000, 1 << 10},
		{"empty mapped", 0, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "f")
			want := bytes.Repeat([]byte("0123456789abcdef"), tc.size/16+1)[:tc.size]
			if err := os.WriteFile(p, want, 0o644); err != nil {
				t.Fatal(err)
			}
			got, release, err := loadFile(p, tc.readMax)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("got %d bytes, want %d", len(got), len(want))
			}
			release()
		})
	}
	if _, _, err := loadFile(filepath.Join(dir, "missing"), 1<<10); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v, want os.ErrNotExist", err)
	}
}
