package query

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/query/lang"
)

func TestEffort(t *testing.T) {
	for _, c := range []struct {
		insts                int
		readBytes, batchSize int
	}{
		{0, maxReadBytes, maxVerifyBatch},
		{cheapInsts, maxReadBytes, maxVerifyBatch},
		{cheapInsts + 1, costlyReadBytes, costlyVerifyBatch},
	} {
		if r, b := effort(c.insts); r != c.readBytes || b != c.batchSize {
			t.Errorf("effort(%d) = %d, %d; want %d, %d", c.insts, r, b, c.readBytes, c.batchSize)
		}
	}
	for _, c := range []struct {
		n    int
		took time.Duration
		want int
	}{
		{4096, 2 * lookEvery, 2048},
		{256, 2 * lookEvery, 256},
		{4096, lookEvery / 2, 4096},
		{4096, lookEvery / 10, 8192},
		{maxReadBytes, time.Microsecond, maxReadBytes},
	} {
		if got := pace(c.n, minReadBytes, maxReadBytes, c.took); got != c.want {
			t.Errorf("pace(%d) after %v = %d, want %d", c.n, c.took, got, c.want)
		}
	}
	for _, c := range []struct {
		pat    string
		costly bool
	}{
		{`error`, false},
		{`[a-z]{1,30}[0-9]{1,30}`, false},
		{`(.{1,1000}){1,30}Q`, true},
	} {
		q, err := CompileGrep([]string{c.pat}, lang.ModeRegex, false, GrepFlags{})
		if err != nil {
			t.Fatal(err)
		}
		if costly := q.readBytes < maxReadBytes && q.verifyBatch < maxVerifyBatch; costly != c.costly {
			t.Errorf("%s: read %d bytes, verify %d lines between looks at the context", c.pat, q.readBytes, q.verifyBatch)
		}
	}
}

// TestDeadlineStopsCostlyRegex: a regex of nested counts, whose program
// matches a few KB a second, stops soon after the search's deadline,
// whether it scans the lines (no literal to narrow by) or verifies the
// index's candidates. Uncancelled, the scan takes about 13 s here, and
// looking at the context once per 256 KiB it read let it run some 5 s
// past a 200 ms deadline.
func TestDeadlineStopsCostlyRegex(t *testing.T) {
	root := t.TempDir()
	// Lines of varied lengths and words: the regex's automaton finds few
	// states to reuse (3,000 lines of one length took 0.4 s).
	var b strings.Builder
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"error", "user", "id", "conn", "timeout", "GET", "/api/v1/x", "200", "1234", "ms"}
	for i := range 3000 {
		fmt.Fprintf(&b, "2026-11-30T12:00:00Z worker %04d zzmark", i)
		for range 5 + r.IntN(55) {
			b.WriteString(" " + words[r.IntN(len(words))])
		}
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(root, "app.log"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testIndex(t, 4<<20, root)
	for _, pat := range []string{`(.{1,1000}){1,30}[0-9]{5}`, `zzmark(.{1,1000}){1,30}[0-9]{5}`} {
		q, err := CompileGrep([]string{pat}, lang.ModeRegex, false, GrepFlags{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		start := time.Now()
		_, err = s.Search(ctx, q, Options{}, func(*Hit) error { return nil })
		took := time.Since(start)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: %v, want the deadline's error", pat, err)
		}
		// A liveness bound, well above the cost of one read or batch
		// (0.2 s in all here; 3.4 s with -race, whose instrumentation
		// slows the automaton's steps tenfold), below that of 256 KiB.
		t.Logf("%s: stopped %v after its start", pat, took)
		if took > 2*time.Second*raceScale {
			t.Errorf("%s: stopped %v after a 200 ms deadline", pat, took)
		}
	}
}

// TestLongAlternationNarrows: an alternation of 200 request ids, as grep -E
// users write one (and as fits in the API's 4 KiB query), is answered from
// the index's candidates, reading no line it does not match, and exactly
// as the same ids one per pattern are. With 64 literals at most per
// regex, it read every line.
func TestLongAlternationNarrows(t *testing.T) {
	root := t.TempDir()
	r := rand.New(rand.NewPCG(5, 0))
	ids := make([]string, 2000)
	var b strings.Builder
	for i := range ids {
		ids[i] = fmt.Sprintf("%016x", r.Uint64())
		fmt.Fprintf(&b, "2026-11-30T12:00:00Z request_id=%s status=200 took=%dms\n", ids[i], r.IntN(900))
	}
	if err := os.WriteFile(filepath.Join(root, "app.log"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	s := testIndex(t, 64<<10, root)
	// 195 ids not in the log, and 5 that are.
	var pats []string
	for range 195 {
		pats = append(pats, fmt.Sprintf("%016x", r.Uint64()))
	}
	pats = append(pats, ids[7], ids[400], ids[1201], ids[1500], ids[1999])
	alt, err := CompileGrep([]string{strings.Join(pats, "|")}, lang.ModeRegex, false, GrepFlags{})
	if err != nil {
		t.Fatal(err)
	}
	each, err := CompileGrep(pats, lang.ModeRegex, false, GrepFlags{})
	if err != nil {
		t.Fatal(err)
	}
	got, st := search(t, s, alt, Options{})
	want, _ := search(t, s, each, Options{})
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) != 5 {
		t.Fatalf("alternation: %d lines, want the 5 of its ids one per pattern (%d)", len(got), len(want))
	}
	if st.Scanned != 0 || st.Candidates > 5 {
		t.Fatalf("alternation: %d bytes scanned, %d candidates; want none scanned, its 5 lines", st.Scanned, st.Candidates)
	}
}
