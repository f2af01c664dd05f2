package query

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/logdex/logdex/query/lang"
)

// TestWordMatchesBruteForce checks WordMatches against grep -ow's rule
// applied by brute force: from the line's start, the leftmost start s
// (at the line's start or after a non-word byte) where some match [s, e)
// ends at the line's end or before a non-word byte, the longest such e;
// then on from e. Patterns have no anchors or word assertions, so that a
// match of a substring does not depend on the bytes around it.
func TestWordMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(uint64(cases(4000, 400)), 7))
	pieces := []string{"a", "b", "-", " ", "_", "[ab]", "[^a]", ".", "(a|b-)", "(-|)", "é"}
	ops := []string{"", "", "*", "+", "?"}
	const alphabet = "aab- _\xc3\xa9"
	n := cases(4000, 400)
	for range n {
		var pat strings.Builder
		for k := 1 + r.IntN(3); k > 0; k-- {
			pat.WriteString(pieces[r.IntN(len(pieces))] + ops[r.IntN(len(ops))])
		}
		if r.IntN(4) == 0 {
			pat.WriteString("|" + pieces[r.IntN(len(pieces))])
		}
		q, err := CompileGrep([]string{pat.String()}, lang.ModeRegex, r.IntN(3) == 0, GrepFlags{})
		if err != nil {
			t.Fatal(err)
		}
		words, err := q.WordMatches()
		if err != nil {
			t.Fatal(err)
		}
		exprs, _ := q.onlyExprs()
		whole := regexp.MustCompile(`^(?:` + strings.Join(exprs, "|") + `)$`)
		for range 20 {
			line := make([]byte, r.IntN(10))
			for i := range line {
				line[i] = alphabet[r.IntN(len(alphabet))]
			}
			got := words(nil, line)
			if want := bruteWords(line, whole); !slices.Equal(got, want) {
				t.Fatalf("-ow %q on %q: %v, want %v", pat.String(), line, got, want)
			}
		}
	}
}

// bruteWords is grep -ow's rule by brute force; whole matches a
// substring's bytes exactly, read widened (each byte the character of its
// value) as grep in the C locale reads them.
func bruteWords(line []byte, whole *regexp.Regexp) [][2]int {
	isWord := func(c byte) bool {
		return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	widened := func(b []byte) string {
		var s strings.Builder
		for _, c := range b {
			s.WriteRune(rune(c))
		}
		return s.String()
	}
	var out [][2]int
	for s := 0; s <= len(line); {
		found := false
		if s == 0 || !isWord(line[s-1]) {
			for e := len(line); e > s; e-- {
				if (e == len(line) || !isWord(line[e])) && whole.MatchString(widened(line[s:e])) {
					out = append(out, [2]int{s, e})
					s, found = e, true
					break
				}
			}
		}
		if !found {
			s++
		}
	}
	return out
}

func ExampleQuery_WordMatches() {
	q, _ := CompileGrep([]string{`ERROR|ERROR \[`}, lang.ModeRegex, false, GrepFlags{})
	words, _ := q.WordMatches()
	line := []byte("xERROR ERROR [nio-1] ERROR")
	for _, m := range words(nil, line) {
		fmt.Printf("%q ", line[m[0]:m[1]])
	}
	// Output: "ERROR" "ERROR"
}

// TestLiteralSetLikeRegexp: -o and -ow over -F literals (folded or not,
// sharing prefixes, holding bytes >= 0x80) give what the regexp paths
// give.
func TestLiteralSetLikeRegexp(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	word := func(n int) string { return randomWord(r, "aAbB-_ \xc3\xa9x", n) }
	for range cases(2000, 300) {
		var pats []string
		for k := 1 + r.IntN(6); k > 0; k-- {
			pats = append(pats, word(r.IntN(4)))
		}
		q, err := CompileGrep(pats, lang.ModeLiteral, r.IntN(2) == 0, GrepFlags{Invert: r.IntN(4) == 0})
		if err != nil {
			t.Fatal(err)
		}
		if q.literalSet(false) == nil {
			t.Fatalf("%q: no literal set", pats)
		}
		only, _ := q.OnlyMatching()
		words, _ := q.WordMatches()
		onlyRe, err := q.onlyRegexp()
		if err != nil {
			t.Fatal(err)
		}
		wordsRe, err := q.wordsRegexp()
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			line := []byte(word(r.IntN(12)))
			if got, want := only(nil, line), onlyRe(nil, line); !slices.Equal(got, want) {
				t.Fatalf("-oF %q on %q: %v, regexp %v", pats, line, got, want)
			}
			if got, want := words(nil, line), wordsRe(nil, line); !slices.Equal(got, want) {
				t.Fatalf("-owF %q on %q: %v, regexp %v", pats, line, got, want)
			}
		}
	}
}

// TestRegexLiteralSetLikeRegexp: -o over grep regexes that match a few
// plain strings (alternations of words sharing prefixes, groups, -i's
// folded letters, [Kk] as Go keeps it) is answered by the literal set,
// with what the regexp path gives; regexes it cannot spell out are not.
func TestRegexLiteralSetLikeRegexp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 11))
	word := func(n int) string { return randomWord(r, "akKsSb-_ .x", n) }
	quote := func(s string) string { return strings.ReplaceAll(s, ".", `\.`) }
	for range cases(2000, 300) {
		var alts []string
		for k := 1 + r.IntN(5); k > 0; k-- {
			w := quote(word(1 + r.IntN(4)))
			if r.IntN(4) == 0 {
				w = "(" + w + "|" + quote(word(1+r.IntN(3))) + ")" + quote(word(r.IntN(3)))
			}
			alts = append(alts, w)
		}
		pat, fold := strings.Join(alts, "|"), r.IntN(2) == 0
		q, err := CompileGrep([]string{pat}, lang.ModeERE, fold, GrepFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if q.literalSet(true) == nil {
			t.Fatalf("-E %q (-i %v): no literal set", pat, fold)
		}
		only, err := q.OnlyMatching()
		if err != nil {
			t.Fatal(err)
		}
		onlyRe, err := q.onlyRegexp()
		if err != nil {
			t.Fatal(err)
		}
		for range 10 {
			line := []byte(word(r.IntN(16)))
			if got, want := only(nil, line), onlyRe(nil, line); !slices.Equal(got, want) {
				t.Fatalf("-oE %q (-i %v) on %q: %v, regexp %v", pat, fold, line, got, want)
			}
		}
	}
	for _, pat := range []string{"a.c", "ab*", "a[b-z]", "^ab", `ab\>`, "x|é", "(a|b){300}"} {
		q, err := CompileGrep([]string{pat}, lang.ModeERE, false, GrepFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if q.literalSet(true) != nil {
			t.Errorf("-E %q: spelt out as literals", pat)
		}
	}
}

// randomWord is n bytes drawn from alphabet.
func randomWord(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}
