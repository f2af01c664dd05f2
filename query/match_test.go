package query

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/logdex/logdex/mmapstore/token"
	"github.com/logdex/logdex/query/internal/scan"
	"github.com/logdex/logdex/query/lang"
)

var highlightSeeds = []struct{ line, term string }{
	{"2026-10-10 INFO user=mallory.quint login mallory", "mallory"},
	{"MALLORY Mallory mallory_x xmallory", "mallory"},
	{"café mallory", "mallory"},
	{"caféx mallory", "caf"},
	{"KELVIN \u212aelvin kelvin", "kelvin"},
	{"", "a"},
	{"a_b a-b A_B", "a_b"},
	{"req=9b1e4f7a2c6d8e03 done", "9b1e4f7a2c6d8e03"},
}

// TestASCIIWordsMatchesScanner: the in-place ASCII path highlights exactly
// the tokens the token scanner would, and gives way on other lines.
func TestASCIIWordsMatchesScanner(t *testing.T) {
	for _, c := range highlightSeeds {
		checkASCIIWords(t, c.line, c.term)
	}
}

func FuzzASCIIWords(f *testing.F) {
	for _, c := range highlightSeeds {
		f.Add(c.line, c.term)
	}
	f.Fuzz(checkASCIIWords)
}

func checkASCIIWords(t *testing.T, line, term string) {
	folded := token.Fold(nil, []byte(term))
	if len(folded) == 0 {
		return
	}
	for _, prefix := range []bool{false, true} {
		var ls lineState
		ls.reset([]byte(line))
		want := highlightTokens(&ls, nil, func(tok []byte) bool {
			if prefix {
				return bytes.HasPrefix(tok, folded)
			}
			return bytes.Equal(tok, folded)
		})
		got, ok := asciiWords([]byte(line), [][2]int{{-1, -1}}, folded, prefix)
		if !ok {
			if len(got) != 1 {
				t.Fatalf("%q: gave way but changed dst: %v", line, got)
			}
			continue
		}
		if fmt.Sprint(got[1:]) != fmt.Sprint(want) && !(len(got) == 1 && len(want) == 0) {
			t.Fatalf("line %q term %q prefix %v: got %v, want %v", line, folded, prefix, got[1:], want)
		}
	}
}

// FuzzCompile: whatever parses compiles, and the compiled query evaluates
// and highlights lines without panics.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{"error", `"a b" OR c*`, "(a -b) AND NOT /x+/", `'lit\'s'`, "a(", "/[/", "é ü", "/\\<x\\>/ y", "a\n(b|c)+?", "[[.a.]]\nx"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(2))
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, q string, mode uint8) {
		m := lang.Mode(mode % 5)
		n, err := lang.Parse([]string{q}, m, mode&8 != 0)
		if err != nil {
			return
		}
		cq, err := CompileNode(n, m)
		if err != nil {
			t.Fatalf("compile %q: %v", q, err)
		}
		cq.MatchLine([]byte(q))
		cq.Highlights([]byte("some log line " + q))
	})
}

