package live

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
)

// TestReopenIsTheCheckedFile: Reopen gives a descriptor of its own on the
// file the handle checked, through /proc even after the path was rotated
// to another file; without /proc it opens the path again and refuses
// another file there (ErrMoved) rather than hand out its bytes.
func TestReopenIsTheCheckedFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "app.log")
	must(t, os.WriteFile(p, []byte("checked\n"), 0o644))
	fi, err := os.Stat(p)
	must(t, err)
	dev, ino := logfile.StatIDs(fi)
	s := NewSet([]mmapstore.Root{{Abs: dir}})
	defer s.Close()
	f := s.Track(mmapstore.FileRecord{ID: 1, Path: "app.log", Dev: dev, Ino: ino, Size: 8, Indexed: 8, Lines: 1})
	h, err := s.Stat(f, true)
	must(t, err)
	defer h.Close()

	read := func(fh *os.File) string {
		t.Helper()
		defer fh.Close()
		// Its own offset: a seek does not move the handle's.
		if _, err := fh.Seek(2, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(fh)
		must(t, err)
		return string(b)
	}
	for _, proc := range []string{procSelfFD, filepath.Join(dir, "no-proc") + "/"} {
		old := procSelfFD
		procSelfFD = proc
		fh, err := s.Reopen(f, h)
		procSelfFD = old
		must(t, err)
		if got := read(fh); got != "ecked\n" {
			t.Fatalf("proc %q: read %q", proc, got)
		}
	}

	must(t, os.Rename(p, p+".1"))
	must(t, os.WriteFile(p, []byte("another\n"), 0o644))
	fh, err := s.Reopen(f, h)
	must(t, err)
	if got := read(fh); got != "ecked\n" {
		t.Fatalf("after rotation: read %q, want the checked file's bytes", got)
	}
	procSelfFD = filepath.Join(dir, "no-proc") + "/"
	defer func() { procSelfFD = "/proc/self/fd/" }()
	// Without /proc the file is opened by name: the indexed inode under
	// its new name in its directory, never the new file at its path.
	fh, err = s.Reopen(f, h)
	must(t, err)
	if got := read(fh); got != "ecked\n" {
		t.Fatalf("after rotation without /proc: read %q, want the checked file's bytes", got)
	}
	// Renamed out of its directory: nothing to find, and the file its path
	// holds is not taken for it.
	must(t, os.Rename(p+".1", filepath.Join(t.TempDir(), "elsewhere")))
	if fh, err := s.Reopen(f, h); !errors.Is(err, ErrMoved) {
		if fh != nil {
			fh.Close()
		}
		t.Fatalf("moved away without /proc: %v, want ErrMoved", err)
	}
}
