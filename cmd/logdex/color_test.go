package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestSearchColorLikeGrep compares --color=always output with grep's, byte
// for byte: one file at a time (-H) where line order matters, and as
// sorted lines for -c and -l over a tree; with grep's default colours and
// with GREP_COLORS set.
func TestSearchColorLikeGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir, _ := fixtureCopy(t)
	const file = "logs/app/api.log"
	perFile := [][]string{
		{"-F", "ERROR"},
		{"-iF", "error"},
		{"-E", "req=[0-9a-f]+|user=[a-z]+"},
		{"-F", "-e", "GET", "-e", "GET /api"},
		{"-F", "-C1", "ERROR"},
		{"-F", "-v", "-C1", "INFO"},
		{"-o", "-E", "[0-9]+ms"},
		{"-o", "-B1", "-F", "ERROR"},
		{"-w", "-F", "GET"},
		{"-w", "-E", "[a-z]+"},
		{"-x", "-E", ".*ERROR.*"},
		{"-E", "x*"}, // empty matches are not coloured
	}
	tree := [][]string{{"-c", "-F", "ERROR"}, {"-l", "-F", "ERROR"}, {"-L", "-F", "ERROR"}}
	for _, colors := range []string{"", "mt=01;32:fn=34:se=33:ne", "ms=4:mc=7:ln=:fn="} {
		t.Setenv("GREP_COLORS", colors)
		for _, flags := range perFile {
			args := append(append([]string{"--color=always", "-H"}, flags...), file)
			got, stderr, code := logdex(t, dir, append([]string{"search"}, args...)...)
			want, wcode := rawGrep(t, dir, append([]string{"-n"}, args...)...)
			if code != wcode || got != want {
				t.Fatalf("GREP_COLORS=%q %v: exit %d, grep %d (%s)\n%s", colors, flags, code, wcode, stderr, firstDiff(got, want))
			}
		}
		for _, flags := range tree {
			args := append(append([]string{"--color=always"}, flags...), "logs")
			got, _, code := logdex(t, dir, append([]string{"search"}, args...)...)
			want, wcode := rawGrep(t, dir, append([]string{"-r"}, args...)...)
			if code != wcode || sortedLines(got) != sortedLines(want) {
				t.Fatalf("GREP_COLORS=%q %v: exit %d, grep %d\n%s", colors, flags, code, wcode, firstDiff(sortedLines(got), sortedLines(want)))
			}
		}
	}
	// The query language: what the UI highlights.
	t.Setenv("GREP_COLORS", "")
	got, _, _ := logdex(t, dir, "search", "--color=always", "-H", "error AND req", file)
	if !strings.Contains(got, "\x1b[01;31m\x1b[KERROR\x1b[m\x1b[K") || !strings.Contains(got, "\x1b[01;31m\x1b[Kreq\x1b[m\x1b[K=") {
		t.Fatalf("query language, coloured: %q", got)
	}
	// Not on a pipe by default, nor with auto.
	for _, args := range [][]string{{"-F", "ERROR", file}, {"--color", "-F", "ERROR", file}, {"--color=auto", "-F", "ERROR", file}, {"--colour=never", "-F", "ERROR", file}} {
		got, _, _ := logdex(t, dir, append([]string{"search"}, args...)...)
		if got == "" || strings.Contains(got, "\x1b") {
			t.Fatalf("%v: %q", args, got)
		}
	}
	if _, stderr, code := logdex(t, dir, "search", "--color=sometimes", "ERROR", file); code != 2 || !strings.Contains(stderr, "--color") {
		t.Fatalf("--color=sometimes: exit %d, %q", code, stderr)
	}
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}
