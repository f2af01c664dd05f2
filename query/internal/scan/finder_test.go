package scan

import (
	"bytes"
	"math/rand/v2"
	"os"
	"testing"
)

// refIndex is the finder's specification: the first occurrence of pat in
// hay at or after from (both already ASCII case folded for a folding
// finder).
func refIndex(hay, pat []byte, from int) int {
	if j := bytes.Index(hay[from:], pat); j >= 0 {
		return from + j
	}
	return -1
}

// TestFinderIndex checks every occurrence the finder reports, walking each
// haystack as the matchers do, against bytes.Index. Small alphabets give
// many candidates for the pair search and the rare-byte loop alike;
// haystack lengths straddle the vector widths (32 and 64 positions).
func TestFinderIndex(t *testing.T) {
	for _, pair := range []bool{false, hasPair} {
		old := usePair
		usePair = pair
		checkFinderIndex(t)
		usePair = old
	}
}

func checkFinderIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabets := []string{"ab", "aA]", "] [\n", "xyzXYZ \x00\xff", "abcdefghijklmnopqrstuvwxyz[]: \n"}
	n := 4000
	if os.Getenv("LOGDEX_LONG") != "" {
		n = 200000
	}
	for i := range n / raceScale {
		alpha := alphabets[r.IntN(len(alphabets))]
		hay := make([]byte, r.IntN(200))
		if r.IntN(8) == 0 {
			hay = make([]byte, 1000+r.IntN(5000))
		}
		for j := range hay {
			hay[j] = alpha[r.IntN(len(alpha))]
		}
		pat := make([]byte, 1+r.IntN(6))
		if r.IntN(2) == 0 && len(hay) > len(pat) {
			a := r.IntN(len(hay) - len(pat))
			copy(pat, hay[a:])
		} else {
			for j := range pat {
				pat[j] = alpha[r.IntN(len(alpha))]
			}
		}
		fold := r.IntN(2) == 0
		f := newFinder(pat, fold)
		refHay, refPat := hay, pat
		if fold {
			refHay, refPat = foldASCII(hay), foldASCII(pat)
		}
		var st findState
		for from := 0; from <= len(hay); {
			got, want := f.index(hay, from, &st), refIndex(refHay, refPat, from)
			if got != want {
				t.Fatalf("case %d: index(%q in %d bytes from %d, fold=%v) = %d, want %d (pair=%v)", i, pat, len(hay), from, fold, got, want, f.pair)
			}
			if got < 0 {
				break
			}
			from = got + 1 + r.IntN(len(pat))
		}
	}
}

// TestFinderPairOffsets puts the only occurrence at every position of
// haystacks around the vector widths, for pairs at every distance.
func TestFinderPairOffsets(t *testing.T) {
	for _, pat := range []string{"] [", "ab", "a\x00\x00b", "xxxxxxxxy", "Q" + string(bytes.Repeat([]byte{'.'}, 40)) + "R"} {
		for _, size := range []int{31, 32, 33, 63, 64, 65, 96, 127, 128, 129, 300} {
			if size < len(pat) {
				continue
			}
			for at := 0; at+len(pat) <= size; at++ {
				hay := bytes.Repeat([]byte{'.'}, size)
				copy(hay[at:], pat)
				for _, fold := range []bool{false, true} {
					var st findState
					if got := newFinder([]byte(pat), fold).index(hay, 0, &st); got != at {
						t.Fatalf("%q at %d of %d (fold=%v): found at %d", pat, at, size, fold, got)
					}
				}
			}
		}
	}
}
