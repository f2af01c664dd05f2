package main

import (
	"os"
	"os/exec"
	"path/filepath"
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
	// -w's marks where the longest match is not a word but a later or
	// shorter one is.
	words := "x_foo foo-x\nfoo barx foo bar\naaa aa\nfoo_bar foo\nfoofoo foo\ncrlf foo x\r\n"
	if err := os.WriteFile(filepath.Join(dir, "w.log"), []byte(words), 0o644); err != nil {
		t.Fatal(err)
	}
	perWordFile := [][]string{{"-w", "-E", "foo.*"}, {"-w", "-E", "foo|foo.bar"}, {"-w", "-F", "aa"}, {"-w", "-E", "foo"}, {"-wv", "-C1", "-F", "foo"},
		// \< and \> mark the match only, not the character beside it
		// their translation takes; \b and \B alike.
		{"-E", `foo\>`}, {"-E", `\<foo`}, {"-G", `\<foo\>`}, {"-E", `\<[a-z]*`}, {"-E", `[a-z]*\>`}, {"-iE", `\<F[a-z]*\>`},
		{"-E", `o\>|x`}, {"-E", `\<(a|bar)`}, {"-E", `foo\>.`}, {"-E", `.\<.`}, {"-E", `-\<`}, {"-E", `\>-`}, {"-E", `o*\>-*`},
		{"-E", "-e", `\<foo`, "-e", `bar\>`}, {"-E", "-e", `\<foo`, "-e", "aa"}, {"-E", `\>`}, {"-E", `\bfoo\b`}, {"-E", `\Bo\B`}, {"-E", `oo\B`}, {"-G", `\<\w`},
	}
	tree := [][]string{{"-c", "-F", "ERROR"}, {"-l", "-F", "ERROR"}, {"-L", "-F", "ERROR"}}
	// Every grep is queued first, to run while the searches do.
	type colorCase struct {
		colors string
		flags  []string
		tree   bool
		grep   *grepRun
	}
	var cases []colorCase
	g := newGrepper(t, dir)
	// Every flag set with the default colours, a full spec and one with
	// rv (which swaps sl and cx under -v); the other specs, which differ
	// in how a capability is parsed, with the per-file sets (every
	// output shape: context, -v, -o, -w, -x) but not the word cases.
	for ci, colors := range []string{"", "mt=01;32:fn=34:se=33:ne", "sl=1:cx=2:rv:zz=9:ln=34", "ms=4:mc=7:ln=:fn=", "ms=abc:fn=34", "ms=1x:ln=33", "=5:fn=34", "fn=34=5:ln=33", "ne=1:fn=33", "ms=4:mt", "sl=1:cx=2", "sl=7:ms=:mc=", "cx=4:rv", "a;b:fn=34"} {
		env := []string{"GREP_COLORS=" + colors}
		sets := perFile
		if ci < 3 {
			sets = append(perFile, perWordFile...)
		}
		for i, flags := range sets {
			f := file
			if i >= len(perFile) {
				f = "w.log"
			}
			args := append(append([]string{"--color=always", "-H"}, flags...), f)
			cases = append(cases, colorCase{colors, args, false, g.start(env, append([]string{"-n"}, args...)...)})
		}
		for _, flags := range tree {
			args := append(append([]string{"--color=always"}, flags...), "logs")
			cases = append(cases, colorCase{colors, args, true, g.start(env, append([]string{"-r"}, args...)...)})
		}
	}
	for _, c := range cases {
		t.Setenv("GREP_COLORS", c.colors)
		got, stderr, code := logdex(t, dir, append([]string{"search"}, c.flags...)...)
		want, wcode := c.grep.wait(t)
		if !c.tree && (code != wcode || got != want) {
			t.Fatalf("GREP_COLORS=%q %v: exit %d, grep %d (%s)\n%s", c.colors, c.flags, code, wcode, stderr, firstDiff(got, want))
		}
		if c.tree && (code != wcode || sortedLines(got) != sortedLines(want)) {
			t.Fatalf("GREP_COLORS=%q %v: exit %d, grep %d\n%s", c.colors, c.flags, code, wcode, firstDiff(sortedLines(got), sortedLines(want)))
		}
	}
	// The deprecated GREP_COLOR still colours matches, with a warning,
	// unless GREP_COLORS says otherwise; WHEN in any case.
	for _, colors := range []string{"", "fn=34", "mt=7"} {
		t.Setenv("GREP_COLORS", colors)
		t.Setenv("GREP_COLOR", "1;32")
		got, stderr, code := logdex(t, dir, "search", "--color=Always", "-H", "-F", "ERROR", file)
		want, wcode := rawGrep(t, dir, "-n", "--color=always", "-H", "-F", "ERROR", file)
		if code != wcode || got != want || strings.Contains(stderr, "deprecated") != (colors != "mt=7") {
			t.Fatalf("GREP_COLOR with GREP_COLORS=%q: exit %d, grep %d, stderr %q\n%s", colors, code, wcode, stderr, firstDiff(got, want))
		}
	}
	t.Setenv("GREP_COLOR", "")

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

// TestColorWhen: auto colours a terminal whose TERM is set and not dumb.
func TestColorWhen(t *testing.T) {
	for _, c := range []struct {
		when          string
		tty           bool
		term          string
		termSet, want bool
	}{
		{"always", false, "", false, true},
		{"never", true, "xterm", true, false},
		{"auto", true, "xterm", true, true},
		{"true", true, "xterm", true, true}, // --color alone
		{"auto", false, "xterm", true, false},
		{"auto", true, "dumb", true, false},
		{"auto", true, "", false, false},
		{"TTY", true, "xterm", true, true},
	} {
		f := colorFlag{}
		f.Set(c.when)
		if err := f.check(); err != nil || f.on(c.tty, c.term, c.termSet) != c.want {
			t.Errorf("%+v: %v, on %t", c, err, f.on(c.tty, c.term, c.termSet))
		}
	}
	for _, bad := range []string{"", "sometimes"} {
		f := colorFlag{}
		f.Set(bad)
		if f.check() == nil {
			t.Errorf("--color=%q accepted", bad)
		}
	}
}
