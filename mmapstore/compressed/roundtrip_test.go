package compressed

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// compressCase makes a compressed file from content.
type compressCase struct {
	name string
	kind Kind
	make func(t *testing.T, data []byte) []byte
}

func cli(name string, args ...string) func(*testing.T, []byte) []byte {
	return func(t *testing.T, data []byte) []byte { return tool(t, data, name, args...) }
}

// split compresses halves separately and concatenates them, as
// `cat a.gz b.gz` (or appending to a .zst) does.
func split(parts int, f func(*testing.T, []byte) []byte) func(*testing.T, []byte) []byte {
	return func(t *testing.T, data []byte) []byte {
		var out []byte
		for i := range parts {
			out = append(out, f(t, data[i*len(data)/parts:(i+1)*len(data)/parts])...)
		}
		return out
	}
}

func goGzip(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	w.Name, w.Comment, w.Extra = "app.log", "a comment", []byte("xtra")
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func goZstd(t *testing.T, data []byte) []byte {
	w, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	return w.EncodeAll(data, nil)
}

// skippableFirst puts a skippable frame (magic 0x184D2A5n, a length, that
// many bytes) before what f makes, as pzstd and other tools write one.
func skippableFirst(n byte, f func(*testing.T, []byte) []byte) func(*testing.T, []byte) []byte {
	return func(t *testing.T, data []byte) []byte {
		frame := []byte{0x50 | n, 0x2a, 0x4d, 0x18, 5, 0, 0, 0, 'l', 'o', 'g', 'd', 'x'}
		return append(frame, f(t, data)...)
	}
}

func goXZ(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	w, err := xz.WriterConfig{BlockSize: 100 << 10, CheckSum: xz.SHA256}.NewWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

var compressCases = []compressCase{
	{"gzip-1", Gzip, cli("gzip", "-1", "-c")},
	{"gzip-9", Gzip, cli("gzip", "-9", "-c")},
	{"gzip-members", Gzip, split(3, cli("gzip", "-c"))},
	{"gzip-go-header-fields", Gzip, goGzip},
	{"zstd", Zstd, cli("zstd", "-q", "-c")},
	{"zstd-frames", Zstd, split(4, cli("zstd", "-q", "-1", "-c"))},
	{"zstd-go", Zstd, goZstd},
	{"zstd-skippable-first", Zstd, skippableFirst(0xf, split(2, cli("zstd", "-q", "-c")))},
	{"pzstd", Zstd, cli("pzstd", "-q", "-c", "-p", "2")},
	{"bzip2-9", Bzip2, cli("bzip2", "-9", "-c")},
	{"bzip2-1", Bzip2, cli("bzip2", "-1", "-c")},
	{"bzip2-streams", Bzip2, split(3, cli("bzip2", "-1", "-c"))},
	{"xz", XZ, cli("xz", "-c")},
	{"xz-blocks", XZ, cli("xz", "-c", "-1", "--block-size=150KiB")},
	{"xz-streams-crc32", XZ, split(2, cli("xz", "-c", "-0", "--check=crc32"))},
	{"xz-go-sha256", XZ, goXZ},
}

var contents = []struct {
	name string
	data func() []byte
}{
	{"log", func() []byte { return genLog(1, scale(128<<10, 8<<20)) }},
	{"empty", func() []byte { return nil }},
	{"one-line-no-newline", func() []byte { return []byte("2026-11-29 host app: a line without newline") }},
}

func TestRoundTrip(t *testing.T) {
	for _, content := range contents {
		data := content.data()
		for _, c := range compressCases {
			t.Run(content.name+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				comp := c.make(t, data)
				if k := Sniff(comp); k != c.kind && len(comp) > 0 {
					t.Fatalf("Sniff = %v, want %v", k, c.kind)
				}
				const interval = 8 << 10
				out, tab, err := index(c.kind, comp, interval)
				if err != io.EOF {
					t.Fatalf("index: %v", err)
				}
				if !bytes.Equal(out, data) {
					t.Fatalf("indexed output differs: %d bytes, want %d", len(out), len(data))
				}
				enc := tab.AppendBinary(nil)
				dec, err := DecodeTable(enc)
				if err != nil {
					t.Fatalf("DecodeTable: %v", err)
				}
				if !bytes.Equal(dec.AppendBinary(nil), enc) {
					t.Fatal("table encoding does not round-trip")
				}
				t.Logf("%d bytes -> %d compressed, %d checkpoints, table %d bytes (%.3f%%)",
					len(data), len(comp), tab.Len(), len(enc), 100*float64(len(enc))/float64(max(1, len(data))))
				checkReads(t, comp, dec, data, 3, scale(15, 300))
			})
		}
	}
}

// TestTrailingGarbage holds gzip to `gzip -cdfq` (what zgrep runs): the
// garbage is content. The other kinds drop it; all report it.
func TestTrailingGarbage(t *testing.T) {
	data := genLog(2, 50<<10)
	for i, c := range compressCases {
		for j, garbage := range []string{"garbage\n", "\x00\x00\x00\x00", "\x1f"} {
			if c.kind != Gzip && (i+j)%3 != 0 && !long {
				continue // every kind still meets every garbage
			}
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				comp := append(c.make(t, data), garbage...)
				out, tab, err := index(c.kind, comp, 16<<10)
				want := data
				if c.kind == Gzip && garbage != "\x00\x00\x00\x00" {
					want = tool(t, comp, "gzip", "-cdfq")
				}
				if (c.kind == XZ || c.kind == Gzip) && garbage == "\x00\x00\x00\x00" {
					// Stream padding (xz), zero padding gzip -d ignores: not garbage.
					if err != io.EOF {
						t.Fatalf("%v with zero padding: %v", c.kind, err)
					}
				} else if !errors.Is(err, ErrTrailingGarbage) {
					t.Fatalf("err = %v, want ErrTrailingGarbage", err)
				}
				if !bytes.Equal(out, want) {
					t.Fatalf("output %d bytes, want %d", len(out), len(want))
				}
				checkReads(t, comp, tab, want, 4, 5)
			})
		}
	}
}

