package scan

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"regexp/syntax"
	"strings"
	"testing"
)

// edgeLines covers the shapes of lines the matchers must handle.
var edgeLines = []string{
	"", "a", "b", "ab", "ba", "aaa", " ", "\r", "a\r", "foo\r", "foo", "foobar", "barfoo", "xfoox", "foo bar",
	"FOO", "Foo", "fOo bar", "the cat sat", "cat", "concatenate", "_cat_", "cat9", "9cat", "(cat)",
	"ERROR: read timeout", "error timeout", "ERROR", "timeout ERROR", "Timeout", "ERROR x TIMEOUT",
	"10.0.0.1", "1.2.3", "a1.2.3.4b", "999.999.999.999.999", "::1", "GET /api/v2/users", "POST /api/v10/x", "PUT /api/v1/a",
	"ABCD 123", "ABC 123", "abcd 123", "WXYZW 0", "ABCDE12",
	"é", "café", "CAFÉ", "naïve résumé", "日本語のログ", "\xff", "a\xffb", "\xc3", "\xc3(", "\xe2\x82", "\xed\xa0\x80", "\xef\xbf\xbd",
	"K", "k", "\u212a", "s", "S", "\u017f", "straße", "STRASSE", "ſtraße",
	"\t", "a\tb", "\x00", "a\x00b", "[error] x", "] [error] y", "[Error]", "]]] [error] ",
	"PacketResponder 1 for block", "packetresponder", "PACKETRESPONDER", "PacketResponde",
	strings.Repeat("x", 199), strings.Repeat("x", 200), strings.Repeat("é", 200), strings.Repeat("é", 199) + "x",
	strings.Repeat("a", 1000) + "foo",
}

var edgePatterns = []string{
	``, `a`, `b`, `ab`, `foo`, `^foo`, `foo$`, `^foo$`, `^`, `$`, `^$`, `\A`, `\z`, `\Afoo\z`, `(?m)^foo$`, `(?m)^`, `(?m)$`,
	`\bcat\b`, `\Bcat`, `cat\B`, `\b`, `\B`, `^\b`, `\b$`, `\B$`, `^\B`, `x\b`, `\b\B`,
	`(?i)foo`, `(?i)café`, `(?i)k`, `(?i)s`, `(?i)straße`, `(?i)error.*timeout`, `(?s).`, `(?s)^.*$`, `.`, `^.$`, `..`,
	`[a-z]+`, `[^a]`, `^[^a]*$`, `[^a-z]`, `[[:upper:]]{4}`, `[^\x00-\x{10FFFF}]`, `[\x00]`, `\x00`, `a|b`, `foo|bar`, `(foo|bar)$`, `^(a|ab)(c|bcd)?$`,
	`a{2}`, `a{2,3}`, `^a{2,3}$`, `a{0}`, `(ab){1,2}`, `x{200}`, `^.{200,}$`, `^.{200}$`, `.{3,5}`,
	`a*`, `a+`, `a?`, `a*?`, `(a*)*`, `(a|)+`, `(?:)`, `()`, `\pL`, `\pL+`, `\p{Han}`, `\PL`, `\p{Greek}`, `\d`, `\D`, `\w+`, `\W`, `\s`, `\S+`,
	`é`, `[é]`, `[^é]`, `\x{FFFD}`, `\xff`, `a.b`, `a\x{FFFD}b`, `\r`, `\r$`, `o\r$`, `\t`, `\n`, `[^\n]`, `a\nb`, `(?s)a.b`,
	`\d+\.\d+\.\d+\.\d+`, `[A-Z]{4,} [0-9]+`, `ERROR.*timeout`, `(GET|POST) /api/v[0-9]+/[a-z]+`, `\] \[error\] `, `e`,
	`PacketResponder`, `(?i)packetresponder`, `(?i)PACKET`, `^\s*$`, `\bERROR\b`, `x*$`, `(?U)a+`, `[[:^alpha:]]`,
}

