package indexer_test

import (
	"os"
	"path/filepath"
	"testing"
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