// TestGzipZeroPadding: zero bytes after the last member to the end of the
// file (tape or block padding) are ignored, as `gzip -dc` and zcat ignore
// them: the content is the members' alone and nothing is damaged. Zeros
// followed by anything else are trailing garbage, kept verbatim as
// `gzip -cdfq` prints them.
func TestGzipZeroPadding(t *testing.T) {
	data := genLog(9, 30<<10)
	member := tool(t, data, "gzip", "-c")
	zeros := func(n int) string { return string(make([]byte, n)) }
	for _, c := range []struct {
		name    string
		file    []byte
		padding string
		garbage bool // ErrTrailingGarbage, the padding is content
	}{
		{"one-zero", member, zeros(1), false},
		{"1000-zeros", member, zeros(1000), false},
		{"block-padding", member, zeros(10240 - len(member)%10240), false},
		{"two-members", append(bytes.Clone(member), member...), zeros(512), false},
		{"zeros-then-garbage", member, zeros(100) + "x", true},
		{"zeros-then-member", member, zeros(4) + string(member[:20]), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			comp := append(bytes.Clone(c.file), c.padding...)
			out, tab, err := index(Gzip, comp, 8<<10)
			var want []byte
			if c.garbage {
				want = tool(t, comp, "gzip", "-cdfq")
				if !errors.Is(err, ErrTrailingGarbage) {
					t.Fatalf("err = %v, want ErrTrailingGarbage", err)
				}
			} else {
				want = tool(t, comp, "gzip", "-dc")
				if err != io.EOF {
					t.Fatalf("err = %v, want none (io.EOF)", err)
				}
			}
			if !bytes.Equal(out, want) {
				t.Fatalf("output %d bytes, want %d", len(out), len(want))
			}
			checkReads(t, comp, tab, want, 5, 5)
		})
	}
}
