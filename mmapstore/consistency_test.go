package mmapstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

// buildIndex indexes n small files (lines tagged with tag) in segments of
// about one file each, in two runs (so files span segments), and returns
// the index directory.
func buildIndex(t *testing.T, tag string, n int) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "logs")
	dir := filepath.Join(t.TempDir(), "index")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(from, to int) {
		for i := range n {
			f, err := os.OpenFile(filepath.Join(root, fmt.Sprintf("f%d.log", i)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			for l := from; l < to; l++ {
				fmt.Fprintf(f, "%s file %d line %d some words to index\n", tag, i, l)
			}
			f.Close()
		}
		if _, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, SegmentBytes: 2 << 10, Logger: zerolog.Nop()}); err != nil {
			t.Fatal(err)
		}
	}
	write(0, 40)
	write(40, 50)
	return dir
}

// TestOpenChecksSegmentsAgainstManifest: a segment that does not match the
// manifest listing it (another run's or another index's segment under its
// name, or a manifest whose records disagree with it) is damaged, reported
// in Damaged and never used; what legitimately differs (a rotated file's
// new path, device, inode, mtime) is not a mismatch.
func TestOpenChecksSegmentsAgainstManifest(t *testing.T) {
	cases := []struct {
		name    string
		change  func(t *testing.T, dir string, m *mmapstore.Manifest)
		damaged bool
	}{
		{"as built", func(*testing.T, string, *mmapstore.Manifest) {}, false},
		{"renamed, other inode and mtime", func(_ *testing.T, _ string, m *mmapstore.Manifest) {
			for i := range m.Files {
				f := &m.Files[i]
				f.Path, f.Dev, f.Ino, f.MTime = f.Path+".1", f.Dev+1, f.Ino+7, f.MTime+1e9
			}
		}, false},
		{"line count of a segment", func(_ *testing.T, _ string, m *mmapstore.Manifest) { m.Segments[0].Lines++ }, true},
		{"size of a segment", func(_ *testing.T, _ string, m *mmapstore.Manifest) { m.Segments[1].Size-- }, true},
		{"file ids of a segment", func(_ *testing.T, _ string, m *mmapstore.Manifest) {
			m.Segments[0].FileIDs = append(m.Segments[0].FileIDs, 999)
		}, true},
		{"lines of a file", func(_ *testing.T, _ string, m *mmapstore.Manifest) { m.Files[1].Lines-- }, true},
		{"indexed bytes of a file", func(_ *testing.T, _ string, m *mmapstore.Manifest) { m.Files[2].Indexed-- }, true},
		{"fingerprint of a file", func(_ *testing.T, _ string, m *mmapstore.Manifest) { m.Files[0].FP++ }, true},
		{"another index's segment under the name", func(t *testing.T, dir string, m *mmapstore.Manifest) {
			other := buildIndex(t, "other", 3)
			om, err := mmapstore.ReadManifest(other)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(other, om.Segments[0].Name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, m.Segments[0].Name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := buildIndex(t, "mine", 3)
			m, err := mmapstore.ReadManifest(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Segments) < 3 {
				t.Fatalf("want several segments, got %d", len(m.Segments))
			}
			c.change(t, dir, m)
			if err := mmapstore.PublishManifest(dir, m); err != nil {
				t.Fatal(err)
			}
			ix, err := mmapstore.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			damaged := ix.Damaged()
			if !c.damaged {
				if len(damaged) != 0 || len(ix.Segments()) != len(m.Segments) {
					t.Fatalf("damaged %v, %d of %d segments open", damaged, len(ix.Segments()), len(m.Segments))
				}
				return
			}
			var me *mmapstore.MismatchError
			if len(damaged) == 0 || !errors.As(damaged[0], &me) || !errors.Is(damaged[0], mmapstore.ErrCorrupt) {
				t.Fatalf("damaged %v, want a mismatch", damaged)
			}
			if len(ix.Segments())+len(damaged) != len(m.Segments) {
				t.Fatalf("%d open and %d damaged of %d segments", len(ix.Segments()), len(damaged), len(m.Segments))
			}
			for _, s := range ix.Segments() {
				if filepath.Base(s.Name()) == me.Segment {
					t.Fatalf("damaged segment %s still used", me.Segment)
				}
			}
		})
	}
}
