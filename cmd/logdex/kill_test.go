package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/logdex/logdex/mmapstore"
)

// Crash safety of the binary: `logdex serve` (indexing live and merging
// several times a second) and `logdex index` are killed with SIGKILL, half
// of the times while a merge's segments are written and not yet published
// (LOGDEX_DEBUG_MERGE_PAUSE holds the process there and says so on
// stderr), the other half at random moments, while lines are appended
// (partial lines included) and logs are rotated by rename. After each kill
// the index left behind is sound (`logdex check`); after the last restart
// the index holds every complete line exactly once and nothing else,
// searches answer as grep does, and no stray file is left in the index
// directory.

// mergePauseLine is what a paused merge logs (see mergePause).
const mergePauseLine = "pausing before publishing"

// numberedLine is line seq of writer f; kFNNNNNNN is its unique token.
func numberedLine(f, seq int, r *rand.Rand) []byte {
	return fmt.Appendf(nil, "2026-11-30T10:%02d:%02dZ INFO killtest k%d%07d writer %d line %d %s\n",
		seq/60%60, seq%60, f, seq, f, seq, strings.Repeat("x", r.IntN(40)))
}

// killWriters append numbered lines to logs/wF.log in batches, each
// written in two pieces split at a random byte (so that a partial line
// often exists), and rotate the even-numbered files by rename to wF.log.N.
type killWriters struct {
	logs string
	stop chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
}

func startKillWriters(t *testing.T, logs string, files int, seed uint64, rotateEvery time.Duration) *killWriters {
	must(t, os.MkdirAll(logs, 0o755))
	kw := &killWriters{logs: logs, stop: make(chan struct{})}
	for f := range files {
		kw.wg.Add(1)
		go kw.write(f, rand.New(rand.NewPCG(seed, uint64(f))), rotateEvery)
	}
	return kw
}

func (kw *killWriters) write(f int, r *rand.Rand, rotateEvery time.Duration) {
	defer kw.wg.Done()
	name := filepath.Join(kw.logs, fmt.Sprintf("w%d.log", f))
	rotated, lastRotation := 0, time.Now()
	for seq := 0; ; {
		select {
		case <-kw.stop:
			return
		default:
		}
		if f%2 == 0 && time.Since(lastRotation) > rotateEvery {
			rotated++
			kw.fail(os.Rename(name, fmt.Sprintf("%s.%d", name, rotated)))
			lastRotation = time.Now()
		}
		var b bytes.Buffer
		for range 10 {
			b.Write(numberedLine(f, seq, r))
			seq++
		}
		fh, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if kw.fail(err) {
			return
		}
		cut := 1 + r.IntN(b.Len()-1)
		_, err = fh.Write(b.Bytes()[:cut])
		kw.fail(err)
		time.Sleep(time.Duration(r.IntN(3)) * time.Millisecond)
		_, err = fh.Write(b.Bytes()[cut:])
		kw.fail(err)
		fh.Close()
		time.Sleep(time.Duration(2+r.IntN(6)) * time.Millisecond)
	}
}

func (kw *killWriters) fail(err error) bool {
	if err != nil {
		kw.mu.Lock()
		kw.err = err
		kw.mu.Unlock()
	}
	return err != nil
}

func (kw *killWriters) finish(t *testing.T) {
	close(kw.stop)
	kw.wg.Wait()
	if kw.err != nil {
		t.Fatal(kw.err)
	}
}

// treeLines counts the lines of every file in logs.
func treeLines(t *testing.T, logs string) int64 {
	var n int64
	ents, err := os.ReadDir(logs)
	must(t, err)
	for _, e := range ents {
		n += int64(lineCount(t, filepath.Join(logs, e.Name())))
	}
	return n
}

