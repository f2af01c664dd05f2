package compressed

import (
	"bytes"
	"encoding/hex"
	"io"
	"strings"
	"testing"
)

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		head string
		want Kind
	}{
		{"\x1f\x8b\x08\x00", Gzip},
		{"\x1f\x8b\x07\x00", None}, // not deflate
		{"\x1f\x8b", None},
		{"\x28\xb5\x2f\xfd\x24", Zstd},
		{"\x50\x2a\x4d\x18\x04\x00\x00\x00", Zstd}, // a skippable frame first, as pzstd writes
		{"\x5f\x2a\x4d\x18\x00\x00\x00\x00", Zstd},
		{"\x5a\x2a\x4d\x18", Zstd},
		{"\x60\x2a\x4d\x18\x00\x00\x00\x00", None},
		{"\x4f\x2a\x4d\x18\x00\x00\x00\x00", None},
		{"\x50\x2a\x4d", None},
		{"BZh91AY&SY", Bzip2},
		{"BZh0", None},
		{"BZ", None},
		{"\xfd7zXZ\x00\x00", XZ},
		{"\xfd7zXZ", None},
		{"Nov 29 12:00:00 host sshd[1]: x", None},
		{"", None},
	} {
		if got := Sniff([]byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q) = %v, want %v", c.head, got, c.want)
		}
	}
}

// TestTableEncoding pins the documented encoding byte by byte.
func TestTableEncoding(t *testing.T) {
	cases := []struct {
		name string
		tab  Table
		want string // hex, spaces for reading
	}{
		{"gzip", Table{Kind: Gzip, Size: 300, CompressedSize: 200, Interval: 128, points: []point{
			{typ: pointStart},
			{typ: pointBlock, out: 150, in: 70, bit: 5, window: []byte{0xaa, 0xbb}},
			{typ: pointRaw, out: 290, in: 190},
		}}, "01 01 ac02 c801 8001 03 00 00 00 01 9601 46 05 02 aabb 02 8c01 78"},
		{"zstd", Table{Kind: Zstd, Size: 10, CompressedSize: 9, Interval: 1, points: []point{{typ: pointStart}}},
			"01 02 0a 09 01 01 00 00 00"},
		{"bzip2", Table{Kind: Bzip2, Size: 1000, CompressedSize: 100, Interval: 1, points: []point{
			{typ: pointStart},
			{typ: pointBlock, out: 500, in: 50, bit: 3, level: 9, streamBits: 300, crc: 0x01020304},
		}}, "01 03 e807 64 01 02 00 00 00 01 f403 32 03 09 ac02 01020304"},
		{"xz", Table{Kind: XZ, Size: 1, CompressedSize: 64, Interval: 1, points: []point{
			{typ: pointStart}, {typ: pointBlock, out: 1, in: 24, check: 10},
		}}, "01 04 01 40 01 02 00 00 00 01 01 18 0a"},
		{"empty", Table{Kind: Gzip}, "01 01 00 00 00 00"},
		{"zstd with a seekable copy", Table{Kind: Zstd, Size: 10, CompressedSize: 9, Interval: 1, points: []point{{typ: pointStart}},
			Shadow:    &Table{Kind: Zstd, Size: 10, CompressedSize: 30, Interval: 5, points: []point{{typ: pointStart}, {typ: pointStart, out: 5, in: 15}}},
			ShadowSum: 0x0102030405060708},
			"02 02 0a 09 01 01 00 00 00 0807060504030201 0c 01 02 0a 1e 05 02 00 00 00 00 05 0f"},
	}
	for _, c := range cases {
		got := hex.EncodeToString(c.tab.AppendBinary(nil))
		if want := strings.ReplaceAll(c.want, " ", ""); got != want {
			t.Errorf("%s: encoding %s, want %s", c.name, got, want)
			continue
		}
		dec, err := DecodeTable(c.tab.AppendBinary(nil))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if hex.EncodeToString(dec.AppendBinary(nil)) != got {
			t.Errorf("%s: decode-encode differs", c.name)
		}
	}
}

