package scan

import (
	"fmt"
	"regexp"
	"syscall"
	"testing"
	"time"

	grafana "github.com/grafana/regexp"
)

// The lazy DFA (dfa.go, run.go, prefilter.go) stays only while it beats
// the regexp libraries that would replace it. BenchmarkEngines counts the
// matching lines of the benchmark data (benchData) for each pattern of
// benchPatterns with the scan engine and with Go's regexp and
// grafana/regexp (Go's regexp with the speed-ups its authors sent
// upstream), each used both ways a library allows: Match on every line,
// and FindIndex over the whole buffer in multi-line mode, skipping to the
// next line after each match. docs/benchmarks.md has the figures:
//
//	go test ./query/internal/scan -run '^$' -bench Engines -count 6

// libRegexp is what both regexp packages offer.
type libRegexp interface {
	Match([]byte) bool
	FindIndex([]byte) []int
}

type engine struct {
	name  string
	count func(p benchPattern, tb testing.TB) func(buf []byte) int
}

var engines = []engine{
	{"scan", func(p benchPattern, tb testing.TB) func([]byte) int { return p.matcher(tb).CountLines }},
	{"regexp-line", perLine(func(e string) libRegexp { return regexp.MustCompile(e) })},
	{"regexp-buffer", wholeBuffer(func(e string) libRegexp { return regexp.MustCompile(e) })},
	{"grafana-line", perLine(func(e string) libRegexp { return grafana.MustCompile(e) })},
	{"grafana-buffer", wholeBuffer(func(e string) libRegexp { return grafana.MustCompile(e) })},
}

func perLine(compile func(string) libRegexp) func(benchPattern, testing.TB) func([]byte) int {
	return func(p benchPattern, _ testing.TB) func([]byte) int {
		re := compile(p.goExpr())
		return func(buf []byte) int { return goRegexpCount(re, buf) }
	}
}

// wholeBuffer counts a line when a match starts in it. That is the line
// count only for patterns that cannot match '\n', which holds for
// benchPatterns (Go's . and these classes exclude it); BenchmarkEngines
// checks every count against the scan engine's.
func wholeBuffer(compile func(string) libRegexp) func(benchPattern, testing.TB) func([]byte) int {
	return func(p benchPattern, _ testing.TB) func([]byte) int {
		re := compile("(?m)" + p.goExpr())
		return func(buf []byte) int {
			n := 0
			for pos := 0; pos < len(buf); {
				loc := re.FindIndex(buf[pos:])
				if loc == nil {
					break
				}
				n++
				pos = lineEnd(buf, pos+loc[0]) + 1
			}
			return n
		}
	}
}

func BenchmarkEngines(b *testing.B) {
	buf := benchData()
	for _, p := range benchPatterns {
		want := p.matcher(b).CountLines(buf)
		for _, e := range engines {
			b.Run(fmt.Sprintf("pattern=%s/engine=%s", p.name, e.name), func(b *testing.B) {
				count := e.count(p, b)
				b.SetBytes(int64(len(buf)))
				n := 0
				cpu := processCPU()
				for b.Loop() {
					n = count(buf)
				}
				b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
				if n != want {
					b.Fatalf("%d lines, the scan engine counts %d", n, want)
				}
			})
		}
	}
}

// TestEnginesAgree runs every engine of BenchmarkEngines on a sample of
// the benchmark corpus and of the synthetic lines (which have matches for
// the patterns loghub lacks), so that a wrong count shows in the default
// run.
func TestEnginesAgree(t *testing.T) {
	buf := append(sampleLines(benchCorpus(), 128), sampleLines(synthLogs(), 512)...)
	for _, p := range benchPatterns {
		want := p.matcher(t).CountLines(buf)
		for _, e := range engines[1:] {
			if n := e.count(p, t)(buf); n != want {
				t.Errorf("%s %s: %d lines, the scan engine counts %d", p.name, e.name, n, want)
			}
		}
	}
}

// sampleLines returns every k-th line of buf.
func sampleLines(buf []byte, k int) []byte {
	var out []byte
	for i, start := 0, 0; start < len(buf); i++ {
		end := lineEnd(buf, start)
		if i%k == 0 {
			out = append(append(out, buf[start:end]...), '\n')
		}
		start = end + 1
	}
	return out
}

// processCPU is the CPU time of this process so far. Benchmarks report it
// per operation (cpu-ns/op) beside the wall time: on a machine shared
// with other jobs the wall time also counts the time the benchmark waited
// for a core, its CPU time far less. It includes the garbage collector's
// work on other threads, which the allocating alternatives cause.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
