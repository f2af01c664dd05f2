package indexer_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

// TestFilesChangedDuringRun: files rotated, replaced or deleted between a
// run's look at them and its reads: the run reads the files it planned
// (renamed, by their identity) or starts over, and after the next run the
// index holds the files as they are; never a hang, another file's lines
// under a record, or a failed run. Each change happens once, on the
// first attempt.
func TestFilesChangedDuringRun(t *testing.T) {
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	lines := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s line %d of filler text for a segment cut\n", prefix, i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name   string
		files  map[string][]byte
		change func(t *testing.T, root string)
		want   map[string]uint64 // lines per file once done
	}{
		{
			// A file larger than a segment is cut while planned: its path
			// now holds a new, short file.
			name:  "rotated while cut",
			files: map[string][]byte{"app.log": []byte(lines("old", 6000))},
			change: func(t *testing.T, root string) {
				p := filepath.Join(root, "app.log")
				must(t, os.Rename(p, p+".1"))
				must(t, os.WriteFile(p, []byte("new one\n"), 0o644))
			},
			want: map[string]uint64{"app.log": 1, "app.log.1": 6000},
		},
		{
			name:  "compressed rotation renamed and replaced",
			files: map[string][]byte{"app.log.1.gz": gz(lines("first", 3))},
			change: func(t *testing.T, root string) {
				p := filepath.Join(root, "app.log.1.gz")
				must(t, os.Rename(p, filepath.Join(root, "app.log.2.gz")))
				must(t, os.WriteFile(p, gz(lines("second", 5)), 0o644))
			},
			want: map[string]uint64{"app.log.1.gz": 5, "app.log.2.gz": 3},
		},
		{
			name:   "deleted",
			files:  map[string][]byte{"a.log": []byte(lines("a", 10)), "old.log.9": []byte(lines("o", 10))},
			change: func(t *testing.T, root string) { must(t, os.Remove(filepath.Join(root, "old.log.9"))) },
			want:   map[string]uint64{"a.log": 10},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, dir := t.TempDir(), t.TempDir()
			for name, b := range c.files {
				must(t, os.WriteFile(filepath.Join(root, name), b, 0o644))
			}
			first := true
			defer indexer.SetAfterDiff(func() {
				if first {
					first = false
					c.change(t, root)
				}
			})()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// The run, then the next (which sees what came since).
			for run := range 2 {
				if _, err := indexer.Update(ctx, indexer.Options{Dir: dir, Roots: []string{root}, SegmentBytes: 64 << 10, Logger: zerolog.Nop()}); err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
			}
			ix, err := mmapstore.Open(dir)
			must(t, err)
			defer ix.Close()
			got := map[string]uint64{}
			for _, f := range ix.Files() {
				if f.Lines > 0 {
					got[f.Path] = uint64(f.Lines)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("lines per file %v, want %v", got, c.want)
			}
		})
	}
}

// TestFileTruncatedAfterRead: a file cut short right after a worker read
// it (before it fingerprints the end it read) starts the run again, as
// any file changed under the reads does; the run does not fail.
func TestFileTruncatedAfterRead(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	var text strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&text, "line %04d of filler text\n", i)
	}
	p := filepath.Join(root, "app.log")
	must(t, os.WriteFile(p, []byte(text.String()), 0o644))
	first := true
	defer indexer.SetAfterPart(func(path string) {
		if first {
			first = false
			must(t, os.Truncate(p, 0))
		}
	})()
	if _, err := indexer.Update(t.Context(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	ix, err := mmapstore.Open(dir)
	must(t, err)
	defer ix.Close()
	if fs := ix.Files(); len(fs) != 1 || fs[0].Lines != 0 || fs[0].Indexed != 0 {
		t.Errorf("files %+v, want app.log as it is now: empty", fs)
	}
}

// TestFileChangedWhilePlanning: a worker finds a file changed while the
// run is still planning other files' segments: the run starts again (its
// own cancellation of the planning is not its error; the first build of a
// busy tree failed with "context canceled").
func TestFileChangedWhilePlanning(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	// Files of nearly a segment each: one job a file, none cut (so that the
	// planner does not read z3.log itself and notice first).
	var text strings.Builder
	for i := range 1400 {
		fmt.Fprintf(&text, "line %04d of filler text for a segment\n", i)
	}
	want := map[string]uint64{"z3.log": 1}
	for i := range 8 {
		name := fmt.Sprintf("z%d.log", i)
		must(t, os.WriteFile(filepath.Join(root, name), []byte(text.String()), 0o644))
		if i != 3 {
			want[name] = 1400
		}
	}
	first := true
	defer indexer.SetBeforeJob(func(path string) {
		if path == "z3.log" && first { // (one worker: the planner waits to hand over z4's job)
			first = false // truncated and written again in place (copytruncate)
			must(t, os.WriteFile(filepath.Join(root, path), []byte("new one\n"), 0o644))
		}
	})()
	for run := range 2 {
		if _, err := indexer.Update(t.Context(), indexer.Options{Dir: dir, Roots: []string{root}, SegmentBytes: 64 << 10, Workers: 1, Logger: zerolog.Nop()}); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
	if first {
		t.Fatal("z3.log's job never came")
	}
	ix, err := mmapstore.Open(dir)
	must(t, err)
	defer ix.Close()
	got := map[string]uint64{}
	for _, f := range ix.Files() {
		got[f.Path] = uint64(f.Lines)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lines per file %v, want %v", got, want)
	}
}
