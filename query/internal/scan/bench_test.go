package scan

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/logdex/logdex/fixtures/loghub"
)

const benchSize = 64 << 20

type benchPattern struct {
	name  string
	expr  string
	kind  byte // 'E' regexp, 'F' literal, 'i' literal ignoring ASCII case
	rgArg string
}

var benchPatterns = []benchPattern{
	{"ipv4", `\d+\.\d+\.\d+\.\d+`, 'E', ""},
	{"upper-num", `[A-Z]{4,} [0-9]+`, 'E', ""},
	{"error-timeout", `ERROR.*timeout`, 'E', ""},
	{"long-line", `^.{200,}$`, 'E', ""},
	{"http-api", `(GET|POST) /api/v[0-9]+/[a-z]+`, 'E', ""},
	{"lit-error", `] [error] `, 'F', "-F"},
	{"lit-e", `e`, 'F', "-F"},
	{"lit-packet", `PacketResponder`, 'F', "-F"},
	{"lit-i-packet", `packetresponder`, 'i', "-iF"},
	// Punctuation only (no word for the index to narrow by): every byte
	// is common, and two at a fixed distance are not.
	{"lit-punct", `] [`, 'F', "-F"},
	{"lit-rare-punct", `)] [`, 'F', "-F"},
	{"lit-colon", `:`, 'F', "-F"},
	// Not in the brief's list: alternations of literals, common in log queries.
	{"alt-levels", `ERROR|FATAL|panic`, 'E', ""},
	{"alt-i-words", `(?i)exception|failed`, 'E', ""},
}

func (p benchPattern) matcher(tb testing.TB) Matcher {
	if p.kind == 'E' {
		m, err := NewRegexp(p.expr, false)
		if err != nil {
			tb.Fatal(err)
		}
		return m
	}
	return NewLiteral([]byte(p.expr), p.kind == 'i')
}

var (
	benchOnce sync.Once
	benchBuf  []byte
)

// benchData returns ~64 MiB of log text: benchCorpus repeated, cut at a
// line end.
func benchData() []byte {
	benchOnce.Do(func() {
		corpus := benchCorpus()
		buf := make([]byte, 0, benchSize+len(corpus))
		for len(buf) < benchSize {
			buf = append(buf, corpus...)
		}
		buf = buf[:benchSize]
		benchBuf = buf[:bytes.LastIndexByte(buf, '\n')+1]
	})
	return benchBuf
}

// benchCorpus is the loghub samples (loghubDir) concatenated; synthetic
// lines when the corpus is missing.
func benchCorpus() []byte {
	files, _ := filepath.Glob(filepath.Join(loghub.Dir(), "*.log"))
	sort.Strings(files)
	var corpus []byte
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil {
			corpus = append(corpus, b...)
			if len(corpus) > 0 && corpus[len(corpus)-1] != '\n' {
				corpus = append(corpus, '\n')
			}
		}
	}
	if len(corpus) == 0 {
		corpus = synthLogs()
	}
	return corpus
}

func synthLogs() []byte {
	r := rand.New(rand.NewPCG(7, 8))
	levels := []string{"INFO", "WARN", "ERROR", "DEBUG"}
	msgs := []string{"PacketResponder 1 for block blk_%d terminating", "Received block blk_%d of size 67108864 from /10.251.%d.%d",
		"[client 10.0.%d.%d] [error] Directory index forbidden by rule", "GET /api/v%d/users?id=%d HTTP/1.1 200",
		"connection %d closed: read timeout after %dms", "session opened for user root by (uid=%d) pid %d"}
	var b bytes.Buffer
	for b.Len() < 4<<20 {
		fmt.Fprintf(&b, "2024-03-%02d %02d:%02d:%02d,%03d %s [%s] ", 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(1000),
			levels[r.IntN(len(levels))], strings.Repeat("x", r.IntN(8)))
		fmt.Fprintf(&b, msgs[r.IntN(len(msgs))], r.IntN(1000), r.IntN(1000), r.IntN(256))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func BenchmarkScan(b *testing.B) {
	buf := benchData()
	for _, p := range benchPatterns {
		b.Run(p.name, func(b *testing.B) {
			m := p.matcher(b)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				m.CountLines(buf)
			}
		})
	}
}

// BenchmarkLiteralPair runs the literals with the packed-pair search
// ("pair") and with the rare-byte loop alone ("rarebyte", the baseline) as
// the search does: on 256 KiB blocks in the CPU cache (just read), here
// about 1 MiB sampled from every loghub system. cpu-MB/s comes from the
// process's CPU time, which other load on the machine disturbs far less
// than the wall time.
func BenchmarkLiteralPair(b *testing.B) {
	if !hasPair {
		b.Skip("no vector pair search on this machine")
	}
	corpus := benchCorpus()
	data := sampleLines(corpus, max(1, len(corpus)/(1<<20)))
	count := func(m Matcher) {
		for off := 0; off < len(data); {
			end := min(len(data), off+256<<10)
			if end < len(data) {
				end = off + bytes.LastIndexByte(data[off:end], '\n') + 1
			}
			m.CountLines(data[off:end])
			off = end
		}
	}
	for _, p := range benchPatterns {
		if p.kind == 'E' || len(p.expr) < 2 {
			continue
		}
		for _, pair := range []bool{true, false} {
			name := p.name + "/rarebyte"
			if pair {
				name = p.name + "/pair"
			}
			b.Run(name, func(b *testing.B) {
				defer func(old bool) { usePair = old }(usePair)
				usePair = pair
				m := p.matcher(b)
				b.SetBytes(int64(len(data)))
				cpu0 := processCPU()
				for b.Loop() {
					count(m)
				}
				b.ReportMetric(float64(len(data))*float64(b.N)/(processCPU()-cpu0).Seconds()/1e6, "cpu-MB/s")
			})
		}
	}
}

// BenchmarkGoRegexp is the baseline: Go's regexp on each line.
func BenchmarkGoRegexp(b *testing.B) {
	buf := benchData()
	for _, p := range benchPatterns {
		b.Run(p.name, func(b *testing.B) {
			re := regexp.MustCompile(p.goExpr())
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				goRegexpCount(re, buf)
			}
		})
	}
}

