package mmapstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

// buildSegment indexes a small log file and returns its only segment's path.
func buildSegment(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "2026-11-29T10:%02d:%02dZ INFO api request id=%x user=u%d status=%d dur=%dms\n", i/60, i%60, i*7919, i%13, 200+i%5, i%97)
	}
	b.WriteString(strings.Repeat("z", 300) + " long token line\n")
	os.WriteFile(filepath.Join(root, "a.log"), []byte(b.String()), 0o644)
	dir := t.TempDir()
	if _, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	m, err := mmapstore.ReadManifest(dir)
	if err != nil || len(m.Segments) != 1 {
		t.Fatalf("manifest: %v %v", m, err)
	}
	return filepath.Join(dir, m.Segments[0].Name)
}

func TestSegmentRoundTrip(t *testing.T) {
	s, err := mmapstore.OpenSegment(buildSegment(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.NumLines() != 301 {
		t.Fatalf("lines %d", s.NumLines())
	}
	if err := s.Verify(); err != nil {
		t.Fatal(err)
	}
	ref, ok, err := s.Lookup([]byte("info"))
	if err != nil || !ok {
		t.Fatalf("lookup info: %v %v", ok, err)
	}
	bm, err := s.Postings(ref)
	if err != nil || bm.GetCardinality() != 300 {
		t.Fatalf("postings of info: %v %v", bm, err)
	}
	if n, _ := s.DocFreq(ref); n != 300 {
		t.Fatalf("df %d", n)
	}
	// Offsets: line i starts where line i-1 ended.
	var off int64
	for i := uint32(0); i < s.NumLines(); i++ {
		loc, err := s.Locate(i)
		if err != nil || loc.Offset != off {
			t.Fatalf("line %d at %d (%v), want %d", i, loc.Offset, err, off)
		}
		off += loc.Length
	}
	var prefixed []string
	s.PrefixTerms([]byte("us"), func(term []byte, _ uint64) bool {
		prefixed = append(prefixed, string(term))
		return true
	})
	if len(prefixed) != 1 || prefixed[0] != "user" {
		t.Fatalf("prefix us: %q", prefixed)
	}
	if s.Unindexed() == nil || !s.Unindexed().Contains(300) {
		t.Fatalf("long token line not marked unindexed")
	}
	blocks, err := s.BlockCandidates([]byte("tatu"), false, false)
	if err != nil || len(blocks) == 0 {
		t.Fatalf("blocks for tatu: %v %v", blocks, err)
	}
	found := false
	for _, b := range blocks {
		s.BlockTerms(int(b), func(term []byte, _ uint64) bool {
			found = found || string(term) == "status"
			return true
		})
	}
	if !found {
		t.Fatal("status not found through trigram filters")
	}
}

// TestCorruption flips one byte in each section (and in the header, TOC
// and footer): opening or verifying reports a CorruptionError naming the
// file, and nothing panics.
func TestCorruption(t *testing.T) {
	path := buildSegment(t)
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := mmapstore.ParseSegment(path, orig)
	if err != nil {
		t.Fatal(err)
	}
	type target struct {
		name string
		off  int
	}
	targets := []target{{"header magic", 2}, {"footer", len(orig) - 4}, {"toc", len(orig) - mmapstore.FooterSize - 8}}
	for _, e := range s.Sections() {
		if e.Length > 0 {
			targets = append(targets, target{mmapstore.SectionName(e.Kind), int(e.Offset + e.Length/2)})
		}
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			data := append([]byte(nil), orig...)
			data[tg.off] ^= 0x5a
			p := filepath.Join(t.TempDir(), "seg.ldx")
			os.WriteFile(p, data, 0o644)
			seg, err := mmapstore.OpenSegment(p)
			if err == nil {
				err = seg.Verify()
				exercise(seg)
				seg.Close()
			}
			var ce *mmapstore.CorruptionError
			if !errors.As(err, &ce) || !errors.Is(err, mmapstore.ErrCorrupt) {
				t.Fatalf("flip at %d (%s): got %v, want a CorruptionError", tg.off, tg.name, err)
			}
			if ce.Path != p {
				t.Fatalf("error names %q, want %q", ce.Path, p)
			}
		})
	}
	// Truncation anywhere.
	for _, n := range []int{0, 10, len(orig) / 2, len(orig) - 1} {
		if _, err := mmapstore.ParseSegment("t", orig[:n]); !errors.Is(err, mmapstore.ErrCorrupt) {
			t.Fatalf("truncated to %d: %v", n, err)
		}
	}
}

func TestUseAfterClose(t *testing.T) {
	s, err := mmapstore.OpenSegment(buildSegment(t))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, _, err := s.Lookup([]byte("info")); !errors.Is(err, mmapstore.ErrClosed) {
		t.Fatalf("lookup after close: %v", err)
	}
	if _, err := s.Locate(0); !errors.Is(err, mmapstore.ErrClosed) {
		t.Fatalf("locate after close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// exercise calls every reader on a segment, bounding loops, for fuzzing
// and corruption tests: errors are fine, panics are not.
func exercise(s *mmapstore.Segment) {
	for _, term := range []string{"info", "user", "a", "zz", "status"} {
		ref, ok, err := s.Lookup([]byte(term))
		if err == nil && ok {
			s.DocFreq(ref)
			s.Postings(ref)
		}
	}
	n := 0
	s.PrefixTerms(nil, func(_ []byte, ref uint64) bool {
		s.Postings(ref)
		n++
		return n < 100
	})
	for i := uint32(0); i < min(s.NumLines(), 400); i++ {
		s.Locate(i)
	}
	for si := range s.Spans() {
		if si > 10 {
			break
		}
		k := 0
		s.WalkLines(si, 0, func(uint32, int64, int64) bool { k++; return k < 500 })
		s.SpanChunks(si, 1<<10)
	}
	if blocks, err := s.BlockCandidates([]byte("abc"), false, false); err == nil {
		for i, b := range blocks {
			if i > 10 {
				break
			}
			k := 0
			s.BlockTerms(int(b), func([]byte, uint64) bool { k++; return k < 100 })
		}
	}
	s.Verify()
}

func FuzzSegment(f *testing.F) {
	seed, err := os.ReadFile(buildSegment(f))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := mmapstore.ParseSegment("fuzz", data)
		if err != nil {
			return
		}
		exercise(s)
	})
}
