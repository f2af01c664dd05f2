package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/query/greptest"
)

// grepLimited runs grep (C locale) from dir with a time limit; slow is set
// when it took too long (its DFA build on some counted word tests) or
// crashed (an internal assertion): such patterns are not compared.
func grepLimited(t *testing.T, dir string, args ...string) (stdout, stderr string, code int, slow bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "grep", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return "", "", 0, true
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	if code > 2 || code < 0 {
		return "", "", code, true
	}
	return sortGrep(out.String()), errb.String(), code, false
}

// diagnostics are the lines of stderr that prog wrote, without its name.
func diagnostics(stderr, prog string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if rest, ok := strings.CutPrefix(l, prog+": "); ok {
			out = append(out, rest)
		}
	}
	return out
}

// refusedByLogdex reports whether a logdex error is its refusal of a
// pattern grep accepts (back-references, constructs it cannot translate).
func refusedByLogdex(stderr string) bool {
	return strings.Contains(stderr, "not supported") || strings.Contains(stderr, "unsupported:") ||
		strings.Contains(stderr, "Regular expression too big")
}

// TestSearchGrepSyntaxVsGrep: logdex search -E and -G (with -i, -c, -o,
// -w, -x, and several patterns through -e and newlines), given patterns generated over
// the whole operator set, prints exactly what grep -rn (-rc) prints on a
// generated tree, exits with its status, rejects what it rejects with its
// message, and warns as it warns.
func TestSearchGrepSyntaxVsGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("LOGDEX_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	long := os.Getenv("LOGDEX_LONG") != ""
	r := rand.New(rand.NewPCG(seed, 23))
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	if err := greptest.WriteTree(filepath.Join(dir, "logs"), r, 7, 60); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := logdex(t, dir, "index", "--index", "idx", "logs"); code != 0 {
		t.Fatalf("index: %d %s", code, stderr)
	}
	n := 60
	if long {
		n = 2000
	}
	var same, rejected, refused, skipped int
	for i := 0; i < n; i++ {
		flags := []string{pick(r, "-E", "-G")}
		if r.IntN(3) == 0 {
			flags = append(flags, "-i")
		}
		count := r.IntN(4) == 0
		pats := []string{"-e", greptest.RandomPattern(r, long)}
		switch r.IntN(8) {
		case 0:
			pats[1] += "\n" + greptest.RandomPattern(r, false)
		case 1:
			pats = append(pats, "-e", greptest.RandomPattern(r, false))
		default:
			// grep's -o, -w and -x, with one pattern, and not where
			// grep 3.8 contradicts itself or its manual (README, "grep
			// syntax"): -w with several patterns can miss lines (-w -e
			// '\)' -e '[a]1)' does not select the line ")"); -w and -x
			// wrap the pattern in a group that a ')' of it closes (-w
			// ').' selects "a). x", not "). "); -i with -o, -w or -x
			// disagrees with -i alone on ranges; -o prints nothing of
			// what its line selection matched when it warned about the
			// pattern, an anchor is repeated (-o ')\{$*' on "){$") or
			// a '{' opens no interval (-o '{a|b' prints "a" of "ab", whose
			// line -c does not count: its regex and DFA read '{' apart);
			// -w reads a bracket with [.x.] or [=x=] apart from its
			// line selection without -w ('[^][.-.]]|' selects "\xe91b",
			// -w does not; with '[^]-]|' both do); -ow
			// retries a shorter match after a line's first one with a
			// length cut short (-ow 'a\|b\?.' on "?b\tbb": "bb", not "b").
			f := pick(r, "", "", "", "", "-o", "-ox", "-w", "-x")
			switch {
			case strings.ContainsAny(f, "wx") && strings.Contains(pats[1], ")"),
				anchorRepeated.MatchString(pats[1]), slices.Contains(flags, "-i"),
				strings.HasPrefix(f, "-o") && strings.Contains(pats[1], "{"):
			case f != "" && (strings.Contains(pats[1], "[.") || strings.Contains(pats[1], "[=")):
			case f != "":
				flags = append(flags, f)
			}
		}
		largs := append(append([]string{"search", "--index", "idx", "--no-update"}, flags...), pats...)
		gargs := append(append([]string{"-rn"}, flags...), pats...)
		if count {
			largs = append(largs, "-c")
			gargs[0] = "-rc"
		}
		largs, gargs = append(largs, "logs"), append(gargs, "logs")
		want, gstderr, wcode, slow := grepLimited(t, dir, gargs...)
		if slow {
			skipped++
			continue
		}
		got, stderr, code := logdex(t, dir, largs...)
		ld, gd := diagnostics(stderr, "logdex"), diagnostics(gstderr, "grep")
		switch {
		case code == 2 && wcode == 2 && !refusedByLogdex(stderr):
			// Same message, logdex adding where (grep may warn first).
			// (Where logdex refuses one of the patterns, it may say so
			// before grep's complaint about another: both exit 2.)
			for len(gd) > 1 && strings.HasPrefix(gd[0], "warning: ") {
				gd = gd[1:]
			}
			if len(ld) == 0 || len(gd) == 0 || !strings.HasPrefix(ld[0], gd[0]) {
				t.Fatalf("seed %d: logdex %q: %q, grep %q", seed, largs, stderr, gstderr)
			}
			rejected++
			continue
		case code == 2 && refusedByLogdex(stderr):
			refused++
			continue
		case code != wcode:
			if slices.Contains(flags, "-o") && gstderr != "" && code == 0 && wcode == 1 || grepContradicts(t, dir, flags, pats) {
				skipped++ // (as below)
				continue
			}
			t.Fatalf("seed %d: logdex %q exits %d (%q), grep %q %d (%q)", seed, largs, code, stderr, gargs, wcode, gstderr)
		}
		if got != want && (slices.Contains(flags, "-o") && gstderr != "" || grepContradicts(t, dir, flags, pats)) {
			// grep warned (its -o and its line selection read the
			// pattern apart), or its lines for several patterns are not
			// the union of its lines for each.
			skipped++
			continue
		}
		if got != want {
			t.Fatalf("seed %d: logdex %q differs from grep %q:\n%s", seed, largs, gargs, firstDiff(got, want))
		}
		if strings.Join(ld, "\n") != strings.Join(gd, "\n") {
			t.Fatalf("seed %d: logdex %q says %q, grep %q", seed, largs, ld, gd)
		}
		same++
	}
	t.Logf("seed %d: %d searches: %d same output and status, %d rejected by both, %d refused, %d skipped (grep slow or self-contradicting)", seed, n, same, rejected, refused, skipped)
}

