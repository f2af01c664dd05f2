package mmapstore_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/logdex/logdex/mmapstore"
)

// TestReadCopy: bytes read with pread for a transient use (readCopy) are
// the mapped bytes, verified as they come (their chunks marked checked);
// a flipped byte in them is a corruption error, and a file cut short
// under the reader an error, never a crash.
func TestReadCopy(t *testing.T) {
	dir := buildTestIndex(t, 1)
	m, err := mmapstore.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, m.Segments[0].Name)
	open := func(p string) (*mmapstore.Segment, mmapstore.TOCEntry) {
		t.Helper()
		s, err := mmapstore.OpenSegment(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		for _, e := range s.Sections() {
			if e.Kind == mmapstore.SectionTrigrams {
				return s, e
			}
		}
		t.Fatal("no trigram filters")
		return nil, mmapstore.TOCEntry{}
	}
	s, sec := open(path)
	if sec.Length < 3*mmapstore.ChunkSize {
		t.Fatalf("trigram filters of %d bytes, want several chunks", sec.Length)
	}
	off, n := uint64(mmapstore.ChunkSize-100), uint64(mmapstore.ChunkSize+300) // across three chunks
	got, checked, err := s.ReadTrigrams(off, n, true)
	if err != nil || !checked {
		t.Fatalf("readCopy: %v, chunks checked %t", err, checked)
	}
	want, _, err := s.ReadTrigrams(off, n, false)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("readCopy's bytes differ from the mapping's (%v)", err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.ldx")
	flipped := bytes.Clone(data)
	flipped[sec.Offset+off+n/2] ^= 0xff
	if err := os.WriteFile(bad, flipped, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ = open(bad)
	if _, _, err := s.ReadTrigrams(off, n, true); err == nil || s.Damage() == nil {
		t.Fatalf("a flipped byte: readCopy %v, damage %v", err, s.Damage())
	}

	cut := filepath.Join(t.TempDir(), "cut.ldx")
	if err := os.WriteFile(cut, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ = open(cut)
	if err := os.Truncate(cut, int64(sec.Offset+off)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ReadTrigrams(off, n, true); err == nil {
		t.Fatal("a segment cut short under the reader: readCopy gave no error")
	}
}
