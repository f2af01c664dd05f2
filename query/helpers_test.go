package query

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

// cases is how many random cases a property test runs: long with
// LOGDEX_LONG=1 (the thorough run, minutes), short by default (every
// property still checked, in seconds), a quarter of either under the race
// detector.
func cases(long, short int) int {
	n := short
	if os.Getenv("LOGDEX_LONG") != "" {
		n = long
	}
	return max(n/raceScale, 1)
}

// testIndex indexes roots into a temp dir and returns a searcher on it.
func testIndex(t testing.TB, segBytes int64, roots ...string) *Searcher {
	t.Helper()
	dir := t.TempDir()
	if _, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: roots, SegmentBytes: segBytes, Logger: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	ix, err := mmapstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := NewSearcher(ix, nil)
	t.Cleanup(func() { s.Close(); ix.Close() })
	return s
}

type refLine struct {
	path  string
	no    int64
	text  []byte
	toks  []string // cached reference tokens
	tokd  bool
	lowed []byte
}

func (l *refLine) tokens() []string {
	if !l.tokd {
		l.toks, l.tokd = refTokens(l.text), true
	}
	return l.toks
}

func (l *refLine) lower() []byte {
	if l.lowed == nil {
		l.lowed = asciiLower(l.text)
	}
	return l.lowed
}

// refLines reads every line of every regular file under roots as grep -r
// would see it (symlinks inside directories are not followed, binary files
// skipped), in (path, line) order.
func refLines(t testing.TB, roots ...string) []refLine {
	t.Helper()
	var out []refLine
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
				return nil
			}
			path := filepath.ToSlash(p)
			var no int64
			for len(data) > 0 {
				no++
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					out = append(out, refLine{path: path, no: no, text: data})
					break
				}
				out = append(out, refLine{path: path, no: no, text: data[:i]})
				data = data[i+1:]
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

type gotLine struct {
	path string
	no   int64
	text string
}

func search(t testing.TB, s *Searcher, q *Query, opt Options) ([]gotLine, *Stats) {
	t.Helper()
	opt.Text = true
	var got []gotLine
	st, err := s.Search(context.Background(), q, opt, func(h *Hit) error {
		got = append(got, gotLine{h.File.Path, h.Line, string(h.Text)})
		return nil
	})
	if err != nil {
		t.Fatalf("search %v: %v", q.root, err)
	}
	return got, st
}

// The property tests' corpus, generated and indexed once per package run
// (each index per segment size once too): under the race detector
// building it took longer than most of the tests using it. The tests
// only read it, and none runs in parallel with another.
var propCorpus struct {
	dir   string
	roots []string
	lines []refLine
	idx   map[int64]*Searcher
}

// propertyCorpus returns corpora's roots, their reference lines and a
// searcher over an index of them cut into segments of segBytes.
func propertyCorpus(t *testing.T, segBytes int64) ([]string, []refLine, *Searcher) {
	t.Helper()
	pc := &propCorpus
	if pc.roots == nil {
		dir, err := os.MkdirTemp("", "logdex-query-corpus-")
		if err != nil {
			t.Fatal(err)
		}
		pc.dir = dir
		pc.roots = corpora(t, dir)
		pc.lines = refLines(t, pc.roots...)
		pc.idx = map[int64]*Searcher{}
	}
	s := pc.idx[segBytes]
	if s == nil {
		dir := filepath.Join(pc.dir, fmt.Sprintf("index-%d", segBytes))
		if _, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: pc.roots, SegmentBytes: segBytes, Logger: zerolog.Nop()}); err != nil {
			t.Fatal(err)
		}
		ix, err := mmapstore.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		s = NewSearcher(ix, nil)
		pc.idx[segBytes] = s
	}
	return pc.roots, pc.lines, s
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, s := range propCorpus.idx {
		s.Close()
		s.Index().Close()
	}
	if propCorpus.dir != "" {
		os.RemoveAll(propCorpus.dir)
	}
	os.Exit(code)
}