func pick(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }

// grepContradicts reports whether grep -rn, given several patterns,
// selects other lines than the union of the lines it selects for each
// (grep 3.8: -G -e '$|' -e 'zz' does not select the line "$|" that -G -e
// '$|' selects): which of its answers to compare with is then moot.
func grepContradicts(t *testing.T, dir string, flags, pats []string) bool {
	var each []string
	for i := 1; i < len(pats); i += 2 {
		each = append(each, strings.Split(pats[i], "\n")...)
	}
	if len(each) < 2 {
		return false
	}
	union := map[string]bool{}
	for _, p := range each {
		out, _, _, _ := grepLimited(t, dir, append(append([]string{"-rn"}, flags...), "-e", p, "logs")...)
		for _, l := range strings.SplitAfter(out, "\n") {
			union[l] = l != ""
		}
	}
	all, _, _, _ := grepLimited(t, dir, append(append(append([]string{"-rn"}, flags...), pats...), "logs")...)
	lines := strings.SplitAfter(all, "\n")
	n := 0
	for _, l := range lines {
		if l != "" {
			if !union[l] {
				return true
			}
			n++
		}
	}
	for _, in := range union {
		if in {
			n--
		}
	}
	return n != 0
}

// anchorRepeated finds an anchor ('^', '$', '\`', "\'") followed by a
// repetition operator.
var anchorRepeated = regexp.MustCompile("([$^]|\\\\[`'])(\\\\?[*+?{])")
