package token

import (
	"bytes"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"blk_-6952295868487656571", []string{"blk_", "6952295868487656571"}},
		{"dfs.DataNode$PacketResponder", []string{"dfs", "datanode", "packetresponder"}},
		{"", nil},
		{"   ", nil},
		{"GET /api/v1/users?id=42 HTTP/1.1\r", []string{"get", "api", "v1", "users", "id", "42", "http", "1", "1"}},
		{"José Zoë 東京", []string{"josé", "zoë", "東京"}},
		{"ÉCOLE école", []string{"école", "école"}},
		{"\xff\xfeabc\xc3", []string{"abc"}},
		{"a\x00b", []string{"a", "b"}},
		{"KELVIN \u212a", []string{"kelvin", "k"}},
		{"ſtop STOP", []string{"stop", "stop"}},
		{"x٣y", []string{"x٣y"}}, // Arabic-Indic digit is a digit
		{"tab\there", []string{"tab", "here"}},
		{"a<script>alert(1)</script>", []string{"a", "script", "alert", "1", "script"}},
	}
	for _, tc := range tests {
		got := Terms([]byte(tc.in))
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSpan(t *testing.T) {
	var sc Scanner
	line := []byte("  Foo.bar ")
	sc.Reset(line)
	var spans [][2]int
	for sc.Next() {
		s, e := sc.Span()
		spans = append(spans, [2]int{s, e})
	}
	if want := [][2]int{{2, 5}, {6, 9}}; !reflect.DeepEqual(spans, want) {
		t.Fatalf("spans %v, want %v", spans, want)
	}
}

// refTerms is an independent statement of the rule: runs of \pL, \p{Nd} and _.
var refRE = regexp.MustCompile(`[\pL\p{Nd}_]+`)

func refTerms(line []byte) []string {
	var out []string
	for _, m := range refRE.FindAll(line, -1) {
		var b strings.Builder
		for _, r := range string(m) {
			b.WriteRune(FoldRune(r))
		}
		out = append(out, b.String())
	}
	return out
}

func FuzzTerms(f *testing.F) {
	for _, s := range []string{"blk_-695", "dfs.DataNode$PacketResponder", "José\xffZoë", "\u212a\u017f", "a_b c"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got := Terms(line)
		if !utf8.Valid(line) {
			// regexp treats invalid bytes as U+FFFD, which is not a letter:
			// the reference agrees as long as U+FFFD itself is absent.
			if strings.ContainsRune(string(line), utf8.RuneError) {
				return
			}
		}
		want := refTerms(line)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Terms(%q) = %q, want %q", line, got, want)
		}
		// Folding is idempotent and consistent with SimpleFold orbits.
		for _, term := range got {
			if string(Fold(nil, []byte(term))) != term {
				t.Fatalf("fold not idempotent on %q", term)
			}
		}
	})
}

func TestFoldRuneOrbits(t *testing.T) {
	// Every member of a simple folding orbit folds to the same rune, and the
	// result is a member of the orbit: what regexp (?i) matches, the index
	// stores under one term.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		want := FoldRune(r)
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if got := FoldRune(f); got != want {
				t.Fatalf("FoldRune(%U)=%U but FoldRune(%U)=%U", r, want, f, got)
			}
		}
		if FoldSafe(r) && IsWordRune(r) != IsWordRune(want) && r != utf8.RuneError {
			t.Fatalf("word class changes under folding: %U -> %U", r, want)
		}
		if !FoldSafe(r) && r != 0x345 && r != 0x399 && r != 0x3b9 && r != 0x1fbe {
			t.Fatalf("unexpected fold-unsafe rune %U", r)
		}
	}
}

func BenchmarkScanner(b *testing.B) {
	line := []byte(`2026-11-29T23:39:07.123Z INFO  [api-7f9c] GET /api/v1/users/42/orders?limit=50 status=200 dur=12ms rid=3f2a9c1e8b7d4e21 ip=10.213.7.42 ua="Mozilla/5.0"`)
	var sc Scanner
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		sc.Reset(line)
		for sc.Next() {
		}
	}
}

func TestCompounds(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"from 10.213.7.42:443", []string{"10.213.7.42"}},
		{"HTTP/1.1 200 0.532s", nil},
		{"v1.2..3 1. .5 1.2.3.", []string{"1.2.3"}},
		{"a1.2.3b 12:30:45.123Z", []string{"1.2.3"}},
		{"no dots 42", nil},
		{"2005-06-03-15.42.50.675872 x", []string{"15.42.50.675872"}},
		{"..1.2.3..4.5", []string{"1.2.3"}},
	}
	for _, tc := range tests {
		var got []string
		Compounds([]byte(tc.in), func(b []byte) { got = append(got, string(b)) })
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Compounds(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// refCompounds states the rule as a regexp: maximal `[0-9]+(\.[0-9]+)+`
// runs with at least two dots.
var refCompoundRE = regexp.MustCompile(`[0-9]+(\.[0-9]+)+`)

func FuzzCompounds(f *testing.F) {
	f.Add([]byte("10.213.7.42 1.1 ..3.4."))
	f.Fuzz(func(t *testing.T, line []byte) {
		var got []string
		Compounds(line, func(b []byte) { got = append(got, string(b)) })
		var want []string
		for _, m := range refCompoundRE.FindAll(line, -1) {
			if bytes.Count(m, []byte(".")) >= 2 {
				want = append(want, string(m))
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Compounds(%q) = %q, want %q", line, got, want)
		}
	})
}
