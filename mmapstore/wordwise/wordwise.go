// Package wordwise owns the word-at-a-time byte tests shared by the
// segment reader (summing varints), the query engine (finding a letter)
// and the server (finding a byte to escape): 8 bytes of a uint64 tested
// at once. A test marks a byte by setting its high bit; only the lowest
// mark is exact (a borrow may set marks above it), so callers use the
// lowest one only.
package wordwise

const (
	Lows  = 0x0101010101010101 // the low bit of every byte; c*Lows repeats byte c
	Highs = 0x8080808080808080 // the high bit of every byte
)

// Zeros marks the zero bytes of x (exact up to the lowest mark).
func Zeros(x uint64) uint64 { return (x - Lows) & ^x & Highs }
