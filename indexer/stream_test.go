package indexer

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/mmapstore"
)

// chunkReader yields its bytes in random short reads, as a decompressor
// does.
type chunkReader struct {
	b []byte
	r *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+c.r.IntN(100<<10))], c.b)
	c.b = c.b[n:]
	return n, nil
}

type partCut struct{ complete, lines, nulAt int64 }

// cutParts reads f into parts of at least limit bytes, as buildStream does,
// and returns where each ended.
func cutParts(t *testing.T, f io.ReaderAt, commit func(int64), limit int64) []partCut {
	t.Helper()
	buf := make([]byte, readBlock)
	var cuts []partCut
	start, lineNo := int64(0), int64(1)
	for {
		b := newBuilder(nil)
		timer := newLineTimer(b.lines, time.UTC, 0, 0, false)
		complete, lines, nulAt, err := b.readPart(f, mmapstore.SegFile{ID: 1}, start, 1<<62, lineNo, timer, buf, func(int64) {}, limit)
		if err != nil {
			t.Fatal(err)
		}
		if lines == 0 {
			return cuts
		}
		cuts = append(cuts, partCut{complete, lines, nulAt})
		commit(complete)
		start, lineNo = complete, lineNo+lines
	}
}

// TestStreamAtLikeReaderAt: parts cut from a stream through streamAt's
// bounded window end at the same lines as parts cut from the same bytes
// read at random, for short and over-long lines (which readPart skips
// through without carrying them), part limits that fall anywhere, and a
// last line without a newline (which the stream completes).
func TestStreamAtLikeReaderAt(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var text bytes.Buffer
	for text.Len() < 3*readBlock {
		switch n := r.IntN(1000); {
		case n == 0: // over maxIndexedLine: skipped, not carried
			text.WriteString(strings.Repeat("x", maxIndexedLine+r.IntN(2*readBlock)))
		case n < 5: // a long line that is still carried
			text.WriteString(strings.Repeat("y", r.IntN(maxIndexedLine)))
		case n == 5:
			text.WriteByte(0)
		default:
			text.WriteString(strings.Repeat("z", r.IntN(300)))
		}
		text.WriteByte('\n')
	}
	text.WriteString("last line, no newline")
	data := text.Bytes()
	complete := append(bytes.Clone(data), '\n')
	limits := []int64{1 << 20, readBlock - 1, 3 * readBlock / 2, 1 << 62}
	if os.Getenv("LOGDEX_LONG") != "" {
		limits = append(limits, 1, 4<<10, readBlock+1) // a builder per line or few: slow under -race
	}
	for _, limit := range limits {
		want := cutParts(t, bytes.NewReader(complete), func(int64) {}, limit)
		sa := newStreamAt(&chunkReader{b: data, r: rand.New(rand.NewPCG(3, uint64(limit)))}, readBlock)
		got := cutParts(t, sa, sa.commit, limit)
		if len(got) != len(want) {
			t.Fatalf("limit %d: %d parts, want %d", limit, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("limit %d: part %d ends %+v, want %+v", limit, i, got[i], want[i])
			}
		}
		if !sa.atEnd(want[len(want)-1].complete) || sa.err != nil {
			t.Fatalf("limit %d: not at the end after the last part (err %v)", limit, sa.err)
		}
		if len(sa.buf) > 3*readBlock {
			t.Errorf("limit %d: window grew to %d bytes", limit, len(sa.buf))
		}
	}
}
