package scan

import "golang.org/x/sys/cpu"

// The packed pair is hand-written in assembly (pair_amd64.s) because
// neither the standard library (bytes.Index keys on one byte, then compares
// position by position) nor a maintained Go module offers it, and Go has no
// portable vector types yet. BenchmarkLiteralPair measures it against the
// rare-byte loop; whole searches for '] [' spend a quarter of the user CPU
// they did.

// hasPair says whether indexPair can run here.
var hasPair = cpu.X86.HasAVX2

// indexPair returns the smallest i in [0, len(hay)-d) with hay[i] in
// {b1, u1} and hay[i+d] in {b2, u2}, or -1. It needs hasPair, d >= 0 and
// len(hay)-d >= pairMin.
func indexPair(hay []byte, d int, b1, u1, b2, u2 byte) int {
	if b1 == u1 && b2 == u2 {
		return indexPair1AVX2(hay, d, b1, u1, b2, u2) // half the compares
	}
	return indexPairAVX2(hay, d, b1, u1, b2, u2)
}

//go:noescape
func indexPairAVX2(hay []byte, d int, b1, u1, b2, u2 byte) int

//go:noescape
func indexPair1AVX2(hay []byte, d int, b1, u1, b2, u2 byte) int
