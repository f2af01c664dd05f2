package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/logdex/logdex/query/lang"
)

// TestManySmallFilesCounts: counting over more files than one batch of
// counted files holds (and than a pass looks ahead at) gives every file
// its count, in path order, and the right total, whether it has hits that
// need no reading (a word), hits to verify (a literal), or none; a file
// appended to after indexing is counted as it is now.
func TestManySmallFilesCounts(t *testing.T) {
	root := t.TempDir()
	const n = 3*countedBatch + 7
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("d%d", i/300))
		must(t, os.MkdirAll(dir, 0o755))
		p := filepath.Join(dir, fmt.Sprintf("f%04d.log", i))
		text := "plain line\n"
		if i%5 == 0 {
			text += "a Timeout here\nanother timeout\n"
		}
		must(t, os.WriteFile(p, []byte(text), 0o644))
	}
	s := testIndex(t, 0, root)
	appended := filepath.Join(root, "d1", "f0301.log")
	f, err := os.OpenFile(appended, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("timeout appended\n")
	must(t, err)
	must(t, f.Close())

	for _, tc := range []struct {
		name string
		q    []string
		mode lang.Mode
		per  func(i int) int64
	}{
		{"word", []string{"timeout"}, lang.ModeQuery, func(i int) int64 {
			if i%5 == 0 {
				return 2
			}
			return 0
		}},
		{"literal", []string{"Timeout"}, lang.ModeLiteral, func(i int) int64 {
			if i%5 == 0 {
				return 1
			}
			return 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := Compile(tc.q, tc.mode, tc.mode == lang.ModeQuery)
			must(t, err)
			var got []string
			counts := map[string]int64{}
			st, err := s.Search(context.Background(), q, Options{PerFile: func(f *File, c int64) error {
				got = append(got, f.Path)
				counts[f.Path] = c
				return nil
			}}, nil)
			must(t, err)
			if len(got) != n {
				t.Fatalf("%d files counted, want %d", len(got), n)
			}
			for i := 1; i < len(got); i++ {
				if got[i-1] >= got[i] {
					t.Fatalf("out of order: %q before %q", got[i-1], got[i])
				}
			}
			var total int64
			for i := range n {
				p := filepath.Join(root, fmt.Sprintf("d%d", i/300), fmt.Sprintf("f%04d.log", i))
				w := tc.per(i)
				if p == appended && tc.name == "word" {
					w++
				}
				if counts[p] != w {
					t.Fatalf("%s: %d, want %d", p, counts[p], w)
				}
				total += w
			}
			if st.Total != total {
				t.Fatalf("total %d, want %d", st.Total, total)
			}
		})
	}
}

// BenchmarkManySmallFiles counts a word (answered by the index) and a
// literal (verified in the files) over 20,000 files of a few lines, as
// `logdex search --no-update -c` does after opening the index: a new
// searcher and one pass that looks at every file. The cost is per file.
func BenchmarkManySmallFiles(b *testing.B) {
	root := b.TempDir()
	const n = 20_000
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", i/1000))
		if i%1000 == 0 {
			mustB(b, os.MkdirAll(dir, 0o755))
		}
		text := fmt.Sprintf("2026-03-01T10:00:00Z host%d svc: request accepted id=%d\n", i%50, i)
		if i%2 == 0 {
			text += "2026-03-01T10:00:01Z host1 svc: connection timeout\n"
		}
		if i%70 == 0 {
			text += "2026-03-01T10:00:02Z host1 svc: login failed for user\n"
		}
		mustB(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("app-%06d.log", i)), []byte(text), 0o644))
	}
	ix := testIndex(b, 0, root).Index()
	for _, bc := range []struct {
		name string
		q    string
		mode lang.Mode
	}{{"word", "timeout", lang.ModeQuery}, {"literal", "login failed", lang.ModeLiteral}} {
		q, err := Compile([]string{bc.q}, bc.mode, bc.mode == lang.ModeQuery)
		mustB(b, err)
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				s := NewSearcher(ix, nil)
				files := 0
				if _, err := s.Search(context.Background(), q, Options{PerFile: func(*File, int64) error { files++; return nil }}, nil); err != nil {
					b.Fatal(err)
				}
				s.Close()
				if files != n {
					b.Fatalf("%d files counted, want %d", files, n)
				}
			}
		})
	}
}

func mustB(b *testing.B, err error) {
	b.Helper()
	if err != nil {
		b.Fatal(err)
	}
}
