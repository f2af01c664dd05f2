package scan

import "bytes"

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
	// The packed pair (as in ripgrep's memmem): where the vector search
	// looks for two of the literal's rarest bytes at once, pa < pb, with
	// both cases of each when fold. Two bytes at a fixed distance are rare
	// even when each is common ('[' and ']' in "] ["), so few candidates
	// need verifying. pair is false for 1-byte literals or without SIMD.
	pair               bool
	pa, pb             int
	pa1, pa2, pb1, pb2 byte
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
		f.setPair(fold)
	}
	return f
}

// setPair picks the pair: the rarest byte and the rarest byte at another
// offset (another value if there is one).
func (f *finder) setPair(fold bool) {
	a, b := f.off1, f.off2
	if a == b {
		b = len(f.pat) - 1
		if a == b {
			b = 0
		}
	}
	if a > b {
		a, b = b, a
	}
	both := func(c byte) (byte, byte) {
		if fold {
			return c, otherCase(c)
		}
		return c, c
	}
	f.pair, f.pa, f.pb = true, a, b
	f.pa1, f.pa2 = both(f.pat[a])
	f.pb1, f.pb2 = both(f.pat[b])
}

// findState carries a finder's per-scan state; the zero value is ready and
// is reset for every new haystack.
type findState struct {
	next1, next2 int // cached absolute positions of the next b1 / u1 (fold), or past the end
	valid        bool
	winStart     int // start of the window in which fails are counted
	fails        int // candidates in the window that failed verification
	bruteUntil   int // use bytes.Index for occurrences starting before this
}

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
	if f.pair {
		// Candidates start in [from, len(hay)-n]; position i of the pair
		// search stands for the start from+i.
		for last := len(hay) - n; last-from+1 >= pairMin; {
			j := indexPair(hay[from+f.pa:last+f.pb+1], f.pb-f.pa, f.pa1, f.pa2, f.pb1, f.pb2)
			if j < 0 {
				return -1
			}
			if s := from + j; f.equalAt(hay, s) {
				return s
			} else {
				from = s + 1
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
