package grepsyntax

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/query/greptest"
)

// The property: for random patterns over the whole operator set, grep
// (LC_ALL=C, -E and -G, with and without -i) and Translate either both
// reject, or both accept and select the same lines of a random haystack.

// refusal reports whether err is one of this package's refusals of a
// pattern grep accepts.
func refusal(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Msg == msgBackref || e.Msg == msgTooBig || strings.HasPrefix(e.Msg, "unsupported")
}

type grepResult struct {
	slow     bool // grep took too long (its DFA build on word tests and counts): not compared
	crashed  bool // grep aborted ("program error", an internal assertion): not compared
	rejected bool
	lines    []int
	stderr   string
}

func runGrep(t testing.TB, pattern string, syn Syntax, fold bool, file string) grepResult {
	t.Helper()
	args := []string{"-n", "-E"}
	if syn == BRE {
		args[1] = "-G"
	}
	if fold {
		args = append(args, "-i")
	}
	args = append(args, "-e", pattern, file)
	limit := time.Second // keeps the default run short; a skipped pattern is logged
	if long() {
		limit = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "grep", args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return grepResult{slow: true}
	}
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("grep: %v", err)
	}
	r := grepResult{rejected: code == 2, crashed: code != 0 && code != 1 && code != 2, stderr: errb.String()}
	if code == 2 {
		return r
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if i := strings.IndexByte(l, ':'); i > 0 {
			n, err := strconv.Atoi(l[:i])
			if err != nil {
				t.Fatalf("grep output %q", l)
			}
			r.lines = append(r.lines, n)
		}
	}
	return r
}

func grepAvailable() bool {
	out, err := exec.Command("grep", "--version").Output()
	return err == nil && bytes.Contains(out, []byte("GNU grep"))
}

func needGrep(t testing.TB) {
	if !grepAvailable() {
		t.Skip("GNU grep not available")
	}
	out, _ := exec.Command("grep", "--version").Output()
	if !bytes.Contains(out, []byte("grep (GNU grep) 3.8")) {
		t.Logf("grep is not 3.8: %s", bytes.SplitN(out, []byte("\n"), 2)[0])
	}
}

// seed returns the seed of a randomized test: LOGDEX_SEED if set, else
// the clock. Failures print it.
func seed(t testing.TB) uint64 {
	if s := os.Getenv("LOGDEX_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("LOGDEX_SEED: %v", err)
		}
		return v
	}
	return uint64(time.Now().UnixNano())
}

func long() bool { return os.Getenv("LOGDEX_LONG") != "" }

type propStats struct {
	accepted, rejected, refused, skipped, total int
	refusals                                    map[string]int
}

// checkPattern compares Translate with grep for one pattern in one mode.
func checkPattern(t *testing.T, pattern string, syn Syntax, fold bool, file string, lines []string, st *propStats) {
	t.Helper()
	st.total++
	g := runGrep(t, pattern, syn, fold, file)
	if g.slow || g.crashed {
		t.Logf("%q: grep too slow or crashed (%s), skipped", pattern, strings.TrimSpace(g.stderr))
		st.skipped++
		return
	}
	// As logdex reads patterns and lines in grep's C locale: byte by
	// byte, widened (each byte the rune of its value); ASCII is itself.
	expr, _, err := Translate(widen(pattern), syn, fold)
	mode := fmt.Sprintf("grep -%s%s", map[Syntax]string{ERE: "E", BRE: "G"}[syn], map[bool]string{true: " -i"}[fold])
	switch {
	case err != nil && g.rejected:
		st.rejected++
		if !strings.Contains(g.stderr, "grep: "+err.Error()+"\n") {
			fail(t, "%s %q: grep says %q, Translate %q", mode, pattern, strings.TrimSpace(g.stderr), err)
		}
		return
	case err != nil && refusal(err):
		st.refused++
		if st.refusals == nil {
			st.refusals = map[string]int{}
		}
		st.refusals[err.Error()]++
		return
	case err != nil:
		fail(t, "%s %q: grep accepts, Translate: %v", mode, pattern, err)
		return
	case g.rejected:
		fail(t, "%s %q: grep rejects (%s), Translate gives %q", mode, pattern, strings.TrimSpace(g.stderr), expr)
		return
	}
	st.accepted++
	re := regexp.MustCompile(expr)
	var got []int
	for i, l := range lines {
		if re.MatchString(widen(l)) {
			got = append(got, i+1)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(g.lines) {
		diff := symmetricDiff(got, g.lines)
		var shown []string
		for _, n := range diff[:min(len(diff), 5)] {
			shown = append(shown, fmt.Sprintf("%q(grep:%v)", lines[n-1], contains(g.lines, n)))
		}
		fail(t, "%s %q -> %q: lines differ: %s", mode, pattern, expr, strings.Join(shown, " "))
	}
}

// widen makes every byte of s the rune of its value.
func widen(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func symmetricDiff(a, b []int) []int {
	var out []int
	for _, x := range a {
		if !contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !contains(a, x) {
			out = append(out, x)
		}
	}
	return out
}

func writeHaystack(t *testing.T, r *rand.Rand, n int) (string, []string) {
	lines := []string{"", "a", "ab", "abc", "a b", "A", "_a", "a_", "aa", "{1}a", "1}a", "a{1", "a{", "*a", "ax", "a-c", "[:alpha:]", "a^b", "a$b", "a$)b", "(a)", "\\", "+,-"}
	for len(lines) < n {
		lines = append(lines, greptest.RandomLine(r))
	}
	file := filepath.Join(t.TempDir(), "hay")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return file, lines
}

// failures counts reported disagreements so that a broken build stops
// early instead of printing thousands.
var failures int

func tooManyFailures(t *testing.T) bool { return t.Failed() && failures > 30 }

func TestAgainstGrep(t *testing.T) {
	needGrep(t)
	s := seed(t)
	t.Logf("seed %d (set LOGDEX_SEED to repeat)", s)
	r := rand.New(rand.NewPCG(s, 0x9e3779b97f4a7c15))
	file, lines := writeHaystack(t, r, 300)
	patterns := 100 // 400 checks
	if long() {
		patterns = 10000 // 40000 checks, about 15 minutes: run with -timeout 60m
	}
	var st propStats
	for i := 0; i < patterns && !tooManyFailures(t); i++ {
		p := greptest.RandomPattern(r, long())
		for _, syn := range []Syntax{ERE, BRE} {
			for _, fold := range []bool{false, true} {
				t0 := time.Now()
				checkPattern(t, p, syn, fold, file, lines, &st)
				if d := time.Since(t0); d > 2*time.Second {
					t.Logf("%q (%s): %v", p, syn, d) // grep's DFA build, usually
				}
			}
		}
	}
	if t.Failed() {
		t.Logf("seed %d", s)
	}
	t.Logf("%d checks: %d accepted with the same lines, %d rejected by both, %d refused (grep accepts), %d skipped (grep slow or crashed): %v", st.total, st.accepted, st.rejected, st.refused, st.skipped, st.refusals)
}

func fail(t *testing.T, format string, args ...any) {
	t.Helper()
	failures++
	t.Errorf(format, args...)
}
