package relit

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/logdex/logdex/mmapstore/token"
)

func mustAnalyze(t testing.TB, expr string) *Req {
	t.Helper()
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		t.Fatalf("parse %q: %v", expr, err)
	}
	return Analyze(re)
}

func TestAnalyze(t *testing.T) {
	tests := []struct{ expr, want string }{
		// Typical log searches.
		{`blk_-?[0-9]+ terminating`, `("blk_" AND " terminating")`},
		{`HTTP/1\.1" 503`, `"HTTP/1.1\" 503"`},
		{`] \[error\] `, `"] [error] "`},
		{`(GET|POST) /api/v[12]/users`, `("GET /api/v1/users" OR "GET /api/v2/users" OR "POST /api/v1/users" OR "POST /api/v2/users")`},
		{`ERROR.*timeout`, `("ERROR" AND "timeout")`},
		{`\d+\.\d+\.\d+\.\d+`, `"."`},
		{`(?i)packetresponder`, `(?i)"packetresponder"`},
		{`[Ee]rror`, `("Error" OR "error")`},
		{`\bword\b`, `"word"`},
		{`^\[(INFO|WARN)\] `, `("[INFO] " OR "[WARN] ")`},
		{`Received block blk_\d+ of size \d+ from /10\.`, `("Received block blk_" AND " of size " AND " from /10.")`},
		{`user=\w+ status=(4|5)\d\d`, `("user=" AND (" status=4" OR " status=5"))`},
		{`(?i)connection (refused|reset)`, `((?i)"connection refused" OR (?i)"connection reset")`},
		{`exception in thread "main"`, `"exception in thread \"main\""`},
		{`latency=\d{3,}ms`, `("latency=" AND "ms")`},
		{`(?i)error|warn`, `((?i)"error" OR (?i)"warn")`},
		{`^\s*at org\.apache\.`, `"at org.apache."`},
		{`took [0-9.]+ ?ms`, `("took " AND "ms")`},
		{`(?i)k`, "(\"K\" OR \"k\" OR \"\u212a\")"},
		{`(?i)[a-c]x`, `((?i)"ax" OR (?i)"bx" OR (?i)"cx")`},
		// Structure.
		{`.*`, `ALL`},
		{`^$`, `ALL`},
		{`x*`, `ALL`},
		{`x?`, `ALL`},
		{`x{0,5}`, `ALL`},
		{`a{3}`, `"aaa"`},
		{`a{2,}b`, `"aab"`},
		{`(ab)+c`, `"abc"`},
		{`(ab){2}`, `"abab"`},
		{`foo|bar.*baz`, `("foo" OR ("bar" AND "baz"))`},
		{`foo(a|b)bar`, `("fooabar" OR "foobbar")`},
		{`foo[0-9]bar`, `("foo" AND "bar")`},
		{`foo.bar`, `("foo" AND "bar")`},
		{`(a.*b|c.*d)e`, `((("a" AND "b") OR ("c" AND "d")) AND ("be" OR "de"))`},
		{`(?i)err(or)?`, `(?i)"err"`},
		{`err(or)?s`, `("errors" OR "errs")`},
		{`[^\x00-\x{10FFFF}]`, `NONE`},
		{`a[^\x00-\x{10FFFF}]`, `NONE`},
		{`[^a]bc`, `"bc"`},
		// Unicode and U+FFFD.
		{`café|naïve`, `("café" OR "naïve")`},
		{`(?i)ΣΑΣ`, `(?i)"σασ"`},
		{`a\x{FFFD}b`, `("a" AND "b")`},
		{`[\x{FFFD}x]yz`, `"yz"`},
		{`\x{FFFD}`, `ALL`},
	}
	for _, tt := range tests {
		if got := mustAnalyze(t, tt.expr).String(); got != tt.want {
			t.Errorf("Analyze(%#q) = %s, want %s", tt.expr, got, tt.want)
		}
	}
}