func TestDecodeTableRejects(t *testing.T) {
	for _, c := range []struct{ name, hex string }{
		{"empty", ""},
		{"version", "03 01 00 00 00 00"},
		{"shadow missing", "02 02 0a 09 01 01 00 00 00"},
		{"shadow not zstd", "02 02 0a 09 01 01 00 00 00 0000000000000000 09 01 01 0a 09 01 01 00 00 00"},
		{"shadow of another size", "02 02 0a 09 01 01 00 00 00 0000000000000000 09 01 02 0b 09 01 01 00 00 00"},
		{"shadow with a shadow", "02 02 0a 09 01 01 00 00 00 0000000000000000 09 02 02 0a 09 01 01 00 00 00"},
		{"kind none", "01 00 00 00 00 00"},
		{"kind 5", "01 05 00 00 00 00"},
		{"points without compressed bytes", "01 02 00 00 00 01 00 00 00"},
		{"no points for bytes", "01 02 01 05 00 00"},
		{"first not start", "01 02 0a 09 01 01 01 00 00"},
		{"first not at 0", "01 02 0a 09 01 01 00 01 00"},
		{"offset past size", "01 02 0a 09 01 02 00 00 00 00 0b 00"},
		{"compressed offset past size", "01 02 0a 09 01 02 00 00 00 00 01 0a"},
		{"zstd block", "01 02 0a 09 01 02 00 00 00 01 01 01"},
		{"raw in xz", "01 04 0a 09 01 02 00 00 00 02 01 01"},
		{"type 3", "01 01 0a 09 01 02 00 00 00 03 01 01"},
		{"gzip bit 8", "01 01 0a 09 01 02 00 00 00 01 01 01 08 00"},
		{"gzip window too long", "01 01 0a 09 01 02 00 00 00 01 01 01 00 ffff03"},
		{"gzip window short", "01 01 0a 09 01 02 00 00 00 01 01 01 00 05 aabb"},
		{"bzip2 level 0", "01 03 0a 09 01 02 00 00 00 01 01 01 00 00 00 00000000"},
		{"bzip2 stream bits past end", "01 03 0a 09 01 02 00 00 00 01 01 01 00 09 41 00000000"},
		{"xz check 16", "01 04 0a 09 01 02 00 00 00 01 01 01 10"},
		{"block at end", "01 04 0a 09 01 02 00 00 00 01 01 09 00"},
		{"trailing byte", "01 02 0a 09 01 01 00 00 00 00"},
		{"huge count", "01 02 0a 09 01 ffffffff0f 00 00 00"},
		{"bad varint", "01 02 ffffffffffffffffffff"},
		{"non-minimal varint", "01 02 30 b500 01 00 00 00"},
	} {
		b, err := hex.DecodeString(strings.ReplaceAll(c.hex, " ", ""))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if _, err := DecodeTable(b); err == nil {
			t.Errorf("%s: DecodeTable accepted %x", c.name, b)
		}
	}
}

// tableSeeds are real tables of each kind, for the fuzzer and the cut test.
func tableSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	data := genLog(9, 100<<10)
	for _, comp := range [][]byte{
		goGzip(nil, data), goZstd(nil, data), goXZ(&testing.T{}, data),
		append(goGzip(nil, data[:1000]), "junk"...),
	} {
		_, tab, _ := index(Sniff(comp), comp, 8<<10)
		seeds = append(seeds, tab.AppendBinary(nil))
	}
	// A single-frame zstd file's table with its seekable copy's.
	comp := goZstd(nil, data)
	_, tab, _ := index(Zstd, comp, 8<<10)
	sw := NewShadowWriter(io.Discard, 8<<10)
	sw.Write(data)
	sw.Close()
	tab.Shadow, tab.ShadowSum = sw.Table(), sw.Sum()
	return append(seeds, tab.AppendBinary(nil))
}

func TestDecodeTableCut(t *testing.T) {
	for _, enc := range tableSeeds(t) {
		for i := range len(enc) {
			if _, err := DecodeTable(enc[:i]); err == nil {
				t.Fatalf("DecodeTable accepted a %d-byte prefix of %d", i, len(enc))
			}
		}
	}
}

// FuzzDecodeTable: any bytes either fail to decode or decode to a table
// that re-encodes to the same bytes and whose Reader never panics.
func FuzzDecodeTable(f *testing.F) {
	for _, s := range tableSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tab, err := DecodeTable(b)
		if err != nil {
			return
		}
		if !bytes.Equal(tab.AppendBinary(nil), b) {
			t.Fatalf("re-encoding differs")
		}
		// A table that does not belong to the file must not panic a Reader.
		file := goGzip(nil, []byte("some line\nanother line\n"))
		r := NewReader(bytes.NewReader(file), int64(len(file)), tab.Kind, tab)
		buf := make([]byte, 64)
		for _, off := range []int64{0, tab.Size / 2, tab.Size - 1} {
			r.ReadAt(buf, max(0, off))
		}
		if tab.Shadow != nil {
			sr := NewShadowReader(bytes.NewReader(file), tab.Shadow.CompressedSize, tab.Shadow)
			for _, off := range []int64{0, tab.Size / 2, tab.Size - 1} {
				sr.ReadAt(buf, max(0, off))
			}
		}
	})
}

// FuzzIndexer feeds arbitrary bytes to the index-time decoder of every
// kind, then reads back through the table made: no panic, no hang, and the
// Reader agrees with the Indexer.
func FuzzIndexer(f *testing.F) {
	data := genLog(10, 3000)
	for _, comp := range [][]byte{goGzip(nil, data), goZstd(nil, data), goXZ(&testing.T{}, data),
		tool(f, data, "bzip2", "-c"), tool(f, data, "gzip", "-c")} {
		f.Add(comp)
	}
	f.Fuzz(func(t *testing.T, comp []byte) {
		for kind := Gzip; kind <= XZ; kind++ {
			ix := NewIndexer(bytes.NewReader(comp), int64(len(comp)), kind, 512)
			out, err := io.ReadAll(io.LimitReader(ix, 64<<20))
			if err != nil && !errKindOK(err) {
				t.Fatalf("%v: error %v is neither ErrTruncated nor *CorruptError", kind, err)
			}
			tab := ix.Table()
			r := NewReader(bytes.NewReader(comp), int64(len(comp)), kind, tab)
			got := make([]byte, len(out))
			if n, err := r.ReadAt(got, 0); n != len(out) || (err != nil && err != io.EOF) || !bytes.Equal(got, out) {
				t.Fatalf("%v: Reader gives %d bytes (%v), Indexer gave %d", kind, n, err, len(out))
			}
		}
	})
}
