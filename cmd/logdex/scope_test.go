package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
		got, _, code := logdex(t, dir, "search", "--index", idx, "--no-update", "-F", "GET")
		if code != 0 || got != whole {
			t.Fatalf("%v: the index changed:\n%s", upd, firstDiff(got, whole))
		}
	}
}
