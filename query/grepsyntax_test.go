package query

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/query/greptest"
	"github.com/logdex/logdex/query/lang"
)

// grepOutcome runs grep -rn (LC_ALL=C) with a time limit: slow is set
// when grep took too long (its DFA build on some counted word tests),
// rejected when it refused the pattern (exit 2).
func grepOutcome(t *testing.T, args []string, roots ...string) (lines []gotLine, rejected, slow bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "grep", append(append([]string{"-rn"}, args...), roots...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return nil, false, true
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == 1:
		return nil, false, false
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		return nil, true, false
	case err != nil:
		return nil, false, true // crashed (an assertion in grep): not compared
	}
	return parseGrepN(t, out), false, false
}

// refused reports whether err is logdex's refusal of a pattern grep
// accepts (back-references, constructs it cannot translate, size).
func refused(err error) bool {
	var pe *lang.ParseError
	return errors.As(err, &pe) && (strings.Contains(pe.Msg, "not supported") || strings.HasPrefix(pe.Msg, "unsupported") ||
		pe.Msg == "Regular expression too big")
}

// TestPropertyGrepSyntaxVsGrep: patterns generated over the whole operator
// set of ERE and BRE (valid or not, sometimes two lines), searched through
// the index of a tree cut into small segments, give exactly grep -rnE's
// and grep -rnG's lines (with -i too), and are rejected exactly when grep
// rejects them. The index plans from the translated regexes' literals:
// a plan that missed a line would show here.
func TestPropertyGrepSyntaxVsGrep(t *testing.T) {
	needGrep(t)
	seed := testSeed()
	r := rand.New(rand.NewPCG(seed, 17))
	root := filepath.Join(t.TempDir(), "hay")
	if err := greptest.WriteTree(root, r, 9, 120); err != nil {
		t.Fatal(err)
	}
	s := testIndex(t, 2<<10, root)
	n := cases(3000, 200)
	var accepted, rejected, refusals, skipped int
	for i := 0; i < n; i++ {
		p := greptest.RandomPattern(r, os.Getenv("LOGDEX_LONG") != "")
		if r.IntN(8) == 0 {
			p += "\n" + greptest.RandomPattern(r, false)
		}
		mode, flag := lang.ModeRegex, "E"
		if r.IntN(2) == 0 {
			mode, flag = lang.ModeBRE, "G"
		}
		fold := r.IntN(3) == 0
		if fold {
			flag = "i" + flag
		}
		want, grepRejects, slow := grepOutcome(t, []string{"-" + flag, "-e", p}, root)
		if slow {
			skipped++
			continue
		}
		q, err := Compile([]string{p}, mode, fold)
		switch {
		case err != nil && grepRejects:
			rejected++
			continue
		case err != nil && refused(err):
			refusals++
			continue
		case err != nil:
			t.Fatalf("seed %d: grep -%s %q accepts; logdex: %v", seed, flag, p, err)
		case grepRejects:
			t.Fatalf("seed %d: grep -%s %q rejects; logdex accepts (%v)", seed, flag, p, q)
		}
		accepted++
		got, _ := search(t, s, q, Options{})
		if err := diffLines(got, want); err != nil {
			t.Fatalf("seed %d: grep -%s %q (%v): %v", seed, flag, p, q, err)
		}
	}
	t.Logf("seed %d: %d patterns: %d same lines, %d rejected by both, %d refused, %d skipped (grep slow)", seed, n, accepted, rejected, refusals, skipped)
}
