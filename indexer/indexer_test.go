package indexer_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/lang"
	"github.com/rs/zerolog"
)

type line struct {
	path string
	no   int64
	text string
}

// fileLines reads every regular file under root as grep -r sees it.
func fileLines(t *testing.T, root string) []line {
	t.Helper()
	var out []line
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
			return nil
		}
		var no int64
		for len(data) > 0 {
			no++
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				out = append(out, line{p, no, string(data)})
				break
			}
			out = append(out, line{p, no, string(data[:i])})
			data = data[i+1:]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// searchAll returns every line the index answers for, in order.
func searchAll(t *testing.T, dir string, root string) ([]line, *query.Stats) {
	t.Helper()
	ix, err := mmapstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	s := query.NewSearcher(ix, []string{root})
	defer s.Close()
	q, err := query.CompileNode(&lang.All{}, lang.ModeQuery)
	if err != nil {
		t.Fatal(err)
	}
	var got []line
	st, err := s.Search(context.Background(), q, query.Options{Text: true}, func(h *query.Hit) error {
		got = append(got, line{h.File.Path, h.Line, string(h.Text)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, st
}

func update(t *testing.T, dir, root string) *indexer.Result {
	t.Helper()
	res, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func same(t *testing.T, step string, got, want []line) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d lines, want %d\ngot:  %v\nwant: %v", step, len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: line %d: got %v, want %v", step, i, got[i], want[i])
		}
	}
}

func write(t *testing.T, path, s string, flag int) {
	t.Helper()
	f, err := os.OpenFile(path, flag|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// indexedLines is the number of lines the manifest says are indexed.
func indexedLines(t *testing.T, dir string) int64 {
	m, err := mmapstore.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, f := range m.Files {
		n += f.Lines
	}
	return n
}

func TestIncremental(t *testing.T) {
	root := filepath.Join(t.TempDir(), "logs")
	os.MkdirAll(filepath.Join(root, "app"), 0o755)
	dir := t.TempDir()
	a := filepath.Join(root, "app", "a.log")
	b := filepath.Join(root, "b.log")
	write(t, a, "one\ntwo\nthree\n", os.O_TRUNC)
	write(t, b, "alpha\r\nbeta\r\npart", os.O_TRUNC)

	steps := []struct {
		name  string
		do    func()
		check func(r *indexer.Result) string
	}{
		{"initial", func() {}, func(r *indexer.Result) string {
			return fmt.Sprint(r.New == 2, r.Lines == 5)
		}},
		{"append", func() {
			write(t, a, "four\nfi", os.O_APPEND)
			write(t, b, "ial\r\ngamma\r\n", os.O_APPEND)
		}, func(r *indexer.Result) string {
			return fmt.Sprint(r.Appended == 2, r.Lines == 3)
		}},
		{"no change", func() {}, func(r *indexer.Result) string {
			return fmt.Sprint(!r.Changed, r.Lines == 0)
		}},
		{"rotate by rename", func() {
			os.Rename(a, a+".1")
			write(t, a, "new one\n", os.O_TRUNC)
		}, func(r *indexer.Result) string {
			return fmt.Sprint(r.Renamed == 1, r.New == 1, r.Lines == 1)
		}},
		{"truncate and rewrite", func() {
			write(t, b, "fresh\n", os.O_TRUNC)
		}, func(r *indexer.Result) string {
			return fmt.Sprint(r.Reindexed == 1, r.Lines == 1)
		}},
		{"replace with same size", func() {
			os.Remove(b)
			write(t, b, "FRESH\nmore\n", os.O_TRUNC)
		}, func(r *indexer.Result) string {
			return fmt.Sprint(r.Reindexed == 1, r.Lines == 2)
		}},
		{"delete", func() {
			os.Remove(a + ".1")
		}, func(r *indexer.Result) string {
			return fmt.Sprint(r.Deleted == 1, r.Files == 2)
		}},
		{"empty file and empty lines", func() {
			write(t, filepath.Join(root, "empty.log"), "", os.O_TRUNC)
			write(t, filepath.Join(root, "blank.log"), "\n\n\nx\n\n", os.O_TRUNC)
		}, func(r *indexer.Result) string {
			return fmt.Sprint(r.New == 2, r.Lines == 5)
		}},
	}
	for _, st := range steps {
		st.do()
		res := update(t, dir, root)
		if c := st.check(res); strings.Contains(c, "false") {
			t.Fatalf("%s: unexpected result %+v (%s)", st.name, res, c)
		}
		got, stats := searchAll(t, dir, root)
		same(t, st.name, got, fileLines(t, root))
		if len(stats.Warnings) > 0 {
			t.Fatalf("%s: warnings after indexing: %v", st.name, stats.Warnings)
		}
		// Only complete lines are indexed, none twice.
		var complete int64
		for _, l := range fileLines(t, root) {
			if data, _ := os.ReadFile(l.path); bytes.Count(data, []byte("\n")) >= int(l.no) {
				complete++
			}
		}
		if n := indexedLines(t, dir); n != complete {
			t.Fatalf("%s: %d lines indexed, files hold %d complete lines", st.name, n, complete)
		}
	}
	// Dead segments are collected: only segments with live files remain.
	m, _ := mmapstore.ReadManifest(dir)
	ents, _ := os.ReadDir(dir)
	var segs int
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".ldx") {
			segs++
		}
	}
	if segs != len(m.Segments) {
		t.Fatalf("%d segment files for %d live segments", segs, len(m.Segments))
	}
}

// TestStaleBeforeReindex: without re-indexing, appended lines are found by
// scanning the tail, and a rotated file is answered from its current
// content with a warning.
func TestStaleBeforeReindex(t *testing.T) {
	root := t.TempDir()
	dir := t.TempDir()
	a := filepath.Join(root, "a.log")
	write(t, a, "one\ntwo\n", os.O_TRUNC)
	update(t, dir, root)
	write(t, a, "three\nfour", os.O_APPEND)
	got, st := searchAll(t, dir, root)
	same(t, "appended", got, fileLines(t, root))
	if len(st.Warnings) != 0 {
		t.Fatalf("warnings for a grown file: %v", st.Warnings)
	}
	os.Remove(a)
	write(t, a, "x\n", os.O_TRUNC)
	got, st = searchAll(t, dir, root)
	same(t, "replaced", got, fileLines(t, root))
	if len(st.Warnings) != 1 {
		t.Fatalf("want one warning for a replaced file, got %v", st.Warnings)
	}
	os.Remove(a)
	got, st = searchAll(t, dir, root)
	if len(got) != 0 || len(st.Warnings) != 1 {
		t.Fatalf("deleted file: got %v, warnings %v", got, st.Warnings)
	}
}

// TestRewrittenWithSameStart: a file truncated and rewritten in place
// that starts with the same banner, longer than the first-bytes
// fingerprint, and grows past what was indexed is not taken for an
// append: searches answer from what it holds now (with a warning) and
// the next run indexes it again.
func TestRewrittenWithSameStart(t *testing.T) {
	root := t.TempDir()
	dir := t.TempDir()
	a := filepath.Join(root, "job.log")
	banner := strings.Repeat("# job runner 4.2, settings: retries=3 timeout=30s queue=default\n", 20)
	write(t, a, banner+"first run: step one\nfirst run: done\n", os.O_TRUNC)
	update(t, dir, root)
	write(t, a, banner+"SECOND run: step one is longer\nSECOND run: step two\nSECOND run: done\n", os.O_TRUNC)
	got, st := searchAll(t, dir, root)
	same(t, "rewritten, before re-indexing", got, fileLines(t, root))
	if len(st.Warnings) != 1 {
		t.Fatalf("want one warning for the rewritten file, got %v", st.Warnings)
	}
	if res := update(t, dir, root); res.Reindexed != 1 || res.Appended != 0 {
		t.Fatalf("re-index of the rewritten file: %+v, want it indexed again, not appended to", res)
	}
	got, st = searchAll(t, dir, root)
	same(t, "rewritten, re-indexed", got, fileLines(t, root))
	if len(st.Warnings) != 0 {
		t.Fatalf("warnings after re-indexing: %v", st.Warnings)
	}
	// Appends still are appends.
	write(t, a, "SECOND run: one more line\n", os.O_APPEND)
	if res := update(t, dir, root); res.Appended != 1 || res.Reindexed != 0 {
		t.Fatalf("re-index after an append: %+v, want it appended to", res)
	}
	got, _ = searchAll(t, dir, root)
	same(t, "appended", got, fileLines(t, root))
}

// TestSkips: symlinks are not followed and the index does not index
// itself; a binary file is indexed (grep counts its lines, split at NULs);
// a sparse one is left out, and its skip is remembered while it does not
// change.
func TestSkips(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "logs")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	write(t, filepath.Join(root, "ok.log"), "hello\n", os.O_TRUNC)
	write(t, filepath.Join(root, "bin.dat"), "ELF\x00\x01\x02hello\n", os.O_TRUNC)
	sparse := sparseFile(t, filepath.Join(root, "lastlog"))
	outside := filepath.Join(base, "secret.log")
	write(t, outside, "hello secret\n", os.O_TRUNC)
	os.Symlink(outside, filepath.Join(root, "sub", "link.log"))
	os.Symlink(base, filepath.Join(root, "sub", "dirlink"))
	dir := filepath.Join(root, ".logdex") // index inside the logs: must not index itself
	res := update(t, dir, root)
	if res.Files != 2 || res.Skipped != sparse {
		t.Fatalf("files %d skipped %d, want 2 and %d", res.Files, res.Skipped, sparse)
	}
	res = update(t, dir, root)
	if res.Changed || res.Files != 2 || res.Skipped != 0 {
		t.Fatalf("second run changed=%v files=%d skipped=%d", res.Changed, res.Files, res.Skipped)
	}
	got, _ := searchAll(t, dir, root)
	bin, ok := filepath.Join(root, "bin.dat"), filepath.Join(root, "ok.log")
	want := []line{{bin, 1, "ELF"}, {bin, 2, "\x01\x02hello"}, {ok, 1, "hello"}}
	if !slices.Equal(got, want) {
		t.Fatalf("got %#v, want %#v", got, want)
	}
}

