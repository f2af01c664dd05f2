package query

import (
	"fmt"
	"strings"
	"testing"

	"github.com/logdex/logdex/mmapstore/token"
)

var phraseSeeds = []struct{ line, phrase string }{
	{"2026-10-10 ERROR pool exhausted: all 64 connections busy", "pool exhausted"},
	{"POOL  Exhausted pool exhaustedly pool-exhausted", "pool exhausted"},
	{"a a a b a", "a a"},
	{"a a a b a", "a b"},
	{"pool exhausted", "pool exh"},
	{"café pool exhausted", "pool exhausted"},
	{"x_y z x_y", "x_y z x"},
	{"", "a b"},
	{"ends with pool", "pool exhausted"},
	{"mallory", "mallory"},
	{"spool apple_pool PpOoL_x 9pool pOol exhausted _pool", "pool"},
	{"_x _x x_ _x", "_x"},
	{"1.5 15 v15 15x 15", "15"},
	{`{"level":"error","eRr":"ERROR er errors","x":"err"}`, "error"},
	{`{"level":"error","eRr":"ERROR er errors","x":"err"}`, "er"},
	{"lever EReR_ error", "er"},
	{"xe", "er"},
	{"er", "er"},
	{"e", "er"},
	{"a12 _1 A1b _12", "a1"},
	// jumping between a rare letter's occurrences (asciiFindAnchored)
	{"pxp pxp pxp Pxp_ pXp", "pxp pxp"},
	{"Xx xX x _x x_ X", "x"},
	{"kk_k kk k kk kkk", "kk"},
	{"a jam b jam jamb jam b", "jam b"},
	{"ox pox box ox, box: OX ox", "box ox"},
	{"zz zzz zz", "zz z"},
	{"wait waited waits await", "wait"},
	{"db pool exhausted exhausted pool exhausted", "pool exhausted"},
}

// TestASCIIFindMatchesTokens: on ASCII lines, words and phrases compared in
// place match and highlight exactly what the tokenized line does.
func TestASCIIFindMatchesTokens(t *testing.T) {
	for _, c := range phraseSeeds {
		checkASCIIFind(t, c.line, c.phrase)
	}
	for _, c := range highlightSeeds {
		checkASCIIFind(t, c.line, c.term)
	}
}

func FuzzASCIIFind(f *testing.F) {
	for _, c := range phraseSeeds {
		f.Add(c.line, c.phrase)
	}
	f.Fuzz(checkASCIIFind)
}

// checkASCIIFind compares the matchers of phrase (every term a word, the
// last one also a prefix) on a line evaluated in place with the same
// matchers on the tokenized line.
func checkASCIIFind(t *testing.T, line, phrase string) {
	var terms [][]byte
	for _, w := range strings.Fields(phrase) {
		if f := token.Fold(nil, []byte(w)); len(f) > 0 {
			terms = append(terms, f)
		}
	}
	if len(terms) == 0 {
		return
	}
	ms := []matcher{phraseM{terms: terms}, phraseM{terms: terms, lastPrefix: true}, termM{terms[0]}, prefixM{terms[0]}}
	for _, m := range ms {
		var inPlace, tokenized lineState
		inPlace.reset([]byte(line))
		tokenized.reset([]byte(line))
		tokenized.tokens()
		gotM, wantM := m.match(&inPlace), m.match(&tokenized)
		inPlace.reset([]byte(line))
		got, want := m.highlight(&inPlace, nil), m.highlight(&tokenized, nil)
		if gotM != wantM || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("line %q, %#v: in place %v %v, tokenized %v %v", line, m, gotM, got, wantM, want)
		}
	}
}
