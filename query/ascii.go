package query

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/logdex/logdex/mmapstore/token"
	"github.com/logdex/logdex/mmapstore/wordwise"
	"github.com/logdex/logdex/query/internal/scan"
)

// Matching words on ASCII lines without tokenizing them. On an ASCII line a
// token is a maximal run of letters, digits and '_', folded to lower case
// (package token): a word or a phrase can be compared in place, where
// lineState.tokens copies every token's folded bytes first. Verifying a
// phrase's candidates spent most of its time there.

// wordByte is token.IsWordByte as a table.
var wordByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = token.IsWordByte(byte(c))
	}
	return t
}()

// asciiLine reports whether the line is all ASCII, checked once per line.
func (ls *lineState) asciiLine() bool {
	if !ls.asciiKnown {
		ls.ascii, ls.asciiKnown = scan.IsASCII(ls.line), true
	}
	return ls.ascii
}

// asciiToken returns the first token of an ASCII line at or after byte i
// as [a, b); a is len(line) when there is none.
func asciiToken(line []byte, i int) (a, b int) {
	for i < len(line) && !wordByte[line[i]] {
		i++
	}
	return i, tokenEnd(line, i)
}

// asciiTokenFrom is asciiToken for the first token whose first byte folds
// to c (a lower-case letter, a digit or '_'): it jumps from one c (or C) to
// the next, looking at the next few bytes one by one and further with
// bytes.IndexByte (in dense text, a JSON line with an 'e' every few bytes,
// two IndexByte calls per occurrence cost more than the bytes they skip).
func asciiTokenFrom(line []byte, i int, c byte) (a, b int) {
	up := upper(c)
	const near = 16
	cs, ups := uint64(c)*wordwise.Lows, uint64(up)*wordwise.Lows
	for i < len(line) {
		a = -1
		// The next 16 bytes a word at a time (the lowest mark of either
		// test is exact).
		for j := i; j < i+near; j += 8 {
			if j+8 > len(line) {
				for ; j < min(i+near, len(line)); j++ {
					if line[j] == c || line[j] == up {
						a = j
						break
					}
				}
				break
			}
			w := binary.LittleEndian.Uint64(line[j:])
			if m := wordwise.Zeros(w^cs) | wordwise.Zeros(w^ups); m != 0 {
				a = j + bits.TrailingZeros64(m)/8
				break
			}
		}
		if a < 0 {
			if i+near >= len(line) {
				break
			}
			p := indexEither(line[i+near:], c, up)
			if p < 0 {
				break
			}
			a = i + near + p
		}
		if a == 0 || !wordByte[line[a-1]] { // a token starts here
			return a, tokenEnd(line, a+1)
		}
		i = a + 1
	}
	return len(line), len(line)
}

// indexEither is the index of the first c or up in b, -1 if neither is
// there: two bytes.IndexByte calls, the second only up to the first's
// find.
func indexEither(b []byte, c, up byte) int {
	p := bytes.IndexByte(b, c)
	if up != c {
		in := b
		if p >= 0 {
			in = b[:p]
		}
		if q := bytes.IndexByte(in, up); q >= 0 {
			p = q
		}
	}
	return p
}

// tokenEnd is the end of the token whose bytes run on from b.
func tokenEnd(line []byte, b int) int {
	for b < len(line) && wordByte[line[b]] {
		b++
	}
	return b
}

// lower is c's lower-case letter, c itself when it is not an upper-case
// letter.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// upper is c's upper-case letter, c itself when it is not a lower-case
// letter.
func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// asciiTokenFrom2 is asciiTokenFrom for a term of two bytes or more,
// c0 c1 its first two (lower-case letters, digits or '_'): it looks for
// the pair, folded, 8 positions at a time. On a JSON log line a word's
// first letter alone comes every few bytes ("error": "level", "service",
// "trace_id", ...), its first two letters seldom.
func asciiTokenFrom2(line []byte, i int, c0, c1 byte) (a, b int) {
	u0, u1 := upper(c0), upper(c1)
	c0s, u0s := uint64(c0)*wordwise.Lows, uint64(u0)*wordwise.Lows
	c1s, u1s := uint64(c1)*wordwise.Lows, uint64(u1)*wordwise.Lows
	for i+1 < len(line) {
		a = -1
		for ; i+9 <= len(line); i += 8 {
			w := binary.LittleEndian.Uint64(line[i:])
			w1 := binary.LittleEndian.Uint64(line[i+1:])
			// Zeros never misses a zero byte; its marks above the lowest
			// may be false, so a candidate is checked below.
			m := (wordwise.Zeros(w^c0s) | wordwise.Zeros(w^u0s)) & (wordwise.Zeros(w1^c1s) | wordwise.Zeros(w1^u1s))
			if m != 0 {
				a = i + bits.TrailingZeros64(m)/8
				break
			}
		}
		if a < 0 {
			for ; i+1 < len(line); i++ {
				if (line[i] == c0 || line[i] == u0) && (line[i+1] == c1 || line[i+1] == u1) {
					a = i
					break
				}
			}
			if a < 0 {
				break
			}
		}
		if (line[a] == c0 || line[a] == u0) && (line[a+1] == c1 || line[a+1] == u1) &&
			(a == 0 || !wordByte[line[a-1]]) { // a token starts here
			return a, tokenEnd(line, a+2)
		}
		i = a + 1
	}
	return len(line), len(line)
}

