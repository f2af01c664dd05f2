// Package grepsyntax owns the reading of grep patterns: it parses a
// pattern exactly as GNU grep 3.8 does in the C locale — POSIX extended
// syntax for grep -E, basic syntax (grep's default, -G) with GNU's
// extensions — and translates it into a Go regexp (RE2) expression that
// selects the same lines. What grep rejects is rejected with grep's
// message; the few constructs whose grep reading cannot be reproduced
// exactly are refused with a message saying so, never answered
// differently.
//
// The Go expression reads UTF-8: '.', a bracket expression, \W and \S
// match one character, where grep in the C locale matches one byte. On
// ASCII the two are identical; for the other lines the caller translates
// the pattern widened byte by byte (each byte the rune of its value) and
// matches the lines widened the same way (query/lang, scan.NewBytewise).
//
// The parser was written from the POSIX.1-2017 "Regular Expressions"
// chapter, grep's manual, and black-box experiments with the grep binary
// (see the table and property tests, which hold this package to grep).
package grepsyntax

import (
	"errors"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Syntax selects the pattern dialect.
type Syntax int

const (
	ERE Syntax = iota // grep -E
	BRE               // grep -G, grep's default
)

func (s Syntax) String() string {
	if s == BRE {
		return "BRE"
	}
	return "ERE"
}

// Error is a rejected pattern: grep's own message where grep rejects it,
// or one of this package's refusals (messages starting "unsupported:",
// and the one for back-references). Pos is a 0-based byte offset into
// the pattern: the first byte of the construct at fault (the '[' of a
// bracket, the '[' of a bad [:name:], the '-' or first end of a bad
// range, the '{' or "\{" of an interval, the '(' of an unclosed group,
// the backslash of an escape). grep itself prints no position.
type Error struct {
	Msg string
	Pos int
}

func (e *Error) Error() string { return e.Msg }

// Late reports whether e is an error grep finds only on its second
// reading of the patterns: given several, grep reports one of these only
// when no pattern has an error of the first reading.
func (e *Error) Late() bool {
	return e.Msg == msgColonSyntax || e.Msg == msgBadBraceLow || e.Msg == msgTooBigLow
}

// NotUTF8 reports whether e refuses a pattern only for reading it as
// UTF-8 (invalid UTF-8, U+FFFD): read byte by byte, widened (each byte the
// rune of its value), it translates.
func (e *Error) NotUTF8() bool { return e.Msg == msgBadUTF8 || e.Msg == msgReplacement }

// Refusal reports whether e is this package's refusal of a pattern grep
// accepts (grep reports its own errors of any pattern first).
func (e *Error) Refusal() bool {
	return e.Msg == msgBackref || strings.HasPrefix(e.Msg, "unsupported")
}

// Warning is a message grep prints on standard error while still
// accepting the pattern.
type Warning struct {
	Msg string
	Pos int
}

// grep's messages (the C locale's wording, as grep prints them).
const (
	msgTrailingBackslash = "Trailing backslash"
	msgParen             = `Unmatched ( or \(`
	msgCloseParen        = `Unmatched ) or \)`
	msgBrace             = `Unmatched \{`
	msgBadBrace          = `Invalid content of \{\}`
	msgBracket           = "Unmatched [, [^, [:, [., or [="
	msgBadRange          = "Invalid range end"
	msgBadClass          = "Invalid character class name"
	msgBadCollate        = "Invalid collation character"
	msgBadRegexp         = "Invalid regular expression"
	msgBadBackref        = "Invalid back reference"
	msgTooBig            = "Regular expression too big"
	// grep checks each pattern twice; these come from the second check
	// and are only seen when the first finds nothing wrong.
	msgColonSyntax = "character class syntax is [[:space:]], not [:space:]"
	msgBadBraceLow = `invalid content of \{\}`
	msgTooBigLow   = "regular expression too big"
)

// This package's refusals of patterns grep accepts.
const (
	msgBackref = "back-references are not supported: they cannot be answered from the index"
	// grep matches a pattern with a [.x.] or [=x=] bracket differently;
	// the constructs it reads differently there are refused (parse.go).
	msgDisagree    = "unsupported: with a [.x.] or [=x=] bracket in the pattern, grep reads "
	msgWordComplex = `unsupported: \< or \> in this position is too complex to translate`
	msgNewline     = "pattern contains a newline"
	msgBadUTF8     = "unsupported: pattern is not valid UTF-8"
	// The matchers read an invalid byte of a line as U+FFFD, so the
	// character in a pattern would match invalid bytes too, where grep
	// matches only its own three bytes.
	msgReplacement = "unsupported: U+FFFD (\ufffd) in a regular expression would also match invalid bytes; search for it with -F (mode=literal)"
	msgTooDeep     = "unsupported: groups nested too deeply"
)

// Translate reads pattern as grep -E (ERE) or grep -G (BRE) does, with -i
// when foldASCII, and returns an equivalent Go expression and its parsed
// form (regexp/syntax, Perl flags).
func Translate(pattern string, syn Syntax, foldASCII bool) (expr string, re *syntax.Regexp, err error) {
	expr, re, _, err = TranslateWarn(pattern, syn, foldASCII)
	return expr, re, err
}

// TranslateWarn is Translate that also returns the warnings grep prints
// for the pattern (such as "* at start of expression").
func TranslateWarn(pattern string, syn Syntax, foldASCII bool) (expr string, re *syntax.Regexp, warnings []Warning, err error) {
	r, _ := translate(pattern, syn, foldASCII, false)
	return r.Expr, r.Re, r.Warnings, r.Err
}

// Result is the translation of one pattern of a list.
type Result struct {
	Expr     string
	Re       *syntax.Regexp
	Warnings []Warning
	Err      error
	// RepeatsTest: the pattern repeats a zero-width test (^, $, \<, \>,
	// \b, \B under *, +, ?, a count, or in a group under one), as
	// 'a\B*'. Lines are selected as the translation selects them, but
	// grep's -o then prints nothing, or only other branches' matches.
	RepeatsTest bool
}

// TranslateList reads patterns as grep reads the lines of one pattern
// list (several -e, or a pattern with newlines). They are read one by one,
// except that a [.x.] or [=x=] bracket in any of them makes grep match all
// of them with both of its readings (see parse.go): the constructs the two
// read differently are then refused in every pattern.
func TranslateList(patterns []string, syn Syntax, foldASCII bool) []Result {
	out := make([]Result, len(patterns))
	anyColl := false
	for i, pat := range patterns {
		var coll bool
		out[i], coll = translate(pat, syn, foldASCII, false)
		anyColl = anyColl || coll
	}
	if anyColl {
		for i, pat := range patterns {
			out[i], _ = translate(pat, syn, foldASCII, true)
		}
	}
	return out
}

// translate is TranslateWarn, reading pattern as if a bracket of its list
// held [.x.] or [=x=] when listColl; coll tells whether one of its own does.
func translate(pattern string, syn Syntax, foldASCII, listColl bool) (r Result, coll bool) {
	if i := strings.IndexByte(pattern, '\n'); i >= 0 {
		return Result{Err: &Error{Msg: msgNewline, Pos: i}}, false
	}
	if !utf8.ValidString(pattern) {
		return Result{Err: &Error{Msg: msgBadUTF8, Pos: firstInvalid(pattern)}}, false
	}
	if i := strings.IndexRune(pattern, utf8.RuneError); i >= 0 {
		return Result{Err: &Error{Msg: msgReplacement, Pos: i}}, false
	}
	p := &parser{src: pattern, syn: syn, fold: foldASCII, listColl: listColl}
	tree, err := p.parse()
	if err != nil {
		return Result{Err: err}, p.collating
	}
	expr, re, err := emit(tree)
	if err != nil {
		return Result{Err: err}, p.collating
	}
	return Result{Expr: expr, Re: re, Warnings: p.warnings, RepeatsTest: repeatsTest(tree)}, p.collating
}

func firstInvalid(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return i
			}
		}
	}
	return 0
}

// goError turns a refusal by regexp/syntax of the emitted expression
// (its size limits) into this package's error.
func goError(err error) error {
	var se *syntax.Error
	if errors.As(err, &se) && (se.Code == syntax.ErrLarge || se.Code == syntax.ErrNestingDepth || se.Code == syntax.ErrInvalidRepeatSize) {
		return &Error{Msg: msgTooBig}
	}
	return &Error{Msg: "internal error: " + err.Error()}
}
