package compressed

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
)

// long reports whether the opt-in long run is on.
var long = os.Getenv("LOGDEX_LONG") != ""

// scale picks the default or the long-run value (a quarter of it, but
// no less than the default, under the race detector).
func scale(short, long_ int) int {
	if long {
		return max(long_/raceScale, short)
	}
	return short
}

var (
	hosts = []string{"web-01", "web-02", "db-7", "cache-3", "edge-eu-1"}
	apps  = []string{"nginx", "sshd", "kernel", "app", "cron", "postgres"}
	words = []string{"GET", "POST", "connection", "accepted", "refused", "timeout", "user", "session",
		"opened", "closed", "error", "warning", "retry", "upstream", "request", "completed", "failed"}
)

// genLog makes n bytes (rounded to whole lines) of deterministic log-like text.
func genLog(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 42))
	var b bytes.Buffer
	for id := 0; b.Len() < n; id++ {
		fmt.Fprintf(&b, "2026-11-%02dT%02d:%02d:%02d.%03dZ %s %s[%d]: id=%08d",
			1+id/86400%28, id/3600%24, id/60%60, id%60, r.IntN(1000),
			hosts[r.IntN(len(hosts))], apps[r.IntN(len(apps))], 1000+r.IntN(9000), id)
		for range 3 + r.IntN(8) {
			b.WriteByte(' ')
			b.WriteString(words[r.IntN(len(words))])
		}
		fmt.Fprintf(&b, " status=%d dur=%dms\n", []int{200, 200, 200, 404, 500}[r.IntN(5)], r.IntN(5000))
	}
	return b.Bytes()
}

// tool runs a compression command with data on stdin and returns stdout.
func tool(tb testing.TB, data []byte, name string, args ...string) []byte {
	tb.Helper()
	if _, err := exec.LookPath(name); err != nil {
		tb.Skipf("%s not installed", name)
	}
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(data)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s %v: %v: %s", name, args, err, stderr.Bytes())
	}
	return out.Bytes()
}

// index runs an Indexer over comp to the end.
func index(kind Kind, comp []byte, interval int64) ([]byte, *Table, error) {
	ix := NewIndexer(bytes.NewReader(comp), int64(len(comp)), kind, interval)
	out, err := io.ReadAll(ix)
	if err == nil {
		err = io.EOF // ReadAll swallows it; Read did return it
	}
	return out, ix.Table(), err
}

// errKindOK reports whether err is one of the documented damage errors.
func errKindOK(err error) bool {
	var ce *CorruptError
	return errors.Is(err, ErrTruncated) || errors.As(err, &ce)
}

// checkReads compares random and forward ReadAt calls with want.
func checkReads(t *testing.T, comp []byte, tab *Table, want []byte, seed uint64, n int) {
	t.Helper()
	r := NewReader(bytes.NewReader(comp), int64(len(comp)), tab.Kind, tab)
	if r.Size() != int64(len(want)) {
		t.Fatalf("Size %d, want %d", r.Size(), len(want))
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	buf := make([]byte, 300<<10)
	for i := range n {
		if len(want) == 0 {
			break
		}
		off := rng.Int64N(int64(len(want)))
		ln := rng.IntN(min(len(buf), 1+rng.IntN(4)*20000)) + 1
		if i%5 == 0 {
			ln = len(buf) // past the end sometimes
		}
		got, err := r.ReadAt(buf[:ln], off)
		end := min(int64(len(want)), off+int64(ln))
		if got != int(end-off) || !bytes.Equal(buf[:got], want[off:end]) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v: bytes differ from the original", ln, off, got, err)
		}
		if (end < off+int64(ln)) != (err == io.EOF) || (err != nil && err != io.EOF) {
			t.Fatalf("ReadAt(%d, %d): err %v", ln, off, err)
		}
	}
	// Forward through every line, as a search reads its hits.
	r = NewReader(bytes.NewReader(comp), int64(len(comp)), tab.Kind, tab)
	step := max(1, len(want)/200)
	for off := 0; off < len(want); {
		nl := bytes.IndexByte(want[off:], '\n')
		end := len(want)
		if nl >= 0 {
			end = off + nl + 1
		}
		line := make([]byte, end-off)
		if _, err := r.ReadAt(line, int64(off)); err != nil && !(err == io.EOF && end == len(want)) {
			t.Fatalf("forward ReadAt at %d: %v", off, err)
		}
		if !bytes.Equal(line, want[off:end]) {
			t.Fatalf("forward ReadAt at %d differs", off)
		}
		off = end + rng.IntN(step)
	}
	if r.restarts > tab.Len() {
		t.Errorf("forward reads restarted %d times for %d checkpoints", r.restarts, tab.Len())
	}
	if _, err := r.ReadAt(buf[:1], int64(len(want))); err != io.EOF {
		t.Errorf("ReadAt at Size: %v, want io.EOF", err)
	}
}

// checkReadsLight reads want back whole and from its middle to the end.
func checkReadsLight(t *testing.T, comp []byte, tab *Table, want []byte) {
	t.Helper()
	r := NewReader(bytes.NewReader(comp), int64(len(comp)), tab.Kind, tab)
	got := make([]byte, len(want)+1)
	for _, off := range []int{len(want) / 2, 0} {
		n, err := r.ReadAt(got, int64(off))
		if n != len(want)-off || err != io.EOF || !bytes.Equal(got[:n], want[off:]) {
			t.Fatalf("ReadAt(%d) = %d, %v: want the %d bytes yielded there", off, n, err, len(want)-off)
		}
	}
}
