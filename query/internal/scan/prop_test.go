package scan

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
)

// genRegexp builds random RE2 patterns from a small grammar over log-like
// characters.
type genRegexp struct {
	r     *rand.Rand
	atoms []string
}

var logAtoms = []string{
	"a", "b", "e", "E", "r", "o", "0", "1", "9", " ", ":", `\.`, "-", "/", `\[`, `\]`, "_", "é", "K", "k", "s", "\t", `\r`, "x",
	".", ".", `\d`, `\w`, `\s`, `\S`, `\D`, `\W`, `\pL`, `\p{Lu}`, `[a-z]`, `[A-Z]`, `[0-9]`, `[^a]`, `[^ ]`, `[^a-z0-9]`, `[[:upper:]]`, `[ae]`, `[é\x{FFFD}]`,
	`\b`, `\B`, `^`, `$`, `\A`, `\z`, "ERROR", "error", "timeout", "foo", `\x{FFFD}`, `(?i:k)`, `(?s:.)`,
	`\x{212A}`, `[\x{1F600}-\x{1F64F}]`, `\p{Han}`, `[^\x{800}]`, `\x{10FFFF}`, `[\x{80}-\x{7FF}]`, `[\x{800}-\x{FFFF}]`, `\x{10000}`,
	`[^\x00-\x7f]`, `\p{Greek}`, `日`, `😀`, `[é-ÿ]`, `\x{D7FF}`, `\x{E000}`, `[\x{FFFD}-\x{10FFFF}]`,
}

func (g *genRegexp) expr(depth int) string {
	n := 1 + g.r.IntN(3)
	if depth > 2 || g.r.IntN(3) > 0 {
		n = 1
	}
	alts := make([]string, n)
	for i := range alts {
		alts[i] = g.concat(depth)
	}
	return strings.Join(alts, "|")
}

func (g *genRegexp) concat(depth int) string {
	var b strings.Builder
	for range 1 + g.r.IntN(4) {
		b.WriteString(g.piece(depth))
	}
	return b.String()
}

func (g *genRegexp) piece(depth int) string {
	var a string
	switch k := g.r.IntN(10); {
	case k == 0 && depth < 3:
		a = "(" + g.expr(depth+1) + ")"
	case k == 1 && depth < 3:
		a = "(?i:" + g.expr(depth+1) + ")"
	default:
		a = g.atoms[g.r.IntN(len(g.atoms))]
	}
	switch g.r.IntN(12) {
	case 0:
		a += "*"
	case 1:
		a += "+"
	case 2:
		a += "?"
	case 3:
		lo := g.r.IntN(3)
		a += "{" + string(rune('0'+lo)) + "," + string(rune('0'+lo+g.r.IntN(3))) + "}"
	case 4:
		a += "*?"
	}
	return a
}

var lineAlphabet = []string{"a", "b", "e", "E", "r", "R", "o", "O", "0", "1", "9", " ", " ", ":", ".", "-", "/", "[", "]", "_",
	"é", "É", "\xff", "\xc3", "\r", "\t", "K", "k", "\u212a", "s", "ſ", "x", "ERROR", "error", "timeout", "foo", "\ufffd", "日",
	"\xe2\x82", "\xe2", "\xf0\x9f\x98", "\xf0\x9f", "\xed\xa0\x80", "\xc0\x80", "\xe0\x80\x80", "\xe0\xa0\x80", "\xf4\x90\x80\x80",
	"\xf4\x8f\xbf\xbf", "😀", "\xed\x9f\xbf", "\xee\x80\x80", "\x80", "\xbf", "\xf5", "ÿ", "\u07ff", "\u0800", "\U00010000", "\xf8\x88\x80\x80"}

func randLine(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(20) {
		b.WriteString(lineAlphabet[r.IntN(len(lineAlphabet))])
	}
	return b.String()
}

func TestRegexpProperty(t *testing.T) {
	// LOGDEX_LONG=1 runs the thorough search; SCAN_PROP="iterations seed"
	// a longer or different one.
	iters, seed := 600/raceScale, uint64(1)
	if os.Getenv("LOGDEX_LONG") != "" {
		iters = 4000
	}
	if v := os.Getenv("SCAN_PROP"); v != "" {
		fmt.Sscan(v, &iters, &seed)
	}
	r := rand.New(rand.NewPCG(seed, 2))
	g := &genRegexp{r: r, atoms: logAtoms}
	for i := range iters {
		expr := g.expr(0)
		fold := r.IntN(4) == 0
		p := expr
		if fold {
			p = "(?i)" + p
		}
		re, err := regexp.Compile(p)
		if err != nil {
			continue // e.g. a repetition of an empty-width assertion
		}
		lines := make([]string, 1+r.IntN(30))
		for j := range lines {
			lines[j] = randLine(r)
		}
		buf := joinLines(lines, r.IntN(2) == 0)
		m, err := NewRegexp(expr, fold)
		if err != nil {
			t.Fatalf("iteration %d: NewRegexp(%q, %v): %v", i, expr, fold, err)
		}
		rm := m.(*reMatcher)
		switch i % 5 {
		case 1:
			rm.pre = nil // the plain DFA path even when a prefilter exists
		case 2:
			rm.d.maxStates = 1 + r.IntN(4) // resets and fallback
		}
		restore := func() {}
		if i%2 == 0 {
			// Two lanes and many windows even on these small buffers.
			restore = setLanes(0, 1+r.IntN(40))
		}
		msg := check(m, regexpOracle(re), buf)
		restore()
		if msg != "" {
			t.Fatalf("iteration %d: pattern %q fold=%v: %s", i, expr, fold, msg)
		}
	}
}

// setLanes sets the lane parameters of run and returns a function that
// restores them.
func setLanes(min, win int) func() {
	oldMin, oldWin := dualMin, window
	dualMin, window = min, win
	return func() { dualMin, window = oldMin, oldWin }
}

func TestLiteralProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 3000 {
		lines := make([]string, 1+r.IntN(30))
		for j := range lines {
			lines[j] = randLine(r)
		}
		var pat string
		if l := lines[r.IntN(len(lines))]; r.IntN(3) > 0 && len(l) > 0 {
			a := r.IntN(len(l))
			pat = l[a : a+r.IntN(min(len(l)-a, 8)+1)]
		} else {
			pat = randLine(r)[:0] + lineAlphabet[r.IntN(len(lineAlphabet))]
		}
		if r.IntN(2) == 0 {
			pat = strings.ToUpper(pat)
		}
		fold := r.IntN(2) == 0
		buf := joinLines(lines, r.IntN(2) == 0)
		if msg := check(NewLiteral([]byte(pat), fold), literalOracle([]byte(pat), fold), buf); msg != "" {
			t.Fatalf("iteration %d: literal %q fold=%v: %s", i, pat, fold, msg)
		}
	}
}
