package scan

import (
	"bytes"
	"encoding/binary"
	"sync"
	"unicode/utf8"
)

// Byte-wise matching, for grep's C locale: there a pattern and a line are
// bytes, and '.', a negated bracket, \W or \S match one byte, where Go's
// regexp reads UTF-8 and matches a whole character. A line holding only
// ASCII reads the same both ways; any other line is widened byte by byte
// (each byte the rune of the same value, U+0000..U+00FF, in UTF-8), and
// then '.' matches exactly one of the line's bytes. The pattern is the
// same either way (its own bytes >= 0x80, if any, widened already).

// bytewise matches ASCII lines as they are and the others widened, with
// one matcher (its lazy DFA: a widened line is valid UTF-8).
type bytewise struct {
	m    Matcher
	bufs sync.Pool // *[]byte, for widened lines
}

// NewBytewise returns a Matcher of Go expression expr that answers as grep
// in the C locale.
func NewBytewise(expr string) (Matcher, error) {
	re, err := NewRegexp(expr, false)
	if err != nil {
		return nil, err
	}
	m := &bytewise{m: re}
	m.bufs.New = func() any { return new([]byte) }
	return m, nil
}

// Widen returns s with every byte made the rune of its value, in UTF-8:
// ASCII stays as it is, a byte >= 0x80 becomes two.
func Widen(dst, s []byte) []byte {
	for _, b := range s {
		if b < utf8.RuneSelf {
			dst = append(dst, b)
		} else {
			dst = append(dst, 0xC0|b>>6, 0x80|b&0x3F)
		}
	}
	return dst
}

// WidenMap returns line widened and, for each offset w of it, the line's
// offset at[w] (inside a widened byte: that byte's).
func WidenMap(line []byte) (wide []byte, at []int) {
	wide = Widen(nil, line)
	at = make([]int, len(wide)+1)
	w := 0
	for i, b := range line {
		at[w] = i
		w++
		if b >= utf8.RuneSelf {
			at[w] = i // (inside a widened byte: never a match's edge)
			w++
		}
	}
	at[w] = len(line)
	return wide, at
}

// IsASCII reports whether b holds no byte >= 0x80.
func IsASCII(b []byte) bool { return nonASCII(b) < 0 }

// nonASCII is the index of the first byte >= 0x80 of b, or -1.
func nonASCII(b []byte) int {
	const high = 0x8080808080808080
	i := 0
	for ; i+32 <= len(b); i += 32 {
		le := binary.LittleEndian
		if (le.Uint64(b[i:])|le.Uint64(b[i+8:])|le.Uint64(b[i+16:])|le.Uint64(b[i+24:]))&high != 0 {
			break
		}
	}
	for ; i+8 <= len(b); i += 8 {
		if binary.LittleEndian.Uint64(b[i:])&high != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= utf8.RuneSelf {
			return i
		}
	}
	return -1
}

// wideMatch matches a line holding a byte >= 0x80.
func (m *bytewise) wideMatch(line []byte) bool {
	bp := m.bufs.Get().(*[]byte)
	*bp = Widen((*bp)[:0], line)
	ok := m.m.Match(*bp)
	m.bufs.Put(bp)
	return ok
}

func (m *bytewise) Match(line []byte) bool {
	if nonASCII(line) < 0 {
		return m.m.Match(line)
	}
	return m.wideMatch(line)
}

func (m *bytewise) AppendMatches(dst [][2]int, line []byte) [][2]int {
	if nonASCII(line) < 0 {
		return m.m.AppendMatches(dst, line)
	}
	wide, at := WidenMap(line)
	n := len(dst)
	dst = m.m.AppendMatches(dst, wide)
	for i := n; i < len(dst); i++ {
		dst[i] = [2]int{at[dst[i][0]], at[dst[i][1]]}
	}
	return dst
}

// nextWide returns the bounds of the first line of buf[pos:] holding a
// byte >= 0x80 (start -1: none).
func nextWide(buf []byte, pos int) (start, end int) {
	i := nonASCII(buf[pos:])
	if i < 0 {
		return -1, -1
	}
	i += pos
	return pos + bytes.LastIndexByte(buf[pos:i], '\n') + 1, lineEnd(buf, i)
}

// ScanLines runs the UTF-8 matcher over the whole buffer (its fastest
// path) and replaces its verdict on each line holding a byte >= 0x80 by
// the widened one, in line order.
func (m *bytewise) ScanLines(buf []byte, fn func(start, end int) bool) {
	ws, we := nextWide(buf, 0)
	if ws < 0 {
		m.m.ScanLines(buf, fn) // all ASCII: read the same both ways
		return
	}
	stopped := false
	// wideUpTo reports the lines with a byte >= 0x80 that start before
	// limit and match widened.
	wideUpTo := func(limit int) bool {
		for ws >= 0 && ws < limit {
			if m.wideMatch(buf[ws:we]) && !fn(ws, we) {
				stopped = true
				return false
			}
			if we >= len(buf) {
				ws = -1
				break
			}
			ws, we = nextWide(buf, we+1)
		}
		return true
	}
	m.m.ScanLines(buf, func(s, e int) bool {
		if !wideUpTo(s) {
			return false
		}
		if s == ws {
			return true // a line with a byte >= 0x80: its widened verdict counts
		}
		if !fn(s, e) {
			stopped = true
			return false
		}
		return true
	})
	if !stopped {
		wideUpTo(len(buf) + 1)
	}
}

func (m *bytewise) CountLines(buf []byte) int {
	if IsASCII(buf) {
		return m.m.CountLines(buf) // its counting path, with no callback
	}
	n := 0
	m.ScanLines(buf, func(int, int) bool { n++; return true })
	return n
}
