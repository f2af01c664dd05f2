package compressed

import (
	"bytes"
	"io"
	"testing"
)

// TestBzip2MagicsUnambiguous backs bzip2Stream's search of 8 bit positions
// for a block or end-of-stream magic: no magic overlaps itself or the
// other at a shift of 1 to 7 bits, so at most one position matches.
func TestBzip2MagicsUnambiguous(t *testing.T) {
	magics := []uint64{bzip2BlockMagic, bzip2EOSMagic}
	for _, a := range magics {
		for _, b := range magics {
			for d := uint(1); d < 8; d++ {
				// a at bit 0, b at bit d: a's last 48-d bits against b's first.
				if a&(1<<(48-d)-1) == b>>d {
					t.Errorf("%012x and %012x agree at a shift of %d bits", a, b, d)
				}
			}
		}
	}
}

// TestBzip2BlockCheckpoints checks that a multi-block, multi-stream file
// gets a checkpoint per block, each resumable on its own.
func TestBzip2BlockCheckpoints(t *testing.T) {
	data := genLog(11, 700<<10)
	comp := split(2, cli("bzip2", "-1", "-c"))(t, data)
	_, tab, err := index(Bzip2, comp, 1)
	if err != io.EOF {
		t.Fatal(err)
	}
	var blocks int
	for _, p := range tab.points {
		if p.typ == pointBlock {
			blocks++
			if p.streamBits == 0 {
				t.Errorf("block at %d has no stream end", p.out)
			}
		}
	}
	// 700 kB of text in 100 kB bzip2 blocks, in two streams.
	if blocks < 5 {
		t.Fatalf("%d block checkpoints, want at least 5: %+v", blocks, tab.points)
	}
	r := NewReader(bytes.NewReader(comp), int64(len(comp)), Bzip2, tab)
	for i := len(tab.points) - 1; i >= 0; i-- { // backwards: every read restarts
		p := tab.points[i]
		buf := make([]byte, min(5000, tab.Size-p.out))
		if _, err := r.ReadAt(buf, p.out); err != nil && len(buf) > 0 {
			t.Fatalf("ReadAt at checkpoint %d: %v", i, err)
		}
		if string(buf) != string(data[p.out:p.out+int64(len(buf))]) {
			t.Fatalf("checkpoint %d reads wrong bytes", i)
		}
	}
}
