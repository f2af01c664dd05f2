package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/compressed"
)

// TestCheckAndRepair: a flipped byte in a segment's postings is found by
// check (exit 1, naming the file) and search still answers; re-indexing
// rebuilds the damaged segment and the index checks clean again.
func TestCheckAndRepair(t *testing.T) {
	dir, _ := fixtureCopy(t)
	idx := filepath.Join(dir, "idx")
	if _, stderr, code := logdex(t, dir, "index", "-q", "--index", idx, "logs"); code != 0 {
		t.Fatalf("index: %d %s", code, stderr)
	}
	out, _, code := logdex(t, dir, "check", "--index", idx)
	if code != 0 || !strings.Contains(out, "segments") {
		t.Fatalf("check of a fresh index: %d %q", code, out)
	}
	want, _, _ := logdex(t, dir, "search", "--no-update", "--index", idx, "-F", "GET")

	m, _ := mmapstore.ReadManifest(idx)
	seg := filepath.Join(idx, m.Segments[0].Name)
	s, err := mmapstore.OpenSegment(seg)
	if err != nil {
		t.Fatal(err)
	}
	var off uint64
	for _, e := range s.Sections() {
		if e.Kind == mmapstore.SectionPostings {
			off = e.Offset + e.Length/2
		}
	}
	s.Close()
	data, _ := os.ReadFile(seg)
	data[off] ^= 0xff
	os.WriteFile(seg, data, 0o644)

	out, _, code = logdex(t, dir, "check", "--index", idx)
	if code != 1 || !strings.Contains(out, "DAMAGED "+m.Segments[0].Name) || !strings.Contains(out, "postings") {
		t.Fatalf("check of a damaged index: %d %q", code, out)
	}
	// A search reading the damaged list reports an error or answers from
	// other lists, but never crashes; `index --verify` rebuilds the segment.
	logdex(t, dir, "search", "--no-update", "--index", idx, "-F", "GET")
	if _, stderr, code := logdex(t, dir, "index", "-q", "--verify", "--index", idx, "logs"); code != 0 {
		t.Fatalf("re-index: %d %s", code, stderr)
	}
	out, _, code = logdex(t, dir, "check", "--index", idx)
	if code != 0 {
		t.Fatalf("check after repair: %d %q", code, out)
	}
	got, _, _ := logdex(t, dir, "search", "--no-update", "--index", idx, "-F", "GET")
	if got != want {
		t.Fatal("search after repair differs")
	}
}

// TestCheckReportsMismatch: check finds a segment that does not match its
// manifest (all its checksums sound) and names it.
func TestCheckReportsMismatch(t *testing.T) {
	dir, _ := fixtureCopy(t)
	idx := filepath.Join(dir, "idx")
	if _, stderr, code := logdex(t, dir, "index", "-q", "--index", idx, "logs"); code != 0 {
		t.Fatalf("index: %d %s", code, stderr)
	}
	m, err := mmapstore.ReadManifest(idx)
	if err != nil {
		t.Fatal(err)
	}
	m.Segments[0].Lines++
	if err := mmapstore.PublishManifest(idx, m); err != nil {
		t.Fatal(err)
	}
	out, _, code := logdex(t, dir, "check", "--index", idx)
	if code != 1 || !strings.Contains(out, "DAMAGED "+m.Segments[0].Name) || !strings.Contains(out, "does not match the manifest") {
		t.Fatalf("check: %d %q", code, out)
	}
}

// TestCheckSeekableCopy: a zstd file of one frame is read through the
// seekable copy the index keeps of it; check decodes the copy, names it
// when damaged (exit 1), and searches meanwhile still answer the same, by
// decompressing the file itself.
func TestCheckSeekableCopy(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(logs, 0o755))
	var b strings.Builder
	for i := 0; b.Len() < 5*compressed.DefaultInterval/2; i++ {
		fmt.Fprintf(&b, "2026-11-29T10:00:%02dZ INFO request %d served to user%d\n", i%60, i, i%97)
	}
	enc, err := zstd.NewWriter(nil)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(logs, "app.log.1.zst"), enc.EncodeAll([]byte(b.String()), nil), 0o644))
	idx := filepath.Join(dir, "idx")
	if _, stderr, code := logdex(t, dir, "index", "-q", "--index", idx, "logs"); code != 0 {
		t.Fatalf("index: %d %s", code, stderr)
	}
	copies, _ := filepath.Glob(filepath.Join(idx, "shadow-*.zst"))
	if len(copies) != 1 {
		t.Fatalf("seekable copies %q, want one", copies)
	}
	if out, _, code := logdex(t, dir, "check", "--index", idx); code != 0 {
		t.Fatalf("check of a fresh index: %d %q", code, out)
	}
	want, _, _ := logdex(t, dir, "search", "--no-update", "--index", idx, "-F", "served to user42")
	if strings.Count(want, "\n") < 400 {
		t.Fatalf("search found %d lines", strings.Count(want, "\n"))
	}
	data, err := os.ReadFile(copies[0])
	must(t, err)
	data[len(data)/2] ^= 0xff
	must(t, os.WriteFile(copies[0], data, 0o644))
	out, _, code := logdex(t, dir, "check", "--index", idx)
	if code != 1 || !strings.Contains(out, "DAMAGED "+filepath.Base(copies[0])) || !strings.Contains(out, "app.log.1.zst") {
		t.Fatalf("check of a damaged copy: %d %q", code, out)
	}
	if got, _, _ := logdex(t, dir, "search", "--no-update", "--index", idx, "-F", "served to user42"); got != want {
		t.Fatal("search with the copy damaged differs")
	}
	// index --verify rebuilds it (with its file), and check is clean again.
	if _, stderr, code := logdex(t, dir, "index", "-q", "--verify", "--index", idx, "logs"); code != 0 {
		t.Fatalf("index --verify: %d %s", code, stderr)
	}
	if out, _, code := logdex(t, dir, "check", "--index", idx); code != 0 {
		t.Fatalf("check after index --verify: %d %q", code, out)
	}
	if again, _ := filepath.Glob(filepath.Join(idx, "shadow-*.zst")); len(again) != 1 {
		t.Fatalf("seekable copies after the rebuild: %q", again)
	}
	if got, _, _ := logdex(t, dir, "search", "--no-update", "--index", idx, "-F", "served to user42"); got != want {
		t.Fatal("search after the rebuild differs")
	}
}
