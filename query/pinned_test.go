package query

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/logdex/logdex/query/lang"
	"github.com/rs/zerolog"
)

// The pinned index: testdata/pinned/v<FormatVersion> was built by this
// build from testdata/pinned/logs, and answers.golden holds what the
// queries below answer from it. A change to the format that forgets to
// bump FormatVersion fails TestPinnedIndex. When the version is bumped,
// keep the previous directory (TestOlderFormatRebuilt uses the oldest) and
// regenerate with
//
//	go test ./query -run TestPinnedIndex -update
var update = flag.Bool("update", false, "rebuild testdata/pinned's index and golden answers")

const pinnedDir = "testdata/pinned"

// pinnedQueries cover every kind of lookup the format serves: words,
// prefixes, phrases, booleans, literals through exact, prefix and infix
// terms and dotted numbers, regexes, case folding, unindexed lines.
var pinnedQueries = []struct {
	mode lang.Mode
	fold bool
	q    string
}{
	{lang.ModeQuery, true, "error"},
	{lang.ModeQuery, true, "conn*"},
	{lang.ModeQuery, true, `"upstream timed out"`},
	{lang.ModeQuery, true, "timeout AND -upstream"},
	{lang.ModeQuery, true, "warn OR fatal"},
	{lang.ModeQuery, true, "istanbul"},
	{lang.ModeQuery, true, "İstanbul"},
	{lang.ModeQuery, true, "dfs.DataNode"},
	{lang.ModeLiteral, false, "10.0.3."},
	{lang.ModeLiteral, false, "eout"},
	{lang.ModeLiteral, true, "zoë"},
	{lang.ModeLiteral, false, "\r"},
	{lang.ModeRegex, false, `[0-9]+ms`},
	{lang.ModeRegex, true, `^(GET|POST) /api/v[0-9]`},
	{lang.ModeRegex, false, `</?[a-z]+>`},
	{lang.ModeLiteral, false, "rotated line without newline"},
	{lang.ModeQuery, true, "handshake"},
}

// answerPinned runs the pinned queries on s and renders the answers.
func answerPinned(t *testing.T, s *Searcher) []byte {
	t.Helper()
	var out bytes.Buffer
	for _, pq := range pinnedQueries {
		q, err := Compile([]string{pq.q}, pq.mode, pq.fold)
		must(t, err)
		got, st := search(t, s, q, Options{})
		if len(st.Warnings) > 0 {
			t.Fatalf("%s: %v (the index was not used as built)", q, st.Warnings)
		}
		fmt.Fprintf(&out, "# %s %q fold=%v: %d\n", pq.mode, pq.q, pq.fold, len(got))
		for _, g := range got {
			fmt.Fprintf(&out, "%s:%d:%q\n", g.path, g.no, g.text)
		}
	}
	return out.Bytes()
}

// pinnedIndex copies a committed index into a temp dir and points its
// manifest at this checkout's copy of the logs: the roots' absolute path
// and every file's device, inode and mtime are of the machine that built
// it. Nothing else is touched, so the segments are read as committed.
func pinnedIndex(t *testing.T, version string) string {
	t.Helper()
	src := filepath.Join(pinnedDir, version)
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	must(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	m, err := mmapstore.ReadManifest(dir)
	must(t, err)
	logs, err := filepath.Abs(filepath.Join(pinnedDir, "logs"))
	must(t, err)
	for i := range m.Roots {
		m.Roots[i].Abs, m.Roots[i].Given = logs, "logs"
	}
	for i := range m.Files {
		f := &m.Files[i]
		fi, err := os.Stat(filepath.Join(logs, filepath.FromSlash(f.Path)))
		must(t, err)
		if fi.Size() != f.Size {
			t.Fatalf("%s changed since the pinned index was built; rebuild it with -update", f.Path)
		}
		f.Dev, f.Ino = logfile.StatIDs(fi)
		f.MTime = fi.ModTime().UnixNano()
	}
	must(t, mmapstore.PublishManifest(dir, m))
	return dir
}

func openPinned(t *testing.T, dir string) *Searcher {
	t.Helper()
	ix, err := mmapstore.Open(dir)
	must(t, err)
	if d := ix.Damaged(); len(d) > 0 {
		t.Fatalf("pinned index damaged: %v", d)
	}
	s := NewSearcher(ix, []string{"logs"})
	t.Cleanup(func() { s.Close(); ix.Close() })
	return s
}

// TestPinnedIndex answers fixed queries from the committed index of this
// format version and compares them with the golden answers, and with what
// a fresh index of the same logs answers.
func TestPinnedIndex(t *testing.T) {
	version := fmt.Sprintf("v%d", mmapstore.FormatVersion)
	golden := filepath.Join(pinnedDir, "answers.golden")
	if *update {
		buildPinned(t, filepath.Join(pinnedDir, version))
	}
	if _, err := os.Stat(filepath.Join(pinnedDir, version)); err != nil {
		t.Fatalf("no pinned index for format version %d: build it with -update (and keep the older ones)", mmapstore.FormatVersion)
	}
	got := answerPinned(t, openPinned(t, pinnedIndex(t, version)))
	if *update {
		must(t, os.WriteFile(golden, got, 0o644))
	}
	want, err := os.ReadFile(golden)
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Fatalf("the pinned index answers differently from %s:\n%s", golden, firstDiff(got, want))
	}
	fresh := testIndex(t, 16<<10, filepath.Join(pinnedDir, "logs"))
	fresh = NewSearcher(fresh.ix, []string{"logs"})
	t.Cleanup(func() { fresh.Close() })
	if again := answerPinned(t, fresh); !bytes.Equal(again, want) {
		t.Fatalf("a fresh index answers differently from the pinned one:\n%s", firstDiff(again, want))
	}
	// Older versions this build still reads answer the same.
	for v := mmapstore.MinFormatVersion; v < mmapstore.FormatVersion; v++ {
		older := fmt.Sprintf("v%d", v)
		if got := answerPinned(t, openPinned(t, pinnedIndex(t, older))); !bytes.Equal(got, want) {
			t.Fatalf("the pinned %s index answers differently from %s:\n%s", older, golden, firstDiff(got, want))
		}
	}
}

