//go:build !amd64

package scan

// hasPair is false: without a vector pair search the finder keys on its
// rarest byte alone.
const hasPair = false

func indexPair(hay []byte, d int, b1, u1, b2, u2 byte) int {
	panic("scan: indexPair without hasPair")
}
