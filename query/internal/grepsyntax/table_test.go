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
	{syn: ERE, pat: "(ab){32767}", nomatch: []string{"ab"}, noGrep: true},             // grep takes minutes
	{syn: ERE, pat: "a{1000}{1000}", err: "Regular expression too big", noGrep: true}, // grep accepts it, and grinds for minutes
	{syn: ERE, pat: "(a{1000}){132}", err: "Regular expression too big", noGrep: true},
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
	// A newline cannot be in a pattern; invalid UTF-8 is refused.
	{syn: ERE, pat: "a\nb", err: msgNewline, pos: 1, noGrep: true},
	{syn: ERE, pat: "a\xffb", err: msgBadUTF8, pos: 1, noGrep: true},
	// U+FFFD would match invalid bytes too: refused (byte position).
	{syn: ERE, pat: "x\ufffdy", err: msgReplacement, pos: 1, noGrep: true},
	{syn: BRE, pat: "ab[\ufffd]", err: msgReplacement, pos: 3, noGrep: true},
	// A group ending in a repetition of nothing or of an anchor.
	{syn: ERE, pat: "(*)", err: eParen, pos: 0},
	{syn: ERE, pat: "x(^*)", err: eParen, pos: 1},
	{syn: ERE, pat: "(a|^*)", err: eParen, pos: 0},
	{syn: ERE, pat: `(x\>*)`, err: eParen, pos: 0},
	{syn: ERE, pat: "(*?)", err: eParen, pos: 0},
	{syn: ERE, pat: "(*{1})", match: every},
	{syn: ERE, pat: "(^*^)", match: every},
	{syn: ERE, pat: "(*|a)", match: every},
	// ERE '{' where grep's first reader sees a literal.
	{syn: ERE, pat: "{}", match: []string{"{}"}, nomatch: []string{"a", "{"}},
	{syn: ERE, pat: "{1,2,3}", match: []string{"{1,2,3}"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "{2,1}", match: []string{"{2,1}"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "{{1,2,3}", match: []string{"{{1,2,3}"}, nomatch: []string{"{"}},
	{syn: ERE, pat: "{{1}", match: []string{"{"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "{x{1,2,3}", err: eBadBR, pos: 2},
	{syn: ERE, pat: "{1}{1,2,3}", err: eBadBR, pos: 3},
	{syn: ERE, pat: "{40000}", err: "regular expression too big", pos: 0},
	{syn: ERE, pat: "x^{1,2,3}", nomatch: []string{"x{1,2,3}", "x"}},
	{syn: ERE, pat: `\b{1,2,3}`, match: []string{"x{1,2,3}"}, nomatch: []string{"{1,2,3}"}},
	{syn: ERE, pat: "x*{1,2,3}", err: eBadBR, pos: 2},
	// Interval fields: junk makes an ERE brace literal, a BRE one an error.
	{syn: ERE, pat: "a{1,2,", err: eBadBR, pos: 1},
	{syn: ERE, pat: "a{1,x,}", match: []string{"a{1,x,}"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "a{x,", match: []string{"a{x,"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "a{40000,1}", err: eBadBR, pos: 1},
	{syn: ERE, pat: "a{,40000}", err: "Regular expression too big", pos: 1},
	{syn: ERE, pat: "a{01}", match: []string{"a"}, nomatch: []string{"b"}},
	{syn: ERE, pat: `a{2\,1}`, err: eBadBR, pos: 1},
	{syn: ERE, pat: `a{40000\,}`, err: "Regular expression too big", pos: 1},
	{syn: ERE, pat: `a{\,}`, match: []string{"a{,}"}, nomatch: []string{"a"}},
	{syn: ERE, pat: `a{1\}`, match: []string{"a{1}"}, nomatch: []string{"a"}},
	{syn: ERE, pat: `a{\1}`, err: "Invalid back reference", pos: 2},
	{syn: ERE, pat: `[[.b.]]{1\,2}`, err: refusedAs(divBraceComma), pos: 7},
	{syn: BRE, pat: `a\{x,`, err: eBadBR, pos: 1},
	{syn: BRE, pat: `a\{1,x`, err: `Unmatched \{`, pos: 1},
	{syn: BRE, pat: `a\{3.c\(b,`, err: eBadBR, pos: 1},
	{syn: BRE, pat: `a\{1\,2\}`, err: `invalid content of \{\}`, pos: 1},
	{syn: BRE, pat: `a\{1\,2\}\)`, err: `Unmatched ) or \)`, pos: 9},
	{syn: BRE, pat: `x\b\{1x\}`, err: `invalid content of \{\}`, pos: 3},
	{syn: BRE, pat: `x\b\{1\}`, match: []string{"x", "x-"}, nomatch: []string{"xa"}},
	{syn: BRE, pat: `x\<\{40000\}`, err: "regular expression too big", pos: 3},
	// BRE: *, \+, \? and \{ are literal after only anchors; ^ only first.
	{syn: BRE, pat: `\<*a`, nomatch: []string{"a", "*a"}},
	{syn: BRE, pat: `\b*a`, match: []string{"b*a"}, nomatch: []string{"*a", "a"}},
	{syn: BRE, pat: "\\`*a", match: []string{"*a"}, nomatch: []string{"a"}},
	{syn: BRE, pat: `^\{1\}b`, match: []string{"{1}b"}, nomatch: []string{"b"}},
	{syn: BRE, pat: `\(\+b\)`, match: []string{"+b"}, nomatch: []string{"b"}},
	{syn: BRE, pat: `\(^*\)`, match: []string{"*a"}, nomatch: []string{"a*"}},
	{syn: BRE, pat: `\b^a`, match: []string{"b^a"}, nomatch: []string{"a"}},
	{syn: BRE, pat: `x\b\+`, match: []string{"x"}, nomatch: []string{"xa"}},
	{syn: BRE, pat: "a$|b", nomatch: []string{"a$|b", "a"}},
	{syn: BRE, pat: "a$|", match: []string{"a$|"}, nomatch: []string{"a"}},
	{syn: BRE, pat: "a$)*", match: []string{"a", "b$)a"}, nomatch: []string{"a$)"}},
	// Bracket checks, in grep's order.
	{syn: ERE, pat: "x[", err: "Invalid regular expression", pos: 1},
	{syn: ERE, pat: "[*---", err: eRange, pos: 4},
	{syn: ERE, pat: "[*--", err: eBrack, pos: 0},
	{syn: ERE, pat: "[c[:blank:]-", err: eRange, pos: 11},
	{syn: ERE, pat: "[[=a=]-", err: eRange, pos: 6},
	{syn: ERE, pat: "[[.a.]-", err: eBrack, pos: 0},
	{syn: ERE, pat: "[[..]-[=b=]]", err: eRange, pos: 5},
	{syn: ERE, pat: "[[..]-", err: eBrack, pos: 0},
	{syn: ERE, pat: "[[..]-]", err: eCollate, pos: 1},
	{syn: ERE, pat: "[[..]-z", err: eCollate, pos: 1},
	{syn: ERE, pat: "[[..]-[=", err: eBrack, pos: 0},
	{syn: BRE, pat: "1\\`*\\{**", err: `Unmatched \{`, pos: 4},
	{syn: BRE, pat: `1\<*\{1x\}`, err: eBadBR, pos: 4},
	{syn: BRE, pat: `1\<\{1\}\{1x\}`, err: eBadBR, pos: 8},
	{syn: ERE, pat: "[]", err: eBrack, pos: 0},
	{syn: ERE, pat: "[[=ab=]", err: eCollate, pos: 1},
	{syn: ERE, pat: "[[.ab.]", err: eBrack, pos: 0},
	{syn: ERE, pat: "[[.ab.]x", err: eCollate, pos: 1},
	// A name of 32 bytes or more: glibc's buffer; shorter: as before.
	{syn: ERE, pat: "[[." + strings.Repeat("a", 32) + ".]]", err: eBrack, pos: 0},
	{syn: ERE, pat: "[[=" + strings.Repeat("a", 40) + "=]]", err: eBrack, pos: 0},
	{syn: ERE, pat: "[[:" + strings.Repeat("a", 32) + ":]]", err: eBrack, pos: 0},
	{syn: ERE, pat: "[[." + strings.Repeat("a", 31) + ".]]", err: eCollate, pos: 1},
	{syn: ERE, pat: "[a-[.ab.]", err: eCollate, pos: 3},
	{syn: ERE, pat: "[a-[=b=]]", err: eRange, pos: 2},
	{syn: ERE, pat: "[a-[:foo:]]", err: eRange, pos: 2},
	{syn: ERE, pat: "[a-[:x", err: eBrack, pos: 0},
	{syn: ERE, pat: "[[:a:]", err: "Invalid character class name", pos: 1},
	{syn: ERE, pat: "[[:a]b:]]", err: "Invalid character class name", pos: 1},
	{syn: ERE, pat: "[[.].]]", match: []string{"]"}, nomatch: []string{"."}},
	{syn: ERE, pat: "[[.-.]-z]", match: []string{"-", "a", "0"}, nomatch: []string{",", "{"}},
	{syn: ERE, pat: "[z-a[.ab.]]", err: eRange, pos: 1},
	{syn: ERE, pat: "[:a:]", err: eColon, pos: 0},
	{syn: ERE, pat: "[^:a:]", err: eColon, pos: 0},
	{syn: ERE, pat: "[::]", match: []string{":"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "[:::]", match: []string{":"}, nomatch: []string{"a"}},
	{syn: ERE, pat: "[:a-b:]", match: []string{"a", ":"}, nomatch: []string{"c"}},
	{syn: ERE, pat: "[:[.a.]:]", match: []string{"a", ":"}, nomatch: []string{"b"}},
	{syn: ERE, pat: "[:alpha:][z-a]", err: eRange, pos: 10},
	// -i: range ends are ordered in upper case but matched as written.
	{syn: ERE, fold: true, pat: "[A-z]", match: []string{"[", "_", "a", "Z"}, nomatch: []string{"{"}},
	{syn: ERE, fold: true, pat: "[a-`]", nomatch: []string{"a", "A", "`"}},
	{syn: ERE, fold: true, pat: "[Z-b]", err: eRange, pos: 1},
	{syn: ERE, fold: true, pat: "[Z-_]", match: []string{"z", "Z", "\\", "_"}, nomatch: []string{"a"}},
	{syn: ERE, fold: true, pat: `\a`, match: []string{"a", "A"}, nomatch: []string{"b"}},
	// Back-references: which groups a back-reference may name.
	{syn: ERE, pat: `(a)|\1`, err: "Invalid back reference", pos: 4},
	{syn: ERE, pat: `(a)x|y\1`, err: "Invalid back reference", pos: 6},
	{syn: ERE, pat: `((a)|b\2)`, err: "Invalid back reference", pos: 6},
	{syn: ERE, pat: `((a)|b)\2`, err: msgBackref, pos: 7},
	{syn: ERE, pat: `(a)(b|\1)`, err: msgBackref, pos: 6},
	{syn: ERE, pat: `(a)\1[z-a]`, err: eRange, pos: 6},
	// With a [.x.] or [=x=] bracket grep matches another way: refusals.
	{syn: ERE, pat: "a^*b[[.c.]]", err: refusedAs(divRepeatTest), pos: 2},
	{syn: ERE, pat: "{}*[[.b.]]", err: refusedAs(divStartBrace), pos: 0},
	{syn: BRE, pat: "a$)b[[.c.]]", err: refusedAs(divDollar), pos: 1},
	{syn: ERE, fold: true, pat: "[[.q.]]*\\a", err: refusedAs(divFoldEscape), pos: 8},
	{syn: ERE, fold: true, pat: "[[.a.]-Z]", match: []string{"a", "Z", "q"}, nomatch: []string{"_", "["}},
	{syn: ERE, fold: true, pat: "[A-z[.q.]]", match: []string{"a", "Q"}, nomatch: []string{"_", "["}},
	{syn: ERE, fold: true, pat: "[Z-_[.q.]]", match: []string{"z", "[", "_", "Q"}, nomatch: []string{"a"}},
	{syn: ERE, fold: true, pat: "[A-z][[.q.]]", err: refusedAs(divFoldRange), pos: 1},
	{syn: ERE, pat: "b[[...]](^_*|-){0,3}", err: refusedAs(divRepeatTest), pos: 0},
	{syn: ERE, pat: "b[[...]](_*|-){0,3}", match: []string{"b.", "b._"}, nomatch: []string{"b"}},
}

func refusedAs(what string) string { return msgDisagree + what + " differently; refused" }

// Warnings grep prints and accepts the pattern.
var warningCases = []struct {
	syn  Syntax
	pat  string
	want []string
}{
	{ERE, "*a", []string{"* at start of expression"}},
	{ERE, "a|+b", []string{"+ at start of expression"}},
	{ERE, "**", []string{"* at start of expression", "* at start of expression"}},
	{ERE, "(*{1}?)", []string{"* at start of expression", "{...} at start of expression"}},
	{ERE, "{1}{2}", []string{"{...} at start of expression"}},
	{ERE, "^*", []string{"* at start of expression"}},
	{ERE, "a*", nil},
	{BRE, "*a", nil},
}

func TestWarnings(t *testing.T) {
	grep := grepAvailable()
	dir := t.TempDir()
	file := filepath.Join(dir, "hay")
	if err := os.WriteFile(file, []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range warningCases {
		_, _, ws, err := TranslateWarn(c.pat, c.syn, false)
		if err != nil {
			t.Errorf("%s %q: %v", c.syn, c.pat, err)
			continue
		}
		var got []string
		for _, w := range ws {
			got = append(got, w.Msg)
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s %q: warnings %q, want %q", c.syn, c.pat, got, c.want)
		}
		if grep {
			g := runGrep(t, c.pat, c.syn, false, file)
			var fromGrep []string
			for _, l := range strings.Split(strings.TrimSpace(g.stderr), "\n") {
				if m, ok := strings.CutPrefix(l, "grep: warning: "); ok {
					fromGrep = append(fromGrep, m)
				}
			}
			if strings.Join(fromGrep, "|") != strings.Join(c.want, "|") {
				t.Errorf("%s %q: grep warns %q, the table says %q", c.syn, c.pat, fromGrep, c.want)
			}
		}
	}
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
			switch {
			case c.err != msgTooBig && refusal(&Error{Msg: c.err}):
				// Refused where grep accepts; grep may reject for
				// another reason only if the table says so.
				if g.rejected {
					t.Errorf("%s: grep rejects: %s", c.name(), g.stderr)
				}
			case !g.rejected:
				t.Errorf("%s: grep accepts, the table says %q", c.name(), c.err)
			case !strings.Contains(g.stderr, "grep: "+c.err+"\n"):
				t.Errorf("%s: grep says %q, the table %q", c.name(), strings.TrimSpace(g.stderr), c.err)
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

// TestTranslateList: a [.x.] bracket in one pattern of a list makes grep
// read every pattern of the list with both readers, so the constructs they
// read differently are refused in all of them.
func TestTranslateList(t *testing.T) {
	for _, tc := range []struct {
		patterns []string
		fold     bool
		refused  []bool
	}{
		{[]string{` \x`, "a"}, true, []bool{false, false}},
		{[]string{` \x`, "[[.a.]]"}, true, []bool{true, false}},
		{[]string{"^*b", "[[=a=]]"}, false, []bool{true, false}},
		{[]string{"(^a)*", "x"}, false, []bool{false, false}},
		{[]string{"(^a)*", "[[.x.]]"}, false, []bool{true, false}},
	} {
		for i, r := range TranslateList(tc.patterns, ERE, tc.fold) {
			if got := r.Err != nil; got != tc.refused[i] {
				t.Errorf("%q -i=%v: pattern %d: %v", tc.patterns, tc.fold, i, r.Err)
			}
		}
	}
}
