package mmapstore

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// blockCase is a block's terms (sorted) and references.
type blockCase struct {
	name  string
	terms []string
	refs  []uint64
}

func dictBlockCases() []blockCase {
	r := rand.New(rand.NewPCG(7, 7))
	randTerms := func(n int, alphabet string, minLen, maxLen int) []string {
		set := map[string]bool{}
		for len(set) < n {
			b := make([]byte, minLen+r.IntN(maxLen-minLen+1))
			for i := range b {
				b[i] = alphabet[r.IntN(len(alphabet))]
			}
			set[string(b)] = true
		}
		out := make([]string, 0, n)
		for t := range set {
			out = append(out, t)
		}
		slices.Sort(out)
		return out
	}
	refs := func(n int, width uint) []uint64 {
		out := make([]uint64, n)
		for i := range out {
			out[i] = r.Uint64() >> (64 - width)
		}
		return out
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	long := strings.Repeat("x", MaxTermLen)
	return []blockCase{
		{"one term", []string{"a"}, []uint64{0}},
		{"hex ids", randTerms(64, "0123456789abcdef", 8, 32), refs(64, 20)},
		{"digits", randTerms(64, "0123456789", 1, 12), refs(64, 19)},
		{"ulids", randTerms(64, "0123456789abcdefghjkmnpqrstvwxyz", 26, 26), refs(64, 40)},
		{"words", []string{"error", "errors", "eta", "etag", "fail", "failed", "failure"}, []uint64{1, 2, 3, 4, 5, 6, 7}},
		{"one symbol", []string{"a", "aa", "aaa"}, []uint64{9, 9, 9}},
		{"every byte", randTerms(64, string(all), 1, 40), refs(64, 64)},
		{"longest terms", []string{long[:MaxTermLen-1] + "a", long[:MaxTermLen-1] + "b", long}, refs(3, 64)},
		{"zero refs", []string{"x", "y"}, []uint64{0, 0}},
		{"mixed refs", randTerms(64, "0123456789abcdef", 16, 16), append(refs(60, 19), refs(4, 40)...)},
		{"256 terms", randTerms(256, "ab", 1, 16), refs(256, 8)},
	}
}

func encodeCase(c blockCase) ([]byte, error) {
	return appendDictBlock(nil, 0, len(c.terms), func(i int) []byte { return []byte(c.terms[i]) }, c.refs)
}

func decodeAll(b []byte) ([]string, []uint64, error) {
	var ts []string
	var rs []uint64
	err := decodeDictBlock(b, func(t []byte, ref uint64) bool {
		ts = append(ts, string(t))
		rs = append(rs, ref)
		return true
	})
	return ts, rs, err
}

// TestDictBlockRoundTrip: every block decodes to its terms and references,
// in order, and hex blocks take 4 bits a digit.
func TestDictBlockRoundTrip(t *testing.T) {
	for _, c := range dictBlockCases() {
		b, err := encodeCase(c)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ts, rs, err := decodeAll(b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(ts, c.terms) || !slices.Equal(rs, c.refs) {
			t.Fatalf("%s: decoded %q %v, want %q %v", c.name, ts, rs, c.terms, c.refs)
		}
		if c.name == "hex ids" {
			text := 0
			for _, t := range c.terms {
				text += len(t)
			}
			if b[5] != alphaHex || len(b) > text*6/10+64*5 {
				t.Fatalf("hex block: kind %d, %d bytes for %d bytes of text", b[5], len(b), text)
			}
		}
		if c.name == "mixed refs" && (b[3] != 19 || b[4] != 40) {
			t.Fatalf("mixed refs: widths %d and %d, want 19 and 40", b[3], b[4])
		}
		checkLookups(t, b, c.terms, c.refs)
		// An early stop sees a prefix of the terms.
		k := 0
		if err := decodeDictBlock(b, func([]byte, uint64) bool { k++; return k < 2 }); err != nil || k != min(2, len(c.terms)) {
			t.Fatalf("%s: early stop after %d: %v", c.name, k, err)
		}
	}
}

// checkLookups looks up every term of a block, and strings around them
// (prefixes, extensions, neighbours, the empty string), against a linear
// search.
func checkLookups(t *testing.T, b []byte, terms []string, refs []uint64) {
	t.Helper()
	want := map[string]uint64{}
	for i, term := range terms {
		want[term] = refs[i]
	}
	probe := []string{"", "\x00", "\xff\xff"}
	for _, term := range terms {
		probe = append(probe, term, term[:len(term)-1], term+"\x00", term+"0", term[:len(term)-1]+string(term[len(term)-1]+1), term[:len(term)-1]+string(term[len(term)-1]-1))
	}
	for _, q := range probe {
		ref, ok, err := lookupDictBlock(b, []byte(q))
		w, wok := want[q]
		if err != nil || ok != wok || ok && ref != w {
			t.Fatalf("lookup %q = %d, %v, %v; want %d, %v", q, ref, ok, err, w, wok)
		}
	}
}

// TestDictBlockWriterRejects: what a block cannot hold is an error.
func TestDictBlockWriterRejects(t *testing.T) {
	for _, c := range []blockCase{
		{"empty block", nil, nil},
		{"empty term", []string{""}, []uint64{0}},
		{"too long", []string{strings.Repeat("y", MaxTermLen+1)}, []uint64{0}},
		{"unsorted", []string{"b", "a"}, []uint64{0, 0}},
		{"duplicate", []string{"a", "a"}, []uint64{0, 0}},
		{"prefix after", []string{"ab", "a"}, []uint64{0, 0}},
		{"257 terms", make([]string, 257), make([]uint64, 257)},
	} {
		if _, err := encodeCase(c); err == nil {
			t.Fatalf("%s: encoded", c.name)
		}
	}
}

// TestDictBlockDecoderRejects: damaged blocks are errors, never panics or
// wrong orders: every truncation, and hand-made headers and fields.
func TestDictBlockDecoderRejects(t *testing.T) {
	good, err := encodeCase(blockCase{"", []string{"ab", "ac", "b"}, []uint64{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(good) {
		if _, _, err := decodeAll(good[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: decoded", n)
		}
	}
	if _, _, err := decodeAll(append(bytes.Clone(good), 0)); err == nil {
		t.Fatal("a byte past the end: decoded")
	}
	// enc makes a block with one reference width: records, then symbols.
	type f = [2]uint64 // value, width
	enc := func(n, wp, ws, wr, kind byte, alpha string, recs []f, syms ...f) []byte {
		var w bitWriter
		for _, x := range recs {
			w.put(x[0], uint(x[1]))
		}
		recBits := uint64(len(w.b))*8 + uint64(w.nacc)
		for _, x := range syms {
			w.put(x[0], uint(x[1]))
		}
		b := append([]byte{n, wp, ws, wr, wr, kind}, alpha...)
		b = binary.AppendUvarint(b, recBits)
		return append(b, w.flush()...)
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"prefix width", enc(0, 9, 1, 0, 1, "a", nil)},
		{"suffix width", enc(0, 1, 9, 0, 1, "a", nil)},
		{"ref width", enc(0, 1, 1, 65, 1, "a", nil)},
		{"narrow wider than wide", func() []byte { b := enc(0, 1, 1, 1, 1, "a", []f{{0, 1}, {1, 1}, {0, 1}}); b[3] = 2; return b }()},
		{"alphabet kind", enc(0, 1, 1, 0, 200, "", nil)},
		{"alphabet not ascending", enc(0, 1, 1, 0, 2, "ba", []f{{0, 1}, {1, 1}}, f{0, 1})},
		{"alphabet cut", enc(0, 1, 1, 0, 3, "a", nil)},
		{"first term with a prefix", enc(0, 1, 1, 0, 1, "a", []f{{1, 1}, {1, 1}})},
		{"empty suffix", enc(0, 1, 1, 0, 1, "a", []f{{0, 1}, {0, 1}})},
		{"symbol outside the alphabet", enc(0, 0, 1, 0, 3, "abc", []f{{1, 1}}, f{3, 2})},
		// "b" then "a" (prefix 0, suffix 1 each).
		{"out of order", enc(1, 0, 1, 0, 2, "ab", []f{{1, 1}, {1, 1}}, f{1, 1}, f{0, 1})},
		// "a" then "a" again.
		{"repeated", enc(1, 1, 1, 0, 1, "a", []f{{0, 1}, {1, 1}, {0, 1}, {1, 1}})},
		{"prefix past the previous term", enc(1, 2, 1, 0, 1, "a", []f{{0, 2}, {1, 1}, {2, 2}, {1, 1}})},
		{"term too long", enc(1, 8, 8, 0, alphaIdentity, "", []f{{0, 8}, {255, 8}, {255, 8}, {1, 8}})},
		{"records longer than declared", func() []byte { b := enc(0, 1, 1, 0, 1, "a", []f{{0, 1}, {1, 1}}); b[7] = 1; return b }()},
		{"records past the block", func() []byte { b := enc(0, 1, 1, 0, 1, "a", []f{{0, 1}, {1, 1}}); b[7] = 9; return b }()},
		{"header only", []byte{0, 0, 1, 0, 0, 1}},
	} {
		if ts, _, err := decodeAll(c.b); err == nil {
			t.Fatalf("%s: decoded %q", c.name, ts)
		}
	}
}

// FuzzDictBlock feeds arbitrary bytes to the block decoder: it must fail
// cleanly or yield terms in strictly increasing order within MaxTermLen,
// and what it accepts must encode again and decode to the same terms.
func FuzzDictBlock(f *testing.F) {
	for _, c := range dictBlockCases() {
		b, err := encodeCase(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0, 0, 1, 0, 0, 1, 'a', 1, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		ts, rs, err := decodeAll(b)
		if err != nil {
			return
		}
		for i, term := range ts {
			if len(term) == 0 || len(term) > MaxTermLen || i > 0 && term <= ts[i-1] {
				t.Fatalf("decoded terms %q", ts)
			}
		}
		again, err := encodeCase(blockCase{"", ts, rs})
		if err != nil {
			t.Fatalf("re-encoding %q: %v", ts, err)
		}
		if ts2, rs2, err := decodeAll(again); err != nil || !slices.Equal(ts2, ts) || !slices.Equal(rs2, rs) {
			t.Fatalf("re-encoded block decodes to %q %v, %v", ts2, rs2, err)
		}
		checkLookups(t, b, ts, rs)
	})
}

// TestDictBlockMutations: a deterministic slice of what FuzzDictBlock
// explores (bytes flipped in valid blocks), so that the default run covers
// it.
func TestDictBlockMutations(t *testing.T) {
	n := 3000
	if os.Getenv("LOGDEX_LONG") != "" {
		n = 300000
	}
	r := rand.New(rand.NewPCG(1, 2))
	var bases [][]byte
	for _, c := range dictBlockCases() {
		b, _ := encodeCase(c)
		bases = append(bases, b)
	}
	for i := range n {
		b := bytes.Clone(bases[i%len(bases)])
		for range 1 + r.IntN(3) {
			b[r.IntN(len(b))] = byte(r.Uint32())
		}
		if r.IntN(4) == 0 {
			b = b[:r.IntN(len(b)+1)]
		}
		ts, _, err := decodeAll(b)
		if err != nil {
			continue
		}
		for k, term := range ts {
			if len(term) == 0 || len(term) > MaxTermLen || k > 0 && term <= ts[k-1] {
				t.Fatalf("mutation %d decoded terms out of order: %q", i, ts)
			}
		}
	}
}

// BenchmarkDictBlock: decoding a whole block (what a substring scan does
// per admitted block) and looking one term up in it (what a word query
// does per segment), for a block of hex ids and one of words.
func BenchmarkDictBlock(b *testing.B) {
	for _, c := range dictBlockCases() {
		if c.name != "hex ids" && c.name != "ulids" && c.name != "digits" {
			continue
		}
		enc, err := encodeCase(c)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/decode", func(b *testing.B) {
			for b.Loop() {
				decodeDictBlock(enc, func([]byte, uint64) bool { return true })
			}
		})
		q := []byte(c.terms[len(c.terms)*3/4])
		b.Run(c.name+"/lookup", func(b *testing.B) {
			for b.Loop() {
				if _, ok, _ := lookupDictBlock(enc, q); !ok {
					b.Fatal("not found")
				}
			}
		})
	}
}
