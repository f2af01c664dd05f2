package grepsyntax

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

type tcase struct {
	syn     Syntax
	fold    bool
	pat     string
	err     string   // expected error message, "" if accepted
	pos     int      // expected error position
	match   []string // lines selected
	nomatch []string // lines not selected
	expr    string   // expected translation, if given
	noGrep  bool     // outside what grep in the C locale can confirm (UTF-8 text)
}

const (
	eBadBR   = `Invalid content of \{\}`
	eRange   = "Invalid range end"
	eBrack   = "Unmatched [, [^, [:, [., or [="
	eParen   = `Unmatched ( or \(`
	eColon   = "character class syntax is [[:space:]], not [:space:]"
	eCollate = "Invalid collation character"
)

var every = []string{"", "a", "b", "x y", "*", "{"}

var cases = []tcase{
	// Silently different in RE2, now read as grep does.
	{syn: ERE, pat: "a+?", match: every, expr: "(?:a+)?"},
	{syn: ERE, pat: "a{1}?", match: every},
	{syn: ERE, pat: "a{}", err: eBadBR, pos: 1},
	{syn: ERE, pat: "a[[.x.]]", match: []string{"ax"}, nomatch: []string{"a", "a[", "a.", "ab"}},
	{syn: ERE, pat: "a[[.-.]--]c", match: []string{"a-c"}, nomatch: []string{"abc", "a.c"}},
	{syn: ERE, pat: "a[[=b=]]c", match: []string{"abc"}, nomatch: []string{"a=c", "a[c"}},
	{syn: ERE, pat: "a[1-3-5]c", err: eRange, pos: 5},
	// Rejected by RE2, accepted by grep.
	{syn: ERE, pat: "a**", match: every},
	{syn: ERE, pat: "a*+", match: every},
	{syn: ERE, pat: "a?*", match: every},
	{syn: ERE, pat: "a{1}*", match: every},
	{syn: ERE, pat: "*a", match: []string{"a", "ba"}, nomatch: []string{"*", "*b"}},
	{syn: ERE, pat: "+a", match: []string{"a"}, nomatch: []string{"+"}},
	{syn: ERE, pat: "?a", match: []string{"a"}, nomatch: []string{"?"}},
	{syn: ERE, pat: "{1}a", match: []string{"a"}, nomatch: []string{"{1}", "1}"}},
	{syn: ERE, pat: "*", match: every},
	{syn: ERE, pat: "(*a)", match: []string{"a"}, nomatch: []string{"*"}},
	{syn: ERE, pat: "(+a)", match: []string{"a"}, nomatch: []string{"+"}},
	{syn: ERE, pat: "b|*a", match: []string{"a", "b"}, nomatch: []string{"*", "x"}},
	{syn: ERE, pat: "b|+", match: every},
	{syn: ERE, pat: "(+)", err: eParen, pos: 0},
	{syn: ERE, pat: "(a|*)", err: eParen, pos: 0},
	{syn: ERE, pat: ")", match: []string{")", "a)"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "a)", match: []string{"a)"}, nomatch: []string{"a"}},
	{syn: ERE, pat: `a\x`, match: []string{"ax"}, nomatch: []string{`a\x`, "a"}},
	// Brackets and classes.
	{syn: ERE, pat: "[:alpha:]", err: eColon, pos: 0},
	{syn: BRE, pat: "[:alpha:]", err: eColon, pos: 0},
	{syn: ERE, pat: "[:a]", match: []string{"a", ":"}, nomatch: []string{"b"}},
	{syn: ERE, pat: "[[:alpha:]]", match: []string{"a", "Z"}, nomatch: []string{"1", "_"}, expr: "[A-Za-z]"},
	{syn: ERE, pat: "[[:foo:]]", err: "Invalid character class name", pos: 1},
	{syn: ERE, pat: "[[:alpha:]", err: eBrack, pos: 0},
	{syn: ERE, pat: "[a-]", match: []string{"-", "a"}, nomatch: []string{"b"}},
	{syn: ERE, pat: "[]a]", match: []string{"]", "a"}, nomatch: []string{"b"}},
	{syn: ERE, pat: "[^]a]", match: []string{"b", "]b"}, nomatch: []string{"]", "a", "]a", ""}},
	{syn: ERE, pat: "[a-z-0]", err: eRange, pos: 4},
	{syn: ERE, pat: "[z-a]", err: eRange, pos: 1},
	{syn: ERE, pat: "[a-Z]", err: eRange, pos: 1},
	{syn: ERE, pat: "[[.ab.]]", err: eCollate, pos: 1},
	{syn: ERE, pat: "[[=ab=]]", err: eCollate, pos: 1},
	{syn: ERE, pat: "[[..]]", err: eCollate, pos: 1},
	{syn: ERE, pat: "[[:alpha:]-z]", err: eRange, pos: 10},
	{syn: ERE, pat: "[[=a=]-z]", err: eRange, pos: 6},
	{syn: ERE, pat: "[", err: "Invalid regular expression", pos: 0},
	{syn: ERE, pat: "[^", err: "Invalid regular expression", pos: 0},
	{syn: ERE, pat: "[a", err: eBrack, pos: 0},
	{syn: ERE, pat: "[a-", err: eBrack, pos: 0},
	{syn: BRE, pat: "[+---]", match: []string{",", "+", "-"}, nomatch: []string{"*", "."}},
	{syn: BRE, pat: "[a---]", err: eRange, pos: 1},
	{syn: ERE, pat: `[\]]`, match: []string{`\]`}, nomatch: []string{"]", `\`}},
	{syn: ERE, pat: `[\w]`, match: []string{`\`, "w"}, nomatch: []string{"a"}},
	{syn: ERE, pat: `\]`, match: []string{"]"}, nomatch: []string{`\`}},
	{syn: ERE, pat: `\w\W\s\S`, match: []string{"a- x"}, nomatch: []string{"a-x", "ab x"}},
	// Intervals.
	{syn: ERE, pat: `\{`, match: []string{"{"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "{", match: []string{"{"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "a{1", match: []string{"a{1"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "a{x}", match: []string{"a{x}"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "a{1,2", match: []string{"a{1,2"}, nomatch: []string{"aa"}},
	{syn: ERE, pat: "a{,2}", match: every},
	{syn: ERE, pat: "a{,}", match: every},
	{syn: ERE, pat: "x{2}{3}", match: []string{"xxxxxx"}, nomatch: []string{"xxxxx"}},
	{syn: ERE, pat: "a{2,1}", err: eBadBR, pos: 1},
	{syn: ERE, pat: "a{1,2,3}", err: eBadBR, pos: 1},
	{syn: ERE, pat: `a{1\,2}`, match: []string{"a{1,2}"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "ab{0}c", match: []string{"ac"}, nomatch: []string{"abc"}},
	{syn: ERE, pat: "a{32767}", nomatch: []string{"a"}, noGrep: true}, // grep accepts it, slowly
	{syn: ERE, pat: "a{32768}", err: "Regular expression too big", pos: 1},
	{syn: ERE, pat: "a{2500}", expr: "a{1000}a{1000}a{500}", noGrep: true},
	{syn: BRE, pat: `a\{1`, err: `Unmatched \{`, pos: 1},
	{syn: BRE, pat: `a\{1x\}`, err: eBadBR, pos: 1},
	{syn: BRE, pat: `a\{2\}`, match: []string{"aa"}, nomatch: []string{"a", "a{2}"}},
	{syn: BRE, pat: "a{2}", match: []string{"a{2}"}, nomatch: []string{"aa"}},
	{syn: BRE, pat: `\{1\}a`, match: []string{"{1}a"}, nomatch: []string{"a"}},
	{syn: BRE, pat: "*a", match: []string{"*a"}, nomatch: []string{"a"}},
	{syn: BRE, pat: "**a", match: []string{"a", "*a"}, nomatch: []string{"b"}},
	{syn: BRE, pat: `a\+\?`, match: every},
	{syn: BRE, pat: `\(*a\)`, match: []string{"*a"}, nomatch: []string{"a"}},
	{syn: BRE, pat: `b\|*a`, match: []string{"*a", "b"}, nomatch: []string{"a"}},
	// Anchors.
	{syn: ERE, pat: "^*", match: every},
	{syn: BRE, pat: "^*", match: []string{"*a"}, nomatch: []string{"a*"}},
	{syn: ERE, pat: "a^*b", match: []string{"ab"}, nomatch: []string{"a^b"}},
	{syn: BRE, pat: "a^b", match: []string{"a^b"}, nomatch: []string{"ab"}},
	{syn: ERE, pat: "a$b", nomatch: []string{"a$b", "ab"}},
	{syn: BRE, pat: "a$b", match: []string{"a$b"}},
	{syn: BRE, pat: `\(^a\)`, match: []string{"ab"}, nomatch: []string{"ba"}},
	{syn: BRE, pat: `x\|^a`, match: []string{"ab", "x"}, nomatch: []string{"ba"}},
	{syn: BRE, pat: `\(a$\)`, match: []string{"ba"}, nomatch: []string{"ab"}},
	{syn: BRE, pat: "a$)b", nomatch: []string{"a$)b"}},
	{syn: BRE, pat: "a$)", match: []string{"a$)"}},
	{syn: BRE, pat: "^^a", match: []string{"^a"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "x$*", match: []string{"x", "xa"}},
	{syn: BRE, pat: `a\|b`, match: []string{"a", "b"}, nomatch: []string{"|"}},
	{syn: ERE, pat: "\\`a\\'", match: []string{"a"}, nomatch: []string{"ab", "ba"}},
	// Word edges.
	{syn: ERE, pat: `\<foo\>`, match: []string{"foo", "a foo b", "(foo)"}, nomatch: []string{"foobar", "afoo", "foo_"}, expr: `\bfoo\b`},
	{syn: ERE, pat: `\<`, match: []string{"a", " a"}, nomatch: []string{"", " ", "-"}},
	{syn: ERE, pat: `\>`, match: []string{"a", "a "}, nomatch: []string{"", " "}},
	{syn: ERE, pat: `a\<`, nomatch: []string{"a", "ab", "a b"}},
	{syn: ERE, pat: `-\<`, match: []string{"-a"}, nomatch: []string{"-", "--"}},
	{syn: ERE, pat: `\>-`, match: []string{"a-"}, nomatch: []string{"-", " -"}},
	{syn: ERE, pat: `(a|\<)b`, match: []string{"ab", " b", "b"}, nomatch: []string{"cb"}},
	{syn: ERE, pat: `x?\<y`, match: []string{"y", "-y"}, nomatch: []string{"ay", "xy"}},
	{syn: ERE, pat: `(a\>)*b`, match: []string{"b"}},
	{syn: BRE, pat: `x\<*`, match: []string{"x"}},
	{syn: ERE, pat: `\bfoo\B`, match: []string{"foox"}, nomatch: []string{"foo", "xfoox"}},
	// Errors.
	{syn: ERE, pat: `\`, err: "Trailing backslash", pos: 0},
	{syn: ERE, pat: `a\`, err: "Trailing backslash", pos: 1},
	{syn: ERE, pat: "(", err: eParen, pos: 0},
	{syn: ERE, pat: "a(b", err: eParen, pos: 1},
	{syn: BRE, pat: `\(`, err: eParen, pos: 0},
	{syn: BRE, pat: `\)`, err: `Unmatched ) or \)`, pos: 0},
	{syn: BRE, pat: "(", match: []string{"("}},
	{syn: ERE, pat: "()", match: every},
	{syn: ERE, pat: "a|", match: every},
	{syn: ERE, pat: "(|a)", match: every},
	// Back-references.
	{syn: BRE, pat: `\(a\)\1`, err: msgBackref, pos: 5},
	{syn: ERE, pat: `(a)\1`, err: msgBackref, pos: 3},
	{syn: BRE, pat: `\1`, err: "Invalid back reference", pos: 0},
	{syn: ERE, pat: `[\1]`, match: []string{`\`, "1"}},
	// Case folding: ASCII only, explicit classes.
	{syn: ERE, fold: true, pat: "k", match: []string{"K", "k"}, nomatch: []string{"\u212a"}, expr: "[Kk]", noGrep: true},
	{syn: ERE, fold: true, pat: "s", match: []string{"S"}, nomatch: []string{"ſ"}, noGrep: true},
	{syn: ERE, fold: true, pat: "[^a]", match: []string{"b"}, nomatch: []string{"a", "A"}},
	{syn: ERE, fold: true, pat: "[[:upper:]]", match: []string{"a", "A"}, nomatch: []string{"1"}},
	{syn: ERE, fold: true, pat: "[a-Z]", nomatch: []string{"a", "Z", "_"}},
	{syn: ERE, fold: true, pat: "[_-a]", err: eRange, pos: 1},
	{syn: ERE, fold: true, pat: `\W`, match: []string{"-"}, nomatch: []string{"a", "A"}},
	// UTF-8: one character where grep in the C locale sees bytes.
	{syn: ERE, pat: "^.$", match: []string{"é", "a"}, nomatch: []string{"ab"}, noGrep: true},
	{syn: ERE, pat: "^é*$", match: []string{"éé", ""}, nomatch: []string{"e"}, noGrep: true},
	{syn: ERE, pat: "^[^a]$", match: []string{"é"}, noGrep: true},
	// A newline cannot be in a pattern.
	{syn: ERE, pat: "a\nb", err: msgNewline, pos: 1, noGrep: true},
}

func (c tcase) name() string {
	s := c.syn.String()
	if c.fold {
		s += "-i"
	}
	return s + " " + c.pat
}

func TestTable(t *testing.T) {
	for _, c := range cases {
		expr, re, err := Translate(c.pat, c.syn, c.fold)
		if c.err != "" {
			var e *Error
			if !errors.As(err, &e) || e.Msg != c.err || e.Pos != c.pos {
				t.Errorf("%s: got %q, %v; want error %q at %d", c.name(), expr, err, c.err, c.pos)
				if e != nil {
					t.Logf("  position %d", e.Pos)
				}
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name(), err)
			continue
		}
		if c.expr != "" && expr != c.expr {
			t.Errorf("%s: expr %q, want %q", c.name(), expr, c.expr)
		}
		if re2, err := syntax.Parse(expr, syntax.Perl); err != nil || re2.String() != re.String() {
			t.Errorf("%s: returned tree does not match the expression: %v", c.name(), err)
		}
		rx := regexp.MustCompile(expr)
		for _, l := range c.match {
			if !rx.MatchString(l) {
				t.Errorf("%s (%q): does not select %q", c.name(), expr, l)
			}
		}
		for _, l := range c.nomatch {
			if rx.MatchString(l) {
				t.Errorf("%s (%q): selects %q", c.name(), expr, l)
			}
		}
	}
}

// TestTableAgainstGrep holds the table's verdicts to grep itself.
func TestTableAgainstGrep(t *testing.T) {
	needGrep(t)
	dir := t.TempDir()
	for i, c := range cases {
		if c.noGrep {
			continue
		}
		lines := append(append([]string(nil), c.match...), c.nomatch...)
		if len(lines) == 0 {
			lines = []string{"a"}
		}
		file := filepath.Join(dir, strings.Repeat("x", i%3)+"hay")
		if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		g := runGrep(t, c.pat, c.syn, c.fold, file)
		if c.err != "" {
			if !g.rejected && c.err != msgBackref {
				t.Errorf("%s: grep accepts, the table says %q", c.name(), c.err)
			}
			if g.rejected && !strings.Contains(g.stderr, c.err) {
				t.Logf("%s: grep says %q, we say %q", c.name(), strings.TrimSpace(g.stderr), c.err)
			}
			continue
		}
		if g.rejected {
			t.Errorf("%s: grep rejects: %s", c.name(), g.stderr)
			continue
		}
		for n, l := range lines {
			want := n < len(c.match)
			if contains(g.lines, n+1) != want {
				t.Errorf("%s: grep selects %q: %v, the table says %v", c.name(), l, !want, want)
			}
		}
	}
}