func TestEvalFold(t *testing.T) {
	k := &Req{Op: OpLit, Lit: "ok", Fold: true}
	for _, line := range []string{"OK", "oK", "o\u212a", "xxOkxx"} {
		if !k.Eval([]byte(line)) {
			t.Errorf("%s.Eval(%q) = false", k, line)
		}
	}
	for _, line := range []string{"o", "o\xffk", "\xffk", "0k"} {
		if k.Eval([]byte(line)) {
			t.Errorf("%s.Eval(%q) = true", k, line)
		}
	}
	// (?i) regexp and fold literal agree on the Kelvin sign and long s.
	r := mustAnalyze(t, `(?i)kiss`)
	for _, line := range []string{"\u212aiss", "KI\u017fS", "kiSs"} {
		if !regexp.MustCompile(`(?i)kiss`).MatchString(line) || !r.Eval([]byte(line)) {
			t.Errorf("%s.Eval(%q) disagrees with regexp", r, line)
		}
	}
}

// TestFoldRune checks that the canonical fold form depends only on the
// SimpleFold orbit and belongs to it: this is what makes Fold sound.
func TestFoldRune(t *testing.T) {
	inOrbit := func(x, r rune) bool {
		for f := unicode.SimpleFold(r); ; f = unicode.SimpleFold(f) {
			if f == x {
				return true
			}
			if f == r {
				return false
			}
		}
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		c := token.FoldRune(r)
		if !inOrbit(c, r) {
			t.Fatalf("FoldRune(%U) = %U, not in its orbit", r, c)
		}
		if f := unicode.SimpleFold(r); token.FoldRune(f) != c {
			t.Fatalf("FoldRune(%U) = %U but FoldRune(%U) = %U", r, c, f, token.FoldRune(f))
		}
		if hasFold(r) != (unicode.SimpleFold(r) != r) {
			t.Fatalf("hasFold(%U) wrong", r)
		}
	}
}

func TestSizeGuard(t *testing.T) {
	var words []string
	for i := range 300 {
		words = append(words, fmt.Sprintf("w%03d.*z%03d", i, i))
	}
	expr := strings.Join(words, "|") + `(x[ab][cd][ef][gh]y.*){20}`
	r := mustAnalyze(t, expr)
	if n := leaves(r); n > maxLeaves {
		t.Errorf("%d leaves > %d: %s", n, maxLeaves, r)
	}
	checkShape(t, expr, r)
}

// checkShape verifies the documented invariants of a result.
func checkShape(t testing.TB, expr string, r *Req) {
	t.Helper()
	if n := leaves(r); n > maxLeaves {
		t.Fatalf("%#q: %d leaves", expr, n)
	}
	var walk func(*Req)
	walk = func(r *Req) {
		switch r.Op {
		case OpLit:
			if r.Lit == "" || !utf8.ValidString(r.Lit) || strings.ContainsRune(r.Lit, utf8.RuneError) {
				t.Fatalf("%#q: bad literal %q", expr, r.Lit)
			}
			if c, cased := canonString(r.Lit); r.Fold && (c != r.Lit || !cased) {
				t.Fatalf("%#q: fold literal %q not canonical", expr, r.Lit)
			}
		case OpAnd, OpOr:
			if len(r.Sub) < 2 {
				t.Fatalf("%#q: %v with %d children", expr, r.Op, len(r.Sub))
			}
			for _, s := range r.Sub {
				if s.Op == r.Op || s.Op == OpAll || s.Op == OpNone {
					t.Fatalf("%#q: unsimplified %s", expr, r)
				}
				walk(s)
			}
		}
	}
	walk(r)
}

// Random regexps and lines for the soundness property.

var alphabet = []string{"a", "b", "A", "B", "k", "K", "\u212a", "s", "S", "\u017f",
	"é", "É", "\ufffd", "0", "1", " ", "-", ".", "世", "σ", "Σ", "ς", "\n"}

var invalid = []string{"\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80", "\x80", "\xef\xbf"}

