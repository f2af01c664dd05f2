package indexer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logdex/logdex/mmapstore/token"
)

// add records that line id holds term; true if that is a new posting.
func (t *termTable) add(term []byte, id uint32) bool {
	return t.addHashed(term, t.hash32(t.seed, term), prefix8(term), id)
}

// TestTermTableZeroHash: a term hashing to 0 whose slot is empty is added
// (the batch's look-ahead once took the empty slot for an entry and
// panicked), and terms that all hash to 0 stay apart.
func TestTermTableZeroHash(t *testing.T) {
	b := newBuilder(nil)
	b.terms.hash32 = func(maphash.Seed, []byte) uint32 { return 0 }
	lines := []string{"alpha beta", "beta gamma 10.0.0.1", "alpha"}
	for id, l := range lines {
		b.index([]byte(l), uint32(id))
	}
	got := map[string]int{}
	for i := range b.terms.len() {
		got[string(b.terms.term(i))] = int(b.terms.ent(i).n)
	}
	for term, n := range map[string]int{"alpha": 2, "beta": 2, "gamma": 1} {
		if got[term] != n {
			t.Errorf("%q: %d lines, want %d (table %v)", term, got[term], n, got)
		}
	}
}

// TestTermTableCollisions: terms whose hashes collide stay apart, whatever
// their lengths and shared prefixes (an 8-byte term and a longer one with
// the same first 8 bytes were once merged).
func TestTermTableCollisions(t *testing.T) {
	tt := newTermTable()
	tt.hash32 = func(maphash.Seed, []byte) uint32 { return 7 } // every term collides
	terms := []string{"abcdefgh", "abcdefghij", "abcdefg", "abcdefgh\x01", "abc", "abcdefghi", "b"}
	for id, term := range terms {
		if !tt.add([]byte(term), uint32(id)) {
			t.Fatalf("%q: not a new posting", term)
		}
	}
	if tt.len() != len(terms) {
		t.Fatalf("%d terms in the table, want %d", tt.len(), len(terms))
	}
	for i := range tt.len() {
		e := tt.ent(i)
		if got := string(tt.term(i)); got != terms[e.first] || e.n != 1 {
			t.Fatalf("entry %d: %q with %d lines from line %d", i, got, e.n, e.first)
		}
	}
	// Adding them again on a new line extends each own list.
	for _, term := range terms {
		tt.add([]byte(term), 100)
	}
	for i := range tt.len() {
		if e := tt.ent(i); e.n != 2 || e.last != 100 {
			t.Fatalf("%q: %d lines, last %d", tt.term(i), e.n, e.last)
		}
	}
}

