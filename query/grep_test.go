package query

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"testing"

	"github.com/logdex/logdex/query/lang"
)

// grepLines runs the real grep binary (LC_ALL=C) and parses its -rn output
// into sorted lines. Paths are known to contain no ':'.
func grepLines(t *testing.T, args []string, roots []string) []gotLine {
	t.Helper()
	cmd := exec.Command("grep", append(append([]string{"-rn"}, args...), roots...)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return nil
	} else if err != nil {
		t.Fatalf("grep %q: %v", args, err)
	}
	return parseGrepN(t, out)
}

// parseGrepN parses grep -rn's output into lines sorted by path and line.
func parseGrepN(t *testing.T, out []byte) []gotLine {
	var got []gotLine
	for _, l := range bytes.SplitAfter(out, []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		l = bytes.TrimSuffix(l, []byte("\n"))
		i := bytes.IndexByte(l, ':')
		j := bytes.IndexByte(l[i+1:], ':') + i + 1
		no, err := strconv.ParseInt(string(l[i+1:j]), 10, 64)
		if err != nil {
			t.Fatalf("bad grep line %q", l)
		}
		got = append(got, gotLine{string(l[:i]), no, string(l[j+1:])})
	}
	sort.SliceStable(got, func(a, b int) bool {
		if got[a].path != got[b].path {
			return got[a].path < got[b].path
		}
		return got[a].no < got[b].no
	})
	return got
}

func needGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
}

// cut returns a random substring of the data, 1-40 bytes, crossing token
// boundaries as it falls.
func (g *queryGen) cut() []byte {
	l := g.line()
	a := g.r.IntN(len(l))
	n := 1 + g.r.IntN(40)
	if g.r.IntN(3) == 0 {
		n = 1 + g.r.IntN(6)
	}
	return bytes.Clone(l[a:min(len(l), a+n)])
}

// numCut returns a random piece of a run of digits, dots and '_' in the
// data (an IP, a version, a port, an id): the literals whose lines the
// index answers without reading them.
func (g *queryGen) numCut() []byte {
	isNum := func(c byte) bool { return c == '.' || c == '_' || '0' <= c && c <= '9' }
	for range 100 {
		l := g.line()
		a := g.r.IntN(len(l))
		if !isNum(l[a]) {
			continue
		}
		b := a
		for b < len(l) && isNum(l[b]) {
			b++
		}
		return bytes.Clone(l[a : a+1+g.r.IntN(b-a)])
	}
	return g.cut()
}

func flipCase(r *rand.Rand, b []byte) []byte {
	out := bytes.Clone(b)
	for i, c := range out {
		if r.IntN(2) == 0 {
			switch {
			case 'a' <= c && c <= 'z':
				out[i] = c - 32
			case 'A' <= c && c <= 'Z':
				out[i] = c + 32
			}
		}
	}
	return out
}

// TestPropertyLiteralVsGrep: thousands of patterns cut from the data at
// random offsets give exactly grep -rnF's lines (and -i with random case).
func TestPropertyLiteralVsGrep(t *testing.T) {
	needGrep(t)
	roots, lines, s := propertyCorpus(t, 1<<20)
	seed := testSeed()
	g := &queryGen{r: rand.New(rand.NewPCG(seed, 11)), lines: lines}
	n := cases(1000, 100)
	for i := 0; i < n; i++ {
		p := g.cut()
		if i%4 == 3 {
			p = g.numCut()
		}
		if bytes.IndexByte(p, 0) >= 0 {
			continue
		}
		fold := g.r.IntN(3) == 0
		args := []string{"-F", "-e", string(p)}
		if fold {
			p = flipCase(g.r, p)
			args = []string{"-iF", "-e", string(p)}
		}
		q, err := Compile([]string{string(p)}, lang.ModeLiteral, fold)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := search(t, s, q, Options{})
		want := grepLines(t, args, roots)
		if err := diffLines(got, want); err != nil {
			t.Fatalf("seed %d pattern %d %q fold=%v: %v", seed, i, p, fold, err)
		}
		if i%10 == 0 {
			checkPaging(t, s, q, want, g.r)
		}
	}
}

// regexFrom builds a regex in the common subset of RE2 and POSIX ERE from
// a piece of the data.
func (g *queryGen) regexFrom() string {
	lit := func() string {
		p := g.cut()
		for bytes.ContainsAny(p, "\\\x00") {
			p = g.cut()
		}
		return regexp.QuoteMeta(string(p))
	}
	class := []string{"[0-9]", "[a-z]", "[A-Za-z_]", "[^ ]", "[[:digit:]]", "[[:alpha:]]", "."}
	rep := []string{"*", "+", "?", "{2}", "{1,3}"}
	switch g.r.IntN(8) {
	case 0:
		return lit() + "|" + lit()
	case 1:
		return lit() + class[g.r.IntN(len(class))] + rep[g.r.IntN(len(rep))] + lit()
	case 2:
		return "^" + lit()
	case 3:
		return lit() + "$"
	case 4:
		return "(" + lit() + ")" + rep[g.r.IntN(len(rep))]
	case 5:
		return class[g.r.IntN(len(class))] + rep[g.r.IntN(len(rep))]
	case 6:
		w := g.word()
		return regexp.QuoteMeta(w) + " [0-9]+"
	default:
		return lit() + ".*" + lit()
	}
}

// TestPropertyRegexVsGrep: regexes built from the data give exactly grep
// -rnE's lines, and read as basic regexes exactly grep -rnG's.
func TestPropertyRegexVsGrep(t *testing.T) {
	needGrep(t)
	roots, lines, s := propertyCorpus(t, 1<<20)
	seed := testSeed()
	g := &queryGen{r: rand.New(rand.NewPCG(seed, 13)), lines: lines}
	n := cases(400, 60)
	for i := 0; i < n; i++ {
		expr := g.regexFrom()
		fold := g.r.IntN(4) == 0
		mode, flag := lang.ModeRegex, "E"
		if g.r.IntN(3) == 0 {
			mode, flag = lang.ModeBRE, "G"
		}
		if fold {
			flag = "i" + flag
		}
		args := []string{"-" + flag, "-e", expr}
		want, rejected, slow := grepOutcome(t, args, roots...)
		q, err := Compile([]string{expr}, mode, fold)
		if slow || err != nil && rejected {
			continue // as a BRE, \( of QuoteMeta opens a group
		} else if err != nil || rejected {
			t.Fatalf("compile %q %v: %v; grep rejects: %v", expr, mode, err, rejected)
		}
		got, _ := search(t, s, q, Options{})
		if err := diffLines(got, want); err != nil {
			t.Fatalf("seed %d regex %d %q %v fold=%v: %v", seed, i, expr, mode, fold, err)
		}
	}
}

func testSeed() uint64 {
	seed := uint64(1)
	if v := os.Getenv("LOGDEX_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	return seed
}
