package live

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
)

// indexed writes dir/rel and returns its record as an index run would.
func indexed(t *testing.T, dir, rel, text string, id uint64) mmapstore.FileRecord {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(text), 0o644))
	fi, err := os.Stat(p)
	must(t, err)
	dev, ino := logfile.StatIDs(fi)
	n := int64(len(text))
	return mmapstore.FileRecord{ID: id, Path: rel, Dev: dev, Ino: ino, Size: n, MTime: fi.ModTime().UnixNano(), Indexed: n, Lines: 1}
}

// TestDirsSeeTheTreeAsItIsNow: a pass keeps directories open, the next
// pass opens them again: a directory renamed and replaced between two
// passes is seen replaced, and within a pass files in several directories
// and a file root are each found.
func TestDirsSeeTheTreeAsItIsNow(t *testing.T) {
	dir := t.TempDir()
	recs := []mmapstore.FileRecord{
		indexed(t, dir, "a/x.log", "one\n", 1),
		indexed(t, dir, "a/y.log", "two\n", 2),
		indexed(t, dir, "b/c/z.log", "three\n", 3),
		indexed(t, dir, "top.log", "four\n", 4),
	}
	s := NewSet([]mmapstore.Root{{Abs: dir}})
	defer s.Close()
	var files []*File
	for _, r := range recs {
		files = append(files, s.Track(r))
	}
	pass := func(mustRead bool) []error {
		c := s.Dirs()
		defer c.Close()
		var stale []error
		for _, f := range files {
			h, err := s.StatIn(c, f, mustRead)
			must(t, err)
			if mustRead && h.Stale() == nil && h.File() == nil {
				t.Fatalf("%s: nothing to read", f.rec.Path)
			}
			stale = append(stale, h.Stale())
			h.Close()
		}
		return stale
	}
	for _, mustRead := range []bool{false, true} {
		for i, err := range pass(mustRead) {
			if err != nil {
				t.Fatalf("mustRead %v: %s: %v", mustRead, recs[i].Path, err)
			}
		}
	}
	must(t, os.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "a.old")))
	indexed(t, dir, "a/x.log", "new!\n", 9) // another inode at the path
	stale := pass(false)
	if !errors.Is(stale[0], ErrReplaced) || !errors.Is(stale[1], ErrDeleted) || stale[2] != nil || stale[3] != nil {
		t.Fatalf("after replacing a/: %v", stale)
	}
}

// TestAssumeSeen: what an indexing run found stands in for the lstat of
// the files at the same path; a record at another path is looked at.
func TestAssumeSeen(t *testing.T) {
	dir := t.TempDir()
	rec := indexed(t, dir, "app.log", "line\n", 1)
	other := indexed(t, dir, "other.log", "more\n", 2)
	s := NewSet([]mmapstore.Root{{Abs: dir}})
	defer s.Close()
	s.AssumeSeen([]logfile.Seen{
		{ID: 1, Path: "app.log", Stat: logfile.Stat{Regular: true, Dev: rec.Dev, Ino: rec.Ino, Size: rec.Size, MTime: rec.MTime}},
		{ID: 2, Path: "moved-since.log", Stat: logfile.Stat{Regular: true, Dev: other.Dev, Ino: other.Ino, Size: other.Size, MTime: other.MTime}},
	})
	for _, r := range []mmapstore.FileRecord{rec, other} {
		h, err := s.Stat(s.Track(r), false)
		must(t, err)
		if h.Stale() != nil {
			t.Fatalf("%s: %v", r.Path, h.Stale())
		}
	}
	if n := s.Lookups(); n != 1 {
		t.Fatalf("%d lstats, want 1 (other.log's record is not at the path seen)", n)
	}
}
