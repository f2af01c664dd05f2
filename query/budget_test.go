package query

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logdex/logdex/query/lang"
)

// TestTotalBudget: a page reads what the page needs. Past the limit, hits
// the index counts without reading lines stay exact; counting that needs
// reading stops at TotalBudget and says Total is a lower bound; without
// CountAll nothing is read past the page at all.
func TestTotalBudget(t *testing.T) {
	root := t.TempDir()
	// Eight files, each in a segment of its own.
	for f := range 8 {
		var b strings.Builder
		for i := f * 5000; i < (f+1)*5000; i++ {
			// "pool exhausted" needs verifying (a phrase); "retry" is a
			// word the postings count exactly; "%7" needs a scan.
			fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ worker %d: pool exhausted, retry %d%%7\n", i%60, i%13, i)
			fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ worker %d: exhausted pool\n", i%60, i%13)
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("app%d.log", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := testIndex(t, 512<<10, root)
	cases := []struct {
		mode  lang.Mode
		q     string
		exact bool // counted from the index alone: exact within any budget
		want  int64
	}{
		{lang.ModeQuery, "retry", true, 40000},
		{lang.ModeQuery, `"pool exhausted"`, false, 40000},
		{lang.ModeLiteral, "%7", false, 40000},
	}
	for _, c := range cases {
		q, err := Compile([]string{c.q}, c.mode, false)
		if err != nil {
			t.Fatal(err)
		}
		hits := 0
		var last Cursor
		fn := func(h *Hit) error { hits++; last = Cursor{Path: h.File.Path, Line: h.Line}; return nil }
		full, err := s.Search(context.Background(), q, Options{Limit: 10, CountAll: true}, fn)
		if err != nil || full.Total != c.want || full.TotalAtLeast {
			t.Fatalf("%s exact count: %v %d %t", c.q, err, full.Total, full.TotalAtLeast)
		}
		// The next page, with times as the server asks: the hits past the
		// cursor, counted (for a word, by rank past the page).
		after := last
		next, err := s.Search(context.Background(), q, Options{Limit: 10, CountAll: true, After: &after, Times: true}, fn)
		if err != nil || next.Total != c.want-10 || next.TotalAtLeast || last.Line <= after.Line {
			t.Fatalf("%s second page: %v total %d (at least %t), last line %d after %d", c.q, err, next.Total, next.TotalAtLeast, last.Line, after.Line)
		}
		hits = 0
		st, err := s.Search(context.Background(), q, Options{Limit: 10, CountAll: true, TotalBudget: 64 << 10}, fn)
		if err != nil || hits != 10 {
			t.Fatalf("%s: %v, %d hits", c.q, err, hits)
		}
		if c.exact && (st.Total != c.want || st.TotalAtLeast) {
			t.Errorf("%s: total %d (at least %t), want exactly %d", c.q, st.Total, st.TotalAtLeast, c.want)
		}
		if !c.exact && (!st.TotalAtLeast || st.Total < 10 || st.Total >= c.want) {
			t.Errorf("%s: total %d (at least %t), want a lower bound under %d", c.q, st.Total, st.TotalAtLeast, c.want)
		}
		if !c.exact && st.Verified+st.Scanned >= full.Verified+full.Scanned {
			t.Errorf("%s: the budget read as much as the exact count (%d+%d)", c.q, st.Verified, st.Scanned)
		}
		// The bounded page planned the segments of the files it reached,
		// not all.
		if c.mode == lang.ModeQuery && !c.exact && (st.Terms == 0 || st.Terms >= full.Terms) {
			t.Errorf("%s: the bounded page looked up %d terms, the exact count %d (%d segments)", c.q, st.Terms, full.Terms, st.Segments)
		}
		hits = 0
		lim, err := s.Search(context.Background(), q, Options{Limit: 10}, fn)
		if err != nil || hits != 10 {
			t.Fatalf("%s limit: %v, %d hits", c.q, err, hits)
		}
		if !c.exact && lim.Scanned > 512<<10 {
			t.Errorf("%s: a 10-hit answer without a total scanned %d bytes", c.q, lim.Scanned)
		}
	}
}

// TestLiteralCountedFromIndex: a literal of digits, dots and '_' that one
// atom covers whole is counted from the postings without reading a line
// (nothing in it has case, so the terms hold it as the lines do); other
// literals are verified. Both give the count grep would.
func TestLiteralCountedFromIndex(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, "conn from 10.213.7.%d:%d id=req_%05d v1.2.%d ERROR Error\n", i%256, 8000+i%50, i, i%7)
		if i%100 == 0 {
			b.WriteString("peer 110.213.7.42 and 10.213.7.421 and 10.213.7.42\n")
		}
	}
	data := b.String()
	if err := os.WriteFile(filepath.Join(root, "app.log"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testIndex(t, 64<<10, root)
	cases := []struct {
		lit    string
		unread bool // counted without reading lines
		fold   bool
	}{
		{"10.213.7.42", true, false},
		{"0.213.7.4", true, false},
		{"213.7.42", true, false},
		{"_0042", true, false},
		{"0042", true, true},
		{"8042", true, false},
		{"1.2.3", true, false},
		{"req_0042", false, false}, // letters: the term req_00042 also comes from REQ_00042
		{"7.42:80", false, false},  // the ':' is no part of a term
		{"ERROR", false, false},    // "error" is also the term of "Error"
		{".213.", false, false},    // no atom covers the dots at its ends
	}
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	for _, c := range cases {
		var want int64
		for _, l := range lines {
			if strings.Contains(l, c.lit) {
				want++
			}
		}
		q, err := Compile([]string{c.lit}, lang.ModeLiteral, c.fold)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Search(context.Background(), q, Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st.Total != want {
			t.Errorf("-F %q: count %d, want %d", c.lit, st.Total, want)
		}
		if unread := st.Verified == 0 && st.Scanned == 0; unread != c.unread {
			t.Errorf("-F %q: counted without reading = %t (verified %d, scanned %d), want %t", c.lit, unread, st.Verified, st.Scanned, c.unread)
		}
	}
}

// TestMaxPerFile: each file's first N hits, as grep -m gives them, over
// files cut into several segments (a file's later tasks must not add to
// its first N) and over files of one segment, which are not read to their
// end (a file's tasks, run in parallel, each stop at N hits of their own).
func TestMaxPerFile(t *testing.T) {
	root := t.TempDir()
	for f := range 3 {
		var b strings.Builder
		for i := range 6000 {
			fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ file %d worker %d: pool exhausted, retry %d%%7\n", i%60, f, i%13, i)
			fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ worker %d: exhausted pool\n", i%60, i%13)
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("app%d.log", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cut, whole := testIndex(t, 64<<10, root), testIndex(t, 4<<20, root)
	for _, c := range []struct {
		mode   lang.Mode
		q      string
		invert bool
	}{
		{lang.ModeQuery, "retry", false},
		{lang.ModeQuery, `"pool exhausted"`, false},
		{lang.ModeLiteral, "%7", false},
		{lang.ModeLiteral, "retry", true},
	} {
		q, err := CompileGrep([]string{c.q}, c.mode, false, GrepFlags{Invert: c.invert})
		if err != nil {
			t.Fatal(err)
		}
		all, full := search(t, whole, q, Options{})
		for _, n := range []int64{1, 5, 4000} {
			var want []gotLine
			per := map[string]int64{} // each file's hits
			for _, l := range all {
				if per[l.path]++; per[l.path] <= n {
					want = append(want, l)
				}
			}
			for _, s := range []*Searcher{cut, whole} {
				got, st := search(t, s, q, Options{MaxPerFile: n})
				if fmt.Sprint(got) != fmt.Sprint(want) || st.Total != int64(len(want)) {
					t.Fatalf("%s -m %d: %d hits (total %d), want %d", c.q, n, len(got), st.Total, len(want))
				}
			}
			// Counted (grep -c -m, -l): each file's count is cut at n.
			for _, s := range []*Searcher{cut, whole} {
				var counts []string
				st, err := s.Search(context.Background(), q, Options{MaxPerFile: n, PerFile: func(f *File, k int64) error {
					counts = append(counts, fmt.Sprintf("%s:%d", f.Path, k))
					return nil
				}}, nil)
				var wantCounts []string
				for _, f := range []string{"app0.log", "app1.log", "app2.log"} {
					wantCounts = append(wantCounts, fmt.Sprintf("%s:%d", filepath.Join(root, f), min(per[filepath.Join(root, f)], n)))
				}
				if err != nil || fmt.Sprint(counts) != fmt.Sprint(wantCounts) {
					t.Fatalf("%s -c -m %d: %v %v, want %v", c.q, n, err, counts, wantCounts)
				}
				if s == whole && n == 1 && full.Verified+full.Scanned > 0 && st.Verified+st.Scanned >= (full.Verified+full.Scanned)/2 {
					t.Errorf("%s -c -m 1 read %d+%d, the whole search %d+%d", c.q, st.Verified, st.Scanned, full.Verified, full.Scanned)
				}
			}
			_, st := search(t, whole, q, Options{MaxPerFile: n})
			if n == 1 && full.Verified+full.Scanned > 0 && st.Verified+st.Scanned >= (full.Verified+full.Scanned)/2 {
				t.Errorf("%s -m 1 read %d+%d, the whole search %d+%d", c.q, st.Verified, st.Scanned, full.Verified, full.Scanned)
			}
		}
	}
}

// TestMaxPerFileWithLimit: the two caps do not combine.
func TestMaxPerFileWithLimit(t *testing.T) {
	s := testIndex(t, 1<<20, "../fixtures/logs/app")
	q, err := Compile([]string{"error"}, lang.ModeQuery, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(context.Background(), q, Options{MaxPerFile: 1, Limit: 5}, func(*Hit) error { return nil }); err == nil {
		t.Fatal("MaxPerFile with Limit accepted")
	}
}

// TestBoundedPageManyFiles: over many files of a few hits each, a page
// with a count budget reads its page, counts within the budget and stops
// there (no file holds a page alone, so it is the hits of earlier files
// that fill it); the next page is offered.
func TestBoundedPageManyFiles(t *testing.T) {
	root := t.TempDir()
	for f := range 200 {
		var b strings.Builder
		for i := range 30 {
			switch i % 10 {
			case 3:
				fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ worker %d: pool exhausted after %d tries\n", i, f, i)
			case 6: // a candidate to verify
				fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ worker %d: exhausted the pool of %d\n", i, f, i)
			default:
				fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ worker %d: served in %d ms\n", i, f, i)
			}
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("w%03d.log", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := testIndex(t, 64<<10, root)
	q, err := Compile([]string{`"pool exhausted"`}, lang.ModeQuery, false)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	full, err := s.Search(context.Background(), q, Options{}, func(h *Hit) error {
		all = append(all, fmt.Sprint(h.File.Path, ":", h.Line))
		return nil
	})
	if err != nil || full.Total != 600 {
		t.Fatalf("full search: %v, %d hits", err, full.Total)
	}
	for _, text := range []bool{false, true} {
		var page []string
		st, err := s.Search(context.Background(), q, Options{Limit: 10, CountAll: true, TotalBudget: 16 << 10, Text: text}, func(h *Hit) error {
			page = append(page, fmt.Sprint(h.File.Path, ":", h.Line))
			return nil
		})
		if err != nil || !slices.Equal(page, all[:10]) {
			t.Fatalf("text %t: %v, page %v, want %v", text, err, page, all[:10])
		}
		if !st.TotalAtLeast || !st.Truncated || st.Total < 10 || st.Total >= full.Total {
			t.Errorf("text %t: total %d (at least %t, more pages %t), want a lower bound and a next page", text, st.Total, st.TotalAtLeast, st.Truncated)
		}
		if st.Verified*4 > full.Verified || st.Terms >= full.Terms {
			t.Errorf("text %t: verified %d lines and looked up %d terms, the whole count %d and %d", text, st.Verified, st.Terms, full.Verified, full.Terms)
		}
	}
}

// TestBoundedPageOneBigFile: one file spanning many segments; a page with
// a count budget plans the segments its page and budget reach, not all.
func TestBoundedPageOneBigFile(t *testing.T) {
	root := t.TempDir()
	var b strings.Builder
	for i := range 30000 {
		switch i % 10 {
		case 3:
			fmt.Fprintf(&b, "2026-11-30T12:%02d:%02dZ worker %d: pool exhausted after %d tries\n", i/60%60, i%60, i%7, i)
		case 6:
			fmt.Fprintf(&b, "2026-11-30T12:%02d:%02dZ worker %d: exhausted the pool of %d\n", i/60%60, i%60, i%7, i)
		default:
			fmt.Fprintf(&b, "2026-11-30T12:%02d:%02dZ worker %d: served in %d ms\n", i/60%60, i%60, i%7, i)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "app.log"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testIndex(t, 64<<10, root)
	for _, text := range []string{`"pool exhausted"`, `exhausted AND NOT "exhausted the"`} {
		q, err := Compile([]string{text}, lang.ModeQuery, false)
		if err != nil {
			t.Fatal(err)
		}
		var all []string
		full, err := s.Search(context.Background(), q, Options{}, func(h *Hit) error {
			all = append(all, fmt.Sprint(h.Line))
			return nil
		})
		if err != nil || full.Total != 3000 || full.Segments < 10 {
			t.Fatalf("%s: %v, %d hits, %d segments", text, err, full.Total, full.Segments)
		}
		var page []string
		st, err := s.Search(context.Background(), q, Options{Limit: 20, CountAll: true, TotalBudget: 16 << 10, Text: true}, func(h *Hit) error {
			page = append(page, fmt.Sprint(h.Line))
			return nil
		})
		if err != nil || !slices.Equal(page, all[:20]) {
			t.Fatalf("%s: %v, page %v, want %v", text, err, page, all[:20])
		}
		if !st.TotalAtLeast || !st.Truncated || st.Total < 20 || st.Total >= full.Total {
			t.Errorf("%s: total %d (at least %t, more pages %t), want a lower bound and a next page", text, st.Total, st.TotalAtLeast, st.Truncated)
		}
		if st.Terms*3 > full.Terms {
			t.Errorf("%s: the page looked up %d terms, the whole search %d (%d segments)", text, st.Terms, full.Terms, full.Segments)
		}
	}
}

// TestBoundedPageWordPastLongLines: a word's page whose count budget runs
// out on lines too long to index still counts the later files' hits from
// the index (its count is a lower bound only for those lines).
func TestBoundedPageWordPastLongLines(t *testing.T) {
	root := t.TempDir()
	long := strings.Repeat("padding ", 200<<10) + "\n" // 1.6 MiB: not tokenized
	files := map[string]string{
		"a.log": strings.Repeat("2026-11-30T12:00:00Z error one\n", 30),
		"b.log": long + long,
		"c.log": strings.Repeat("2026-11-30T12:00:00Z error two\n", 40),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := testIndex(t, 1<<20, root)
	q, err := Compile([]string{"error"}, lang.ModeQuery, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Search(context.Background(), q, Options{Limit: 1, CountAll: true, TotalBudget: 64 << 10, Text: true}, func(*Hit) error { return nil })
	if err != nil || st.Total != 70 {
		t.Fatalf("%v: total %d (at least %t), want 70", err, st.Total, st.TotalAtLeast)
	}
}

// TestBoundedPageCuts: the plans decide whether a page stops where its
// count budget ran out, not the query's syntax alone: a prefix too wide
// to expand reads lines to count, and so does a page that counts nothing
// past itself (no CountAll), even for a word.
func TestBoundedPageCuts(t *testing.T) {
	root := t.TempDir()
	for f := range 12 {
		var b strings.Builder
		for i := range 4200 {
			fmt.Fprintf(&b, "wx%02d%05d error\n", f, i)
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("f%02d.log", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := testIndex(t, 64<<10, root)
	for _, c := range []struct {
		q        string
		countAll bool
	}{
		{"wx*", true},    // more than maxExpand terms a segment: scanned
		{"error", false}, // counted from the index, but not asked to be
	} {
		q, err := Compile([]string{c.q}, lang.ModeQuery, false)
		if err != nil {
			t.Fatal(err)
		}
		full, err := s.Search(context.Background(), q, Options{}, nil)
		if err != nil || full.Total != 12*4200 || full.Planned < 6 {
			t.Fatalf("%s: %v, %d hits, %d segments planned", c.q, err, full.Total, full.Planned)
		}
		hits := 0
		st, err := s.Search(context.Background(), q, Options{Limit: 5, CountAll: c.countAll, TotalBudget: 16 << 10, Text: true}, func(*Hit) error { hits++; return nil })
		if err != nil || hits != 5 || !st.Truncated {
			t.Fatalf("%s: %v, %d hits, more pages %t", c.q, err, hits, st.Truncated)
		}
		if st.Planned*2 > full.Planned { // (a page that scans reads ahead in parallel: a few segments)
			t.Errorf("%s (CountAll %t): the page planned %d segments of %d", c.q, c.countAll, st.Planned, full.Planned)
		}
	}
}

// TestBudgetChargesBytesRead: a scan past the page is charged the bytes
// it reads, not its buffer's size (eight small files used to spend a
// 1 MiB budget on 2 KiB of lines each, and the total came out a lower
// bound that varied run to run).
func TestBudgetChargesBytesRead(t *testing.T) {
	root := t.TempDir()
	for f := range 8 {
		var b strings.Builder
		for i := range 50 {
			fmt.Fprintf(&b, "Nov 29 10:00:00 host app[1]: event seq%c%d payload\n", 'a'+f, i)
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("%c.log", 'a'+f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := testIndex(t, 1<<10, root)
	q, err := Compile([]string{"seq"}, lang.ModeLiteral, false) // a part of words: scanned
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		st, err := s.Search(context.Background(), q, Options{Limit: 1, CountAll: true, TotalBudget: 1 << 20}, func(*Hit) error { return nil })
		if err != nil || st.Total != 400 || st.TotalAtLeast {
			t.Fatalf("%v: total %d (a lower bound: %t), want 400 exact within 1 MiB", err, st.Total, st.TotalAtLeast)
		}
	}
}

// TestWordCountPastPage: past a full page, a word's hits are counted from
// its lists (planSet.countTerm), not planned, over files that share
// segments and spread over several: the total is exact all the same, and
// so it is where a segment holds a line too long to index (whose words
// only a read finds: that segment is planned).
func TestWordCountPastPage(t *testing.T) {
	root := t.TempDir()
	var want int64
	for f := range 6 {
		var b strings.Builder
		for i := range 3000 + 700*f {
			switch {
			case i%3 == 0:
				fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ worker %d: retry %d\n", i%60, f, i)
				want++
			case f == 4 && i == 1000:
				// A line over the indexer's longest: not indexed.
				fmt.Fprintf(&b, "retry %s\n", strings.Repeat("x", 1<<20+10))
				want++
			default:
				fmt.Fprintf(&b, "2026-11-30T12:00:%02dZ worker %d: idle %d\n", i%60, f, i)
			}
		}
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("app%d.log", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := testIndex(t, 96<<10, root)
	q, err := Compile([]string{"retry"}, lang.ModeQuery, false)
	if err != nil {
		t.Fatal(err)
	}
	full, err := s.Search(t.Context(), q, Options{}, nil)
	if err != nil || full.Total != want {
		t.Fatalf("every hit: %v, total %d, want %d", err, full.Total, want)
	}
	for _, limit := range []int{1, 7, 500, 4000} {
		hits := 0
		st, err := s.Search(t.Context(), q, Options{Limit: limit, CountAll: true, TotalBudget: 1}, func(*Hit) error { hits++; return nil })
		if err != nil || st.Total != want || st.TotalAtLeast || hits != limit {
			t.Errorf("limit %d: %v, total %d (at least %t), %d hits; want %d", limit, err, st.Total, st.TotalAtLeast, hits, want)
		}
		if limit == 1 && st.Planned >= full.Planned {
			t.Errorf("limit 1: planned %d segments of %d: the count past the page made plans", st.Planned, full.Planned)
		}
	}
}