// checkIndex runs `logdex check` and returns the lines it says the index
// holds; it fails the test unless the index is sound.
func checkIndex(t *testing.T, idx, when string) int64 {
	t.Helper()
	// In-process: it checks the index, not a process (a race-detecting
	// one takes ~0.1 s to start here).
	var b bytes.Buffer
	if code := run([]string{"check", "--index", idx}, nil, &b, &b); code != 0 {
		t.Fatalf("%s: logdex check: exit %d\n%s", when, code, b.Bytes())
	}
	out := b.Bytes()
	m := regexp.MustCompile(`(\d+) lines`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("%s: logdex check says %s", when, out)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// noStrays fails unless the index directory holds only the manifest, the
// segments it lists and the lock: no temporary file, no orphan segment.
func noStrays(t *testing.T, idx string) {
	t.Helper()
	m, err := mmapstore.ReadManifest(idx)
	must(t, err)
	listed := map[string]bool{mmapstore.ManifestName: true, "LOCK": true, "MERGE.LOCK": true}
	for _, s := range m.Segments {
		listed[s.Name] = true
	}
	ents, err := os.ReadDir(idx)
	must(t, err)
	for _, e := range ents {
		if !listed[e.Name()] {
			t.Errorf("stray file in the index directory: %s", e.Name())
		}
	}
}

// sameAsGrep compares a search of every line, from the index as it is,
// with grep's.
func sameAsGrep(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command(logdexBin(t), "search", "--no-update", "--index", "idx", "-F", "killtest", "logs")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	must(t, cmd.Start())
	want, _ := grep(t, dir, "-rn", "-F", "killtest", "logs") // meanwhile
	if err := cmd.Wait(); err != nil {
		t.Fatalf("logdex search: %v", err)
	}
	if got := sortGrep(out.String()); got != want {
		t.Fatalf("search differs from grep: %s", firstDiff(got, want))
	}
}

func killRounds(def, long int) int {
	if os.Getenv("LOGDEX_LONG") != "" {
		return long
	}
	return def
}

func testSeed() uint64 {
	seed := uint64(1)
	if v := os.Getenv("LOGDEX_SEED"); v != "" {
		fmt.Sscan(v, &seed)
	}
	return seed
}

// killAt kills pid with SIGKILL once a paused merge shows in its stderr
// (then within the pause), or else at a random moment, and waits for it
// to end (done, which it refills). It tells where the kill landed; a
// process that ended first is "exited".
func killAt(t *testing.T, r *rand.Rand, pid int, stderr func() string, done chan error, midMerge bool, from, to time.Duration) string {
	t.Helper()
	var random <-chan time.Time
	if !midMerge {
		random = time.After(from + time.Duration(r.Int64N(int64(to-from))))
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(60 * time.Second) // (a loaded machine's first merge took 9-16 s)
	kill := func(kind string) string {
		syscall.Kill(pid, syscall.SIGKILL)
		err := <-done
		done <- err
		if !strings.Contains(fmt.Sprint(err), "killed") {
			return "exited"
		}
		return kind
	}
	for {
		select {
		case err := <-done:
			done <- err
			return "exited"
		case <-deadline:
			t.Fatalf("no merge in 60 s:\n%s", stderr())
		case <-random:
			return kill("random")
		case <-tick.C:
			if midMerge && strings.Contains(stderr(), mergePauseLine) {
				time.Sleep(time.Duration(r.IntN(100)) * time.Millisecond) // the pause is 300 ms
				return kill("mid-merge")
			}
		}
	}
}

// TestServeSIGKILL kills `logdex serve` repeatedly while it indexes live
// and merges, then checks that no line was lost or doubled.
func TestServeSIGKILL(t *testing.T) {
	bin := logdexBin(t)
	dir := t.TempDir()
	logs, idx := filepath.Join(dir, "logs"), filepath.Join(dir, "idx")
	r := rand.New(rand.NewPCG(testSeed(), 17))
	kw := startKillWriters(t, logs, 4, testSeed(), 2*time.Second)
	args := []string{bin, "serve", "--addr", "127.0.0.1:0", "--index", idx, "--live-delay", "20ms", "--reindex", "500ms", "--warmup", "off", "-q", logs}
	kinds := map[string]int{}
	rounds := killRounds(6, 40)
	for round := range rounds {
		midMerge := round%2 == 0
		var env []string
		if midMerge {
			// (A merge factor of 2, to merge sooner, made the first merge
			// pick every small segment at once: none came in 20 s on a
			// loaded machine.)
			env = []string{"LOGDEX_DEBUG_MERGE_PAUSE=300ms"}
		}
		s := startServe(t, env, args...)
		kind := killAt(t, r, s.pid, s.stderr.String, s.done, midMerge, 50*time.Millisecond, 650*time.Millisecond)
		if kind == "exited" {
			t.Fatalf("round %d: the server exited before the kill:\n%s", round, s.stderr)
		}
		kinds[kind]++
		checkIndex(t, idx, fmt.Sprintf("round %d (%s)", round, kind))
	}
	kw.finish(t)
	total := treeLines(t, logs)

	// The last restart catches up with every line, once.
	s := startServe(t, nil, args...)
	var st struct {
		Index   struct{ Lines int64 }
		Reindex struct{ Running bool }
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		_, b := fetch(t, s.url+"/api/status")
		must(t, json.Unmarshal(b, &st))
		if st.Index.Lines == total && !st.Reindex.Running {
			break
		}
		if time.Now().After(deadline) || st.Index.Lines > total {
			t.Fatalf("the index holds %d lines, the logs %d:\n%s", st.Index.Lines, total, s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Single lines by their unique token.
	for range 30 {
		token := fmt.Sprintf("k%d%07d", r.IntN(4), r.IntN(1000))
		_, b := fetch(t, s.url+"/api/search?q="+url.QueryEscape(token))
		if !bytes.Contains(b, []byte(`"total":1,`)) {
			t.Fatalf("%s: %s", token, b)
		}
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("exit: %v\n%s", err, s.stderr)
	}
	if n := checkIndex(t, idx, "final"); n != total {
		t.Fatalf("check: %d lines, the logs %d", n, total)
	}
	noStrays(t, idx)
	sameAsGrep(t, dir)
	ents, _ := os.ReadDir(logs)
	t.Logf("%d kills %v; %d lines in %d files", rounds, kinds, total, len(ents))
}

// TestIndexSIGKILL does the same with `logdex index` runs over appended
// lines and rotated files, merging at every run (a merge factor of 2), and
// fails unless kills landed both mid-run and mid-merge: runs are quick, so
// a random kill's moment is drawn within the last run's duration.
func TestIndexSIGKILL(t *testing.T) {
	bin := logdexBin(t)
	dir := t.TempDir()
	logs, idx := filepath.Join(dir, "logs"), filepath.Join(dir, "idx")
	must(t, os.MkdirAll(logs, 0o755))
	r := rand.New(rand.NewPCG(testSeed(), 18))
	seqs := make([]int, 4)
	kinds := map[string]int{}
	rounds := killRounds(8, 40)
	runTime := 300 * time.Millisecond // a run's duration, measured by the runs that end
	for round := range rounds {
		for f := range seqs {
			name := filepath.Join(logs, fmt.Sprintf("w%d.log", f))
			if f == round%4 && round > 0 {
				must(t, os.Rename(name, fmt.Sprintf("%s.%d", name, round)))
			}
			var b bytes.Buffer
			for range 1000 + r.IntN(1000) {
				b.Write(numberedLine(f, seqs[f], r))
				seqs[f]++
			}
			fh, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			must(t, err)
			_, err = fh.Write(b.Bytes())
			fh.Close()
			must(t, err)
		}
		midMerge := round%2 == 1
		cmd := exec.Command(bin, "index", "-q", "--segment-mb", "4", "--index", idx, logs)
		cmd.Env = append(os.Environ(), "LOGDEX_DEBUG_MERGE_FACTOR=2")
		if midMerge {
			cmd.Env = append(cmd.Env, "LOGDEX_DEBUG_MERGE_PAUSE=300ms")
		}
		var stderr syncBuf
		cmd.Stderr = &stderr
		start := time.Now()
		must(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		kind := killAt(t, r, cmd.Process.Pid, stderr.String, done, midMerge, runTime/5, runTime) // (not while the process starts)
		if kind == "exited" {
			if err := <-done; err != nil {
				t.Fatalf("round %d: %v\n%s", round, err, stderr.String())
			}
			runTime = time.Since(start)
		}
		kinds[kind]++
		if _, err := os.Stat(filepath.Join(idx, mmapstore.ManifestName)); err != nil && round == 0 {
			continue // killed before the first index was published
		}
		checkIndex(t, idx, fmt.Sprintf("round %d (%s)", round, kind))
	}
	if kinds["random"] == 0 || kinds["mid-merge"] == 0 {
		t.Fatalf("kills landed %v: no run was killed mid-run and mid-merge", kinds)
	}
	if out, err := exec.Command(bin, "index", "-q", "--index", idx, logs).CombinedOutput(); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	if n, total := checkIndex(t, idx, "final"), treeLines(t, logs); n != total {
		t.Fatalf("check: %d lines, the logs %d", n, total)
	}
	noStrays(t, idx)
	sameAsGrep(t, dir)
	t.Logf("%d runs: %v", rounds, kinds)
}
