package mmapstore

import "testing"

// TestChunksAround holds the cold filter prefetch to what reading a slice
// verifies: every chunk the read checks lies in the range asked for, on a
// section of any length and for slices of any size and place (sections
// need not start on a page, so a chunk reaches past the slice's pages).
func TestChunksAround(t *testing.T) {
	for _, c := range []struct{ off, n, secLen uint64 }{
		{0, 1, 1},
		{0, 4344, 1 << 20},
		{4344, 4344, 1 << 20},
		{ChunkSize - 1, 2, 1 << 20},
		{ChunkSize, ChunkSize, 1 << 20},
		{3 * 1184, 1184, 5000},
		{(1<<20 - 4344), 4344, 1 << 20},
	} {
		for k := range 200 {
			off := c.off + uint64(k)*c.n
			if off+c.n > c.secLen {
				break
			}
			lo, hi := chunksAround(off, c.n, c.secLen)
			if lo%ChunkSize != 0 || hi%ChunkSize != 0 && hi != c.secLen || hi > c.secLen {
				t.Fatalf("chunksAround(%d, %d, %d) = [%d, %d): not whole chunks of the section", off, c.n, c.secLen, lo, hi)
			}
			for ch := off / ChunkSize; ch <= (off+c.n-1)/ChunkSize; ch++ {
				if first, end := ch*ChunkSize, min((ch+1)*ChunkSize, c.secLen); first < lo || end > hi {
					t.Fatalf("chunksAround(%d, %d, %d) = [%d, %d) misses chunk %d [%d, %d) that reading verifies", off, c.n, c.secLen, lo, hi, ch, first, end)
				}
			}
		}
	}
}
