package lang

import (
	"errors"
	"fmt"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	tests := []struct {
		q    string
		want string
	}{
		{"error", "error"},
		{"Error", "error"},
		{"timeout db", "(timeout AND db)"},
		{"timeout AND db", "(timeout AND db)"},
		{"a OR b c", "(a OR (b AND c))"},
		{"a OR b OR c", "(a OR b OR c)"},
		{"NOT debug", "NOT debug"},
		{"-debug info", "(NOT debug AND info)"},
		{"(a OR b) -c", "((a OR b) AND NOT c)"},
		{`"connection reset"`, `"connection reset"`},
		{`"conn res*"`, `"conn res*"`},
		{"conn*", "conn*"},
		{"dfs.DataNode", `"dfs datanode"`},
		{"blk_-6952295868487656571", `"blk_ 6952295868487656571"`},
		{`'rhost=10.0.'`, `'rhost=10.0.'i`},
		{`'it\'s'`, `'it's'i`},
		{`/blk_-?[0-9]+ terminating/`, `/blk_-?[0-9]+ terminating/i`},
		{`/a\/b/`, `/a/b/i`},
		{"and or not", "(and AND or AND not)"},
		{"NOT(a)", "NOT a"},
		{"user=bob", `"user bob"`},
		{"NOT-FOUND", `"not found"`},
		{"status NOT-FOUND", `(status AND "not found")`},
		{"NOT -debug", "NOT NOT debug"},
	}
	for _, tc := range tests {
		n, err := Parse([]string{tc.q}, ModeQuery, true)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.q, err)
			continue
		}
		if got := n.String(); got != tc.want {
			t.Errorf("Parse(%q) = %s, want %s", tc.q, got, tc.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		q    string
		mode Mode
		pos  int
		msg  string
	}{
		{"", ModeQuery, 0, "empty query"},
		{"(error", ModeQuery, 0, "unclosed ("},
		{"error)", ModeQuery, 5, "unbalanced )"},
		{"a AND", ModeQuery, 2, "AND needs a right-hand side"},
		// An operator right before ")" is one, as before a space.
		{"(error OR)", ModeQuery, 7, "OR needs a right-hand side"},
		{"(a AND)", ModeQuery, 3, "AND needs a right-hand side"},
		{"(NOT)", ModeQuery, 1, "NOT needs an operand"},
		{"x (a NOT)", ModeQuery, 5, "NOT needs an operand"},
		{"OR a", ModeQuery, 0, "OR needs a left-hand side"},
		{`"abc`, ModeQuery, 0, "unclosed \""},
		{"x 'abc", ModeQuery, 2, "unclosed '"},
		{"x /ab", ModeQuery, 2, "unclosed /"},
		{"x /a(b/", ModeQuery, 4, `Unmatched ( or \(`},
		{`x /a\/b(c/`, ModeQuery, 7, `Unmatched ( or \(`},
		{"x /a{1,0}/", ModeQuery, 4, `Invalid content of \{\}`},
		{`/(a)\1/`, ModeQuery, 4, "back-references are not supported"},
		{"===", ModeQuery, 0, "no letters or digits"},
		{"()", ModeQuery, 0, "empty parentheses"},
		{"a - b", ModeQuery, 2, "- needs a term"},
		{"NOT OR x", ModeQuery, 0, "NOT needs an operand"},
		{"a NOT AND x", ModeQuery, 2, "NOT needs an operand"},
		{"é (", ModeQuery, 3, "expected a search term"},
		{"a(b", ModeRegex, 1, `Unmatched ( or \(`},
		{"a{}", ModeRegex, 1, `Invalid content of \{\}`},
		{"[z-a]", ModeRegex, 1, "Invalid range end"},
		{"a[1-3-5]c", ModeRegex, 5, "Invalid range end"},
		{"ok\né(b", ModeRegex, 4, `Unmatched ( or \(`},
		{`(a)\1`, ModeRegex, 3, "back-references are not supported"},
		{`a\(b`, ModeBRE, 1, `Unmatched ( or \(`},
		{`a\{1`, ModeBRE, 1, `Unmatched \{`},
		{"a(b", ModeRE2, 0, "missing closing )"},
		{"x**", ModeRE2, 1, "invalid nested repetition"},
		{"[z-a]", ModeRE2, 1, "invalid character class range"},
		{"[a-z]+ [a-z", ModeRE2, 7, "missing closing ]"}, // (not the first [a-z)
		{`a\*b|*c`, ModeRE2, 5, "missing argument to repetition operator"},
	}
	for _, tc := range tests {
		_, err := Parse([]string{tc.q}, tc.mode, false)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q): %v, want a ParseError", tc.q, err)
			continue
		}
		if pe.Pos != tc.pos || !contains(pe.Msg, tc.msg) {
			t.Errorf("Parse(%q) = %q at %d, want %q at %d", tc.q, pe.Msg, pe.Pos, tc.msg, tc.pos)
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || len(s) >= len(sub) && (s == sub || indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// FuzzParse: any input parses or fails with a ParseError whose position
// lies within the query. (query's FuzzCompile also compiles and runs what
// parses.)
func FuzzParse(f *testing.F) {
	for _, s := range []string{"error", `"a b" OR c*`, "(a -b) AND NOT /x+/", `'lit\'s'`, "a(", "/[/", "é ü", `/a\/b(/`, "x\n(", `a\{1`, "[[.a.]]\n\\x"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(2))
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, q string, mode uint8) {
		n, err := Parse([]string{q}, Mode(mode%5), mode&8 != 0)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q): %v is not a ParseError", q, err)
			}
			if pe.Pos < 0 || pe.Pos > utf8.RuneCountInString(q) {
				t.Fatalf("Parse(%q): position %d outside the query", q, pe.Pos)
			}
			return
		}
		if n == nil {
			t.Fatalf("Parse(%q): no tree and no error", q)
		}
	})
}

