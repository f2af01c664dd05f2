package compressed

import (
	"bytes"
	"compress/bzip2"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Benchmark inputs: log text compressed by the real tools with their
// default settings (what logrotate writes). LOGDEX_BENCH_MB sets the size
// of the gzip and zstd inputs (default 64); bzip2 and xz, whose decoders
// are 10-20x slower, get a quarter of it. All are single streams (one zstd
// frame), as logrotate writes them.
var (
	benchOnce  sync.Once
	benchPlain []byte
	benchFiles = map[Kind][]byte{}
)

func benchInputs(b *testing.B) {
	benchOnce.Do(func() {
		mb := 64
		if v, err := strconv.Atoi(os.Getenv("LOGDEX_BENCH_MB")); err == nil && v > 0 {
			mb = v
		}
		benchPlain = genLog(77, mb<<20)
		benchFiles[Gzip] = tool(b, benchPlain, "gzip", "-c")
		benchFiles[Zstd] = tool(b, benchPlain, "zstd", "-q", "-c")
		small := benchPlain[:len(benchPlain)/4]
		benchFiles[Bzip2] = tool(b, small, "bzip2", "-c")
		// xz -T0 writes a block per 24 MiB (3x the -6 dictionary); this
		// input is smaller, so its blocks are scaled down with it.
		benchFiles[XZ] = tool(b, small, "xz", "-c", "--block-size=4MiB")
	})
}

// plainReader is the same library's decoder without checkpoints.
func plainReader(b *testing.B, kind Kind, comp []byte) io.Reader {
	var r io.Reader
	var err error
	switch kind {
	case Gzip:
		r, err = gzip.NewReader(bytes.NewReader(comp))
	case Zstd:
		r, err = zstd.NewReader(bytes.NewReader(comp), zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(MaxDecoderWindow), zstd.WithDecoderMaxMemory(MaxDecoderWindow))
	case Bzip2:
		r = bzip2.NewReader(bytes.NewReader(comp))
	case XZ:
		r, err = xz.NewReader(bytes.NewReader(comp))
	}
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkIndex compares index-time decoding with checkpoints (at the
// default interval) against the same library decoding plainly.
func BenchmarkIndex(b *testing.B) {
	benchInputs(b)
	for _, kind := range []Kind{Gzip, Zstd, Bzip2, XZ} {
		comp := benchFiles[kind]
		for _, mode := range []string{"plain", "checkpoints"} {
			b.Run(kind.String()+"/"+mode, func(b *testing.B) {
				var n int64
				buf := make([]byte, 64<<10)
				for b.Loop() {
					var r io.Reader
					if mode == "plain" {
						r = plainReader(b, kind, comp)
					} else {
						r = NewIndexer(bytes.NewReader(comp), int64(len(comp)), kind, 0)
					}
					// Both through Read with one buffer, as the indexer reads
					// (struct hides the plain decoders' WriteTo).
					var err error
					if n, err = io.CopyBuffer(io.Discard, struct{ io.Reader }{r}, buf); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(n)
			})
		}
	}
}

// indexed caches tables per kind and interval.
var indexed sync.Map

func tableFor(b *testing.B, kind Kind, interval int64) *Table {
	key := fmt.Sprint(kind, interval)
	if t, ok := indexed.Load(key); ok {
		return t.(*Table)
	}
	_, t, err := index(kind, benchFiles[kind], interval)
	if err != io.EOF {
		b.Fatal(err)
	}
	indexed.Store(key, t)
	return t
}

// BenchmarkRandomLine reads one 200-byte line with a fresh Reader, as a
// query touching one line of a file does: at a random offset, and at the
// worst place, just before a checkpoint. It reports the table's size as a
// percentage of the decompressed size.
func BenchmarkRandomLine(b *testing.B) {
	benchInputs(b)
	cases := []struct {
		kind      Kind
		intervals []int64
	}{
		{Gzip, []int64{64 << 10, 256 << 10, 1 << 20, 4 << 20}},
		{Zstd, []int64{1 << 20}},
		{Bzip2, []int64{1 << 20}},
		{XZ, []int64{1 << 20}},
	}
	for _, c := range cases {
		comp := benchFiles[c.kind]
		for _, interval := range c.intervals {
			tab := tableFor(b, c.kind, interval)
			overhead := 100 * float64(len(tab.AppendBinary(nil))) / float64(tab.Size)
			for _, where := range []string{"random", "interval-end"} {
				name := fmt.Sprintf("%v/interval=%dKiB/%s", c.kind, interval>>10, where)
				b.Run(name, func(b *testing.B) {
					rng := rand.New(rand.NewPCG(1, 2))
					line := make([]byte, 200)
					for b.Loop() {
						off := rng.Int64N(tab.Size - 200)
						if where == "interval-end" {
							i := 1 + rng.IntN(max(1, tab.Len()-1))
							off = tab.Size - 200
							if i < tab.Len() {
								off = tab.points[i].out - 200
							}
						}
						r := NewReader(bytes.NewReader(comp), int64(len(comp)), c.kind, tab)
						if _, err := r.ReadAt(line, off); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(overhead, "table%")
					b.ReportMetric(float64(tab.Len()), "checkpoints")
				})
			}
		}
	}
}

// BenchmarkForward reads every 20th line in offset order through one
// Reader, as a search with many hits in a file does; compare with
// BenchmarkIndex/*/plain (one full decompression) for the same kind.
func BenchmarkForward(b *testing.B) {
	benchInputs(b)
	for _, kind := range []Kind{Gzip, Zstd} {
		comp := benchFiles[kind]
		tab := tableFor(b, kind, DefaultInterval)
		var offs []int64
		for i, line := 0, 0; i < len(benchPlain); line++ {
			nl := bytes.IndexByte(benchPlain[i:], '\n')
			if line%20 == 0 {
				offs = append(offs, int64(i))
			}
			i += nl + 1
		}
		b.Run(kind.String(), func(b *testing.B) {
			buf := make([]byte, 200)
			for b.Loop() {
				r := NewReader(bytes.NewReader(comp), int64(len(comp)), kind, tab)
				for _, off := range offs {
					if _, err := r.ReadAt(buf, off); err != nil && err != io.EOF {
						b.Fatal(err)
					}
				}
			}
			b.SetBytes(tab.Size)
		})
	}
}
