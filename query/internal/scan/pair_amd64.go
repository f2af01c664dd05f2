package scan

import "golang.org/x/sys/cpu"

// hasPair says whether indexPair can run here.
var hasPair = cpu.X86.HasAVX2

// indexPairAVX2 is in pair_amd64.s.
//
//go:noescape
func indexPairAVX2(hay []byte, d int, b1, u1, b2, u2 byte) int

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
func indexPair1AVX2(hay []byte, d int, b1, u1, b2, u2 byte) int
