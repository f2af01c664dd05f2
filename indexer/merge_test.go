package indexer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/lang"
	"github.com/rs/zerolog"
)

// TestMergesBoundSegments appends to logs between many runs (each writing
// a small segment), deletes one log midway, and checks that merges keep
// the segment count bounded and drop the deleted log's lines, while every
// line, its number and its time come out as a fresh index gives them.
func TestMergesBoundSegments(t *testing.T) {
	root := t.TempDir()
	dir := t.TempDir()
	names := []string{"a.log", "b.log", "c.log"}
	n := 0
	merged := 0
	for run := range 60 {
		for i, name := range names {
			if run > 30 && i == 2 {
				continue
			}
			f, err := os.OpenFile(filepath.Join(root, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			for k := range 20 + run%7 {
				n++
				fmt.Fprintf(f, "2026-11-29T10:%02d:%02d.%03dZ INFO seq=%d run=%d file=%s\n", run%60, k%60, n%1000, n, run, name)
				if k%9 == 0 {
					fmt.Fprintf(f, "  continuation of seq=%d\n", n)
				}
			}
			f.Close()
		}
		if run == 30 {
			os.Remove(filepath.Join(root, "c.log"))
		}
		res, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop()})
		if err != nil {
			t.Fatal(err)
		}
		merged += res.Merged
		m, err := mmapstore.ReadManifest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Segments) > 2*8 {
			t.Fatalf("run %d: %d segments", run, len(m.Segments))
		}
	}
	if merged == 0 {
		t.Fatal("no merge happened")
	}
	fresh := t.TempDir()
	if _, err := indexer.Update(context.Background(), indexer.Options{Dir: fresh, Roots: []string{root}, Logger: zerolog.Nop(), NoMerge: true}); err != nil {
		t.Fatal(err)
	}
	got, want := everyLine(t, dir), everyLine(t, fresh)
	if got != want {
		t.Fatalf("the merged index answers differently from a fresh one (%d vs %d bytes)", len(got), len(want))
	}
	// No segment is left mostly of the deleted log's (retired) lines.
	m, err := mmapstore.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	liveIDs := map[uint64]bool{}
	for _, f := range m.Files {
		liveIDs[f.ID] = true
	}
	for _, ref := range m.Segments {
		s, err := mmapstore.OpenSegment(filepath.Join(dir, ref.Name))
		if err != nil {
			t.Fatal(err)
		}
		var all, retired uint32
		for _, sp := range s.Spans() {
			all += sp.NumLines
			if !liveIDs[s.Files()[sp.File].ID] {
				retired += sp.NumLines
			}
		}
		s.Close()
		if retired*2 >= all {
			t.Errorf("%s: %d of %d lines retired", ref.Name, retired, all)
		}
	}
}

// everyLine renders every line of an index with its time.
func everyLine(t *testing.T, dir string) string {
	ix, err := mmapstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if d := ix.Damaged(); len(d) > 0 {
		t.Fatal(d)
	}
	s := query.NewSearcher(ix, []string{"logs"})
	defer s.Close()
	q, err := query.CompileNode(&lang.All{}, lang.ModeQuery)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if _, err := s.Search(context.Background(), q, query.Options{Text: true, Times: true}, func(h *query.Hit) error {
		fmt.Fprintf(&b, "%s:%d:%d:%s\n", h.File.Path, h.Line, h.Time, h.Text)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}
