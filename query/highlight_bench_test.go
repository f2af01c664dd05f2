package query

import (
	"syscall"
	"testing"
	"time"

	"github.com/logdex/logdex/query/lang"
)

// BenchmarkVerifyPhrase matches and highlights words and phrases on a
// JSON log line of the high-cardinality corpus, as a phrase page verifies
// its candidates and marks its hits, reporting CPU time per line.
func BenchmarkVerifyPhrase(b *testing.B) {
	line := []byte(`{"ts":"2026-10-10T00:00:02.399Z","ts_ms":1791590402399,"level":"error","service":"inventory","version":"2.14.6","pod":"inventory-xplb94qsmb-ntjxf","node":"ip-10-3-61-8.eu-west-1.compute.internal","trace_id":"29ca7d79fcdf175aed7e3a40c5d13a1c","span_id":"b7e1404de3f3c3db","parent_span_id":"6efc54fd68739fb8","request_id":"01M4HHR0KWCHXQXMBEV605JN0W","msg":"reserve stock failed: pool exhausted","error":"pgxpool: pool exhausted: all 20 connections in use, waited 4s","db":"orders-primary.cluster-c9x7.eu-west-1.rds.amazonaws.com:5432"}`)
	for _, q := range []string{`"pool exhausted"`, `"connections in use"`, `"orders primary"`, `waited`, `error`} {
		cq, err := Compile([]string{q}, lang.ModeQuery, true)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(q, func(b *testing.B) {
			var ls lineState
			var hl [][2]int
			cpu0 := cpuNow()
			for b.Loop() {
				ls.reset(line)
				if !cq.m.match(&ls) {
					b.Fatal("no match")
				}
				hl = cq.AppendHighlights(hl[:0], line)
			}
			b.ReportMetric(float64(cpuNow()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkHighlightWord highlights a word on a JSON log line (its first
// letter every few bytes) and on a plain one, reporting CPU time per line.
func BenchmarkHighlightWord(b *testing.B) {
	lines := map[string][]byte{
		"jsonl": []byte(`{"ts":"2026-10-10T00:09:11.112Z","ts_ms":1791590951112,"level":"error","service":"inventory","version":"2.14.6","pod":"inventory-xplb94qsmb-cwjc8","node":"ip-10-3-39-114.eu-west-1.compute.internal","trace_id":"6c6af902837e7ea2f8674a00deffc899","span_id":"e7262c97c1340bba","parent_span_id":"6d42d8f0e1","msg":"reserve stock failed","error":"deadlock detected","attempt":2}`),
		"plain": []byte(`2026-10-10 00:09:11.112 ERROR [inventory-xplb94qsmb-cwjc8] c.e.inventory.StockService - deadlock detected while reserving sku 48213 for order 99812 (attempt 2 of 3): error`),
	}
	q, err := Compile([]string{"error"}, lang.ModeQuery, true)
	if err != nil {
		b.Fatal(err)
	}
	for name, line := range lines {
		b.Run(name, func(b *testing.B) {
			if hl := benchHighlights(b, q, line); len(hl) != 2 {
				b.Fatalf("%d highlights", len(hl))
			}
		})
	}
}

// benchHighlights highlights line with q b.N times, reporting CPU time
// per line beside wall time, and returns the last highlights.
func benchHighlights(b *testing.B, q *Query, line []byte) [][2]int {
	var hl [][2]int
	cpu0 := cpuNow()
	for b.Loop() {
		hl = q.AppendHighlights(hl[:0], line)
	}
	b.ReportMetric(float64(cpuNow()-cpu0)/float64(b.N), "cpu-ns/op")
	return hl
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHighlightRegex highlights regexes (mode=regex) on a JSON log
// line, reporting CPU time per line: grep's leftmost-longest marks, and
// \< \> through the edge matcher.
func BenchmarkHighlightRegex(b *testing.B) {
	line := []byte(`{"ts":"2026-10-10T00:00:02.399Z","ts_ms":1791590402399,"level":"error","service":"inventory","version":"2.14.6","pod":"inventory-xplb94qsmb-ntjxf","trace_id":"29ca7d79fcdf175aed7e3a40c5d13a1c","msg":"reserve stock failed: pool exhausted","error":"pgxpool: pool exhausted: all 20 connections in use, waited 4s","db":"orders-primary:5432"}`)
	for _, q := range []string{`pool exhausted|deadlock`, `[0-9]{4,}`, `trace_id":"[0-9a-f]+`, `\<[0-9]{2}\>`, `conn[a-z]*`} {
		cq, err := Compile([]string{q}, lang.ModeRegex, false)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(q, func(b *testing.B) {
			if hl := benchHighlights(b, cq, line); len(hl) == 0 {
				b.Fatal("no highlights")
			}
		})
	}
}
