package query

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/logdex/logdex/query/lang"
)

// BenchmarkManyLiterals searches the -F patterns of the file named by
// LOGDEX_BENCH_PATTERNS (grep -F -f: a list of ids, say) in the index
// named by LOGDEX_BENCH_INDEX, counting every hit.
func BenchmarkManyLiterals(b *testing.B) {
	pf := os.Getenv("LOGDEX_BENCH_PATTERNS")
	if pf == "" {
		b.Skip("set LOGDEX_BENCH_PATTERNS (and LOGDEX_BENCH_INDEX)")
	}
	text, err := os.ReadFile(pf)
	if err != nil {
		b.Fatal(err)
	}
	s := benchSearcher(b)
	q, err := Compile(strings.Split(strings.TrimSuffix(string(text), "\n"), "\n"), lang.ModeLiteral, false)
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for b.Loop() {
		st, err := s.Search(context.Background(), q, Options{}, nil)
		if err != nil {
			b.Fatal(err)
		}
		total = st.Total
	}
	b.ReportMetric(float64(total), "hits")
}
