package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// BenchmarkUncachedPage serves one uncached page of 100 hits of
// /api/search, in process (no sockets), from an existing index: the
// per-request CPU of the search, the rendering and the handler chain,
// without the noise of a load generator on the same cores. It runs only
// when LOGDEX_BENCH_INDEX names an index directory (one made by
// `logdex-bench`, say); LOGDEX_BENCH_Q gives the query (default mallory),
// LOGDEX_BENCH_LIMIT the page size (default 100; 1 shows the fixed cost),
// LOGDEX_BENCH_BUDGET the server's TotalBudget in bytes (default its own),
// LOGDEX_BENCH_ORDER the order (default path).
//
//	LOGDEX_BENCH_INDEX=~/.cache/logdex-bench/index-1024mb-seed1 \
//	  go test ./server -run '^$' -bench UncachedPage -benchmem
func BenchmarkUncachedPage(b *testing.B) {
	dir := os.Getenv("LOGDEX_BENCH_INDEX")
	if dir == "" {
		b.Skip("LOGDEX_BENCH_INDEX not set")
	}
	q := os.Getenv("LOGDEX_BENCH_Q")
	if q == "" {
		q = "mallory"
	}
	tb, _ := strconv.ParseInt(os.Getenv("LOGDEX_BENCH_BUDGET"), 10, 64)
	s, err := New(Options{IndexDir: dir, CacheTTL: 0, Logger: zerolog.Nop(), TotalBudget: tb})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Reload(); err != nil {
		b.Fatal(err)
	}
	lim := os.Getenv("LOGDEX_BENCH_LIMIT")
	if lim == "" {
		lim = "100"
	}
	target := "/api/search?mode=query&limit=" + lim + "&order=" + os.Getenv("LOGDEX_BENCH_ORDER") + "&q=" + url.QueryEscape(q)
	h := s.Handler()
	get := func() int {
		w := &countingWriter{header: http.Header{}}
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "http://localhost"+target, nil))
		if w.code != http.StatusOK {
			b.Fatalf("%s: %d", target, w.code)
		}
		return w.n
	}
	b.SetBytes(int64(get()))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			get()
		}
	})
	// CPU per request, which other processes on the machine disturb less
	// than the wall time per request.
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// countingWriter is a ResponseWriter that counts the body and drops it: an
// httptest.ResponseRecorder grows a buffer for every body, and its growing
// (zeroing, and the scavenger returning the freed pages) was a fifth of
// the CPU measured for a 75 KB page, none of which a server spends.
type countingWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *countingWriter) Header() http.Header { return w.header }

func (w *countingWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.n += len(p)
	return len(p), nil
}

func (w *countingWriter) Flush() {}
