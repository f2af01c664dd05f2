package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/mmapstore"
)

// TestSearchIndexNarrowedToPaths: with --index, PATHs inside the index's
// roots narrow the search to them and print paths as grep does for those
// operands (with or without --no-update); a PATH outside every root, or
// reached through a symlink leading out of one, is an error that leaves
// the index as it was.
func TestSearchIndexNarrowedToPaths(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir, root := fixtureCopy(t)
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "x.log"), []byte("GET ERROR elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("app", filepath.Join(root, "applink")); err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(dir, "idx")
	if _, stderr, code := logdex(t, dir, "index", "-q", "--index", idx, "logs"); code != 0 {
		t.Fatalf("index: %d %s", code, stderr)
	}
	whole, _ := grep(t, dir, "-rn", "-F", "GET", "logs")
	for _, upd := range [][]string{{"--no-update"}, nil} {
		for _, paths := range [][]string{
			{"logs/app"}, {"logs/nginx/access.log"}, {"logs/app", "logs/db/"}, {"logs"},
			{"./logs/syslog/../app/api.log", "logs/k8s"}, {"logs/applink"},
		} {
			args := append(append([]string{"search", "--index", idx}, upd...), "-F", "GET")
			got, stderr, code := logdex(t, dir, append(args, paths...)...)
			want, wcode := grep(t, dir, append([]string{"-rn", "-F", "GET"}, paths...)...)
			if code != wcode || got != want {
				t.Fatalf("%v %v: exit %d (grep %d), stderr %q\n%s", upd, paths, code, wcode, stderr, firstDiff(got, want))
			}
		}
		for _, outside := range []string{"other", "other/x.log", "logs/out", "logs/out/x.log"} {
			args := append(append([]string{"search", "--index", idx}, upd...), "-F", "GET", outside)
			out, stderr, code := logdex(t, dir, args...)
			if code != 2 || out != "" || !strings.Contains(stderr, "not under the roots of the index") {
				t.Fatalf("%v %s: exit %d, stdout %q, stderr %q; want 2 and an error", upd, outside, code, out, stderr)
			}
		}
		// The index still holds the roots it was built for, nothing else.
		if roots, err := mmapstore.ReadRoots(idx); err != nil || len(roots) != 1 || roots[0].Abs != root {
			t.Fatalf("%v: the index's roots are now %v (%v)", upd, roots, err)
		}
		got, _, code := logdex(t, dir, "search", "--index", idx, "--no-update", "-F", "GET", "logs")
		if code != 0 || got != whole {
			t.Fatalf("%v: the index changed:\n%s", upd, firstDiff(got, whole))
		}
	}
}

// TestSearchIndexWithoutPath: with --index DIR and no PATH, search
// searches "." of the current directory as grep -r does without an
// operand (names without "./"), as an explicit "." would: on a fresh DIR
// it indexes ".", in a DIR of several roots it searches "." only, from a
// directory beneath a root that directory; from one outside every root
// (the index queried from anywhere) all of its roots.
func TestSearchIndexWithoutPath(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	files := map[string]string{
		"t5/a.log": "foo\nbar\n", "t5/sub/b.log": "foo sub\n", "t6/c.log": "foo elsewhere\n", "t7/d.log": "foo outside\n",
	}
	for name, text := range files {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	t5, sub := filepath.Join(dir, "t5"), filepath.Join(dir, "t5", "sub")
	same := func(wd string, args ...string) {
		t.Helper()
		got, stderr, code := logdex(t, wd, append([]string{"search"}, args...)...)
		want, wcode := grep(t, wd, "-rn", "-F", "foo")
		if code != wcode || got != want {
			t.Fatalf("in %s, %q: exit %d (grep %d), stderr %q\n%s", wd, args, code, wcode, stderr, firstDiff(got, want))
		}
	}
	same(t5, "--index", "../i5", "-F", "foo")                   // a fresh index: built for "."
	same(t5, "--index", "../i5", "-F", "foo")                   // and searched again
	same(t5, "--index", "../i5", "--no-update", "-F", "foo")    // as it is
	same(sub, "--index", "../../i5", "-F", "foo")               // beneath the root
	same(sub, "--index", filepath.Join(dir, "i5"), "-F", "foo") // (DIR absolute)
	if _, stderr, code := logdex(t, dir, "index", "-q", "--index", "i6", "t6", "t5"); code != 0 {
		t.Fatalf("index: %d %s", code, stderr)
	}
	same(t5, "--index", "../i6", "-F", "foo") // "." only, not t6
	same(sub, "--index", "../../i6", "-F", "foo")
	// From outside every root, the index is searched whole, its roots
	// named as they were given.
	got, stderr, code := logdex(t, filepath.Join(dir, "t7"), "search", "--index", "../i6", "-F", "foo")
	want, _ := grep(t, dir, "-rn", "-F", "foo", "t5", "t6")
	if code != 0 || got != want {
		t.Fatalf("outside the roots: exit %d, stderr %q\n%s", code, stderr, firstDiff(got, want))
	}
	if _, stderr, code := logdex(t, filepath.Join(dir, "t7"), "search", "--index", "../i6", "-F", "foo", "."); code != 2 || !strings.Contains(stderr, "not under the roots of the index") {
		t.Fatalf("an explicit . outside the roots: exit %d, stderr %q; want 2 and an error", code, stderr)
	}
}