// buildPinned rebuilds the committed index: small segments so that
// answers cross segments, file times fixed so that the bytes depend only
// on the logs (and the builder's device and inode numbers).
func buildPinned(t *testing.T, dir string) {
	must(t, os.RemoveAll(dir))
	logs := filepath.Join(pinnedDir, "logs")
	stamp := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	must(t, filepath.WalkDir(logs, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			err = os.Chtimes(p, stamp, stamp)
		}
		return err
	}))
	_, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{logs}, SegmentBytes: 16 << 10, Logger: zerolog.Nop()})
	must(t, err)
	must(t, os.Remove(filepath.Join(dir, "LOCK")))
}

// TestOlderFormatRebuilt: an index of an older format version is refused
// by the reader with ErrVersion, then rebuilt by the indexer with one log
// line, after which it answers as the current one does.
func TestOlderFormatRebuilt(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(pinnedDir, "v1")
	ents, err := os.ReadDir(src)
	must(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	_, err = mmapstore.Open(dir)
	var ve *mmapstore.VersionError
	if !errors.Is(err, mmapstore.ErrVersion) || !errors.As(err, &ve) || ve.Found != 1 {
		t.Fatalf("Open of a version 1 index: %v, want a VersionError for version 1", err)
	}
	var log bytes.Buffer
	_, err = indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{filepath.Join(pinnedDir, "logs")},
		Logger: zerolog.New(&log).Level(zerolog.InfoLevel)})
	must(t, err)
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	var rebuild []string
	for _, l := range lines {
		if strings.Contains(l, "rebuilding") {
			rebuild = append(rebuild, l)
		}
	}
	if len(rebuild) != 1 || !strings.Contains(rebuild[0], "version 1") {
		t.Fatalf("want one log line about rebuilding a version 1 index, got:\n%s", log.String())
	}
	got := answerPinned(t, openPinned(t, dir))
	want, err := os.ReadFile(filepath.Join(pinnedDir, "answers.golden"))
	must(t, err)
	if !bytes.Equal(got, want) {
		t.Fatalf("the rebuilt index answers differently:\n%s", firstDiff(got, want))
	}
}

// TestDeterministicBuild: the same logs give the same bytes.
func TestDeterministicBuild(t *testing.T) {
	logs := filepath.Join(pinnedDir, "logs")
	var files [2]map[string][]byte
	for i := range files {
		dir := t.TempDir()
		_, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{logs}, SegmentBytes: 16 << 10, Logger: zerolog.Nop()})
		must(t, err)
		files[i] = map[string][]byte{}
		ents, err := os.ReadDir(dir)
		must(t, err)
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			must(t, err)
			files[i][e.Name()] = b
		}
	}
	if len(files[0]) != len(files[1]) {
		t.Fatalf("builds differ in their files: %d vs %d", len(files[0]), len(files[1]))
	}
	for name, b := range files[0] {
		if !bytes.Equal(b, files[1][name]) {
			t.Fatalf("%s differs between two builds of the same logs", name)
		}
	}
}

func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, gl, wl)
		}
	}
	return "(same lines)"
}
