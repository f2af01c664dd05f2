package query

import (
	"context"
	"fmt"
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

// TestEdgePartsVsGrep: the parts of lines that patterns with \< or \>
// match (grep -o's output, --color's marks) are grep -o's, on random
// lines, for random patterns built around the word assertions (none
// repeated, which -o refuses).
func TestEdgePartsVsGrep(t *testing.T) {
	needGrep(t)
	seed := testSeed()
	r := rand.New(rand.NewPCG(seed, 31))
	dir := t.TempDir()
	file := filepath.Join(dir, "lines")
	var lines []string
	for range 60 {
		l := greptest.RandomLine(r)
		if r.IntN(2) == 0 {
			l = edgeLine(r)
		}
		lines = append(lines, l)
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, compared := cases(3000, 300), 0
	for i := 0; i < n; i++ {
		syn, mode := "-E", lang.ModeERE
		if r.IntN(2) == 0 {
			syn, mode = "-G", lang.ModeBRE
		}
		pat := edgePattern(r, mode == lang.ModeERE)
		fold := r.IntN(4) == 0
		q, err := CompileGrep([]string{pat}, mode, fold, GrepFlags{})
		if err != nil {
			continue // (rejected or refused: other tests compare that)
		}
		parts, err := q.OnlyMatching() // (Marks' too: edgeParts for both)
		if err != nil {
			t.Fatalf("%s %q: %v", syn, pat, err)
		}
		args := []string{"-on", syn, "-e", pat, file}
		if fold {
			args = append(args, "-i")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cmd := exec.CommandContext(ctx, "grep", args...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		out, err := cmd.Output()
		cancel()
		if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() > 1) {
			continue // (grep rejects it, or took too long)
		}
		var got strings.Builder
		for no, l := range lines {
			if !q.MatchLine([]byte(l)) {
				continue
			}
			for _, p := range parts(nil, []byte(l)) {
				fmt.Fprintf(&got, "%d:%s\n", no+1, l[p[0]:p[1]])
			}
		}
		if got.String() != string(out) {
			t.Fatalf("seed %d: grep %q:\n%s", seed, args, firstDiff([]byte(got.String()), out))
		}
		compared++
	}
	t.Logf("seed %d: %d patterns compared", seed, compared)
}

// edgeLine is a line of words and separators.
func edgeLine(r *rand.Rand) string {
	var b strings.Builder
	for k := r.IntN(6); k >= 0; k-- {
		b.WriteString(pickS(r, "a", "b", "ab", "ba", "aa", "_", "-", " ", "x1", "é", "\xe9", "-a-", "b_"))
	}
	return b.String()
}

// edgePattern is a short pattern of letters, separators, word
// assertions, groups and repetitions.
func edgePattern(r *rand.Rand, ere bool) string {
	var b strings.Builder
	for k := 1 + r.IntN(4); k > 0; k-- {
		atom := pickS(r, "a", "b", "-", " ", "_", ".", "[ab]", "[^a]", `\w`, `\W`, `\<`, `\>`, `\<`, `\>`, `\b`, `\B`, "^", "$")
		if r.IntN(4) == 0 {
			atom = "(" + atom + pickS(r, "a", `\>`, `\<`, "-", "") + ")"
			if r.IntN(3) == 0 {
				atom = "(" + atom + "|" + pickS(r, "b", `\<`, `\>`, "-", "") + ")"
			}
		}
		rep := pickS(r, "", "", "", "*", "+", "?", "{2}", "{0,2}")
		if strings.ContainsAny(atom, "^$") || strings.Contains(strings.ReplaceAll(atom, `\w`, ""), `\`) && strings.ContainsAny(atom, "<>bB") {
			// grep 3.8's -o contradicts its own line selection where a
			// zero-width assertion is repeated, alone or in a group: -o
			// '(\<a)+' prints nothing of the line "aaa-b" it selects.
			rep = ""
		}
		if !ere {
			atom = strings.NewReplacer("(", `\(`, ")", `\)`, "|", `\|`).Replace(atom)
			rep = strings.NewReplacer("+", `\+`, "?", `\?`, "{", `\{`, "}", `\}`).Replace(rep)
		}
		b.WriteString(atom + rep)
	}
	return b.String()
}

func pickS(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }

// TestWholeEdgesVsGrep: patterns with \< or \> under -w and -x (the
// restriction translated with the pattern, grepsyntax.TranslateWhole)
// select exactly grep -rnw's and -rnx's lines, searched through an index
// cut into small segments; repeated assertions included, whose line
// selection grep keeps consistent.
func TestWholeEdgesVsGrep(t *testing.T) {
	needGrep(t)
	seed := testSeed()
	r := rand.New(rand.NewPCG(seed, 37))
	root := filepath.Join(t.TempDir(), "hay")
	for f := range 3 {
		var lines []string
		for range 80 {
			l := edgeLine(r)
			if r.IntN(4) == 0 {
				l = greptest.RandomLine(r)
			}
			lines = append(lines, l)
		}
		dir := filepath.Join(root, fmt.Sprintf("d%d", f))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "f.log"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := testIndex(t, 2<<10, root)
	n, compared, refusals := cases(3000, 300), 0, 0
	for i := 0; i < n; i++ {
		syn, mode := "E", lang.ModeERE
		if r.IntN(2) == 0 {
			syn, mode = "G", lang.ModeBRE
		}
		ere := mode == lang.ModeERE
		pat := edgePattern(r, ere)
		if r.IntN(4) == 0 {
			rep := pickS(r, `(\<a)+`, `(a\>|-)*`, `(\<|b)+`, `(\>-)?`)
			if !ere {
				rep = strings.NewReplacer("(", `\(`, ")", `\)`, "|", `\|`, "+", `\+`, "?", `\?`).Replace(rep)
			}
			pat += rep
		}
		words := r.IntN(3) != 0
		flag := "-x" + syn
		if words {
			flag = "-w" + syn
		}
		fold := r.IntN(4) == 0
		if fold {
			flag += "i"
		}
		want, rejected, slow := grepOutcome(t, []string{flag, "-e", pat}, root)
		if slow || rejected {
			continue
		}
		q, err := CompileGrep([]string{pat}, mode, fold, GrepFlags{Words: words, Lines: !words})
		if err != nil {
			if refused(err) {
				refusals++
				continue
			}
			t.Fatalf("seed %d: grep %s %q accepts; logdex: %v", seed, flag, pat, err)
		}
		got, _ := search(t, s, q, Options{})
		if err := diffLines(got, want); err != nil {
			t.Fatalf("seed %d: grep %s %q: %v", seed, flag, pat, err)
		}
		compared++
	}
	t.Logf("seed %d: %d patterns compared, %d refused", seed, compared, refusals)
	if refusals > n/20 {
		t.Fatalf("seed %d: %d of %d patterns refused", seed, refusals, n)
	}
}

// TestEdgeWordsBrute: grep -ow's parts of patterns with \< or \>
// (WordMatches) are the brute-force rule's: at the leftmost start after a
// non-word byte where some match forms a whole word, the longest such,
// then on after it. A part [s, e) forms a whole word exactly when the
// pattern matches line[s:e] whole (as -x does, which translates \< and \>
// its own way): with non-word bytes (or the line's edges) around it, the
// assertions see the same there as at a line's edges (patterns with ^ or
// $, which do not, are left out).
func TestEdgeWordsBrute(t *testing.T) {
	seed := testSeed()
	r := rand.New(rand.NewPCG(seed, 41))
	n, compared := cases(3000, 400), 0
	for i := 0; i < n; i++ {
		mode := lang.ModeERE
		if r.IntN(2) == 0 {
			mode = lang.ModeBRE
		}
		pat := edgePattern(r, mode == lang.ModeERE)
		if strings.ContainsAny(pat, "^$") || !strings.Contains(pat, `\<`) && !strings.Contains(pat, `\>`) {
			continue
		}
		fold := r.IntN(4) == 0
		q, err := CompileGrep([]string{pat}, mode, fold, GrepFlags{})
		if err != nil {
			continue
		}
		whole, err := CompileGrep([]string{pat}, mode, fold, GrepFlags{Lines: true})
		if err != nil {
			t.Fatalf("%q -x: %v", pat, err)
		}
		words, err := q.WordMatches()
		if err != nil {
			t.Fatalf("%q: %v", pat, err)
		}
		for range 5 {
			line := []byte(edgeLine(r))
			var want [][2]int
			for s := 0; s < len(line); s++ {
				if s > 0 && wordByte[line[s-1]] {
					continue
				}
				for e := len(line); e > s; e-- {
					if (e == len(line) || !wordByte[line[e]]) && whole.MatchLine(line[s:e]) {
						want = append(want, [2]int{s, e})
						s = e - 1
						break
					}
				}
			}
			if got := words(nil, line); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("seed %d: -ow %q on %q: %v, want %v", seed, pat, line, got, want)
			}
		}
		compared++
	}
	t.Logf("seed %d: %d patterns compared", seed, compared)
}