// TestHighlightsSkipEmptyMatches: a regex that matches the empty string
// (grep -E's a+? is (a+)?) marks only what it matched of the line.
func TestHighlightsSkipEmptyMatches(t *testing.T) {
	q, err := Compile([]string{"a+?"}, lang.ModeRegex, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := q.Highlights([]byte("xaax a")); fmt.Sprint(got) != "[[1 3] [5 6]]" {
		t.Fatalf("highlights %v", got)
	}
	if got := q.Highlights([]byte("xyz")); len(got) != 0 || !q.MatchLine([]byte("xyz")) {
		t.Fatalf("highlights %v", got)
	}
}

// asciiWords (the tests' view of asciiFind) appends the spans of line's tokens equal to the folded term t
// (starting with it, if prefix) when line is all ASCII, comparing in place
// instead of folding every token: the common case of highlighting hits.
// ok is false, and dst unchanged, when the line holds other bytes (the
// token scanner then decides).
func asciiWords(line []byte, dst [][2]int, t []byte, prefix bool) (out [][2]int, ok bool) {
	if !scan.IsASCII(line) {
		return dst, false
	}
	out, _ = asciiFind(line, [][]byte{t}, prefix, dst, false)
	return out, true
}

var matchSeeds = []struct{ line, phrase string }{
	{"pool exhausted", "pool exhausted"},
	{"é pool exhausted é", "pool exhausted"},
	{"épool exhausted", "pool exhausted"},
	{"pool exhaustedé", "pool exhausted"},
	{"pool exhaustedé pool exhausted", "pool exhausted"},
	{"pool\u0301 exhausted pool exhausted", "pool exhausted"},
	{"\u212aelvin down; kelvin down", "kelvin down"},
	{"\u212aelvin down", "kelvin down"},
	{"caf\u00e9 open", "caf"},
	{"\xe2\x82pool exhausted", "pool exhausted"},
	{"pool \xff exhausted", "pool exhausted"},
	{"pool_exhausted pool exhausted", "pool"},
	{"ПУЛ pool", "пул"},
}

// TestASCIIMatchMatchesTokens: a word or phrase decided in place on a line
// not known to be ASCII (asciiMatch) gets the token scanner's answer.
func TestASCIIMatchMatchesTokens(t *testing.T) {
	for _, c := range matchSeeds {
		checkASCIIMatch(t, c.line, c.phrase)
	}
}

func FuzzASCIIMatch(f *testing.F) {
	for _, c := range matchSeeds {
		f.Add(c.line, c.phrase)
	}
	f.Fuzz(checkASCIIMatch)
}

func checkASCIIMatch(t *testing.T, line, phrase string) {
	var terms [][]byte
	for _, w := range token.Terms([]byte(phrase)) {
		terms = append(terms, []byte(w))
	}
	if len(terms) == 0 {
		return
	}
	var ms []matcher
	for _, lastPrefix := range []bool{false, true} {
		ms = append(ms, phraseM{terms: terms, lastPrefix: lastPrefix})
	}
	ms = append(ms, termM{t: terms[0]}, prefixM{t: terms[0]})
	for _, m := range ms {
		var fresh, tokenized lineState
		fresh.reset([]byte(line))
		tokenized.reset([]byte(line))
		tokenized.tokens() // the token path only
		if got, want := m.match(&fresh), m.match(&tokenized); got != want {
			t.Fatalf("%q in %q (%T %v): in place %v, tokens %v", phrase, line, m, m, got, want)
		}
	}
}

// TestHighlightsLikeGrep: a regex (the API's mode=regex, /re/ in the
// query language) marks what grep --color marks: the leftmost-longest
// matches, with \< or \> only the matches, not the character beside them
// that the translation takes to look at. --re2 keeps Go's leftmost-first.
func TestHighlightsLikeGrep(t *testing.T) {
	for _, c := range []struct {
		mode       lang.Mode
		q, line    string
		highlights string
	}{
		{lang.ModeRegex, `\<[0-9]{3}\>`, "[exec-164] status=500 id=12345", "[[6 9] [18 21]]"},
		{lang.ModeRegex, `\<[0-9]{3}\>`, "caf\xe9 500\xe9", "[[5 8]]"},
		{lang.ModeBRE, `err\>`, "err: errno", "[[0 3]]"},
		{lang.ModeQuery, `status /\<5[0-9]{2}\>/`, "status=503 x", "[[0 6] [7 10]]"},
		{lang.ModeRegex, ` | tbird`, "a tbird b", "[[1 8]]"},
		{lang.ModeRegex, `a|ab|abc`, "xabcx \xe9abc", "[[1 4] [7 10]]"},
		{lang.ModeBRE, `a\|ab`, "ab", "[[0 2]]"},
		{lang.ModeQuery, `/a|ab/`, "ab", "[[0 2]]"},
		{lang.ModeRE2, `a|ab`, "ab", "[[0 1]]"},
	} {
		q, err := Compile([]string{c.q}, c.mode, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(q.Highlights([]byte(c.line))); got != c.highlights {
			t.Errorf("%q in %q: highlights %s, want %s", c.q, c.line, got, c.highlights)
		}
	}
}
