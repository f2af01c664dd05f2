package scan

import (
	"bytes"
	"slices"
)

// finder locates a byte literal, optionally ignoring ASCII case, the way
// ripgrep's memchr/memmem prefilters do. Where the CPU allows, it searches
// for two of the literal's rarest bytes at their distance in the literal
// (the packed pair, 32 positions per vector compare), and verifies around
// each hit. Elsewhere, and for 1-byte literals, it looks for the rarest
// byte with SIMD-backed bytes.IndexByte. Both beat bytes.Index (which keys
// on the first byte) on log text whose first pattern bytes are common ('[',
// ' ', digits, lowercase letters).
type finder struct {
	pat    []byte // the literal; lowercased when fold
	fold   bool
	off1   int  // offset of the rarest byte
	b1, u1 byte // rarest byte; u1 is its other case (== b1 if none)
	off2   int  // offset of the second rarest byte (checked before the full compare)
	b2     byte // lowercased when fold
	// The packed pairs (as in ripgrep's memmem): two of the literal's
	// rarest bytes at their distance, which the vector search looks for at
	// once. Two bytes at a fixed distance are rare even when each is common
	// ('[' and ']' in "] ["), so few candidates need verifying. Byte ranks
	// are guesses: a scan that meets too many false candidates moves on to
	// the next pair (in JSON logs '"' is everywhere). Empty for 1-byte
	// literals or without SIMD.
	pairs []pairSpec
}

// pairSpec is one packed pair: offsets a < b in the literal, and the bytes
// looked for there (both cases of each when folding).
type pairSpec struct {
	a, b           int
	a1, a2, b1, b2 byte
}

// usePair is hasPair; tests turn it off to check the rare-byte loop alone.
var usePair = hasPair

// pairMin is the fewest positions indexPair is given; shorter tails go to
// the rare-byte loop.
const pairMin = 32

// lower maps A-Z to a-z and leaves every other byte alone.
var lower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return
}()

func isASCIILetter(b byte) bool { return lower[b] >= 'a' && lower[b] <= 'z' }

func otherCase(b byte) byte {
	switch {
	case 'a' <= b && b <= 'z':
		return b - 'a' + 'A'
	case 'A' <= b && b <= 'Z':
		return b - 'A' + 'a'
	}
	return b
}

// rank estimates how common b is under the finder's folding: both cases of
// a letter occur, so a folded letter is as common as its commoner case.
func foldRank(b byte, fold bool) int {
	r := int(byteRank[b])
	if fold && isASCIILetter(b) {
		r = max(r, int(byteRank[otherCase(b)]))
	}
	return r
}

func newFinder(pat []byte, fold bool) *finder {
	f := &finder{pat: append([]byte(nil), pat...), fold: fold}
	if fold {
		for i, b := range f.pat {
			f.pat[i] = lower[b]
		}
	}
	if len(pat) == 0 {
		return f
	}
	f.off1, f.off2 = 0, 0
	for i := range f.pat {
		if foldRank(f.pat[i], fold) < foldRank(f.pat[f.off1], fold) {
			f.off1 = i
		}
	}
	f.off2 = -1
	for i := range f.pat {
		if f.pat[i] == f.pat[f.off1] {
			continue
		}
		if f.off2 < 0 || foldRank(f.pat[i], fold) < foldRank(f.pat[f.off2], fold) {
			f.off2 = i
		}
	}
	if f.off2 < 0 {
		f.off2 = f.off1
	}
	f.b1, f.b2 = f.pat[f.off1], f.pat[f.off2]
	f.u1 = f.b1
	if fold {
		f.u1 = otherCase(f.b1)
	}
	if usePair && len(pat) >= 2 {
		f.setPairs(fold)
	}
	return f
}

// maxPairOffsets is how many of the rarest offsets pairs are made of.
const maxPairOffsets = 4

// setPairs lists the pairs among the literal's rarest offsets, likeliest
// rarest first: by the sum of their ranks, two equal bytes last.
func (f *finder) setPairs(fold bool) {
	offs := make([]int, len(f.pat))
	for i := range offs {
		offs[i] = i
	}
	rank := func(i int) int { return foldRank(f.pat[i], fold) }
	slices.SortStableFunc(offs, func(x, y int) int { return rank(x) - rank(y) })
	offs = offs[:min(len(offs), maxPairOffsets)]
	both := func(c byte) (byte, byte) {
		if fold {
			return c, otherCase(c)
		}
		return c, c
	}
	score := func(p pairSpec) int {
		sc := rank(p.a) + rank(p.b)
		if f.pat[p.a] == f.pat[p.b] {
			sc += 512
		}
		return sc
	}
	for i, x := range offs {
		for _, y := range offs[i+1:] {
			p := pairSpec{a: min(x, y), b: max(x, y)}
			p.a1, p.a2 = both(f.pat[p.a])
			p.b1, p.b2 = both(f.pat[p.b])
			f.pairs = append(f.pairs, p)
		}
	}
	slices.SortStableFunc(f.pairs, func(p, q pairSpec) int { return score(p) - score(q) })
}

