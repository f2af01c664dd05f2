// Package scan owns the line matchers that decide which log lines match a
// query: byte literals (grep -F / -iF in the C locale) and Go RE2 regular
// expressions (grep -E equivalent with Go's regexp semantics).
//
// A line is a byte slice without its terminating '\n' (a '\r' before the '\n'
// stays part of the line); it may hold invalid UTF-8. The matchers are built
// for whole-buffer scans that the index cannot narrow, so they work on many
// lines at once: literals jump between occurrences with SIMD-backed
// bytes.Index/IndexByte, and regular expressions run a lazily built DFA
// (RE2-style) behind a required-literal prefilter, falling back to Go's
// regexp only when the DFA cache thrashes.
package scan

import "bytes"

// Matcher decides whether a line matches and where. Implementations are safe
// for concurrent use.
type Matcher interface {
	// Match reports whether line (without '\n') contains a match.
	Match(line []byte) bool
	// AppendMatches appends the [start,end) byte ranges of the leftmost,
	// non-overlapping matches in line, exactly as regexp.FindAllIndex would
	// report them (empty matches included under the same rules).
	AppendMatches(dst [][2]int, line []byte) [][2]int
	// ScanLines calls fn(start, end) for every matching line in buf, in
	// order; buf holds whole lines separated by '\n' (the last line may lack
	// '\n'); [start,end) excludes the '\n'. fn returns false to stop.
	ScanLines(buf []byte, fn func(start, end int) bool)
	// CountLines returns the number of matching lines in buf (same line
	// rules as ScanLines).
	CountLines(buf []byte) int
}

// lineEnd returns the index of the '\n' ending the line that contains i, or
// len(buf) for an unterminated last line.
func lineEnd(buf []byte, i int) int {
	if j := bytes.IndexByte(buf[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(buf)
}

// countAllLines counts the lines of buf the way grep does: a final '\n' does
// not start another (empty) line.
func countAllLines(buf []byte) int {
	if len(buf) == 0 {
		return 0
	}
	n := bytes.Count(buf, nl)
	if buf[len(buf)-1] != '\n' {
		n++
	}
	return n
}

// scanAllLines reports every line of buf.
func scanAllLines(buf []byte, fn func(start, end int) bool) {
	for start := 0; start < len(buf); {
		end := lineEnd(buf, start)
		if !fn(start, end) {
			return
		}
		start = end + 1
	}
}

var nl = []byte{'\n'}

// byteRank orders bytes by how often they occur in log text (higher is more
// common; measured on the loghub corpus, bytes >= 0x80 set to a middling
// rank). Prefilters use it to search for the rarest bytes of a literal.
var byteRank = [256]uint8{
	0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 223, 10, 11, 220, 12, 13,
	14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
	255, 165, 180, 189, 179, 162, 161, 172, 195, 194, 187, 164, 209, 237, 243, 218,
	254, 252, 248, 238, 236, 239, 235, 234, 232, 233, 245, 174, 173, 208, 170, 163,
	186, 205, 197, 210, 199, 204, 206, 182, 185, 211, 193, 188, 198, 201, 219, 200,
	196, 175, 213, 221, 203, 191, 183, 192, 171, 167, 176, 215, 166, 214, 30, 216,
	31, 251, 227, 242, 240, 253, 224, 225, 226, 244, 178, 222, 231, 229, 246, 250,
	228, 184, 247, 241, 249, 230, 217, 202, 207, 212, 181, 168, 190, 169, 177, 32,
	100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
	100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
	100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
	100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
	120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120,
	120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120,
	120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120, 120,
	100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100,
}

// Insts is the number of instructions of m's compiled regular expression
// program (0 for a literal): what one byte of a line may cost to match,
// at worst. A pattern of nested counts compiles to 100,000 of them and
// reads a few KB a second.
func Insts(m Matcher) int {
	switch m := m.(type) {
	case *reMatcher:
		return len(m.d.inst)
	case *bytewise:
		return Insts(m.m)
	}
	return 0
}
