package indexer_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

// TestNonUTF8FileNames: file names are bytes. Names that are not valid
// UTF-8 (and two that JSON would both turn into the same U+FFFD string)
// are kept exactly: their lines are found under their own paths, and the
// next run sees the same files, not renames.
func TestNonUTF8FileNames(t *testing.T) {
	root := filepath.Join(t.TempDir(), "logs\xff")
	dir := filepath.Join(t.TempDir(), "index")
	must(t, os.MkdirAll(filepath.Join(root, "d\xe9"), 0o755))
	names := []string{"caf\xe9.log", "a\xfe.log", "a\xff.log", "d\xe9/x.log"}
	for _, n := range names {
		must(t, os.WriteFile(filepath.Join(root, n), []byte("line of "+n+"\n"), 0o644))
	}
	if res := update(t, dir, root); res.New != len(names) {
		t.Fatalf("first run: %+v", res)
	}
	if res := update(t, dir, root); res.Renamed != 0 || res.New != 0 || res.Deleted != 0 || res.Changed {
		t.Fatalf("second run saw changes: %+v", res)
	}
	got, _ := searchAll(t, dir, root)
	if len(got) != len(names) {
		t.Fatalf("lines %+v", got)
	}
	for _, l := range got {
		rel, err := filepath.Rel(root, l.path)
		must(t, err)
		if l.text != "line of "+rel {
			t.Fatalf("%q holds %q", l.path, l.text)
		}
		if _, err := os.Stat(l.path); err != nil {
			t.Fatalf("path %q: %v", l.path, err)
		}
	}
}

// TestNULEndsLines: a NUL byte past the first 8 KiB ends a line as '\n'
// does (grep counts a binary file's lines so), also where a large file is
// cut into several segments; the record keeps where the first NUL is.
func TestNULEndsLines(t *testing.T) {
	var sb strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	nul := sb.Len() + 3
	sb.WriteString("bin\x00ary\x00\x00")
	for i := range 3000 {
		fmt.Fprintf(&sb, "more %d\x00", i)
	}
	for i := range 3000 {
		fmt.Fprintf(&sb, "again %d\n", i)
	}
	content := sb.String()
	root, dir := logTree(t, map[string]string{"a.log": content})
	_, err := indexer.Update(t.Context(), indexer.Options{Dir: dir, Roots: []string{root}, SegmentBytes: 4 << 10, Logger: zerolog.Nop()})
	must(t, err)
	m, err := mmapstore.ReadManifest(dir)
	must(t, err)
	if len(m.Segments) < 4 || m.Files[0].NULAt != int64(nul)+1 {
		t.Fatalf("%d segments, nul_at %d (want %d)", len(m.Segments), m.Files[0].NULAt, nul+1)
	}
	got, _ := searchAll(t, dir, root)
	want := strings.Split(strings.TrimSuffix(strings.ReplaceAll(content, "\x00", "\n"), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i, l := range got {
		if l.no != int64(i+1) || l.text != want[i] {
			t.Fatalf("line %d: %d %q, want %q", i+1, l.no, l.text, want[i])
		}
	}
}
