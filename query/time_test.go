package query

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logtime"
	"github.com/logdex/logdex/query/lang"
)

// refTimes gives every reference line its time as the index defines it:
// parsed with logtime per file, a line without a timestamp takes the
// previous line's, lines before a file's first timestamp take that one's;
// a file without any has none.
func refTimes(t *testing.T, lines []refLine) (times []int64, timed []bool) {
	t.Helper()
	times, timed = make([]int64, len(lines)), make([]bool, len(lines))
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && lines[j].path == lines[i].path {
			j++
		}
		fi, err := os.Stat(lines[i].path)
		must(t, err)
		p := logtime.NewParser(logtime.Options{ModTime: fi.ModTime()})
		ok := make([]bool, j-i)
		for k := i; k < j; k++ {
			times[k], ok[k-i] = p.Parse(lines[k].text)
		}
		if logtime.Fill(times[i:j], ok) {
			for k := i; k < j; k++ {
				timed[k] = true
			}
		}
		i = j
	}
	return times, timed
}

// TestTimeRanges: searches restricted to random time ranges give exactly
// the lines a reference that times every line selects; histograms of the
// same searches add up to their totals; the time orders deliver the same
// lines sorted, and page through them with cursors exactly once.
func TestTimeRanges(t *testing.T) {
	_, lines, s := propertyCorpus(t, 256<<10) // several parts per big file: cuts must keep times
	times, timed := refTimes(t, lines)
	lo, hi, ok := s.Index().TimeRange()
	if !ok {
		t.Fatal("no timed lines in the corpora")
	}
	// Both kinds of timed spans are met: groups in time order (found by
	// binary search) and not (filtered group by group).
	var sorted, unsorted int
	for _, seg := range s.segs {
		for _, sp := range seg.Spans() {
			switch {
			case sp.TimeSorted:
				sorted++
			case sp.Timed && sp.NumLines > mmapstore.GroupSize:
				unsorted++
			}
		}
	}
	if sorted == 0 || unsorted == 0 {
		t.Fatalf("timed spans: %d in time order, %d not; want both", sorted, unsorted)
	}
	seed := testSeed()
	g := &queryGen{r: rand.New(rand.NewPCG(seed, 23)), lines: lines}
	n := cases(200, 30)
	for i := range n {
		// Ranges bounded by lines' own times (so that a bound falls on a
		// line, the edge of a group or a span), or open at one end.
		a, b := times[g.r.IntN(len(times))], times[g.r.IntN(len(times))]
		if a > b {
			a, b = b, a
		}
		tr := &TimeRange{From: a, To: b, ExcludeUntimed: g.r.IntN(2) == 0}
		switch i % 7 {
		case 0:
			tr.From = math.MinInt64
		case 1:
			tr.To = math.MaxInt64
		case 2:
			tr.To = a + g.r.Int64N(int64(time.Hour))
		}
		var node lang.Node = g.atom()
		switch {
		case i%5 == 0:
			node = &lang.All{}
		case i%6 == 1:
			// Negations and unions: a time range narrows words' lists
			// before the tree is evaluated.
			node = g.tree(2)
		}
		q, err := CompileNode(node, lang.ModeQuery)
		must(t, err)
		var want []gotLine
		var wantTimes []int64
		var wantTimed []bool
		for li := range lines {
			l := &lines[li]
			// The reference's own reading of [From, To), not TimeRange's.
			in := !timed[li] && !tr.ExcludeUntimed || timed[li] && tr.From <= times[li] && times[li] < tr.To
			if in && refEval(node, l) {
				want = append(want, gotLine{l.path, l.no, string(l.text)})
				wantTimes = append(wantTimes, times[li])
				wantTimed = append(wantTimed, timed[li])
			}
		}
		var got []gotLine
		st, err := s.Search(context.Background(), q, Options{Text: true, Time: tr, Times: true}, func(h *Hit) error {
			got = append(got, gotLine{h.File.Path, h.Line, string(h.Text)})
			if k := len(got) - 1; k < len(wantTimes) && h.Timed && h.Time != wantTimes[k] {
				t.Fatalf("seed %d: %s:%d has time %d, want %d", seed, h.File.Path, h.Line, h.Time, wantTimes[k])
			}
			return nil
		})
		must(t, err)
		if err := diffLines(got, want); err != nil {
			t.Fatalf("seed %d query %d %v in [%d, %d) untimed excluded %v: %v", seed, i, node, tr.From, tr.To, tr.ExcludeUntimed, err)
		}
		// Counting alone (no line read: edge groups timed, the others
		// counted whole) gives the same total.
		cst, err := s.Search(context.Background(), q, Options{Time: tr}, nil)
		must(t, err)
		if cst.Total != int64(len(want)) {
			t.Fatalf("seed %d query %d %v: counted %d, want %d", seed, i, node, cst.Total, len(want))
		}
		// The histogram of the same search counts each line in its
		// bucket (some ranges cut off: lines before and after it).
		from, to := max(tr.From, lo), min(tr.To, hi+1)
		if i%3 == 0 && to-from > 2 {
			from, to = from+g.r.Int64N((to-from)/2), to-g.r.Int64N((to-from)/2)
		}
		if from < to {
			h := NewHistogram(from, to, 1+g.r.IntN(120))
			ref := &Histogram{Start: h.Start, Step: h.Step, Counts: make([]int64, len(h.Counts))}
			for k, ts := range wantTimes {
				ref.add(ts, wantTimed[k], 1)
			}
			hst, err := s.Search(context.Background(), q, Options{Time: tr, Histogram: h}, nil)
			must(t, err)
			if !slices.Equal(h.Counts, ref.Counts) || h.Before != ref.Before || h.After != ref.After || h.Untimed != ref.Untimed || hst.Total != st.Total {
				t.Fatalf("seed %d query %d %v: histogram %v (before %d, after %d, untimed %d, total %d), want %v (%d, %d, %d, %d)", seed, i, node,
					h.Counts, h.Before, h.After, h.Untimed, hst.Total, ref.Counts, ref.Before, ref.After, ref.Untimed, st.Total)
			}
		}
		if len(want) <= 3000 || i%5 == 0 {
			checkTimeOrder(t, s, q, tr, want, g.r)
		}
	}
}

