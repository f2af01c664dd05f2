package scan

import (
	"bytes"
	"unicode/utf8"
)

// literal implements grep -F (and -iF with LC_ALL=C, folding only A-Z/a-z):
// a line matches iff it contains the pattern bytes.
type literal struct {
	f     *finder
	empty bool // matches every line
	never bool // the pattern holds '\n', which no line contains
}

// NewLiteral returns a Matcher for lines containing pattern as a byte
// substring; asciiFold ignores the case of ASCII letters only.
func NewLiteral(pattern []byte, asciiFold bool) Matcher {
	return &literal{
		f:     newFinder(pattern, asciiFold),
		empty: len(pattern) == 0,
		never: bytes.IndexByte(pattern, '\n') >= 0,
	}
}

func (l *literal) Match(line []byte) bool {
	if l.empty {
		return true
	}
	var st findState
	return l.f.index(line, 0, &st) >= 0
}

func (l *literal) AppendMatches(dst [][2]int, line []byte) [][2]int {
	if l.empty {
		// regexp.FindAllIndex of an empty pattern: one empty match at every
		// rune boundary (invalid bytes count as width-1 runes) and at the end.
		for i := 0; i < len(line); {
			dst = append(dst, [2]int{i, i})
			_, w := utf8.DecodeRune(line[i:])
			i += w
		}
		return append(dst, [2]int{len(line), len(line)})
	}
	var st findState
	for i := 0; ; {
		s := l.f.index(line, i, &st)
		if s < 0 {
			return dst
		}
		i = s + len(l.f.pat)
		dst = append(dst, [2]int{s, i})
	}
}

func (l *literal) ScanLines(buf []byte, fn func(start, end int) bool) {
	switch {
	case l.never:
		return
	case l.empty:
		scanAllLines(buf, fn)
		return
	}
	var st findState
	n := len(l.f.pat)
	for pos := 0; pos < len(buf); {
		s := l.f.index(buf, pos, &st)
		if s < 0 {
			return
		}
		start := pos + bytes.LastIndexByte(buf[pos:s], '\n') + 1
		end := lineEnd(buf, s+n)
		if !fn(start, end) {
			return
		}
		pos = end + 1
	}
}

func (l *literal) CountLines(buf []byte) int {
	switch {
	case l.never:
		return 0
	case l.empty:
		return countAllLines(buf)
	}
	var st findState
	n, count := len(l.f.pat), 0
	for pos := 0; pos < len(buf); {
		s := l.f.index(buf, pos, &st)
		if s < 0 {
			break
		}
		count++
		pos = lineEnd(buf, s+n) + 1
	}
	return count
}
