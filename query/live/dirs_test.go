package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

// TestLookAhead: a pass that looks ahead finds every file as a pass that
// does not (unchanged, grown, deleted, replaced, a directory in a file's
// place), in several directories, whatever the point where the pass and
// the look-ahead meet; the look-ahead ends with the pass.
func TestLookAhead(t *testing.T) {
	dir := t.TempDir()
	const n = lookAheadMin + 300
	var recs []mmapstore.FileRecord
	for i := range n {
		recs = append(recs, indexed(t, dir, fmt.Sprintf("d%d/f%05d.log", i/400, i), "line\n", uint64(i+1)))
	}
	for i := 0; i < n; i += 97 {
		p := filepath.Join(dir, filepath.FromSlash(recs[i].Path))
		switch i % 4 {
		case 0:
			must(t, os.Remove(p))
		case 1:
			must(t, os.Remove(p))
			must(t, os.Mkdir(p, 0o755))
		case 2:
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			_, err = f.WriteString("more\n")
			must(t, err)
			must(t, f.Close())
		case 3:
			must(t, os.Remove(p))
			must(t, os.WriteFile(p, []byte("other\n"), 0o644))
		}
	}
	s := NewSet([]mmapstore.Root{{Abs: dir}})
	defer s.Close()
	files := make([]*File, n)
	for i := range recs {
		files[i] = s.Track(recs[i])
	}
	pass := func(ahead bool, stopAt int) []string {
		c := s.Dirs()
		defer c.Close()
		if ahead {
			c.LookAhead(n, func(i int) *File { return files[i] })
		}
		var out []string
		for i, f := range files[:stopAt] {
			c.At(i)
			h, err := s.StatIn(c, f, false)
			must(t, err)
			out = append(out, fmt.Sprintf("%v %d", h.Stale(), h.Size()))
			h.Close()
		}
		return out
	}
	want := pass(false, n)
	for _, stopAt := range []int{n, n / 2, 1} {
		if got := pass(true, stopAt); !slices.Equal(got, want[:stopAt]) {
			t.Fatalf("stopping at %d: looking ahead found another state", stopAt)
		}
	}
}
