package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/logdex/logdex/mmapstore/logfile"
)

// binaryNamed lists the files a stderr says are binary matches.
func binaryNamed(stderr string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^(?:grep|logdex): (.*): binary file matches$`).FindAllStringSubmatch(stderr, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// logsDir makes a temporary directory with an empty "logs" in it, whose
// index goes into the test's own cache.
func logsDir(t *testing.T) (dir, logs string) {
	t.Helper()
	dir = t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	logs = filepath.Join(dir, "logs")
	must(t, os.MkdirAll(logs, 0o755))
	return dir, logs
}

// TestSearchLateNULAsGrep: a file whose first NUL byte lies past grep's
// first read (96 KiB) is binary from there, as for grep: -c counts its lines as grep
// does (a NUL ends a line), the exit status counts them, and instead of
// the lines after the NUL, "binary file matches" is said. Whether the NUL
// was indexed or appended since (scanned at search time).
func TestSearchLateNULAsGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir, logs := logsDir(t)
	var big strings.Builder
	// The NUL lies past grep's first read buffer (about 96 KiB), so that
	// grep prints the lines before it too.
	for i := range 20_000 {
		fmt.Fprintf(&big, "line %d match\n", i)
	}
	head := big.String()
	binTail := "bin\x00ary match\x00\x00after match\nlast\x00match"
	write := func(name, content string) {
		must(t, os.WriteFile(filepath.Join(logs, name), []byte(content), 0o644))
	}
	write("late.log", head+binTail)
	write("text.log", "plain match\nno\n")
	write("grown.log", head)

	cases := [][]string{
		{"-F", "match"}, {"-F", "after"}, {"-E", "^ary"}, {"-E", "bin.*ary"}, {"-E", "^match$"},
		{"-F", "line 5 "}, {"-E", "^$"}, {"-F", "zzz"},
	}
	g := newGrepper(t, dir)
	check := func(phase string, noUpdate bool) {
		// The phase's greps are queued first, to run while the searches do.
		type nulCase struct {
			c     []string
			count bool
			grep  *grepRun
		}
		var runs []nulCase
		for _, c := range cases {
			for _, count := range []bool{true, false} {
				gargs := append([]string{"-rn"}, c...)
				if count {
					gargs = append([]string{"-rc"}, c...)
				}
				// (Not to /dev/null: grep would stop at the first match.)
				runs = append(runs, nulCase{c, count, g.start(nil, append(gargs, "logs")...)})
			}
		}
		for _, r := range runs {
			c, count := r.c, r.count
			args := append([]string{"search", "--index", "idx"}, c...)
			if count {
				args = append([]string{"search", "-c", "--index", "idx"}, c...)
			}
			if noUpdate {
				args = append(args, "--no-update")
			}
			got, stderr, code := logdex(t, dir, append(args, "logs")...)
			wantOut, wcode := r.grep.wait(t)
			want := sortGrep(wantOut)
			if code != wcode {
				t.Fatalf("%s %v count=%v: exit %d, grep %d (stderr %q)", phase, c, count, code, wcode, stderr)
			}
			if count && got != want {
				t.Fatalf("%s %v: -c differs from grep:\n%s", phase, c, firstDiff(got, want))
			}
			if gb, wb := binaryNamed(stderr), binaryNamed(r.grep.stderr); !slices.Equal(gb, wb) {
				t.Fatalf("%s %v count=%v: binary files %q, grep %q", phase, c, count, gb, wb)
			}
			if strings.Contains(got, "\x00") || strings.Contains(got, "after match") {
				t.Fatalf("%s %v: printed lines of a binary part", phase, c)
			}
		}
	}
	check("indexed", false)
	// A NUL appended since indexing is found by the search's scan.
	f, err := os.OpenFile(filepath.Join(logs, "grown.log"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(binTail)
	f.Close()
	must(t, err)
	check("appended", true)
	check("re-indexed", false)
}

// TestSearchBinaryFilesAsGrep: files with a NUL byte within grep's first
// read (96 KiB), at its very start or tens of KiB in, are indexed and
// answered as grep answers them: no line of theirs printed (context
// included), "binary file matches" on stderr, counted by -c, listed by -l,
// and in the exit status.
func TestSearchBinaryFilesAsGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir, logs := logsDir(t)
	var text strings.Builder
	for i := range 4_000 { // 50 KiB: past the 8 KiB that once decided binary files
		fmt.Fprintf(&text, "text %d match\n", i)
	}
	wtmp := strings.Repeat("pts/0\x00\x00\x00root\x00\x00\x0010.0.0.1\x00match\x00\x00\n\x00", 50)
	for name, content := range map[string]string{
		"text.log":   "alpha match\nbeta\nmatch gamma\n\n",
		"start.bin":  "\x00match at start\nmore match\n",
		"early.dat":  "line one match\nline two\n\x00\x01\x02binary match\x00trailer\n",
		"mid.log":    text.String() + "\x00after match\n",
		"wtmp":       wtmp,
		"nomatch.db": "\x00\x00zzz\x00",
	} {
		must(t, os.WriteFile(filepath.Join(logs, name), []byte(content), 0o644))
	}
	sorted := func(s string) string {
		l := strings.SplitAfter(s, "\n")
		slices.Sort(l)
		return strings.Join(l, "")
	}
	g := newGrepper(t, dir)
	type binCase struct {
		args []string
		grep *grepRun
	}
	var cases []binCase
	for _, flags := range [][]string{
		{"-n"}, {"-c"}, {"-l"}, {"-L"}, {"-on"}, {"-vn"}, {"-vc"}, {"-q"}, {"-h"}, {"-m1", "-n"},
		{"-A1", "-n"}, {"-C2"}, {"-in"}, {"-wn"}, {"-bn"}, {"-xn"},
	} {
		for _, pat := range []string{"match", "root", "^$", `10\.0\.0\.1`, "zzz", "nothing"} {
			args := append(append(slices.Clone(flags), "-E", pat), "logs")
			cases = append(cases, binCase{args, g.start(nil, append([]string{"-rn"}, args...)...)}) // (logdex numbers lines by default)
		}
	}
	for phase, extra := range [][]string{nil, {"--no-update"}} {
		for _, c := range cases {
			args := append(append([]string{"search", "--index", "idx"}, extra...), c.args...)
			got, stderr, code := logdex(t, dir, args...)
			want, wcode := c.grep.wait(t)
			if code != wcode {
				t.Fatalf("phase %d %q: exit %d, grep %d (stderr %q)", phase, c.args, code, wcode, stderr)
			}
			if sorted(got) != sorted(want) {
				t.Fatalf("phase %d %q: differs from grep:\n%s", phase, c.args, firstDiff(sorted(got), sorted(want)))
			}
			if gb, wb := binaryNamed(stderr), binaryNamed(c.grep.stderr); !slices.Equal(gb, wb) {
				t.Fatalf("phase %d %q: binary files %q, grep %q", phase, c.args, gb, wb)
			}
		}
	}
}

// TestSearchSaysLeftOutFiles: a binary file over 8 MiB and a sparse file
// are left out of the index, and every search whose scope holds them
// says so on stderr (not with -s) without changing the exit status.
func TestSearchSaysLeftOutFiles(t *testing.T) {
	dir, logs := logsDir(t)
	must(t, os.WriteFile(filepath.Join(logs, "a.log"), []byte("one match\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(logs, "big.bin"), append(make([]byte, 9<<20), "match\n"...), 0o644))
	want := []string{"logs/big.bin: not searched: left out of the index: binary file over 8 MiB"}
	f, err := os.Create(filepath.Join(logs, "lastlog"))
	must(t, err)
	_, err = f.WriteString("match\n")
	must(t, err)
	must(t, f.Truncate(1<<30))
	if logfile.HasHoles(f, 1<<30) {
		want = append(want, "logs/lastlog: not searched: left out of the index: sparse file")
	} else {
		must(t, os.Remove(f.Name())) // (else a gigabyte of NULs to index)
	}
	f.Close()
	for _, quiet := range []bool{false, true} {
		args := []string{"search", "--index", "idx", "-c", "match", "logs"}
		if quiet {
			args = append(args, "-s")
		}
		out, stderr, code := logdex(t, dir, args...)
		if out != "logs/a.log:1\n" || code != 0 {
			t.Fatalf("-s=%v: %q, exit %d", quiet, out, code)
		}
		for _, w := range want {
			if strings.Contains(stderr, "logdex: "+w) == quiet {
				t.Fatalf("-s=%v: stderr %q; want it to say %q: %v", quiet, stderr, w, !quiet)
			}
		}
	}
	if _, stderr, code := logdex(t, dir, "search", "--index", "idx", "nothing", "logs"); code != 1 || !strings.Contains(stderr, want[0]) {
		t.Fatalf("no match: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, _ := logdex(t, dir, "search", "--index", "idx", "match", "logs/a.log"); stderr != "" {
		t.Fatalf("a scope without them: stderr %q", stderr)
	}
}
