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
		{"--exclude-dir=a/", "."}, {"--exclude-dir=a//", "."}, {"--exclude-dir=/", "."}, {"--include=", "."}, {"--exclude-dir=", "."}, {"--include=[]]", "."},
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

// TestFnmatchLinear: stars backtrack only to the last one, so a glob of
// many stars against a long name that fails at its end takes
// len(glob)*len(name) steps, not exponentially many (the recursive
// version retried each star at every place: about C(200, 30) tries here).
func TestFnmatchLinear(t *testing.T) {
	name := strings.Repeat("a", 200)
	if fnmatch(strings.Repeat("*a", 30)+"*b", name) {
		t.Fatal("matched")
	}
	if !fnmatch(strings.Repeat("*a", 30)+"*", name) {
		t.Fatal("no match")
	}
}