func TestRegexpEdgeCases(t *testing.T) {
	for _, final := range []bool{false, true} {
		buf := joinLines(edgeLines, final)
		for _, p := range edgePatterns {
			for _, fold := range []bool{false, true} {
				checkRegexp(t, p, fold, buf)
			}
		}
	}
}

func TestRegexpBufferShapes(t *testing.T) {
	bufs := []string{"", "\n", "\n\n", "a", "a\n", "\na", "a\n\n", "\r\n", "a\r\nb\r\n", "foo\nbar", "x\n\nfoo\n\n", "é\n\xff\n"}
	for _, b := range bufs {
		for _, p := range edgePatterns {
			checkRegexp(t, p, false, []byte(b))
		}
	}
}

func TestRegexpLongLines(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789 abcdefghij é \xff "), 1<<20/25/raceScale)
	lines := []string{string(big), "", string(big) + "foo", "foo" + string(big), "short", string(big[:200])}
	for _, final := range []bool{false, true} {
		buf := joinLines(lines, final)
		for _, p := range []string{`foo`, `^foo`, `foo$`, `^.{200,}$`, `^.{200}$`, `[^a]`, `\bfoo\b`, `xyz`, `^[^x]*$`, `(?i)FOO`, `\d+\.\d+`, `é \xff`} {
			checkRegexp(t, p, false, buf)
		}
	}
}

func TestRegexpErrors(t *testing.T) {
	for _, p := range []string{`(`, `a)`, `[a`, `a**`, `x{1001}`, `\8`, `\pX`, "\xff"} {
		for _, fold := range []bool{false, true} {
			_, err := NewRegexp(p, fold)
			_, want := syntax.Parse(p, syntax.Perl)
			var se *syntax.Error
			if !errors.As(err, &se) || want == nil || err.Error() != want.Error() {
				t.Errorf("NewRegexp(%q, %v) error = %v, want %v", p, fold, err, want)
			}
		}
	}
}

// TestRegexpSmallCache forces cache resets and the fallback to Go's regexp.
func TestRegexpSmallCache(t *testing.T) {
	buf := joinLines(edgeLines, true)
	for _, p := range edgePatterns {
		for _, states := range []int{1, 2, 3, 5} {
			m, err := NewRegexp(p, false)
			if err != nil {
				t.Fatal(err)
			}
			rm := m.(*reMatcher)
			rm.d.maxStates = states
			rm.pre = nil
			if msg := check(m, regexpOracle(rm.re), buf); msg != "" {
				t.Errorf("pattern %q maxStates=%d: %s", p, states, msg)
			}
		}
	}
}

func TestRegexpPrefilterSwitch(t *testing.T) {
	// Most lines hold the literal, so the prefilter turns itself off midway
	// (after minPrefiltered bytes: 5,000 lines are ~2.5 times that).
	var lines []string
	for i := range 20000 / raceScale {
		switch i % 7 {
		case 0:
			lines = append(lines, "ERROR x")
		case 1:
			lines = append(lines, "ERROR read timeout")
		default:
			lines = append(lines, "ERROR: connect timeout after 30s, retrying")
		}
		if i%11 == 0 {
			lines = append(lines, "")
		}
	}
	buf := joinLines(lines, false)
	for _, p := range []string{`ERROR.*timeout`, `ERROR x$`, `^ERROR\b`, `(?i)error.*TIMEOUT`, `x$|timeout after`, `(?i)(after|x)\b`, `(conn|read) timeout`} {
		checkRegexp(t, p, false, buf)
	}
}