// asciiFind appends the span of every run of len(terms) consecutive tokens
// of an ASCII line that fold to terms (the last one only starting with
// its term when lastPrefix), from the first token's start to the last
// one's end; with firstOnly it stops after the first. terms
// must not be empty.
func asciiFind(line []byte, terms [][]byte, lastPrefix bool, dst [][2]int, firstOnly bool) (out [][2]int, found bool) {
	if k, j, ok := findAnchor(terms); ok {
		return asciiFindAnchored(line, terms, lastPrefix, dst, firstOnly, k, j)
	}
	t0 := terms[0]
	jump := len(t0) > 0 && wordByte[t0[0]] && !('A' <= t0[0] && t0[0] <= 'Z')
	// A token that folds to t0 (or starts with it) starts with its first
	// two bytes.
	jump2 := jump && len(t0) > 1 && wordByte[t0[1]] && !('A' <= t0[1] && t0[1] <= 'Z')
	for i := 0; i < len(line); {
		var a, b int
		if jump2 {
			a, b = asciiTokenFrom2(line, i, t0[0], t0[1])
		} else if jump {
			a, b = asciiTokenFrom(line, i, t0[0])
		} else {
			a, b = asciiToken(line, i)
		}
		if a == b {
			break
		}
		i = b
		if !tokenIs(line[a:b], t0, lastPrefix && len(terms) == 1) {
			continue
		}
		end, ok := asciiTermsAfter(line, b, terms, 1, lastPrefix)
		if ok && firstOnly {
			return append(dst, [2]int{a, end}), true
		}
		if ok {
			found = true
			dst = append(dst, [2]int{a, end})
		}
	}
	return dst, found
}

// asciiTermsAfter reports whether the tokens of an ASCII line from byte
// end on fold to terms[from:] (the last one only starting with its term
// when lastPrefix), and where the last of them ends.
func asciiTermsAfter(line []byte, end int, terms [][]byte, from int, lastPrefix bool) (int, bool) {
	for k := from; k < len(terms); k++ {
		var s int
		s, end = asciiToken(line, end)
		if s == end || !tokenIs(line[s:end], terms[k], lastPrefix && k == len(terms)-1) {
			return end, false
		}
	}
	return end, true
}

// tokenIs reports whether the ASCII token tok folds to t (starts with it,
// if prefix).
func tokenIs(tok, t []byte, prefix bool) bool {
	if len(tok) != len(t) && !(prefix && len(tok) > len(t)) {
		return false
	}
	return equalFoldedASCII(tok[:len(t)], t)
}

// anchorRank lists the letters rare enough in log lines for asciiFind to
// jump between, rarest first. Hex digits, digits, '_' and the commonest
// English letters are left out: trace ids, JSON keys and messages are full
// of them, and bytes.IndexByte pays a call per occurrence.
const anchorRank = "qzjxkvwygphmu"

// anchorRarity is 1 + a byte's place in anchorRank counted from its end,
// 0 for the bytes not in it: a table, as findAnchor runs once a line.
var anchorRarity = func() (r [256]uint8) {
	for i := range len(anchorRank) {
		r[anchorRank[i]] = uint8(len(anchorRank) - i)
	}
	return r
}()

// findAnchor picks the byte asciiFind jumps between: the rarest letter of
// anchorRank in the terms, as byte j of term k. ok is false when the terms
// hold none.
func findAnchor(terms [][]byte) (k, j int, ok bool) {
	var best uint8
	for tk, t := range terms {
		for tj, c := range t {
			if r := anchorRarity[c]; r > best {
				best, k, j = r, tk, tj
			}
		}
	}
	return k, j, best > 0
}

// asciiFindAnchored is asciiFind jumping from one occurrence of the
// anchor, byte j of terms[k] (either case), to the next with
// bytes.IndexByte: where it stands in a match the match's tokens are
// fixed, term k's token starting j bytes before it, the terms before it
// in the tokens before that one. Every match holds exactly one such
// occurrence, so the matches come once each and in order. On a JSON log
// line this reads a few bytes per nanosecond where comparing every
// position with a term's first two bytes read one.
func asciiFindAnchored(line []byte, terms [][]byte, lastPrefix bool, dst [][2]int, firstOnly bool, k, j int) (out [][2]int, found bool) {
	c := terms[k][j]
	up := upper(c)
	last := len(terms) - 1
	for i := 0; i < len(line); {
		p := indexEither(line[i:], c, up)
		if p < 0 {
			break
		}
		p += i
		i = p + 1
		s := p - j
		if s < 0 || s > 0 && wordByte[line[s-1]] {
			continue // not at a token's start
		}
		// (A token ending before the anchor is shorter than its term.)
		e := tokenEnd(line, s)
		if !tokenIs(line[s:e], terms[k], lastPrefix && k == last) {
			continue
		}
		start, ok := s, true
		for b := k - 1; b >= 0 && ok; b-- {
			a, z := asciiTokenBefore(line, start)
			ok = a < z && tokenIs(line[a:z], terms[b], false)
			start = a
		}
		if !ok {
			continue
		}
		end, ok := asciiTermsAfter(line, e, terms, k+1, lastPrefix)
		if !ok {
			continue
		}
		dst = append(dst, [2]int{start, end})
		if firstOnly {
			return dst, true
		}
		found = true
		// The next match's anchor lies past this one's (its tokens start
		// later), so the search goes on from here.
	}
	return dst, found
}

// asciiTokenBefore returns the last token of an ASCII line that ends at or
// before byte i, as [a, b); a == b when there is none.
func asciiTokenBefore(line []byte, i int) (a, b int) {
	for i > 0 && !wordByte[line[i-1]] {
		i--
	}
	b = i
	for i > 0 && wordByte[line[i-1]] {
		i--
	}
	return i, b
}
