package scan

import (
	"os"
	"testing"
)

// BenchmarkBytewiseCount counts the lines of a log file (LOGDEX_BENCH_FILE,
// skipped without it) matching a pattern with '.', read as UTF-8 (re) and
// byte by byte (bytewise), which also reads the file's non-ASCII lines
// widened.
func BenchmarkBytewiseCount(b *testing.B) {
	data, err := os.ReadFile(os.Getenv("LOGDEX_BENCH_FILE"))
	if err != nil {
		b.Skip("set LOGDEX_BENCH_FILE to a log file")
	}
	const expr = `[A-Z]{4,}.[0-9]+`
	re, err := NewRegexp(expr, false)
	if err != nil {
		b.Fatal(err)
	}
	bw, err := NewBytewise(expr)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []struct {
		name string
		m    Matcher
	}{{"re", re}, {"bytewise", bw}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				m.m.CountLines(data)
			}
		})
	}
}
