package main

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// TestSearchPathFilterLikeGrep: --include, --exclude and --exclude-dir
// (and their mixes and orders) choose the files grep -r chooses, for
// PATHs that are the tree, a directory in it, a file, or none.
func TestSearchPathFilterLikeGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	root := filepath.Join(dir, "logs")
	for _, f := range []string{"a/f.log", "a/g.txt", "a/sub/h.log", "b/i.log", "a/.git/j.log", "top.log", "b/app.log.1", "b/[x].log"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755))
		must(t, os.WriteFile(filepath.Join(root, f), []byte("x "+f+"\n"), 0o644))
	}
	if _, stderr, code := logdex(t, root, "index", "."); code != 0 {
		t.Fatalf("index: %d %s", code, stderr)
	}
	g := newGrepper(t, root)
	cases := [][]string{
		{"--include=*.log", "."}, {"--include=*.log", "a/g.txt"}, {"--exclude=*.log", "."}, {"--exclude=*.log", "a/f.log"},
		{"--exclude=f.log", "./a/f.log"}, {"--exclude=a/f.log", "a/f.log"}, {"--exclude=a/f.log", "."}, {"--exclude=*/f.log", "."},
		{"--exclude-dir=sub", "."}, {"--exclude-dir=a", "."}, {"--exclude-dir=a", "a"}, {"--exclude-dir=.git", "."},
		{"--exclude-dir=a", "a/sub"}, {"--exclude-dir=sub", "a/sub"}, {"--exclude-dir=sub", "./a/sub/"}, {"--exclude-dir=sub", "a/sub/h.log"},
		{"--include=*.txt", "--exclude=g*", "."}, {"--exclude=g*", "--include=*.txt", "."}, {"--include=*.txt", "--include=*.log", "a"},
		{"--exclude=*.log", "--exclude-dir=sub", "--include=h*", "."}, {"--include=f*", "a/g.txt", "a/f.log"},
		{"--exclude-dir=*", "."}, {"--exclude-dir=.", "."}, {"--exclude-dir=."}, {"--include=sub", "a"}, {"--exclude=sub", "a"},
		{"--exclude=[!f]*.log", "a"}, {"--exclude=[^f]*", "a"}, {`--exclude=\f.log`, "a"}, {"--include=*.LOG", "."},
		{"--exclude=*.log", "top.log"}, {"--exclude-dir=[[:alpha:]]", "."}, {"--include=*.log"}, {"--exclude=*.log.[0-9]", "b"},
		{"--exclude=[x].log", "b"}, {`--exclude=\[x].log`, "b"}, {"--exclude=[", "b"}, {"--include", "*.txt", "--exclude-dir", "b"},
	}
	runs := make([]*grepRun, len(cases))
	for i, c := range cases {
		runs[i] = g.start(nil, append([]string{"-rn", "x"}, c...)...)
	}
	for i, c := range cases {
		got, stderr, code := logdex(t, root, append([]string{"search", "--no-update", "-F", "x"}, c...)...)
		want, wcode := runs[i].wait(t)
		if want = sortGrep(want); code != wcode || got != want {
			t.Errorf("%q: exit %d (grep %d), stderr %q\n got  %q\n want %q", c, code, wcode, stderr, got, want)
		}
	}
}

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

func TestFnmatch(t *testing.T) {
	for _, c := range []struct {
		glob, name string
		want       bool
	}{
		{"*.log", "a.log", true}, {"*.log", "a.log.1", false}, {"*.log*", "a.log.1", true}, {"*", ".hidden", true},
		{"*", "a/b", true}, {"a?c", "abc", true}, {"a?c", "ac", false}, {"[abc].log", "b.log", true},
		{"[!abc].log", "b.log", false}, {"[^abc].log", "d.log", true}, {"[a-c]x", "bx", true}, {"[a-c]x", "dx", false},
		{"[]a]", "]", true}, {"[!]a]", "]", false}, {"[a-]", "-", true}, {"[[:digit:]]*", "1a", true},
		{"[[:digit:]]*", "a1", false}, {`\*`, "*", true}, {`\*`, "a", false}, {"[", "[", true}, {"[a", "[a", true},
		{"a[", "a", false}, {"", "", true}, {"", "a", false}, {"**.log", "x.log", true}, {"*a*b*", "xaybz", true},
		{"[[:alpha:][:digit:]]", "7", true}, {"[\\]]", "]", true}, {"app.log.[0-9]", "app.log.3", true},
	} {
		if got := fnmatch(c.glob, c.name); got != c.want {
			t.Errorf("fnmatch(%q, %q) = %v, want %v", c.glob, c.name, got, c.want)
		}
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
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	root := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(root, 0o755))
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

// FuzzFnmatch: fnmatch never panics, matches a name with its every byte
// quoted, and agrees with path.Match on the globs and names both read
// alike (path.Match's '*' stops at '/', and it refuses what fnmatch takes
// literally: an unclosed '[').
func FuzzFnmatch(f *testing.F) {
	for _, s := range [][2]string{{"*.log", "a.log"}, {"[!a-c]?", "dx"}, {"[[:digit:]]*", "1"}, {`\*x`, "*x"}, {"[", "["}, {"[]-]", "-"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, glob, name string) {
		got := fnmatch(glob, name)
		var quoted strings.Builder
		for i := 0; i < len(name); i++ {
			quoted.WriteByte('\\')
			quoted.WriteByte(name[i])
		}
		if !fnmatch(quoted.String(), name) {
			t.Fatalf("fnmatch(%q, %q) = false", quoted.String(), name)
		}
		if strings.ContainsAny(glob+name, "/:!\\") || strings.Contains(glob, "[]") || strings.Contains(glob, "[^]") || !isASCII(glob+name) {
			return // (read apart: see above; classes, '!' and quoting are fnmatch's; it reads bytes, path.Match runes)
		}
		if want, err := path.Match(glob, name); err == nil && got != want {
			t.Fatalf("fnmatch(%q, %q) = %v, path.Match %v", glob, name, got, want)
		}
	})
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