// checkTimeOrder: oldest first and newest first deliver the lines of the
// path order, sorted by time, and pages of a random size with cursors give
// each exactly once.
func checkTimeOrder(t *testing.T, s *Searcher, q *Query, tr *TimeRange, want []gotLine, r *rand.Rand) {
	t.Helper()
	defer func() { s.slabShare, s.slabCapMin = 0, 0 }()
	for _, o := range []Order{OrderOldest, OrderNewest} {
		var all []timedHit
		var got []gotLine
		_, err := s.Search(context.Background(), q, Options{Text: true, Time: tr, Order: o}, func(h *Hit) error {
			all = append(all, timedHit{f: h.File, line: h.Line, t: h.Time, timed: h.Timed})
			got = append(got, gotLine{h.File.Path, h.Line, string(h.Text)})
			return nil
		})
		must(t, err)
		for i := 1; i < len(all); i++ {
			if o.before(&all[i], &all[i-1]) {
				t.Fatalf("%v order %v: hit %d out of order", q, o, i)
			}
		}
		sorted := slices.Clone(got)
		slices.SortFunc(sorted, func(a, b gotLine) int {
			if c := cmpStr(a.path, b.path); c != 0 {
				return c
			}
			return int(a.no - b.no)
		})
		if err := diffLines(sorted, want); err != nil {
			t.Fatalf("%v order %v: not the lines of the path order: %v", q, o, err)
		}
		limit := 1 + r.IntN(40)
		if len(all) > 2000 {
			limit = len(all)/20 + 1 // a few pages of a big answer
		}
		// Pages are searched in slabs of time: thin ones, narrowed past a
		// few hits, half the time.
		s.slabShare, s.slabCapMin = 0, 0
		if r.IntN(2) == 0 {
			s.slabShare, s.slabCapMin = 1+r.IntN(1<<16), r.IntN(8)
		}
		budget := [...]int64{0, 0, 1, 4 << 10}[r.IntN(4)]
		var after *Cursor
		var paged []timedHit
		for {
			var page []timedHit
			st, err := s.Search(context.Background(), q, Options{Time: tr, Order: o, Limit: limit, After: after, CountAll: true, TotalBudget: budget}, func(h *Hit) error {
				page = append(page, timedHit{f: h.File, line: h.Line, t: h.Time, timed: h.Timed})
				return nil
			})
			must(t, err)
			// The total counts the hits after the cursor: exact, or a
			// lower bound past the page's own hits under a budget.
			left := int64(len(all) - len(paged))
			if st.Total != left && (!st.TotalAtLeast || st.Total > left || st.Total < int64(len(page))) || st.TotalAtLeast && budget == 0 {
				t.Fatalf("%v order %v: page %d by %d (slabs 1/%d, cap %d, budget %d): total %d (at least %t), want %d", q, o, len(paged)/limit, limit, s.slabShare, s.slabCapMin, budget, st.Total, st.TotalAtLeast, left)
			}
			if st.Truncated != (left > int64(len(page))) {
				t.Fatalf("%v order %v: page %d by %d: more %t with %d hits left after %d", q, o, len(paged)/limit, limit, st.Truncated, left, len(page))
			}
			paged = append(paged, page...)
			if !st.Truncated {
				break
			}
			l := page[len(page)-1]
			after = &Cursor{Path: l.f.Path, Line: l.line, Time: l.t, Timed: l.timed}
		}
		if len(paged) != len(all) {
			t.Fatalf("%v order %v: paging by %d (slabs 1/%d, cap %d) gave %d hits, want %d", q, o, limit, s.slabShare, s.slabCapMin, len(paged), len(all))
		}
		for i := range paged {
			if paged[i].f != all[i].f || paged[i].line != all[i].line {
				t.Fatalf("%v order %v: paging by %d (slabs 1/%d, cap %d): hit %d differs", q, o, limit, s.slabShare, s.slabCapMin, i)
			}
		}
	}
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestTimesOfAppendedLines: lines appended after indexing are timed from
// their text (a line without a timestamp carries the last indexed time),
// and filtered like indexed ones.
func TestTimesOfAppendedLines(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "app.log")
	must(t, os.WriteFile(p, []byte("2026-11-29T10:00:00Z INFO start\n2026-11-29T10:05:00Z WARN slow\n"), 0o644))
	s := testIndex(t, 1<<20, root)
	appendFile(t, p, "  continuation of slow\n2026-11-29T11:00:00Z WARN later\n")
	q, err := Compile([]string{"slow OR later"}, lang.ModeQuery, true)
	must(t, err)
	at := func(v string) int64 { tm, _ := time.Parse(time.RFC3339, v); return tm.UnixNano() }
	for _, c := range []struct {
		from, to string
		want     []int64
	}{
		{"2026-11-29T10:00:00Z", "2026-11-29T10:30:00Z", []int64{2, 3}},
		{"2026-11-29T10:30:00Z", "2026-11-29T12:00:00Z", []int64{4}},
	} {
		var got []int64
		_, err := s.Search(context.Background(), q, Options{Time: &TimeRange{From: at(c.from), To: at(c.to)}, Times: true}, func(h *Hit) error {
			got = append(got, h.Line)
			if !h.Timed {
				t.Errorf("line %d untimed", h.Line)
			}
			return nil
		})
		must(t, err)
		if !slices.Equal(got, c.want) {
			t.Fatalf("[%s, %s): lines %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

// TestOnlyLines: Options.Only keeps exactly the asked line ranges, through
// the index (words, scans) and in appended bytes.
func TestOnlyLines(t *testing.T) {
	_, lines, s := propertyCorpus(t, 256<<10)
	r := rand.New(rand.NewPCG(uint64(testSeed()), 31))
	for range cases(60, 10) {
		only := map[uint64]LineRange{}
		keep := map[string]LineRange{}
		for _, f := range s.Files() {
			if r.IntN(3) == 0 {
				continue
			}
			n := f.Record().Lines + 1
			a := 1 + r.Int64N(n)
			b := a + r.Int64N(n-a+1)
			only[f.ID], keep[f.Path] = LineRange{a, b}, LineRange{a, b}
		}
		node := (&queryGen{r: r, lines: lines}).atom()
		if r.IntN(3) == 0 {
			node = &lang.All{}
		}
		q, err := CompileNode(node, lang.ModeQuery)
		must(t, err)
		got, _ := search(t, s, q, Options{Only: only})
		var want []gotLine
		for li := range lines {
			l := &lines[li]
			if k, ok := keep[l.path]; ok && l.no >= k.From && l.no < k.To && refEval(node, l) {
				want = append(want, gotLine{l.path, l.no, string(l.text)})
			}
		}
		if err := diffLines(got, want); err != nil {
			t.Fatalf("%v: %v", node, err)
		}
	}
}

// TestWindowCounts: counting a word in a time window over long spans in
// time order (the groups wholly inside counted by rank, the edge groups
// line by line, words' lists decoded inside the window only) gives what
// the generated lines hold, for words on few, many and nearly all lines,
// windows bounded on, between and beside lines' times, and equal times
// across group edges.
func TestWindowCounts(t *testing.T) {
	root := t.TempDir()
	r := rand.New(rand.NewPCG(testSeed(), 31))
	words := []string{"rare", "some", "most", "burst", "mixed"}
	// Percent of lines; burst: runs of 1500 lines; mixed: most of the
	// first 2^16 lines, few after (a roaring list with an array container).
	share := []int{2, 30, 95, 0, 0}
	type line struct {
		t   int64
		has [5]bool
	}
	var lines []line
	base := time.Date(2026, 10, 10, 0, 0, 0, 0, time.UTC)
	for f := range 2 {
		var b []byte
		ts := base.UnixNano()
		for i := range 40000 {
			ts += int64(r.IntN(3)) * int64(time.Second) // equal times are common
			l := line{t: ts}
			text := time.Unix(0, ts).UTC().Format(time.RFC3339) + " event"
			for k, w := range words {
				mixed := w == "mixed" && r.IntN(100) < map[bool]int{true: 90, false: 3}[len(lines) < 1<<16]
				if l.has[k] = r.IntN(100) < share[k] || w == "burst" && i/1500%3 == 0 || mixed; l.has[k] {
					text += " " + w
				}
			}
			b = append(b, text+"\n"...)
			lines = append(lines, l)
		}
		must(t, os.WriteFile(filepath.Join(root, fmt.Sprintf("f%d.log", f)), b, 0o644))
	}
	// One segment of both files: more than one roaring container (2^16
	// lines) per list, bitmap containers (most) and runs (burst).
	s := testIndex(t, 8<<20, root)
	sorted := 0
	for _, seg := range s.segs {
		for _, sp := range seg.Spans() {
			if sp.TimeSorted && sp.NumLines > 8*mmapstore.GroupSize {
				sorted++
			}
		}
	}
	if sorted == 0 {
		t.Fatal("no long span in time order")
	}
	for i := range cases(400, 60) {
		a := lines[r.IntN(len(lines))].t
		b := a + r.Int64N(int64(40*time.Minute))
		if i%5 == 3 {
			b = a + r.Int64N(int64(12*time.Hour)) // across containers and files
		}
		switch i % 4 {
		case 1:
			a++ // just after a line's time
		case 2:
			b = lines[r.IntN(len(lines))].t // on a line's time (maybe before a)
		}
		k := r.IntN(len(words))
		want := int64(0)
		for _, l := range lines {
			if l.has[k] && a <= l.t && l.t < b {
				want++
			}
		}
		q, err := Compile([]string{words[k]}, lang.ModeQuery, true)
		must(t, err)
		st, err := s.Search(context.Background(), q, Options{Time: &TimeRange{From: a, To: b}}, nil)
		must(t, err)
		if st.Total != want {
			t.Fatalf("%q in [%d, %d): counted %d, want %d", words[k], a, b, st.Total, want)
		}
	}
}

// TestSearchFrom: searching outward from any guess finds what sort.Search
// finds, for every answer position, including none true and all true.
func TestSearchFrom(t *testing.T) {
	for n := range 40 {
		for ans := 0; ans <= n; ans++ {
			for guess := -2; guess <= n+2; guess++ {
				probes := 0
				got := searchFrom(n, guess, func(k int) bool {
					if k < 0 || k >= n {
						t.Fatalf("n %d: probe %d out of range", n, k)
					}
					probes++
					return k >= ans
				})
				if got != ans {
					t.Fatalf("n %d guess %d: got %d, want %d", n, guess, got, ans)
				}
				if guess == ans && n > 0 && ans < n && probes > 2 {
					t.Fatalf("n %d: a guess on the answer took %d probes", n, probes)
				}
			}
		}
	}
}

// TestNewHistogramBounds: at most n buckets on a round step (n+1 once
// aligned), covering [from, to), whatever the range: a minute, centuries
// (whole years past n of them), the ends of the int64 of nanoseconds.
func TestNewHistogramBounds(t *testing.T) {
	ns := func(y int) int64 { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano() }
	for _, c := range []struct {
		from, to int64
		n        int
	}{
		{ns(2026), ns(2026) + int64(time.Minute), 60},
		{ns(2000), ns(2026), 10},
		{ns(1700), ns(2026), 60},
		{ns(2200), math.MaxInt64, 60},
		{math.MinInt64, math.MaxInt64, 60},
		{math.MinInt64, math.MaxInt64, 1},
		{ns(2026), ns(2026) + 1, 1000},
	} {
		h := NewHistogram(c.from, c.to, c.n)
		k := len(h.Counts)
		end := uint64(h.Start) + uint64(k)*uint64(h.Step) // (unsigned: may pass MaxInt64)
		maxStep := maxStepYears * 365 * 24 * int64(time.Hour)
		if h.Step <= 0 || k < 1 || k > c.n+1 && h.Step != maxStep || h.Start > c.from && h.Start-c.from > h.Step {
			t.Errorf("NewHistogram(%d, %d, %d): start %d step %d, %d buckets", c.from, c.to, c.n, h.Start, h.Step, k)
		}
		if c.to > math.MinInt64+h.Step && int64(end-uint64(h.Step)) >= c.to && end-uint64(h.Step) > uint64(h.Start) {
			t.Errorf("NewHistogram(%d, %d, %d): a whole bucket past to", c.from, c.to, c.n)
		}
	}
}

// TestTimesBeforeFirstTimestampRead: lines before a file's first timestamp
// take that one's time whether the index times them or the search reads
// them from a file replaced since (same bytes, another inode): a range
// after that first time leaves them out both ways, one holding it keeps
// them.
func TestTimesBeforeFirstTimestampRead(t *testing.T) {
	// A banner of two short lines, and one past the search's first read
	// and the look-ahead's (4 lines of 100 KB: few enough lines that the
	// timestamp parser still tries each).
	for _, pad := range []int{0, 4} {
		t.Run(fmt.Sprint(pad), func(t *testing.T) { timesBeforeFirst(t, pad) })
	}
}

func timesBeforeFirst(t *testing.T, pad int) {
	root := t.TempDir()
	content := "banner: service starting\nbanner: build 7\n" +
		strings.Repeat(strings.Repeat("-", 100_000)+"\n", pad) +
		"2026-11-30T10:00:00Z INFO started\n" +
		"2026-11-30T10:05:00Z INFO banner seen\n"
	path := filepath.Join(root, "app.log")
	must(t, os.WriteFile(path, []byte(content), 0o644))
	s := testIndex(t, 1<<20, root)
	q, err := Compile([]string{"banner"}, lang.ModeQuery, true)
	must(t, err)
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC).UnixNano()
	ranges := []struct {
		tr   TimeRange
		want int // lines of "banner"
	}{
		{TimeRange{From: t0 + 1, To: math.MaxInt64}, 1},
		{TimeRange{From: t0, To: t0 + 1}, 2},
		{TimeRange{From: math.MinInt64, To: t0, ExcludeUntimed: true}, 0},
	}
	for _, replaced := range []bool{false, true} {
		if replaced {
			must(t, os.WriteFile(path+".new", []byte(content), 0o644))
			must(t, os.Rename(path+".new", path))
		}
		for _, c := range ranges {
			tr := c.tr
			got, st := search(t, s, q, Options{Time: &tr})
			if len(got) != c.want {
				var nos []int64
				for _, g := range got {
					nos = append(nos, g.no)
				}
				t.Errorf("replaced %t, range %+v: lines %v (%d warnings), want %d lines", replaced, tr, nos, len(st.Warnings), c.want)
			}
		}
	}
}

// TestTimesOfAppendedPartRead: a file indexed while it had no timestamp,
// appended to since, read past its indexed part: the appended lines before
// their first timestamp take it, as the next indexing run will give them.
func TestTimesOfAppendedPartRead(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, "app.log")
	must(t, os.WriteFile(path, []byte("hello one\nhello two\n"), 0o644))
	s := testIndex(t, 1<<20, root)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("hello appended\n2026-01-05T00:00:00Z hello january\n2026-06-05T00:00:00Z hello june\n")
	must(t, err)
	must(t, f.Close())
	q, err := Compile([]string{"hello"}, lang.ModeQuery, true)
	must(t, err)
	tr := TimeRange{From: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).UnixNano(), To: math.MaxInt64}
	got, _ := search(t, s, q, Options{Time: &tr})
	// The indexed lines stay untimed (kept); "appended" takes January's
	// time (out of the range).
	var lines []int64
	for _, g := range got {
		lines = append(lines, g.no)
	}
	if !slices.Equal(lines, []int64{1, 2, 5}) {
		t.Fatalf("lines %v, want [1 2 5]", lines)
	}
}
