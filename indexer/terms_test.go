package indexer

import (
	"hash/maphash"
	"testing"
)

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
