package scan

import (
	"regexp"
	"testing"
)

func FuzzRegexpMatch(f *testing.F) {
	for _, p := range edgePatterns {
		f.Add(p, []byte("foo bar\nERROR: read timeout\n\xffé\r\n"))
	}
	f.Add(`^.{2}\x{212A}[^\x{800}]$`, []byte("\xe2\x82a\xe2\x84\xaa\xe0\xa0\x80\n\xf0\x9f\x98\x80\xed\xa0\x80\xf4\x90"))
	f.Add(`(?i)k\pL+\b`, []byte("\u212a\u00e9t\u00e9 x\nK\xc3\n"))
	f.Fuzz(func(t *testing.T, pattern string, line []byte) {
		if len(pattern) > 64 || len(line) > 4096 {
			return
		}
		for _, fold := range []bool{false, true} {
			p := pattern
			if fold {
				p = "(?i)" + p
			}
			re, err := regexp.Compile(p)
			m, merr := NewRegexp(pattern, fold)
			if (err == nil) != (merr == nil) {
				t.Fatalf("pattern %q fold=%v: regexp error %v, NewRegexp error %v", pattern, fold, err, merr)
			}
			if err != nil {
				return
			}
			// line may hold '\n': check treats it as a buffer of lines.
			if msg := check(m, regexpOracle(re), line); msg != "" {
				t.Fatalf("pattern %q fold=%v: %s", pattern, fold, msg)
			}
			restore := setLanes(0, 1+len(line)%17) // two lanes, many windows
			msg := check(m, regexpOracle(re), line)
			restore()
			if msg != "" {
				t.Fatalf("pattern %q fold=%v two lanes: %s", pattern, fold, msg)
			}
			rm := m.(*reMatcher)
			rm.d.maxStates = 2
			rm.pre = nil
			if msg := check(m, regexpOracle(re), line); msg != "" {
				t.Fatalf("pattern %q fold=%v maxStates=2: %s", pattern, fold, msg)
			}
		}
	})
}

func FuzzLiteral(f *testing.F) {
	f.Add([]byte("foo"), []byte("a foo\nFOO\n\xff"), false)
	f.Add([]byte("Packet"), []byte("packetresponder\nPACKET\n"), true)
	f.Add([]byte(""), []byte("é\n\n"), false)
	f.Fuzz(func(t *testing.T, pattern, buf []byte, fold bool) {
		if msg := check(NewLiteral(pattern, fold), literalOracle(pattern, fold), buf); msg != "" {
			t.Fatalf("literal %q fold=%v: %s", pattern, fold, msg)
		}
	})
}
