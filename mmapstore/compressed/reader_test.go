package compressed

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
	"strings"
	"testing"
)

// TestReaderWrongFile gives Readers tables that do not belong to the file:
// another file of the same kind, a file cut short, another kind. Errors
// (or other bytes), never a panic or a hang.
func TestReaderWrongFile(t *testing.T) {
	a, b := genLog(20, 40<<10), genLog(21, 60<<10)
	for _, c := range []compressCase{
		{"gzip", Gzip, split(2, cli("gzip", "-c"))},
		{"zstd", Zstd, split(2, cli("zstd", "-q", "-c"))},
		{"bzip2", Bzip2, split(2, cli("bzip2", "-1", "-c"))},
		{"xz", XZ, cli("xz", "-c", "-0", "--block-size=8KiB")},
	} {
		t.Run(c.name, func(t *testing.T) {
			ca, cb := c.make(t, a), c.make(t, b)
			_, ta, _ := index(c.kind, ca, 4<<10)
			buf := make([]byte, 1000)
			r := NewReader(bytes.NewReader(cb), int64(len(cb)), c.kind, ta)
			for off := int64(0); off < ta.Size; off += ta.Size / 17 {
				r.ReadAt(buf, off) // any result but a panic
			}
			short := NewReader(bytes.NewReader(ca[:len(ca)/2]), int64(len(ca)/2), c.kind, ta)
			var ce *CorruptError
			if _, err := short.ReadAt(buf, 0); !errors.As(err, &ce) {
				t.Errorf("shorter file: err %v, want a *CorruptError", err)
			}
			other := NewReader(bytes.NewReader(ca), int64(len(ca)), c.kind%4+1, ta)
			if _, err := other.ReadAt(buf, 0); err == nil {
				t.Error("another kind's table was accepted")
			}
			if n, err := NewReader(bytes.NewReader(ca), int64(len(ca)), c.kind, ta).ReadAt(buf[:0], 5); n != 0 || err != nil {
				t.Errorf("empty read: %d, %v", n, err)
			}
			if _, err := NewReader(bytes.NewReader(ca), int64(len(ca)), c.kind, ta).ReadAt(buf, -1); err == nil || err == io.EOF {
				t.Errorf("negative offset: %v", err)
			}
		})
	}
}

// TestHugeWindowRefused: a file asking for more history than
// MaxDecoderWindow is corrupt, not an allocation.
func TestHugeWindowRefused(t *testing.T) {
	// A zstd frame whose window descriptor asks for 1 GiB, then a raw block.
	zst := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, (30 - 10) << 3, 0x19, 0x00, 0x00, 'a', 'b', 'c'}
	// An xz file whose block header's LZMA2 dictionary is patched to 4 GiB.
	xzf := bytes.Clone(tool(t, []byte("a line\n"), "xz", "-c", "-0"))
	hsize := int(xzf[12]+1) * 4
	hdr := xzf[12 : 12+hsize]
	if hdr[2] != 0x21 || hdr[3] != 1 {
		t.Fatalf("unexpected block header % x", hdr)
	}
	hdr[4] = 40
	crc := crc32.ChecksumIEEE(hdr[:hsize-4])
	hdr[hsize-4], hdr[hsize-3], hdr[hsize-2], hdr[hsize-1] = byte(crc), byte(crc>>8), byte(crc>>16), byte(crc>>24)
	for _, c := range []struct {
		kind Kind
		file []byte
	}{{Zstd, zst}, {XZ, xzf}} {
		_, _, err := index(c.kind, c.file, 0)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "window") && !strings.Contains(err.Error(), "limit") {
			t.Errorf("%v: err %v, want a *CorruptError about the window", c.kind, err)
		}
	}
}