// findState carries a finder's per-scan state; the zero value is ready and
// is reset for every new haystack.
type findState struct {
	next1, next2 int // cached absolute positions of the next b1 / u1 (fold), or past the end
	valid        bool
	winStart     int // start of the window in which fails are counted
	fails        int // candidates in the window that failed verification
	bruteUntil   int // use bytes.Index for occurrences starting before this
	pair         int // the pair in use
	pairWin      int // start of the window in which its misses are counted
	pairMisses   int
}

// A pair that meets more than pairMisses false candidates in pairWindow
// bytes gives way to the next: each costs a call, the scan between them
// far less.
const (
	pairWindow = 64 << 10
	pairMisses = 16
)

// Windows for choosing between the rare-byte loop and bytes.Index.
const (
	failWindow  = 64 << 10  // judge the false candidates of this many bytes
	bruteWindow = 256 << 10 // then use bytes.Index for this many
)

func (f *finder) equalAt(hay []byte, s int) bool {
	p := f.pat
	h := hay[s : s+len(p)]
	if !f.fold {
		return bytes.Equal(h, p)
	}
	for i := range p {
		if lower[h[i]] != p[i] {
			return false
		}
	}
	return true
}

// index returns the start of the first occurrence of the literal in hay at
// or after from, or -1. st must be used with the same hay for all calls,
// with non-decreasing from.
func (f *finder) index(hay []byte, from int, st *findState) int {
	n := len(f.pat)
	if n == 0 {
		if from <= len(hay) {
			return from
		}
		return -1
	}
	if len(f.pairs) > 0 {
		// Candidates start in [from, len(hay)-n]; position i of the pair
		// search stands for the start from+i.
		for last := len(hay) - n; last-from+1 >= pairMin; {
			p := &f.pairs[st.pair]
			j := indexPair(hay[from+p.a:last+p.b+1], p.b-p.a, p.a1, p.a2, p.b1, p.b2)
			if j < 0 {
				return -1
			}
			s := from + j
			if f.equalAt(hay, s) {
				return s
			}
			from = s + 1
			if from-st.pairWin >= pairWindow {
				st.pairWin, st.pairMisses = from, 0
			}
			if st.pairMisses++; st.pairMisses > pairMisses {
				st.pair = (st.pair + 1) % len(f.pairs)
				st.pairWin, st.pairMisses = from, 0
			}
		}
	}
	lim := len(hay) - n + f.off1 + 1 // a hit of b1 at p >= lim leaves no room for the literal
	if !f.fold {
		for {
			if from < st.bruteUntil {
				// Occurrences starting before bruteUntil.
				if j := bytes.Index(hay[from:min(len(hay), st.bruteUntil+n-1)], f.pat); j >= 0 {
					return from + j
				}
				from = st.bruteUntil
				st.winStart, st.fails = from, 0
			}
			p := from + f.off1
			if p >= lim {
				return -1
			}
			j := bytes.IndexByte(hay[p:lim], f.b1)
			if j < 0 {
				return -1
			}
			s := from + j
			if hay[s+f.off2] == f.b2 && f.equalAt(hay, s) {
				return s
			}
			from = s + 1
			// Many false candidates (the rare byte is not rare here): each
			// costs a call, and bytes.Index's SIMD brute force is faster.
			st.fails++
			if w := from - st.winStart; w >= failWindow {
				if st.fails*32 > w {
					st.bruteUntil = from + bruteWindow
				}
				st.winStart, st.fails = from, 0
			}
		}
	}
	if !st.valid {
		st.valid = true
		st.next1, st.next2 = -1, -1
	}
	twoCases := f.u1 != f.b1
	for {
		p := from + f.off1
		if p >= lim {
			return -1
		}
		// Keep the next hit of each case of b1 and advance only the one used:
		// two SIMD scans beat one byte-at-a-time scan for either byte.
		if st.next1 < p {
			st.next1 = lim
			if j := bytes.IndexByte(hay[p:lim], f.b1); j >= 0 {
				st.next1 = p + j
			}
		}
		q := st.next1
		if twoCases {
			if st.next2 < p {
				st.next2 = lim
				if j := bytes.IndexByte(hay[p:lim], f.u1); j >= 0 {
					st.next2 = p + j
				}
			}
			q = min(q, st.next2)
		}
		if q >= lim {
			return -1
		}
		s := q - f.off1
		if lower[hay[s+f.off2]] == f.b2 && f.equalAt(hay, s) {
			return s
		}
		from = s + 1
	}
}
