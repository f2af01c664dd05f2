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

// TestSearchLateNULAsGrep: a file whose first NUL byte lies past the first
// 8 KiB is binary from there, as for grep: -c counts its lines as grep
// does (a NUL ends a line), the exit status counts them, and instead of
// the lines after the NUL, "binary file matches" is said. Whether the NUL
// was indexed or appended since (scanned at search time).
func TestSearchLateNULAsGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	logs := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(logs, 0o755))
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
