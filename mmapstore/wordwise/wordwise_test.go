package wordwise

import (
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestZeros: the lowest mark of Zeros is the first zero byte, for words
// with zero bytes anywhere and none.
func TestZeros(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for range 100000 {
		x := rng.Uint64()
		for range rng.IntN(3) {
			x &^= 0xFF << (8 * rng.IntN(8))
		}
		first := 8
		for i := range 8 {
			if x>>(8*i)&0xFF == 0 {
				first = i
				break
			}
		}
		if got := bits.TrailingZeros64(Zeros(x)) / 8; got != first {
			t.Fatalf("%#016x: first zero byte %d, Zeros says %d", x, first, got)
		}
	}
}
