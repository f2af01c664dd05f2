package mmapstore

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"testing"
)

// sumVarintsRef is sumVarints one uvarint at a time.
func sumVarintsRef(b []byte, k int) (uint64, []byte, bool) {
	var sum uint64
	for ; k > 0; k-- {
		v, w := binary.Uvarint(b)
		if w <= 0 {
			return sum, b, false
		}
		sum, b = sum+v, b[w:]
	}
	return sum, b, true
}

func checkSumVarints(t *testing.T, b []byte) {
	for k := 0; k <= 70; k++ {
		s, r, ok := sumVarints(b, k)
		ws, wr, wok := sumVarintsRef(b, k)
		if ok != wok || ok && (s != ws || len(r) != len(wr)) {
			t.Fatalf("% x, k=%d: got %d, %d left, %t; want %d, %d left, %t", b, k, s, len(r), ok, ws, len(wr), wok)
		}
	}
}

// TestSumVarints holds the word-at-a-time sum to a plain uvarint loop, on
// lengths of one and two bytes (the fast path), with longer ones among
// them, and on truncated lists.
func TestSumVarints(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 300
	if os.Getenv("LOGDEX_LONG") != "" {
		n = 20000
	}
	for range n {
		var b []byte
		for range rng.IntN(80) {
			var v uint64
			switch r := rng.IntN(20); {
			case r < 8:
				v = rng.Uint64N(128)
			case r < 18:
				v = 128 + rng.Uint64N(16384-128)
			case r < 19:
				v = rng.Uint64N(1 << 21)
			default:
				v = rng.Uint64()
			}
			b = binary.AppendUvarint(b, v)
		}
		checkSumVarints(t, b)
		if len(b) > 0 {
			checkSumVarints(t, b[:rng.IntN(len(b))])
		}
	}
}

func FuzzSumVarints(f *testing.F) {
	f.Add([]byte{0x81, 0x01, 0x05, 0xff, 0x7f, 0x80, 0x80, 0x01, 0x02, 0x03, 0x90, 0x04, 0x06, 0x07, 0x08, 0x09, 0x0a})
	f.Add([]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(checkSumVarints)
}

// BenchmarkSumVarints sums the lengths before the middle line of a group
// of log lines (one and two bytes each): word at a time, one by one, and
// one by one through binary.Uvarint.
func BenchmarkSumVarints(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	var buf []byte
	for range GroupSize {
		buf = binary.AppendUvarint(buf, 60+rng.Uint64N(400))
	}
	for _, c := range []struct {
		name string
		sum  func([]byte, int) (uint64, []byte, bool)
	}{{"words", sumVarints}, {"bytes", sumVarintsBytewise}, {"binary.Uvarint", sumVarintsRef}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				c.sum(buf, GroupSize/2)
			}
		})
	}
}

// TestSumZigzags compares sumZigzags, then the rest decoded one by one,
// with decoding every delta one by one: lists of one- and two-byte
// varints, positive and negative, some with longer ones among them, and
// cut at every count.
func TestSumZigzags(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 8))
	for trial := range 3000 {
		var b []byte
		var want []int64
		n := r.IntN(80)
		for range n {
			var d int64
			switch x := r.IntN(100); {
			case x < 45:
				d = r.Int64N(128) - 64 // one byte
			case x < 95 || trial%3 == 0:
				d = r.Int64N(1<<14) - 1<<13 // two bytes (or one)
			default:
				d = r.Int64N(1<<40) - 1<<39 // longer
			}
			b = binary.AppendUvarint(b, uint64(d<<1^d>>63))
			want = append(want, d)
		}
		b = append(b, 0xff, 0xff) // (bytes after the list are not read)
		for k := 0; k <= n; k++ {
			var ref int64
			for _, d := range want[:k] {
				ref += d
			}
			sum, added, rest := sumZigzags(b, k)
			for ; added < k; added++ {
				u, w := binary.Uvarint(rest)
				sum += unzigzag(u)
				rest = rest[w:]
			}
			if sum != ref {
				t.Fatalf("trial %d, %d deltas of %d: sum %d, want %d (bytes %x)", trial, k, n, sum, ref, b)
			}
		}
	}
}