// goExpr is the pattern in Go regexp syntax.
func (p benchPattern) goExpr() string {
	switch p.kind {
	case 'F':
		return regexp.QuoteMeta(p.expr)
	case 'i':
		return "(?i)" + regexp.QuoteMeta(p.expr)
	}
	return p.expr
}

// goRegexpCount counts the lines of buf that re matches, one Match per
// line.
func goRegexpCount(re interface{ Match([]byte) bool }, buf []byte) int {
	n := 0
	for start := 0; start < len(buf); {
		end := lineEnd(buf, start)
		if re.Match(buf[start:end]) {
			n++
		}
		start = end + 1
	}
	return n
}

// TestCompareRipgrep prints MB/s of CountLines, `rg -j1 -c` and Go's regexp
// per line on the benchmark data. It is slow, so it runs only with
// SCAN_COMPARE_RG=1 (go test -run CompareRipgrep -v). Speeds come from CPU
// time (best of several runs: thread CPU time for CountLines, user+system
// time of the rg process), which other load on the machine disturbs far less
// than wall time.
func TestCompareRipgrep(t *testing.T) {
	if os.Getenv("SCAN_COMPARE_RG") == "" {
		t.Skip("set SCAN_COMPARE_RG=1")
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg not found")
	}
	// SCAN_COMPARE_FILE replaces the benchmark data with a file's contents.
	file := os.Getenv("SCAN_COMPARE_FILE")
	var buf []byte
	if file != "" {
		if buf, err = os.ReadFile(file); err != nil {
			t.Fatal(err)
		}
	} else {
		buf = benchData()
		file = filepath.Join(t.TempDir(), "bench.log")
		if err := os.WriteFile(file, buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	threadCPU := func() time.Duration {
		var ts syscall.Timespec
		const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
		if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
			t.Fatal(e)
		}
		return time.Duration(ts.Nano())
	}
	mbs := func(d time.Duration) float64 { return float64(len(buf)) / d.Seconds() / 1e6 }
	best := func(runs int, f func() time.Duration) time.Duration {
		b := time.Duration(1 << 62)
		for range runs {
			b = min(b, f())
		}
		return b
	}
	runs := 10
	if s := os.Getenv("SCAN_COMPARE_RUNS"); s != "" {
		fmt.Sscan(s, &runs)
	}
	t.Logf("%-14s %10s %10s %10s %8s  %s", "pattern", "scan MB/s", "rg MB/s", "goRE MB/s", "scan/rg", "count")
	only := os.Getenv("SCAN_COMPARE_ONLY") // a regexp selecting pattern names
	for _, p := range benchPatterns {
		if ok, _ := regexp.MatchString(only, p.name); !ok {
			continue
		}
		m := p.matcher(t)
		n := m.CountLines(buf)
		ours := best(runs, func() time.Duration {
			t0 := threadCPU()
			m.CountLines(buf)
			return threadCPU() - t0
		})
		args := []string{"-j1", "-c", "--no-config"}
		if p.rgArg != "" {
			args = append(args, p.rgArg)
		}
		args = append(args, "-e", p.expr, file)
		var out []byte
		theirs := best(runs, func() time.Duration {
			cmd := exec.Command(rg, args...)
			out, _ = cmd.Output()
			return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		})
		if got := strings.TrimSpace(string(out)); got != fmt.Sprint(n) && !(got == "" && n == 0) {
			t.Logf("%s: rg counts %q, CountLines %d (rg's \\d and . are Unicode-aware)", p.name, got, n)
		}
		re := regexp.MustCompile(p.goExpr())
		goRE := best(1, func() time.Duration {
			t0 := threadCPU()
			goRegexpCount(re, buf)
			return threadCPU() - t0
		})
		t.Logf("%-14s %10.0f %10.0f %10.0f %8.2f  %d", p.name, mbs(ours), mbs(theirs), mbs(goRE), float64(theirs)/float64(ours), n)
	}
}

// BenchmarkScanNonASCII runs on log lines with much non-ASCII text (every
// rune >= 0x80 takes the DFA's slow path).
func BenchmarkScanNonASCII(b *testing.B) {
	words := []string{"用户", "登录", "失败", "ошибка", "соединение", "tiempo", "café", "10.0.0.1", "ERROR", "INFO", "user", "=", ":", "12"}
	r := rand.New(rand.NewPCG(11, 12))
	var bb bytes.Buffer
	for bb.Len() < 8<<20 {
		for range 5 + r.IntN(15) {
			bb.WriteString(words[r.IntN(len(words))])
			bb.WriteByte(' ')
		}
		bb.WriteByte('\n')
	}
	buf := bb.Bytes()
	for _, p := range benchPatterns[:5] {
		b.Run(p.name, func(b *testing.B) {
			m := p.matcher(b)
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				m.CountLines(buf)
			}
		})
	}
}