// TestTermTableSorted: the dictionary comes out in byte order with each
// term's postings, for terms that tie on their first 8, 16, ... bytes,
// end at a chunk boundary, or are prefixes of others; with the default run
// a few thousand random terms, with LOGDEX_LONG=1 a few hundred thousand.
func TestTermTableSorted(t *testing.T) {
	long := strings.Repeat("x", 250)
	fixed := []string{
		"a", "b", "ab", "abcdefgh", "abcdefghi", "abcdefg", "abcdefgh\x01", "abcdefghabcdefgh",
		"abcdefghabcdefgi", "abcdefghabcdefg", "1791590400171", "1791590400172", "179159040017",
		"17915904", "179159041", long, long + "y", long + "yz", long + "z", long[:248],
		"é", "éa", "ÿ", "\xff\xfe", "_", "0",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if os.Getenv("LOGDEX_LONG") != "" {
		n = 300000
	}
	const alpha = "0123456789abcdef_xyz"
	for range n {
		// Shared prefixes of any length, alphabets of a few symbols: many
		// ties on the first chunks.
		b := []byte(fixed[rng.IntN(len(fixed))])
		b = b[:rng.IntN(len(b)+1)]
		for range rng.IntN(24) {
			b = append(b, alpha[rng.IntN(len(alpha))])
		}
		if len(b) > 0 && len(b) <= maxTermLen {
			fixed = append(fixed, string(b))
		}
	}
	tt := newTermTable()
	want := map[string][]uint32{}
	for i := range 4 * len(fixed) {
		term := fixed[rng.IntN(len(fixed))]
		id := uint32(i / 3)
		if tt.add([]byte(term), id) {
			want[term] = append(want[term], id)
		}
	}
	keys := slices.Sorted(maps.Keys(want))
	got := tt.sorted()
	if got.Len() != len(keys) {
		t.Fatalf("%d terms, want %d", got.Len(), len(keys))
	}
	for i, k := range keys {
		term, n, first, rest := got.Term(i)
		if string(term) != k {
			t.Fatalf("term %d: %q, want %q", i, term, k)
		}
		if ids := decodeIDs(first, rest); int(n) != len(ids) || !slices.Equal(ids, want[k]) {
			t.Fatalf("%q: %d lines %v, want %v", k, n, ids, want[k])
		}
	}
}

func decodeIDs(first uint32, rest []byte) []uint32 {
	ids := []uint32{first}
	for len(rest) > 0 {
		v, n := binary.Uvarint(rest)
		rest = rest[n:]
		ids = append(ids, ids[len(ids)-1]+uint32(v))
	}
	return ids
}

// TestBuilderIndex: indexing lines through the batches gives every term
// (words, folded words, dotted numbers) exactly the lines token.Terms and
// token.Compounds find in them, on the repository's sample logs and on
// lines of many folded terms (batches fill up mid-line, and a folded
// term's bytes are reused by the scanner), through a term table reused
// from another segment.
func TestBuilderIndex(t *testing.T) {
	var lines [][]byte
	root := filepath.Join("..", "fixtures", "logs")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		lines = append(lines, bytes.Split(data, []byte("\n"))...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var many []string
	for i := range 3 * termBatchSize {
		many = append(many, fmt.Sprintf("Word%d ÉTÉ%d 10.0.%d.%d", i%50, i%7, i%3, i))
	}
	lines = append(lines, []byte(strings.Join(many, " ")), []byte(strings.Repeat("Ab ", 500)), []byte(strings.Repeat("z", 300)+" OK"))
	// A first builder indexes other lines (shifted ids, many more terms);
	// the second reuses its table.
	first := newBuilder(nil)
	for id, l := range lines {
		first.index(append([]byte("other "), l...), uint32(id+7))
		first.index([]byte(fmt.Sprintf("x%d", id)), uint32(id+7))
	}
	first.terms.sorted()
	b := newBuilder(first.terms)
	want := map[string][]uint32{}
	for id, l := range lines {
		b.index(l, uint32(id))
		seen := map[string]bool{}
		for _, term := range token.Terms(l) {
			seen[term] = true
		}
		token.Compounds(l, func(c []byte) { seen[string(c)] = true })
		for term := range seen {
			if len(term) <= maxTermLen {
				want[term] = append(want[term], uint32(id))
			}
		}
	}
	got := b.terms.sorted()
	keys := slices.Sorted(maps.Keys(want))
	if got.Len() != len(keys) {
		t.Fatalf("%d terms, want %d", got.Len(), len(keys))
	}
	var postings uint64
	for i, k := range keys {
		term, n, first, rest := got.Term(i)
		if string(term) != k || !slices.Equal(decodeIDs(first, rest), want[k]) || int(n) != len(want[k]) {
			t.Fatalf("term %d: %q on lines %v, want %q on %v", i, term, decodeIDs(first, rest), k, want[k])
		}
		postings += uint64(n)
	}
	if b.nPostings != postings {
		t.Fatalf("%d postings counted, want %d", b.nPostings, postings)
	}
}

// TestPrefix8: the first 8 bytes of a term, zero padded, whatever its
// length.
func TestPrefix8(t *testing.T) {
	for n := range 12 {
		b := []byte("abcdefghijkl")[:n]
		var p [8]byte
		copy(p[:], b)
		if got, want := prefix8(b), binary.LittleEndian.Uint64(p[:]); got != want {
			t.Errorf("prefix8(%q) = %#x, want %#x", b, got, want)
		}
	}
}

// TestTermTableArenaChunks: terms whose bytes fill several of the arena's
// chunks (a term never split between two) come back whole, in the sorted
// dictionary too, and again after the table is reset for another segment.
func TestTermTableArenaChunks(t *testing.T) {
	tt := newTermTable()
	for round := range 2 {
		want := map[string]bool{}
		// 250-byte terms do not divide a chunk: some end where the next
		// would not fit.
		for i := 0; len(want)*250 < 3*arenaChunk; i++ {
			term := fmt.Sprintf("%0250d", i*7+round)
			want[term] = true
			if !tt.add([]byte(term), uint32(i)) {
				t.Fatalf("round %d: %q not new", round, term[240:])
			}
		}
		if len(tt.arena) < 3 {
			t.Fatalf("round %d: %d arena chunks, want several", round, len(tt.arena))
		}
		for i := range tt.len() {
			if !want[string(tt.term(i))] {
				t.Fatalf("round %d: term %d reads back as %q", round, i, tt.term(i))
			}
		}
		st := tt.sorted()
		if st.Len() != len(want) {
			t.Fatalf("round %d: %d sorted terms, want %d", round, st.Len(), len(want))
		}
		for i := range st.Len() {
			term, _, _, _ := st.Term(i)
			if !want[string(term)] {
				t.Fatalf("round %d: sorted term %d is %q", round, i, term)
			}
			if i > 0 {
				if prev, _, _, _ := st.Term(i - 1); bytes.Compare(prev, term) >= 0 {
					t.Fatalf("round %d: sorted terms %d and %d out of order", round, i-1, i)
				}
			}
		}
		tt.reset()
	}
}