func genRegexp(rng *rand.Rand, depth int) string {
	if depth <= 0 || rng.IntN(4) == 0 {
		return genAtom(rng)
	}
	switch rng.IntN(9) {
	case 0, 1:
		return genRegexp(rng, depth-1) + genRegexp(rng, depth-1)
	case 2:
		return genRegexp(rng, depth-1) + "|" + genRegexp(rng, depth-1)
	case 3:
		ops := []string{"*", "+", "?", "{2}", "{0,2}", "{1,3}", "{2,}", "{3}", "+?", "{17}"}
		return "(?:" + genRegexp(rng, depth-1) + ")" + ops[rng.IntN(len(ops))]
	case 4:
		return "(?i:" + genRegexp(rng, depth-1) + ")"
	case 5:
		return "(" + genRegexp(rng, depth-1) + ")"
	case 6:
		return genRegexp(rng, depth-1) + genAtom(rng) + genRegexp(rng, depth-1)
	default:
		return genAtom(rng) + genRegexp(rng, depth-1)
	}
}

func genAtom(rng *rand.Rand) string {
	switch rng.IntN(10) {
	case 0, 1, 2, 3:
		var b strings.Builder
		for range 1 + rng.IntN(3) {
			b.WriteString(regexp.QuoteMeta(alphabet[rng.IntN(len(alphabet))]))
		}
		return b.String()
	case 4:
		atoms := []string{`.`, `(?s:.)`, `\d`, `\w`, `\s`, `\S`, `\pL`, `\p{Greek}`, `\x{FFFD}`, `[^a]`, `[^\n]`}
		return atoms[rng.IntN(len(atoms))]
	case 5:
		anchors := []string{`^`, `$`, `\b`, `\B`, `\A`, `\z`, `(?m:^)`, `(?m:$)`}
		return anchors[rng.IntN(len(anchors))]
	default:
		items := []string{"a", "b", "k", "K", "s", "é", "σ", "\ufffd", "a-c", "A-Z", "0-9", `\x{FFFC}-\x{FFFF}`, `\x{D7FF}-\x{E000}`, `\n`, "-"}
		var b strings.Builder
		b.WriteByte('[')
		if rng.IntN(3) == 0 {
			b.WriteByte('^')
		}
		for range 1 + rng.IntN(3) {
			b.WriteString(items[rng.IntN(len(items))])
		}
		b.WriteByte(']')
		return b.String()
	}
}

// sample appends a string that re is likely to match (anchors are ignored,
// so the regexp has the last word).
func sample(rng *rand.Rand, re *syntax.Regexp, b []byte) []byte {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				for n := rng.IntN(4); n > 0; n-- {
					r = unicode.SimpleFold(r)
				}
			}
			b = appendRune(rng, b, r)
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return b
		}
		i := rng.IntN(len(re.Rune)/2) * 2
		lo, hi := re.Rune[i], re.Rune[i+1]
		r := lo
		switch rng.IntN(4) {
		case 0:
			r = hi
		case 1:
			r = lo + rune(rng.Int64N(int64(min(hi-lo, 64))+1))
		case 2:
			r = lo + rune(rng.Int64N(int64(hi-lo)+1))
		}
		if lo <= utf8.RuneError && utf8.RuneError <= hi && rng.IntN(3) == 0 {
			r = utf8.RuneError
		}
		b = appendRune(rng, b, r)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b = appendNoise(rng, b, 1)
	case syntax.OpCapture:
		b = sample(rng, re.Sub[0], b)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			b = sample(rng, s, b)
		}
	case syntax.OpAlternate:
		b = sample(rng, re.Sub[rng.IntN(len(re.Sub))], b)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		lo, hi := 0, 3
		switch re.Op {
		case syntax.OpPlus:
			lo = 1
		case syntax.OpQuest:
			hi = 1
		case syntax.OpRepeat:
			lo, hi = re.Min, re.Max
			if hi < 0 || hi > lo+2 {
				hi = lo + 2
			}
		}
		for range lo + rng.IntN(hi-lo+1) {
			b = sample(rng, re.Sub[0], b)
		}
	}
	return b
}