func TestLiteralEdgeCases(t *testing.T) {
	pats := []string{"", "a", "e", "foo", "FOO", "fOo", "\r", "o\r", "é", "É", "CAFÉ", "\xff", "a\xffb", "\x00", "[error]", "] [error] ",
		"PacketResponder", "packetresponder", "x\ny", "\n", strings.Repeat("x", 200), strings.Repeat("a", 1001), "aa", "abab", "K", "k", "ſ", " ", "  "}
	for _, final := range []bool{false, true} {
		buf := joinLines(edgeLines, final)
		for _, p := range pats {
			for _, fold := range []bool{false, true} {
				if msg := check(NewLiteral([]byte(p), fold), literalOracle([]byte(p), fold), buf); msg != "" {
					t.Errorf("literal %q fold=%v: %s", p, fold, msg)
				}
			}
		}
	}
	for _, b := range []string{"", "\n", "\n\n", "a", "a\n", "\na", "aa\naaaa\n", "abababab"} {
		for _, p := range pats {
			for _, fold := range []bool{false, true} {
				if msg := check(NewLiteral([]byte(p), fold), literalOracle([]byte(p), fold), []byte(b)); msg != "" {
					t.Errorf("literal %q fold=%v: %s", p, fold, msg)
				}
			}
		}
	}
}

// TestLiteralManyFalseCandidates drives the finder into its bytes.Index mode
// and back.
func TestLiteralManyFalseCandidates(t *testing.T) {
	var buf []byte
	for i := range 6000 {
		switch i {
		case 3, 1500, 4100, 5999:
			buf = append(buf, "zzzzzzzzzzzzzzzzzzzzzzzzzzzy\nZZZZZZZZZZZZZZZZZZZZZZZZZZZY\n"...)
		}
		buf = append(buf, "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz\n"...)
	}
	for _, p := range []string{"zzzy", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz", "zy", "z"} {
		for _, fold := range []bool{false, true} {
			if msg := check(NewLiteral([]byte(p), fold), literalOracle([]byte(p), fold), buf); msg != "" {
				t.Errorf("literal %q fold=%v: %s", p, fold, msg)
			}
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	buf := bytes.Repeat(joinLines(edgeLines, true), 50)
	ms := []Matcher{NewLiteral([]byte("foo"), true)}
	for _, p := range []string{`\bcat\b`, `ERROR.*timeout`, `^.{200,}$`, `\pL+é`} {
		m, err := NewRegexp(p, false)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	for _, m := range ms {
		want := m.CountLines(buf)
		done := make(chan int)
		for range 4 {
			go func() {
				n := 0
				for range 5 {
					n = m.CountLines(buf)
					for _, l := range edgeLines {
						m.Match([]byte(l))
					}
				}
				done <- n
			}()
		}
		for range 4 {
			if got := <-done; got != want {
				t.Errorf("concurrent CountLines = %d, want %d", got, want)
			}
		}
	}
}

// TestRegexpThrash checks the DFA gives up for Go's regexp when it keeps
// building states (here 2^11 live combinations for 100 cache slots), and
// stays exact.
func TestRegexpThrash(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	var b bytes.Buffer
	for b.Len() < 200<<10 {
		if r.IntN(4) == 0 {
			b.WriteString("xyz") // for the prefiltered pattern
		}
		for range r.IntN(80) {
			b.WriteByte("ab"[r.IntN(2)])
		}
		b.WriteByte('\n')
	}
	buf := b.Bytes()
	for _, p := range []string{`[ab]*a[ab]{10}$`, `a[ab]{10}b`, `xyz[ab]*a[ab]{10}$`} {
		m, err := NewRegexp(p, false)
		if err != nil {
			t.Fatal(err)
		}
		rm := m.(*reMatcher)
		rm.d.maxStates = 100
		if strings.HasPrefix(p, "xyz") && len(rm.pre) == 0 {
			t.Errorf("%q: no prefilter", p)
		}
		var k sink
		rm.scan(buf, &k)
		if !k.fallback {
			t.Errorf("%q: no fallback to regexp", p)
		}
		if msg := check(m, regexpOracle(rm.re), buf); msg != "" {
			t.Errorf("%q: %s", p, msg)
		}
	}
}