// sparseFile makes a file of 1 GiB that is one hole but for its first
// line, and returns 1; it returns 0 (making nothing) where the filesystem
// does not report holes: indexing it there would read a gigabyte of NULs.
func sparseFile(t *testing.T, name string) int {
	t.Helper()
	f, err := os.Create(name)
	must(t, err)
	defer f.Close()
	_, err = f.WriteString("root pts/0\n")
	must(t, err)
	must(t, f.Truncate(1<<30))
	if !logfile.HasHoles(f, 1<<30) {
		f.Close()
		must(t, os.Remove(name))
		t.Log("this filesystem reports no holes: no sparse file tested")
		return 0
	}
	return 1
}

func TestHugeLine(t *testing.T) {
	root := t.TempDir()
	dir := t.TempDir()
	huge := strings.Repeat("abcdefgh ", 3<<20/9) + "needle"
	write(t, filepath.Join(root, "h.log"), "first\n"+huge+"\nlast needle\nlongtoken "+strings.Repeat("x", 300)+"\n", os.O_TRUNC)
	update(t, dir, root)
	got, _ := searchAll(t, dir, root)
	same(t, "huge", got, fileLines(t, root))
	ix, _ := mmapstore.Open(dir)
	defer ix.Close()
	s := query.NewSearcher(ix, []string{root})
	for _, tc := range []struct {
		q    string
		want int
	}{{"needle", 2}, {"x" + strings.Repeat("x", 299), 1}, {"abcdefgh", 1}, {"first", 1}} {
		q, _ := query.Compile([]string{tc.q}, lang.ModeQuery, true)
		st, err := s.Search(context.Background(), q, query.Options{}, func(*query.Hit) error { return nil })
		if err != nil || st.Total != int64(tc.want) {
			t.Fatalf("%.20s: total %v err %v, want %d", tc.q, st.Total, err, tc.want)
		}
	}
}

// TestWorkerStart: every worker that reads log files runs the hook first
// (serve lowers their threads' priority with it), and the run's answers
// are unchanged by it.
func TestWorkerStart(t *testing.T) {
	root := t.TempDir()
	dir := t.TempDir()
	for i := range 4 {
		write(t, filepath.Join(root, fmt.Sprintf("%d.log", i)), strings.Repeat(fmt.Sprintf("line %d\n", i), 100), os.O_TRUNC)
	}
	var calls atomic.Int32
	opt := indexer.Options{Dir: dir, Roots: []string{root}, Workers: 3, Logger: zerolog.Nop(), WorkerStart: func() { calls.Add(1) }}
	if _, err := indexer.Update(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("WorkerStart ran %d times, want once per worker (3)", n)
	}
	got, _ := searchAll(t, dir, root)
	same(t, "indexed", got, fileLines(t, root))
}
