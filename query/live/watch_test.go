package live

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWatchVouches: a path is vouched for until a change at it or above
// it arrives; a Watch that could not watch vouches for nothing.
func TestWatchVouches(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "a/b"), 0o755))
	file := filepath.Join(root, "a/b/x.log")
	must(t, os.WriteFile(file, []byte("x\n"), 0o644))
	w, err := NewWatch([]string{root}, "")
	must(t, err)
	defer w.Close()
	must(t, w.Err())

	changes := []struct {
		name   string
		change func()
	}{
		{"write", func() { appendFile(t, file, "more\n") }},
		{"chmod", func() { must(t, os.Chmod(file, 0o600)) }},
		{"parent renamed", func() {
			must(t, os.Rename(filepath.Join(root, "a/b"), filepath.Join(root, "a/c")))
			must(t, os.Rename(filepath.Join(root, "a/c"), filepath.Join(root, "a/b")))
		}},
		{"grandparent renamed", func() {
			must(t, os.Rename(filepath.Join(root, "a"), filepath.Join(root, "z")))
			must(t, os.Rename(filepath.Join(root, "z"), filepath.Join(root, "a")))
		}},
	}
	for _, c := range changes {
		seq := w.now()
		if !w.unchangedSince(file, seq) {
			t.Fatalf("%s: not vouched for before the change", c.name)
		}
		c.change()
		waitFor(t, c.name, func() bool { return !w.unchangedSince(file, seq) })
	}

	// A directory created later is watched too (with what is already in it).
	deep := filepath.Join(root, "new/deeper")
	must(t, os.MkdirAll(deep, 0o755))
	f2 := filepath.Join(deep, "y.log")
	must(t, os.WriteFile(f2, []byte("y\n"), 0o644))
	time.Sleep(100 * time.Millisecond) // the creations' own events are in
	seq := w.now()
	// The watch on the new directory is added once its creation arrives:
	// keep writing until a write is seen.
	waitFor(t, "file in a new directory", func() bool {
		appendFile(t, f2, "y\n")
		return !w.unchangedSince(f2, seq)
	})

	// Other paths keep being vouched for.
	if !w.unchangedSince(filepath.Join(root, "other.log"), w.now()) {
		t.Fatal("an unchanged path is not vouched for")
	}

	// A root moved away leaves nothing watching its replacement.
	must(t, os.Rename(root, root+".moved"))
	defer os.Rename(root+".moved", root)
	must(t, os.MkdirAll(root, 0o755))
	waitFor(t, "root renamed", func() bool { return w.Err() != nil })
	if w.unchangedSince(filepath.Join(root, "later.log"), w.now()) {
		t.Fatal("a Watch whose root was renamed vouches for paths")
	}

	broken, err := NewWatch([]string{filepath.Join(root, "missing")}, "")
	must(t, err)
	defer broken.Close()
	if broken.Err() == nil || broken.unchangedSince(file, broken.now()) {
		t.Fatal("a Watch that cannot watch its root vouches for paths")
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for start := time.Now(); !ok(); time.Sleep(time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("%s: no change seen", what)
		}
	}
}

func appendFile(t *testing.T, p, s string) {
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, err)
	must(t, f.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
