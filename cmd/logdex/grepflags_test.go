package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchGrepLongNames: GNU grep's long names are the short flags.
func TestSearchGrepLongNames(t *testing.T) {
	dir, _ := fixtureCopy(t)
	for _, c := range [][2][]string{
		{{"--count", "--fixed-strings", "ERROR"}, {"-c", "-F", "ERROR"}},
		{{"--ignore-case", "--extended-regexp", "--regexp=timeout|refused", "--max-count=2"}, {"-i", "-E", "-e", "timeout|refused", "-m", "2"}},
		{{"--files-with-matches", "--basic-regexp", "ERROR"}, {"-l", "-G", "ERROR"}},
		{{"--files-without-match", "--fixed-strings", "ERROR"}, {"-L", "-F", "ERROR"}},
		{{"--context=1", "--only-matching", "--word-regexp", "-F", "ERROR"}, {"-C1", "-o", "-w", "-F", "ERROR"}},
		{{"--after-context", "2", "--before-context=1", "--invert-match", "--line-regexp", "-F", "x"}, {"-A2", "-B1", "-v", "-x", "-F", "x"}},
		{{"--no-filename", "--line-number", "--recursive", "-F", "ERROR"}, {"-h", "-n", "-r", "-F", "ERROR"}},
	} {
		got, _, code := logdex(t, dir, append(append([]string{"search"}, c[0]...), "logs")...)
		want, _, wcode := logdex(t, dir, append(append([]string{"search"}, c[1]...), "logs")...)
		if got != want || code != wcode || got == "" {
			t.Errorf("%q: exit %d, %d bytes; %q: exit %d, %d bytes", c[0], code, len(got), c[1], wcode, len(want))
		}
	}
	for _, q := range []string{"--quiet", "--silent"} {
		if out, _, code := logdex(t, dir, "search", q, "-F", "ERROR", "logs"); out != "" || code != 0 {
			t.Errorf("%s: %q, exit %d", q, out, code)
		}
	}
	if _, stderr, _ := logdex(t, dir, "search", "--help"); !strings.Contains(stderr, "grep's long names work too: --after-context") || strings.Contains(stderr, "same as -c") {
		t.Errorf("usage: %s", stderr)
	}
}

// TestSearchOutputFlagsLikeGrep: -Z (--null) puts a NUL after file names
// where grep does (-l, -L, -c, lines, context, colour), -b prints byte
// offsets as grep does (of lines, of -o's parts, of context lines, in
// colour; CRLF lines counted whole), and --line-buffered changes nothing
// of the output.
func TestSearchOutputFlagsLikeGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	_, root := logsDir(t)
	must(t, os.WriteFile(filepath.Join(root, "a.log"), []byte("one x\ntwo\nthree x\nfour\nfive\nsix\nseven x\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "b.log"), []byte("no\r\nx here, x\r\nlast x"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "c.log"), []byte("none\n"), 0o644))
	if _, stderr, code := logdex(t, root, "index", "."); code != 0 {
		t.Fatalf("index: %d %s", code, stderr)
	}
	files := []string{"a.log", "b.log", "c.log"}
	for _, c := range [][]string{
		{"-Z"}, {"-lZ"}, {"-LZ"}, {"-cZ"}, {"-Z", "-C1"}, {"-Z", "-o"}, {"--null", "-B1"}, {"-Z", "--color=always"},
		{"-Z", "--color=always", "-A1"}, {"-Z", "-c", "--color=always"}, {"-lZ", "--color=always"}, {"--line-buffered"},
		{"--line-buffered", "-c"}, {"--line-buffered", "-l"}, {"--line-buffered", "-C2", "--color=always"}, {"-Z", "-h"},
		{"-b"}, {"-bo"}, {"-b", "-C1"}, {"-bo", "-A1"}, {"-b", "--color=always"}, {"--byte-offset", "-o", "--color=always"}, {"-bZ", "-h"}, {"-bv"}, {"-bc"},
	} {
		args := append(append(append([]string{}, c...), "-F", "x"), files...)
		got, stderr, code := logdex(t, root, append([]string{"search", "--no-update"}, args...)...)
		cmd := exec.Command("grep", append([]string{"-n"}, args...)...)
		cmd.Dir, cmd.Env = root, append(os.Environ(), "LC_ALL=C")
		want, _ := cmd.Output()
		if got != string(want) || code != cmd.ProcessState.ExitCode() {
			t.Errorf("%q: exit %d (grep %d), stderr %q\n got  %q\n want %q", c, code, cmd.ProcessState.ExitCode(), stderr, got, want)
		}
	}
}
