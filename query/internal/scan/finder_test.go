package scan

import (
	"bytes"
	"math/rand/v2"
	"os"
	"slices"
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
				t.Fatalf("case %d: index(%q in %d bytes from %d, fold=%v) = %d, want %d (pairs=%v)", i, pat, len(hay), from, fold, got, want, f.pairs)
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

// TestFinderPairSwitch: a pair whose bytes are common together (JSON's '"'
// and a digit) gives way to the next, and occurrences are still found
// wherever the switch happens.
func TestFinderPairSwitch(t *testing.T) {
	if !hasPair {
		t.Skip("no vector pair search on this machine")
	}
	f := newFinder([]byte(`" 5`), false)
	if len(f.pairs) < 2 || f.pairs[0].a != 0 || f.pairs[0].b != 2 {
		t.Fatalf("pairs %+v: want '\"'..'5' first", f.pairs)
	}
	var hay []byte
	var want []int
	for i := range 4000 {
		hay = append(hay, `{"id":"a5","n":"b5"} `...)
		if i%500 == 499 {
			want = append(want, len(hay)+1)
			hay = append(hay, `x" 5y `...)
		}
	}
	var st findState
	var got []int
	for from := 0; ; {
		s := f.index(hay, from, &st)
		if s < 0 {
			break
		}
		got = append(got, s)
		from = s + 1
	}
	if !slices.Equal(got, want) {
		t.Fatalf("found %v, want %v", got, want)
	}
	if st.pair == 0 {
		t.Errorf("still on the first pair after %d false candidates", 2*4000)
	}
}
