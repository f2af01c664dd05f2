package mmapstore

import (
	"encoding/binary"
	"math/bits"

	"github.com/logdex/logdex/mmapstore/wordwise"
)

// sumVarints adds up the first k uvarints of b and returns the bytes after
// them; ok is false when b ends first or holds a malformed uvarint.
// Locating a line sums the lengths before it in its group (up to 63):
// while at least 8 are left and none in the next 8 bytes is longer than
// two bytes, those 8 bytes are summed at once (a log line's length takes
// one or two).
func sumVarints(b []byte, k int) (sum uint64, rest []byte, ok bool) {
	for k >= 8 && len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		c := w & wordwise.Highs // continuation bits
		if c&(c<<8) != 0 {
			break // a uvarint of three bytes or more: byte by byte
		}
		n, ends := 8, ^c&wordwise.Highs
		if c>>63 != 0 { // the last byte begins a uvarint the next word ends
			n, w, c, ends = 7, w&(1<<56-1), c&(1<<56-1), ends&(1<<56-1)
		}
		low := w &^ wordwise.Highs
		second := (c << 8 >> 7) * 0xFF // 0xFF in each byte that ends a two-byte uvarint
		sum += byteSum(low) + 127*byteSum(low&second)
		k -= bits.OnesCount64(ends)
		b = b[n:]
	}
	s, b, ok := sumVarintsBytewise(b, k)
	return sum + s, b, ok
}

// sumVarintsBytewise is sumVarints one uvarint at a time, the short ones
// inline.
func sumVarintsBytewise(b []byte, k int) (sum uint64, rest []byte, ok bool) {
	for ; k > 0; k-- {
		var v uint64
		switch {
		case len(b) > 0 && b[0] < 0x80:
			v, b = uint64(b[0]), b[1:]
		case len(b) > 1 && b[1] < 0x80:
			v, b = uint64(b[0]&0x7f)|uint64(b[1])<<7, b[2:]
		default:
			var w int
			if v, w = binary.Uvarint(b); w <= 0 {
				return sum, b, false
			}
			b = b[w:]
		}
		sum += v
	}
	return sum, b, true
}

// byteSum adds up the bytes of x (each below 0x80).
func byteSum(x uint64) uint64 {
	const m = 0x00FF00FF00FF00FF
	return ((x&m + x>>8&m) * 0x0001000100010001) >> 48
}
