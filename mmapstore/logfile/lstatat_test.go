package logfile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOpenBeneath checks that a directory opened by OpenBeneath is the one
// os.Root opens, and that what os.Root refuses (escapes by "..", absolute
// symlinks, symlinks out of the root) OpenBeneath refuses too (ok false:
// the caller then takes os.Root's answer).
func TestOpenBeneath(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "root")
	for _, d := range []string{"root/a/b", "outside"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"root/in":   "a/b",                    // relative, stays beneath
		"root/out":  "../outside",             // relative, leads out
		"root/abs":  filepath.Join(root, "a"), // absolute (os.Root refuses these)
		"root/a/up": "..",                     // back to the root itself
	} {
		if err := os.Symlink(target, filepath.Join(top, link)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	parent, err := OpenRootDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close()
	for _, tc := range []struct {
		rel             string
		wantOK, escapes bool
	}{
		{".", true, false}, {"a", true, false}, {"a/b", true, false}, {"in", true, false}, {"a/up", true, false},
		{"a/../a/b", true, false}, {"missing", false, false}, {"abs", false, false},
		{"..", false, true}, {"../outside", false, true}, {"out", false, true},
	} {
		t.Run(tc.rel, func(t *testing.T) {
			d, ok := parent.OpenBeneath(tc.rel)
			if ok != tc.wantOK {
				t.Fatalf("OpenBeneath(%q) ok = %v, want %v", tc.rel, ok, tc.wantOK)
			}
			viaRoot, rerr := OpenDir(r, tc.rel)
			if rerr == nil {
				defer viaRoot.Close()
			}
			if tc.escapes && rerr == nil {
				t.Fatalf("os.Root opened %q, which leads out of the root", tc.rel)
			}
			if !ok {
				return // the caller takes os.Root's answer
			}
			defer d.Close()
			if rerr != nil {
				t.Fatalf("OpenBeneath opened %q, os.Root says %v", tc.rel, rerr)
			}
			want, err := viaRoot.Lstat(".")
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Lstat(".")
			if err != nil {
				t.Fatal(err)
			}
			if got.Dev != want.Dev || got.Ino != want.Ino || !got.IsDir {
				t.Fatalf("%q: opened %d/%d, os.Root %d/%d", tc.rel, got.Dev, got.Ino, want.Dev, want.Ino)
			}
		})
	}
}

// TestSameAs: a directory opened by path is the one a stat of that path
// describes, and not another.
func TestSameAs(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	d, err := OpenRootDir(a)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, c := range []struct {
		path string
		want bool
	}{{a, true}, {b, false}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.SameAs(fi); got != c.want {
			t.Errorf("SameAs(%s) = %v, want %v", c.path, got, c.want)
		}
	}
}