// TestRegexModes: the regex modes read their syntax, split patterns at
// newlines as grep does, and report grep's warnings.
func TestRegexModes(t *testing.T) {
	tests := []struct {
		patterns []string
		mode     Mode
		want     string
		warnings []Warning
	}{
		{[]string{"a+?"}, ModeRegex, "/a+?/", nil},
		{[]string{"a+?"}, ModeRE2, "re2/a+?/", nil},
		{[]string{`a\+`}, ModeBRE, `bre/a\+/`, nil},
		{[]string{"foo\nalpha"}, ModeLiteral, "('foo' OR 'alpha')", nil},
		{[]string{"foo\n(a|b)"}, ModeRegex, "(/foo/ OR /(a|b)/)", nil},
		{[]string{"x", "y\nz"}, ModeBRE, "(bre/x/ OR bre/y/ OR bre/z/)", nil},
		{[]string{"ok", "a\n*b"}, ModeRegex, "(/ok/ OR /a/ OR /*b/)", []Warning{{Msg: "* at start of expression", Pattern: 1, Pos: 2}}},
		{[]string{"x /+a/"}, ModeQuery, "(x AND /+a/i)", []Warning{{Msg: "+ at start of expression", Pos: 3}}},
	}
	for _, tc := range tests {
		n, ws, err := ParseWarn(tc.patterns, tc.mode, false)
		if tc.mode == ModeQuery {
			n, ws, err = ParseWarn(tc.patterns, tc.mode, true)
		}
		if err != nil {
			t.Errorf("%q %v: %v", tc.patterns, tc.mode, err)
			continue
		}
		if n.String() != tc.want || fmt.Sprint(ws) != fmt.Sprint(tc.warnings) {
			t.Errorf("%q %v = %s %v, want %s %v", tc.patterns, tc.mode, n, ws, tc.want, tc.warnings)
		}
	}
	for _, name := range []string{"regex", "ere", "bre", "re2", "literal", "query", ""} {
		if _, err := ParseMode(name); err != nil {
			t.Errorf("ParseMode(%q): %v", name, err)
		}
	}
}

// TestLastPatternBackslash: grep reads a backslash ending the last of
// several patterns as a literal backslash, and refuses it anywhere else.
func TestLastPatternBackslash(t *testing.T) {
	for _, tc := range []struct {
		patterns []string
		ok       bool
	}{
		{[]string{`\`}, false},
		{[]string{"x\n\\"}, true},
		{[]string{"x", `q\`}, true},
		{[]string{`q\`, "x"}, false},
		{[]string{"q\\\n"}, false},
		{[]string{"x\n\\\\"}, true},
		{[]string{"x\n\\\\\\"}, true},
		{[]string{"*", `\`}, false},
		{[]string{"a)", `b\`}, true},
		{[]string{`a\w`, `b\`}, false},
	} {
		for _, mode := range []Mode{ModeRegex, ModeBRE} {
			_, err := Parse(tc.patterns, mode, false)
			if (err == nil) != tc.ok {
				t.Errorf("%q %v: %v", tc.patterns, mode, err)
			}
		}
	}
}
