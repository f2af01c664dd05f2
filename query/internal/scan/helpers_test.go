package scan

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// splitLines returns the [start,end) of each line of buf, grep-style: a
// final '\n' does not start another line.
func splitLines(buf []byte) [][2]int {
	var out [][2]int
	for start := 0; start < len(buf); {
		end := bytes.IndexByte(buf[start:], '\n')
		if end < 0 {
			end = len(buf)
		} else {
			end += start
		}
		out = append(out, [2]int{start, end})
		start = end + 1
	}
	return out
}

// oracle is what a Matcher must agree with, line by line.
type oracle struct {
	match   func(line []byte) bool
	matches func(line []byte) [][2]int
}

func regexpOracle(re *regexp.Regexp) oracle {
	return oracle{
		match: re.Match,
		matches: func(line []byte) [][2]int {
			var out [][2]int
			for _, loc := range re.FindAllIndex(line, -1) {
				out = append(out, [2]int{loc[0], loc[1]})
			}
			return out
		},
	}
}

func foldASCII(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = lower[c]
	}
	return out
}

// literalOracle is a naive byte-substring search.
func literalOracle(pat []byte, fold bool) oracle {
	if fold {
		pat = foldASCII(pat)
	}
	norm := func(line []byte) []byte {
		if fold {
			return foldASCII(line)
		}
		return line
	}
	return oracle{
		match: func(line []byte) bool { return bytes.Contains(norm(line), pat) },
		matches: func(line []byte) [][2]int {
			var out [][2]int
			l := norm(line)
			if len(pat) == 0 {
				for i := 0; i < len(l); {
					out = append(out, [2]int{i, i})
					_, w := utf8.DecodeRune(l[i:])
					i += w
				}
				return append(out, [2]int{len(l), len(l)})
			}
			for i := 0; i+len(pat) <= len(l); {
				if bytes.Equal(l[i:i+len(pat)], pat) {
					out = append(out, [2]int{i, i + len(pat)})
					i += len(pat)
				} else {
					i++
				}
			}
			return out
		},
	}
}

func quote(b []byte) string {
	s := fmt.Sprintf("%q", b)
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// check verifies every Matcher method of m against o on buf and returns a
// description of the first disagreement, or "".
func check(m Matcher, o oracle, buf []byte) string {
	lines := splitLines(buf)
	var want [][2]int
	for _, l := range lines {
		line := buf[l[0]:l[1]]
		match := o.match(line)
		if got := m.Match(line); got != match {
			return fmt.Sprintf("Match(%s) = %v, want %v", quote(line), got, match)
		}
		if match {
			want = append(want, l)
		}
		if len(line) < 4096 {
			gotM := m.AppendMatches(nil, line)
			if wantM := o.matches(line); !slices.Equal(gotM, wantM) {
				return fmt.Sprintf("AppendMatches(%s) = %v, want %v", quote(line), gotM, wantM)
			}
		}
	}
	var got [][2]int
	m.ScanLines(buf, func(s, e int) bool {
		got = append(got, [2]int{s, e})
		return true
	})
	if !slices.Equal(got, want) {
		return fmt.Sprintf("ScanLines(%s) = %v, want %v", quote(buf), got, want)
	}
	if n := m.CountLines(buf); n != len(want) {
		return fmt.Sprintf("CountLines(%s) = %d, want %d", quote(buf), n, len(want))
	}
	if len(want) > 0 {
		calls := 0
		m.ScanLines(buf, func(s, e int) bool {
			calls++
			if [2]int{s, e} != want[0] {
				calls += 100
			}
			return false
		})
		if calls != 1 {
			return fmt.Sprintf("ScanLines(%s) did not stop at the first line", quote(buf))
		}
	}
	return ""
}

// checkRegexp compares NewRegexp(expr, fold) with Go's regexp on buf.
func checkRegexp(t testing.TB, expr string, fold bool, buf []byte) {
	t.Helper()
	m, err := NewRegexp(expr, fold)
	if err != nil {
		t.Fatalf("NewRegexp(%q): %v", expr, err)
	}
	p := expr
	if fold {
		p = "(?i)" + p
	}
	if msg := check(m, regexpOracle(regexp.MustCompile(p)), buf); msg != "" {
		t.Errorf("pattern %q fold=%v: %s", expr, fold, msg)
	}
}

func joinLines(lines []string, finalNL bool) []byte {
	s := strings.Join(lines, "\n")
	if finalNL {
		s += "\n"
	}
	return []byte(s)
}
