package query

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query/lang"
)

// BenchmarkQueries runs representative queries against the index named by
// LOGDEX_BENCH_INDEX (e.g. one built by cmd/logdex-bench); skipped without.
func BenchmarkQueries(b *testing.B) {
	s := benchSearcher(b)
	for _, tc := range []struct {
		name string
		mode lang.Mode
		q    string
	}{
		{"term-selective", lang.ModeQuery, "mallory"},
		{"term-common", lang.ModeQuery, "error"},
		{"and-common", lang.ModeQuery, "error AND timeout"},
		{"and-mixed", lang.ModeQuery, "info mallory"},
		{"literal-ip", lang.ModeLiteral, "10.213.7.42"},
		{"literal-reqid-part", lang.ModeLiteral, "9b1e4f7a2c6d"},
		{"literal-infix6", lang.ModeLiteral, "1e4f7a"},
		{"regex-selective", lang.ModeRegex, `checksum mismatch on segment [0-9]+`},
		// Phrases: every candidate line holding both words is verified.
		{"phrase-common", lang.ModeQuery, `"connection reset"`},
		{"hc-phrase", lang.ModeQuery, `"pool exhausted"`},
		// No term to narrow by: every byte is scanned.
		{"scan-literal", lang.ModeLiteral, "] ["},
		{"scan-regex", lang.ModeRegex, `[A-Z]{4,} [0-9]+`},
		// The high-cardinality corpus (fixtures/loggen -profile highcard):
		// a trace id whole, as a word, in part, by prefix and in a regex.
		{"hc-trace-literal", lang.ModeLiteral, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"hc-trace-word", lang.ModeQuery, "4bf92f3577b34da6a3ce929d0e0e4736"},
		{"hc-trace-prefix", lang.ModeQuery, "4bf92f3577b3*"},
		{"hc-partial8", lang.ModeLiteral, "77b34da6"},
		{"hc-infix6", lang.ModeLiteral, "0e0e47"},
		{"hc-ipport", lang.ModeLiteral, "10.42.7.19:51234"},
		{"hc-order", lang.ModeLiteral, "ORD-2026-0004417"},
		{"hc-regex-id", lang.ModeRegex, `4bf92f35[0-9a-f]+`},
	} {
		q, err := Compile([]string{tc.q}, tc.mode, false)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			var total int64
			for b.Loop() {
				st, err := s.Search(context.Background(), q, Options{Text: true, Limit: 1000, CountAll: true}, func(*Hit) error { return nil })
				if err != nil {
					b.Fatal(err)
				}
				total = st.Total
			}
			b.ReportMetric(float64(total), "hits")
		})
	}
}

// BenchmarkCompileRegex: what reading a pattern as grep does costs each
// search over reading it as RE2 (the same text, where both agree).
func BenchmarkCompileRegex(b *testing.B) {
	for _, p := range []string{`checksum mismatch on segment [0-9]+`, `[A-Z]{4,} [0-9]+`, `(GET|POST) /api/v[0-9]+/[a-z]+ [45][0-9][0-9]`} {
		for _, mode := range []lang.Mode{lang.ModeRE2, lang.ModeRegex} {
			for _, fold := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/fold=%v/%.12s", mode, fold, p), func(b *testing.B) {
					for b.Loop() {
						if _, err := Compile([]string{p}, mode, fold); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// benchSearcher opens the index named by LOGDEX_BENCH_INDEX for the
// benchmark (closed when it ends); it skips the benchmark without one.
func benchSearcher(b *testing.B) *Searcher {
	dir := os.Getenv("LOGDEX_BENCH_INDEX")
	if dir == "" {
		b.Skip("set LOGDEX_BENCH_INDEX to an index directory")
	}
	ix, err := mmapstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	s := NewSearcher(ix, nil)
	b.Cleanup(func() {
		s.Close()
		ix.Close()
	})
	return s
}
