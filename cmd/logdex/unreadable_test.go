package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/logdex/logdex/indexer"
)

// nobody is the user tests run commands as when they run as root, for
// whom permissions do not make a file unreadable.
const nobody = 65534

// asUnprivileged runs name (the logdex binary when name is "logdex", else
// a program such as grep) from dir as a user that file permissions apply
// to: the current one, or nobody when running as root. It returns stdout,
// stderr and the exit status.
func asUnprivileged(t *testing.T, dir, name string, args ...string) (string, string, int) {
	t.Helper()
	if name == "logdex" {
		if os.Geteuid() != 0 {
			return logdex(t, dir, args...)
		}
		name = copyForNobody(t, logdexBin(t))
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// nobodyDir holds the program nobody runs (see copyForNobody); TestMain
// removes it.
var (
	nobodyOnce sync.Once
	nobodyDir  string
	nobodyBin  string
	nobodyErr  error
)

// copyForNobody puts the program bin where nobody may run it (the test
// binary's own directory is its owner's only): once per test run, and as
// a hard link where it can (a copy per command took seconds here).
func copyForNobody(t *testing.T, bin string) string {
	t.Helper()
	nobodyOnce.Do(func() {
		if nobodyDir, nobodyErr = os.MkdirTemp("", "logdex-nobody"); nobodyErr != nil {
			return
		}
		if nobodyErr = os.Chmod(nobodyDir, 0o755); nobodyErr != nil {
			return
		}
		nobodyBin = filepath.Join(nobodyDir, "logdex")
		if os.Link(bin, nobodyBin) == nil {
			nobodyErr = os.Chmod(nobodyBin, 0o755)
			return
		}
		var b []byte
		if b, nobodyErr = os.ReadFile(bin); nobodyErr == nil {
			nobodyErr = os.WriteFile(nobodyBin, b, 0o755)
		}
	})
	must(t, nobodyErr)
	return nobodyBin
}

// TestSearchUnreadableFile: a file that cannot be read makes search say so
// and exit 2 as grep does, while printing the other files' matches; with
// and without --no-update; once readable it is searched. As root, the
// commands run as nobody.
func TestSearchUnreadableFile(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir := t.TempDir()
	must(t, os.Chmod(filepath.Dir(dir), 0o755))
	must(t, os.Chmod(dir, 0o777))
	logs := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(logs, 0o755))
	for name, content := range map[string]string{"a.log": "match a\n", "secret.log": "match secret\n", "z.log": "match z\n"} {
		must(t, os.WriteFile(filepath.Join(logs, name), []byte(content), 0o644))
	}
	secret := filepath.Join(logs, "secret.log")
	must(t, os.Chmod(secret, 0))
	if f, err := os.Open(secret); err == nil && os.Geteuid() != 0 {
		f.Close()
		t.Skip("permissions do not apply here")
	}
	want, wantErr, wcode := asUnprivileged(t, dir, "grep", "-rn", "-F", "match", "logs")
	want = sortGrep(want)
	if wcode != 2 || !strings.Contains(wantErr, "logs/secret.log: Permission denied") {
		t.Fatalf("grep: exit %d, stderr %q", wcode, wantErr)
	}
	for _, extra := range [][]string{nil, {"--no-update"}} {
		args := append(append([]string{"search", "--index", "idx"}, extra...), "-F", "match", "logs")
		got, stderr, code := asUnprivileged(t, dir, "logdex", args...)
		// Said once, as grep says it (not also as the index update's
		// JSON warning).
		if code != 2 || got != want || stderr != "logdex: logs/secret.log: permission denied\n" {
			t.Fatalf("%v: exit %d (want 2), stderr %q\n%s", extra, code, stderr, firstDiff(got, want))
		}
		// -s: not said at all; the status still says so.
		args = append(append([]string{"search", "-s", "--index", "idx"}, extra...), "-F", "match", "logs")
		if got, stderr, code := asUnprivileged(t, dir, "logdex", args...); code != 2 || got != want || stderr != "" {
			t.Fatalf("-s %v: exit %d (want 2), stderr %q\n%s", extra, code, stderr, firstDiff(got, want))
		}
	}
	must(t, os.Chmod(secret, 0o644))
	got, stderr, code := asUnprivileged(t, dir, "logdex", "search", "--index", "idx", "-F", "match", "logs")
	if want, _ := grep(t, dir, "-rn", "-F", "match", "logs"); code != 0 || got != want {
		t.Fatalf("once readable: exit %d, stderr %q\n%s", code, stderr, firstDiff(got, want))
	}
	// Unreadable since indexing: the search cannot read it either, and
	// says so as grep does (-s: not at all).
	must(t, os.Chmod(secret, 0))
	for _, quiet := range []bool{false, true} {
		args, wantErr := []string{"search", "--index", "idx", "--no-update", "-F", "match", "logs"}, "logdex: logs/secret.log: permission denied\n"
		if quiet {
			args, wantErr = append([]string{"search", "-s"}, args[1:]...), ""
		}
		got, stderr, code = asUnprivileged(t, dir, "logdex", args...)
		if code != 2 || got != want || stderr != wantErr {
			t.Fatalf("unreadable since indexing %v: exit %d, stderr %q\n%s", args, code, stderr, firstDiff(got, want))
		}
	}
}

// TestSearchOperandUnreachable: a PATH in a directory that may not be
// searched is said as grep says it (not with -s), and the other PATHs are
// searched; -q stops at a match without a word about later PATHs.
func TestSearchOperandUnreachable(t *testing.T) {
	dir := t.TempDir()
	must(t, os.Chmod(filepath.Dir(dir), 0o755))
	must(t, os.Chmod(dir, 0o777))
	logs := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(filepath.Join(logs, "locked"), 0o755))
	must(t, os.WriteFile(filepath.Join(logs, "a.log"), []byte("match a\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(logs, "locked", "x.log"), []byte("match x\n"), 0o644))
	if _, _, code := asUnprivileged(t, dir, "logdex", "index", "--index", "idx", "logs"); code != 0 {
		t.Fatalf("index: exit %d", code)
	}
	must(t, os.Chmod(filepath.Join(logs, "locked"), 0))
	if _, err := os.Stat(filepath.Join(logs, "locked", "x.log")); err == nil && os.Geteuid() != 0 {
		t.Skip("permissions do not apply here")
	}
	for _, tc := range []struct {
		args           []string
		stdout, stderr string
		code           int
	}{
		{[]string{"-F", "match", "logs/locked/x.log", "logs/a.log"}, "logs/a.log:1:match a\n", "logdex: logs/locked/x.log: permission denied\n", 2},
		{[]string{"-s", "-F", "match", "logs/locked/x.log", "logs/a.log"}, "logs/a.log:1:match a\n", "", 2},
		{[]string{"-F", "match", "logs/locked/x.log"}, "", "logdex: logs/locked/x.log: permission denied\n", 2},
		{[]string{"-q", "-F", "match", "logs/a.log", "logs/missing.log"}, "", "", 0},
	} {
		args := append([]string{"search", "--index", "idx"}, tc.args...)
		got, stderr, code := asUnprivileged(t, dir, "logdex", args...)
		if got != tc.stdout || stderr != tc.stderr || code != tc.code {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, got, stderr, tc.code, tc.stdout, tc.stderr)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestGrepLogger: a search's index update warns as grep words messages,
// not in JSON; its word on unreadable files is left to the search.
func TestGrepLogger(t *testing.T) {
	var b bytes.Buffer
	log := grepLogger(&b)
	log.Warn().Str("segment", "seg-1.ldx").Msg("dropping damaged segment")
	log.Info().Msg("not shown")
	log.Warn().Str("path", "a.log").Msg(indexer.MsgUnreadable)
	if want := "logdex: warning: dropping damaged segment segment=seg-1.ldx\n"; b.String() != want {
		t.Fatalf("got %q, want %q", b.String(), want)
	}
}
