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

// twoByteStarts: the continuation bits of four two-byte varints.
const twoByteStarts = 0x0080008000800080

// lanes7: the low 7 bits of each 16-bit lane.
const lanes7 = 0x007F007F007F007F

// laneSum adds up the 16-bit lanes of x (their sum below 1<<16).
func laneSum(x uint64) uint64 { return x * 0x0001000100010001 >> 48 }

// byteSum adds up the bytes of x (each below 0x80).
func byteSum(x uint64) uint64 {
	const m = 0x00FF00FF00FF00FF
	return ((x&m + x>>8&m) * 0x0001000100010001) >> 48
}

// sumZigzags adds up the first k zigzag-coded varints of b (signed: u/2
// for an even u, -(u+1)/2 for an odd one) while at least 8 are left and
// none in the next 8 bytes is longer than two bytes, 8 bytes at a time as
// sumVarints does, and returns the sum, how many it added and the bytes
// after them; the caller decodes the rest. A line's time is its group's
// base plus the deltas before it (32 on average for a hit, of one or two
// bytes for lines milliseconds to seconds apart): summed one by one they
// were a tenth of an uncached page's CPU.
func sumZigzags(b []byte, k int) (sum int64, added int, rest []byte) {
	for k-added >= 8 && len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		c := w & wordwise.Highs // continuation bits
		if c&(c<<8) != 0 {
			break // a varint of three bytes or more
		}
		if c == twoByteStarts {
			// Four two-byte varints, summed as 16-bit lanes (lines
			// seconds apart in ms: every delta takes two bytes).
			u := w&lanes7 | w>>1&(lanes7<<7)
			odd := u & wordwise.Lows & lanes7
			half := u >> 1 & (lanes7<<7 | lanes7)
			sum += int64(laneSum(half)) - 2*int64(laneSum(half&(odd*0xFFFF))) - int64(bits.OnesCount64(odd))
			added += 4
			b = b[8:]
			continue
		}
		n := 8
		if c>>63 != 0 { // the last byte begins a varint the next word ends
			n, w, c = 7, w&(1<<56-1), c&(1<<56-1)
		}
		used := uint64(1)<<(8*n) - 1             // (the n bytes summed)
		seconds := (c << 8 >> 7) * 0xFF & used   // 0xFF in each byte that ends a two-byte varint
		starts := ^seconds & used                // 0xFF in each byte that begins one
		odd := w & wordwise.Lows & starts        // 0x01 in each start of an odd (negative) one
		oddFF := odd * 0xFF                      // its first byte
		oddSecond := (odd << 8) * 0xFF & seconds // and its second, if any
		low := w &^ wordwise.Highs
		half := low >> 1 & (wordwise.Highs - wordwise.Lows) & starts // a start's bits but the lowest
		all := int64(byteSum(half)) + 64*int64(byteSum(low&seconds))
		neg := int64(byteSum(half&oddFF)) + 64*int64(byteSum(low&oddSecond))
		sum += all - 2*neg - int64(bits.OnesCount64(odd))
		added += bits.OnesCount64(starts & wordwise.Lows)
		b = b[n:]
	}
	return sum, added, b
}
