package compressed

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/cespare/xxhash/v2"
)

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// TestShadow: a single-frame zstd file and a single-block xz file need a
// seekable copy; written beside indexing, it reads back every byte, its
// table survives encoding inside the file's own, and a read near the end
// decodes about one interval of it, not the file from its start.
func TestShadow(t *testing.T) {
	const interval = 64 << 10
	data := genLog(21, 1<<20)
	for _, c := range []struct {
		name string
		comp []byte
		need bool
	}{
		{"zstd one frame", goZstd(nil, data), true},
		{"xz one block", tool(t, data, "xz", "-c", "-T1"), true},
		{"gzip", goGzip(nil, data), false},
		{"zstd small", goZstd(nil, data[:2*interval]), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			kind := Sniff(c.comp)
			ix := NewIndexer(bytes.NewReader(c.comp), int64(len(c.comp)), kind, interval)
			var copyBuf bytes.Buffer
			sw := NewShadowWriter(&copyBuf, interval)
			out, err := io.ReadAll(io.TeeReader(ix, sw))
			if err != nil || !bytes.Equal(out, data[:len(out)]) {
				t.Fatalf("indexing: %v, %d bytes", err, len(out))
			}
			if err := sw.Close(); err != nil {
				t.Fatal(err)
			}
			tab := ix.Table()
			if tab.NeedsShadow() != c.need {
				t.Fatalf("NeedsShadow %t with %d checkpoints over %d bytes", !c.need, tab.Len(), tab.Size)
			}
			if !c.need {
				return
			}
			tab.Shadow, tab.ShadowSum = sw.Table(), sw.Sum()
			if tab.ShadowSum != xxhash.Sum64(copyBuf.Bytes()) {
				t.Fatalf("Sum %x is not the copy's xxhash64", tab.ShadowSum)
			}
			dec, err := DecodeTable(tab.AppendBinary(nil))
			if err != nil {
				t.Fatal(err)
			}
			if dec.Shadow == nil || dec.ShadowSum != tab.ShadowSum || !bytes.Equal(dec.AppendBinary(nil), tab.AppendBinary(nil)) {
				t.Fatal("the copy's table does not survive encoding")
			}
			if dec.Shadow.Len() != (len(data)+interval-1)/interval {
				t.Fatalf("%d frames for %d bytes of %d-byte intervals", dec.Shadow.Len(), len(data), interval)
			}
			cp := copyBuf.Bytes()
			checkReads(t, cp, dec.Shadow, data, 5, 40)
			checkShadowReads(t, cp, dec.Shadow, data)
			// One line near the end: about one frame of the copy read,
			// where the file itself is decoded from its start.
			for _, src := range []struct {
				name string
				comp []byte
				tab  *Table
				most int64
			}{{"copy", cp, dec.Shadow, int64(len(cp)) / 4}, {"file", c.comp, dec, int64(len(c.comp)) * 9 / 10}} {
				cr := &countingReaderAt{r: bytes.NewReader(src.comp)}
				r := NewReader(cr, int64(len(src.comp)), src.tab.Kind, src.tab)
				line := make([]byte, 100)
				if _, err := r.ReadAt(line, int64(len(data)-200)); err != nil || !bytes.Equal(line, data[len(data)-200:len(data)-100]) {
					t.Fatalf("%s: ReadAt near the end: %v", src.name, err)
				}
				if src.name == "copy" && cr.n > src.most || src.name == "file" && cr.n < src.most {
					t.Errorf("%s: %d of %d compressed bytes read for one line", src.name, cr.n, len(src.comp))
				}
			}
		})
	}
}

// checkShadowReads reads the copy back through a ShadowReader, at random
// and forward; then, the copy damaged in one frame, reads in that frame
// fail and never give other bytes.
func checkShadowReads(t *testing.T, cp []byte, tab *Table, want []byte) {
	t.Helper()
	r := NewShadowReader(bytes.NewReader(cp), int64(len(cp)), tab)
	rng := rand.New(rand.NewPCG(3, 3))
	buf := make([]byte, 200<<10)
	for range 60 {
		off := rng.Int64N(int64(len(want)))
		ln := 1 + rng.IntN(len(buf))
		n, err := r.ReadAt(buf[:ln], off)
		end := min(int64(len(want)), off+int64(ln))
		if n != int(end-off) || !bytes.Equal(buf[:n], want[off:end]) || (end < off+int64(ln)) != (err == io.EOF) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v: not the original's bytes", ln, off, n, err)
		}
	}
	bad := bytes.Clone(cp)
	mid := tab.points[1]
	for i := mid.in + 40; i < mid.in+80; i++ {
		bad[i] ^= 0x5a
	}
	r = NewShadowReader(bytes.NewReader(bad), int64(len(bad)), tab)
	for off := int64(0); off < tab.Size; off += 4096 {
		n, err := r.ReadAt(buf[:4096], off)
		if !bytes.Equal(buf[:n], want[off:off+int64(n)]) {
			t.Fatalf("damaged copy: ReadAt at %d gave other bytes (%v)", off, err)
		}
		inFrame := off >= mid.out && off < tab.points[2].out
		if inFrame != (err != nil && err != io.EOF) {
			t.Fatalf("damaged copy: ReadAt at %d: %v", off, err)
		}
	}
}

// failingWriter fails every write, as a full disk does.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrShortWrite }

// TestShadowWriterFailing: a copy that cannot be written never fails the
// reading it is teed from; Close reports the error.
func TestShadowWriterFailing(t *testing.T) {
	data := genLog(4, 600<<10)
	sw := NewShadowWriter(failingWriter{}, 64<<10)
	got, err := io.ReadAll(io.TeeReader(bytes.NewReader(data), sw))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("teed read: %v, %d of %d bytes", err, len(got), len(data))
	}
	if err := sw.Close(); err == nil {
		t.Fatal("Close of a copy never written: no error")
	}
	if err := sw.Close(); err == nil {
		t.Fatal("second Close: no error")
	}
}
