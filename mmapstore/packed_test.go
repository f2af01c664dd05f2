package mmapstore

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
)

func TestPackedIDs(t *testing.T) {
	for _, c := range []struct {
		name  string
		ids   []uint32
		lines uint32
		ok    bool
	}{
		{"pair", []uint32{3, 9}, 10, true},
		{"triple", []uint32{0, 1, 2}, 3, true},
		{"adjacent at the end", []uint32{8, 9}, 10, true},
		{"wide pair", []uint32{0, 1<<31 - 1}, 1 << 31, true},
		{"pair too wide", []uint32{0, 1<<32 - 2}, 1<<32 - 1, false},
		{"triple too wide", []uint32{0, 1 << 20, 1<<21 + 5}, 1 << 22, false},
		{"one id", []uint32{4}, 10, false},
		{"four ids", []uint32{1, 2, 3, 4}, 10, false},
	} {
		v, ok := packIDs(c.ids, packWidth(c.lines))
		if ok != c.ok {
			t.Fatalf("%s: packIDs ok = %v", c.name, ok)
		}
		if !ok {
			continue
		}
		got, ok := unpackIDs(v, c.lines)
		if !ok || !slices.Equal(got, c.ids) {
			t.Fatalf("%s: unpackIDs = %v, %v; want %v", c.name, got, ok, c.ids)
		}
	}
	// Values no writer produces are rejected (ids at or past the line
	// count, a zero first gap, a segment too small to pack).
	for _, c := range []struct {
		name  string
		v     uint64
		lines uint32
	}{
		{"zero gap", 5, 10},
		{"second id past the end", 9 | 1<<4, 10},
		{"third id past the end", 1 | 1<<4 | 9<<8, 10},
		{"one line", 0, 1},
		{"huge", ^uint64(0) >> 2, 1000},
	} {
		if ids, ok := unpackIDs(c.v, c.lines); ok {
			t.Fatalf("%s: unpackIDs = %v, want rejected", c.name, ids)
		}
	}
}

// A packed reference that does not decode is corruption, from every reader.
func TestPackedRefCorrupt(t *testing.T) {
	s := &Segment{name: "x", lines: 10}
	ref := uint64(5)<<2 | PostingsPacked // gap1 = 0
	if _, err := s.Postings(ref); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Postings: %v", err)
	}
	if _, err := s.DocFreq(ref); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("DocFreq: %v", err)
	}
	if _, err := s.PostingsAnd(ref, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("PostingsAnd: %v", err)
	}
	if _, err := s.list(ref); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("list: %v", err)
	}
}

// TestCheckRoaring: a roaring list read from a segment is accepted only
// when its ids increase strictly, number what its header says and stay
// below the segment's lines; runs out of order (checksums would not see a
// writer's mistake) are refused, in one pass.
func TestCheckRoaring(t *testing.T) {
	runs := roaring.New()
	runs.AddRange(10, 20)
	runs.AddRange(30, 40)
	runs.Add(70000)
	runs.RunOptimize()
	good, err := runs.ToBytes()
	if err != nil {
		t.Fatal(err)
	}
	// The same container with its two runs swapped.
	swapped := bytes.Clone(good)
	first := []byte{10, 0, 9, 0, 30, 0, 9, 0}
	i := bytes.Index(swapped, first)
	if i < 0 {
		t.Fatalf("runs not found in %x", good)
	}
	copy(swapped[i:], []byte{30, 0, 9, 0, 10, 0, 9, 0})
	dense := roaring.New()
	for i := uint32(0); i < 200000; i += 3 {
		dense.Add(i) // bitmap containers
	}
	dense.Add(300001)
	denseBuf, err := dense.ToBytes()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		buf   []byte
		count uint64
		lines uint32
		ok    bool
	}{
		{"runs and an array", good, 21, 70001, true},
		{"count in the header differs", good, 20, 70001, false},
		{"an id beyond the lines", good, 21, 70000, false},
		{"runs out of order", swapped, 21, 70001, false},
		{"bitmap containers and an array", denseBuf, dense.GetCardinality(), 300002, true},
		{"bitmap containers, one id short", denseBuf, dense.GetCardinality() - 1, 300002, false},
		{"cut short", denseBuf[:len(denseBuf)-100], dense.GetCardinality(), 300002, false},
	}
	for _, c := range cases {
		if err := checkRoaring(c.buf, c.count, c.lines); (err == nil) != c.ok {
			t.Errorf("%s: checkRoaring = %v, want ok %t", c.name, err, c.ok)
		}
	}
}
