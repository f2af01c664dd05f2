// Package greptest (a test helper, used by tests only) owns the random grep patterns and haystack lines that
// the property tests of grepsyntax, query and the CLI check against the
// real grep: patterns over the whole operator set of ERE and BRE (valid or
// not), and short lines over the characters those operators test.
package greptest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// hayAlphabet weighs the letters patterns use and the operators' own
// characters (as literals).
// Bytes >= 0x80 (é's two, ü's lead, a Latin-1 é) test the C locale's
// byte-wise reading: '.' and brackets match one byte, not a character.
const hayAlphabet = "aaabbbcAB_ -.*+?()[]{}|^$\\,12:=x\té\xc3\xbc\xe9"

// RandomLine is a haystack line of 0-8 characters.
func RandomLine(r *rand.Rand) string {
	n := r.IntN(9)
	b := make([]byte, n)
	for i := range b {
		b[i] = hayAlphabet[r.IntN(len(hayAlphabet))]
	}
	return string(b)
}

// pick returns one of xs.
func pick(r *rand.Rand, xs ...string) string { return xs[r.IntN(len(xs))] }

func randomBracket(r *rand.Rand) string {
	var b strings.Builder
	b.WriteByte('[')
	if r.IntN(3) == 0 {
		b.WriteByte('^')
	}
	if r.IntN(5) == 0 {
		b.WriteByte(']')
	}
	for n := r.IntN(4); n >= 0; n-- {
		switch r.IntN(10) {
		case 0:
			b.WriteString("[:" + pick(r, "alpha", "digit", "upper", "lower", "space", "punct", "alnum", "xdigit", "blank", "foo", "") + ":]")
		case 1:
			b.WriteString("[." + pick(r, "a", "-", "]", "b", "ab", ".", "") + ".]")
		case 2:
			b.WriteString("[=" + pick(r, "a", "b", "B", "=", "ab", "") + "=]")
		case 3, 4:
			b.WriteString(pick(r, "a", "b", "A", "_", "-", "1", "+", ",", "\\", ".", "[", "*", "x") + "-" + pick(r, "a", "b", "c", "Z", "z", "-", "9", "]", "[.b.]", ","))
		case 5:
			b.WriteString(pick(r, "-", ":", "---", "[", "^", "[:alpha:]-", "[=a=]-", "[.a.]-"))
		default:
			b.WriteString(pick(r, "a", "b", "A", "B", "c", "_", " ", ".", "*", "\\", "$", "(", ")", "|", "{", "1", ",", "é", "\xa9"))
		}
	}
	if r.IntN(12) != 0 {
		b.WriteByte(']')
	}
	return b.String()
}

// RandomPattern is a pattern of 1-7 random pieces (long: also counted
// repetitions of nested groups, which make grep slow).
func RandomPattern(r *rand.Rand, long bool) string {
	var b strings.Builder
	for n := 1 + r.IntN(7); n > 0; n-- {
		switch r.IntN(21) {
		case 0, 1, 2, 3:
			b.WriteString(pick(r, "a", "b", "c", "A", "x", "1", ",", "-", " ", ":", "_", "=", "}", "]", "é", "\xc3", "\xe9"))
		case 4:
			b.WriteString(".")
		case 5, 6:
			b.WriteString(pick(r, "*", "+", "?", "\\+", "\\?", "**", "+?", "*+"))
		case 7:
			lo, hi := strconv.Itoa(r.IntN(4)), strconv.Itoa(r.IntN(4))
			iv := pick(r, "{"+lo+"}", "{"+lo+",}", "{,"+hi+"}", "{"+lo+","+hi+"}", "{", "{,}", "{}", "{"+lo, "{x}", "{1,2,3}", "{1\\,2}",
				"{x,", "{"+lo+",x}", "{1,,2}", "{40000}", "{"+lo+","+hi)
			if r.IntN(2) == 0 {
				iv = strings.ReplaceAll(strings.ReplaceAll(iv, "{", "\\{"), "}", "\\}")
			}
			b.WriteString(iv)
		case 8, 9:
			b.WriteString(pick(r, "(", ")", "\\(", "\\)", "()", "\\(\\)"))
		case 10:
			b.WriteString(pick(r, "|", "\\|"))
		case 11:
			b.WriteString(pick(r, "^", "$", "^*", "$*"))
		case 12:
			b.WriteString(pick(r, "\\<", "\\>", "\\b", "\\B", "\\`", "\\'"))
		case 13:
			b.WriteString(pick(r, "\\w", "\\W", "\\s", "\\S"))
		case 14:
			b.WriteString(pick(r, "\\.", "\\*", "\\[", "\\]", "\\^", "\\$", "\\\\", "\\x", "\\a", "\\,", "\\-", "\\{", "\\}", "\\1", "\\"))
		case 15, 16, 17:
			b.WriteString(randomBracket(r))
		case 18:
			b.WriteString(nested(r, 2, long))
		default:
			b.WriteString(pick(r, "[:alpha:]", "[:a]", "ab", "a|b", "(a|)", "(|a)", "a\\|b"))
		}
	}
	return b.String()
}

// nested returns a balanced ERE group of alternatives mixing word edges,
// anchors and repetitions: the shapes the rewriting of \< and \> must
// distribute or unroll.
func nested(r *rand.Rand, depth int, long bool) string {
	var b strings.Builder
	b.WriteByte('(')
	for n := r.IntN(3); n >= 0; n-- {
		for k := r.IntN(3); k >= 0; k-- {
			if depth > 0 && r.IntN(4) == 0 {
				b.WriteString(nested(r, depth-1, long))
				continue
			}
			b.WriteString(pick(r, "\\<", "\\>", "\\b", "\\B", "a", "b", "-", " ", "^", "$", "\\w", "[a-]", "x?", "_*"))
		}
		if n > 0 {
			b.WriteByte('|')
		}
	}
	b.WriteByte(')')
	if depth == 2 && long {
		// Counted repetitions of these groups make grep's DFA slow to
		// build (seconds): outermost only, and only in the long run.
		b.WriteString(pick(r, "", "", "*", "+", "?", "{2}", "{0,3}", "{1,}"))
	} else {
		b.WriteString(pick(r, "", "", "*", "+", "?"))
	}
	return b.String()
}

// WriteTree writes a tree of files of random lines under root (in three
// directories; every other file starts with lines that test the edge
// cases of the operators).
func WriteTree(root string, r *rand.Rand, files, lines int) error {
	fixed := []string{"", "a", "ab", "abc", "a b", "A", "_a", "a_", "aa", "{1}a", "a{1", "*a", "ax", "a-c", "[:alpha:]", "a^b", "a$b", "(a)", "\\", "+,-", "foo bar", "alpha"}
	for f := range files {
		var b strings.Builder
		for i := range lines {
			if i < len(fixed) && f%2 == 0 {
				b.WriteString(fixed[i])
			} else {
				b.WriteString(RandomLine(r))
			}
			b.WriteByte('\n')
		}
		dir := filepath.Join(root, fmt.Sprintf("d%d", f%3))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.log", f)), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	return nil
}