// appendRune appends r, or for U+FFFD sometimes an invalid byte sequence,
// which regexp decodes as U+FFFD too.
func appendRune(rng *rand.Rand, b []byte, r rune) []byte {
	if r == utf8.RuneError && rng.IntN(2) == 0 {
		return append(b, invalid[rng.IntN(len(invalid))]...)
	}
	return utf8.AppendRune(b, r)
}

func appendNoise(rng *rand.Rand, b []byte, n int) []byte {
	for range n {
		if rng.IntN(6) == 0 {
			b = append(b, invalid[rng.IntN(len(invalid))]...)
		} else {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
	}
	return b
}

func TestSoundness(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n, matched := 4000, 0
	if testing.Short() {
		n = 500
	}
	for i := 0; i < n; i++ {
		expr := genRegexp(rng, 1+rng.IntN(5))
		if rng.IntN(5) == 0 {
			expr = "(?i)" + expr
		}
		re, err := syntax.Parse(expr, syntax.Perl)
		if err != nil {
			continue
		}
		rx := regexp.MustCompile(expr)
		req := Analyze(re)
		checkShape(t, expr, req)
		for j := 0; j < 40; j++ {
			var line []byte
			if j < 30 {
				line = appendNoise(rng, nil, rng.IntN(3))
				line = sample(rng, re, line)
				line = appendNoise(rng, line, rng.IntN(3))
			} else {
				line = appendNoise(rng, nil, rng.IntN(12))
			}
			if rx.Match(line) {
				matched++
				if !req.Eval(line) {
					t.Fatalf("unsound: regexp %#q matches %q but %s is false", expr, line, req)
				}
			}
		}
	}
	t.Logf("%d matching lines checked", matched)
}

func FuzzAnalyze(f *testing.F) {
	seeds := []struct{ expr, line string }{
		{`blk_-?[0-9]+ terminating`, "blk_-42 terminating"},
		{`(?i)packetresponder`, "PacketResponder 1"},
		{`(?i)k`, "\u212a"},
		{`a\x{FFFD}b`, "a\xffb"},
		{`[^a]bc`, "\xc3bc"},
		{`foo|bar.*baz`, "bar baz"},
		{`(ab)+c`, "ababc"},
		{`[Ee]rror`, "Error"},
		{`(?i)ſ[\x{FFFD}é]`, "S\xe2\x82"},
	}
	for _, s := range seeds {
		f.Add(s.expr, []byte(s.line))
	}
	f.Fuzz(func(t *testing.T, expr string, line []byte) {
		if len(expr) > 500 {
			return
		}
		re, err := syntax.Parse(expr, syntax.Perl)
		if err != nil {
			return
		}
		rx, err := regexp.Compile(expr)
		if err != nil {
			return
		}
		req := Analyze(re)
		checkShape(t, expr, req)
		if rx.Match(line) && !req.Eval(line) {
			t.Fatalf("unsound: regexp %#q matches %q but %s is false", expr, line, req)
		}
	})
}

func BenchmarkAnalyze(b *testing.B) {
	expr := `(?i)(GET|POST|PUT|DELETE) /api/v[12]/(users|orders|items)/\d+ HTTP/1\.[01]" (5\d\d|404) \d+ .*(timeout|refused|reset by peer)`
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		Analyze(re)
	}
}

func TestKeepRunes(t *testing.T) {
	for _, tt := range []struct {
		s     string
		n     int
		atEnd bool
		want  string
	}{
		{"aéb", 0, false, ""}, {"aéb", 0, true, ""}, {"aéb", 2, false, "aé"},
		{"aéb", 2, true, "éb"}, {"aéb", 5, true, "aéb"}, {"", 1, true, ""},
	} {
		if got := keepRunes(tt.s, tt.n, tt.atEnd); got != tt.want {
			t.Errorf("keepRunes(%q, %d, %v) = %q, want %q", tt.s, tt.n, tt.atEnd, got, tt.want)
		}
	}
}
