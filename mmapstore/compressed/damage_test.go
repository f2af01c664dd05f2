package compressed

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// damageCases are the compressed files cut and flipped: several members,
// frames, streams and blocks each, so damage lands in every part.
var damageCases = []compressCase{
	{"gzip-members", Gzip, split(2, cli("gzip", "-c"))},
	{"gzip-go-header-fields", Gzip, goGzip},
	{"zstd-frames", Zstd, split(3, cli("zstd", "-q", "-c"))},
	{"bzip2-streams", Bzip2, split(3, cli("bzip2", "-1", "-c"))},
	{"xz-blocks", XZ, split(2, cli("xz", "-c", "-1", "--block-size=16KiB"))},
	{"xz-go-sha256", XZ, goXZ},
}

// TestTruncated cuts files at many offsets: the output is a prefix of the
// original, a short one comes with a damage error, and the table of the
// prefix reads back correctly.
func TestTruncated(t *testing.T) {
	data := genLog(5, scale(60<<10, 2<<20))
	for _, c := range damageCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			comp := c.make(t, data)
			rng := rand.New(rand.NewPCG(uint64(len(comp)), 1))
			cuts := []int{0, 1, 2, 3, 5, 10, 12, 20, len(comp) - 1, len(comp) - 2, len(comp) - 4, len(comp) - 8, len(comp) - 13}
			for range scale(12, 400) {
				cuts = append(cuts, rng.IntN(len(comp)))
			}
			for _, cut := range cuts {
				out, tab, err := index(c.kind, comp[:cut], 8<<10)
				if !bytes.HasPrefix(data, out) {
					t.Fatalf("cut at %d: output is not a prefix of the original", cut)
				}
				if err == io.EOF {
					if len(out) != len(data) && cut != 0 && !memberBoundary(c.kind, comp, cut) {
						t.Fatalf("cut at %d: %d of %d bytes and no error", cut, len(out), len(data))
					}
				} else if !errKindOK(err) {
					t.Fatalf("cut at %d: error %v is neither ErrTruncated nor *CorruptError", cut, err)
				}
				checkReadsLight(t, comp[:cut], tab, out)
			}
		})
	}
}

// memberBoundary reports whether comp[:cut] is itself complete: a cut
// between gzip members, zstd frames, bzip2 or xz streams.
func memberBoundary(kind Kind, comp []byte, cut int) bool {
	_, _, err := index(kind, comp[:cut], 0)
	return err == io.EOF && Sniff(comp[cut:]) == kind
}

// TestCorrupt flips bytes: no panic and no hang; without an error the
// output is the original; with one, the output agrees with the original up
// to the last checkpoint before the damage (decoders may yield garbage
// between there and the checksum that catches it).
func TestCorrupt(t *testing.T) {
	data := genLog(6, scale(60<<10, 2<<20))
	for _, c := range damageCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			comp := c.make(t, data)
			_, good, _ := index(c.kind, comp, 8<<10)
			rng := rand.New(rand.NewPCG(uint64(len(comp)), 2))
			var clean, damaged int
			defer func() {
				t.Logf("%d flips: %d undetected with identical output, %d reported", clean+damaged, clean, damaged)
			}()
			for range scale(15, 600) {
				bad := bytes.Clone(comp)
				at := rng.IntN(len(bad))
				bad[at] ^= byte(1 + rng.IntN(255))
				out, tab, err := index(c.kind, bad, 8<<10)
				if err == io.EOF {
					if !bytes.Equal(out, data) {
						t.Fatalf("flip at %d: output differs and no error", at)
					}
					clean++
					continue
				}
				if !errKindOK(err) {
					t.Fatalf("flip at %d: error %v is neither ErrTruncated nor *CorruptError", at, err)
				}
				damaged++
				sure := int64(0)
				for _, p := range good.points {
					if p.in+1 < int64(at) {
						sure = p.out
					}
				}
				n := min(int64(len(out)), sure)
				if !bytes.Equal(out[:n], data[:n]) {
					t.Fatalf("flip at %d: output differs from the original before %d", at, n)
				}
				// The damaged file's table reads back what was yielded.
				checkReadsLight(t, bad, tab, out)
			}
		})
	}
}
