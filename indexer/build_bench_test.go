package indexer

import (
	"bytes"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/logdex/logdex/mmapstore"
)

// BenchmarkBuildSegment builds one segment from the first 128 MiB (a full
// segment) of LOGDEX_BENCH_LOG, e.g. a file of the highcard corpus, and
// reports each phase: reading and tokenizing (index-cpu-ns), sorting
// the dictionary (sort-cpu-ns) and writing the segment (write-cpu-ns), in CPU time of
// the process (user + sys: other processes load the machine; the garbage
// collector's work counts in the phase it runs in).
func BenchmarkBuildSegment(b *testing.B) {
	data := benchLog(b, 128<<20)
	out := filepath.Join(b.TempDir(), "seg.ldx")
	buf := make([]byte, readBlock)
	b.SetBytes(int64(len(data)))
	var tIndex, tSort, tWrite time.Duration
	var terms *termTable // reused, as a worker does
	for b.Loop() {
		t0 := cpuTime(b)
		bl := newBuilder(terms)
		terms = bl.terms
		timer := newLineTimer(bl.lines, time.UTC, 0, 0, false)
		sf := mmapstore.SegFile{ID: 1, Path: "bench.log", Size: int64(len(data))}
		if _, _, _, err := bl.readPart(bytes.NewReader(data), sf, 0, int64(len(data)), 1, timer, buf, func(int64) {}, 0); err != nil {
			b.Fatal(err)
		}
		t1 := cpuTime(b)
		terms := bl.terms.sorted()
		t2 := cpuTime(b)
		if _, err := mmapstore.WriteSegment(out, &mmapstore.SegmentInput{Lines: bl.lines, Unindexed: bl.unindexed, Terms: terms, NumPostings: bl.nPostings}); err != nil {
			b.Fatal(err)
		}
		t3 := cpuTime(b)
		tIndex += t1 - t0
		tSort += t2 - t1
		tWrite += t3 - t2
	}
	n := float64(b.N)
	b.ReportMetric(float64(tIndex.Nanoseconds())/n, "index-cpu-ns")
	b.ReportMetric(float64(tSort.Nanoseconds())/n, "sort-cpu-ns")
	b.ReportMetric(float64(tWrite.Nanoseconds())/n, "write-cpu-ns")
}

// cpuTime is the process's user + system time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
