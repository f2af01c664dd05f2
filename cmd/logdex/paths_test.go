package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSearchNonUTF8Paths: file names are bytes, printed as grep prints
// them (byte for byte), with -c too, and a second search sees no change.
func TestSearchNonUTF8Paths(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	logs := filepath.Join(dir, "logs\xe9")
	must(t, os.MkdirAll(filepath.Join(logs, "d\xff"), 0o755))
	for _, n := range []string{"caf\xe9.log", "a\xfe.log", "a\xff.log", "d\xff/x.log"} {
		must(t, os.WriteFile(filepath.Join(logs, n), []byte("a line\nanother line\n"), 0o644))
	}
	for _, args := range [][]string{{"-rn", "-F", "other"}, {"-rc", "-F", "line"}} {
		want, wcode := grep(t, dir, append(args, "logs\xe9")...)
		sargs := []string{"search", args[1], "other", "logs\xe9"}
		if args[0] == "-rc" {
			sargs = []string{"search", "-c", args[1], "line", "logs\xe9"}
		}
		for range 2 {
			got, stderr, code := logdex(t, dir, sargs...)
			if code != wcode || got != want || stderr != "" {
				t.Fatalf("%v: exit %d (grep %d), stderr %q\n%s", sargs, code, wcode, stderr, firstDiff(got, want))
			}
		}
	}
}
