package indexer_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

// When LOGDEX_CRASH_CHILD is set, the test binary only runs an indexer (to
// be killed by TestCrashSafety).
func TestMain(m *testing.M) {
	if spec := os.Getenv("LOGDEX_CRASH_CHILD"); spec != "" {
		var dir, root string
		fmt.Sscan(spec, &dir, &root)
		_, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, SegmentBytes: 1 << 20, Logger: zerolog.Nop()})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func writeLogs(t *testing.T, dir string, files, lines int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 1))
	words := []string{"GET", "POST", "error", "timeout", "user", "db", "cache", "miss", "ok", "retry"}
	for f := 0; f < files; f++ {
		fh, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("f%02d.log", f)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(fh)
		for i := 0; i < lines; i++ {
			fmt.Fprintf(w, "%d %s %s id=%x n=%d\n", i, words[r.IntN(len(words))], words[r.IntN(len(words))], r.Uint64(), r.IntN(1000))
		}
		w.Flush()
		fh.Close()
	}
}

// TestCrashSafety kills indexers at random moments (SIGKILL) and checks
// that the index left behind always opens and answers, and that a later
// complete run gives every line exactly once.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	root := t.TempDir()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(testSeed(), 3))
	rounds := 5 // every round searches all the logs so far: the cost grows as rounds²
	if os.Getenv("LOGDEX_LONG") != "" {
		rounds = 12
	}
	for round := 0; round < rounds; round++ {
		writeLogs(t, root, 4, 20000, uint64(round)) // ~ 4 MB more each round
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "LOGDEX_CRASH_CHILD="+dir+" "+root)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(r.IntN(400)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		// Whatever state the kill left, the index opens and answers
		// without damage (or does not exist yet).
		if _, err := os.Stat(filepath.Join(dir, mmapstore.ManifestName)); err == nil {
			ix, err := mmapstore.Open(dir)
			if err != nil {
				t.Fatalf("round %d: index does not open after kill: %v", round, err)
			}
			if len(ix.Damaged()) > 0 {
				t.Fatalf("round %d: damaged segments after kill: %v", round, ix.Damaged())
			}
			for _, s := range ix.Segments() {
				if err := s.Verify(); err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
			}
			ix.Close()
			got, _ := searchAll(t, dir, root)
			same(t, fmt.Sprintf("round %d after kill", round), got, fileLines(t, root))
		}
	}
	update(t, dir, root)
	got, _ := searchAll(t, dir, root)
	same(t, "final", got, fileLines(t, root))
	if n, want := indexedLines(t, dir), int64(len(fileLines(t, root))); n != want {
		t.Fatalf("%d lines indexed, want %d", n, want)
	}
}

func testSeed() uint64 {
	seed := uint64(1)
	if v := os.Getenv("LOGDEX_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	return seed
}
