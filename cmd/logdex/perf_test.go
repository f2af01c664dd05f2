package main

// Performance harness for `logdex serve`, run as a separate process so its
// CPU and memory can be read from /proc. Skipped unless LOGDEX_PERF=1:
//
//	LOGDEX_PERF=1 go test ./cmd/logdex -run TestPerf -v -timeout 30m
//
// Data: LOGDEX_PERF_DIR (default /tmp/logdex-perf) gets a 1 GiB log file
// and its index on first use; the search benchmarks use /tmp/corpus1g and
// /tmp/idx1g (see the task notes), or LOGDEX_PERF_CORPUS/LOGDEX_PERF_INDEX.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func perfOnly(t *testing.T) {
	if os.Getenv("LOGDEX_PERF") == "" {
		t.Skip("performance harness: set LOGDEX_PERF=1")
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// procStat is a process's CPU time and resident memory.
type procStat struct {
	utime, stime time.Duration
	rss          int64
	anon         int64 // RssAnon: heap, stacks, buffers (what connections cost)
}

func readProc(t *testing.T, pid int) procStat {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name (which may hold spaces) in ")".
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	tick := func(s string) time.Duration {
		n, _ := strconv.ParseInt(s, 10, 64)
		return time.Duration(n) * time.Second / 100
	}
	rssPages, _ := strconv.ParseInt(f[21], 10, 64)
	ps := procStat{utime: tick(f[11]), stime: tick(f[12]), rss: rssPages * int64(os.Getpagesize())}
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, l := range strings.Split(string(st), "\n") {
			if v, ok := strings.CutPrefix(l, "RssAnon:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				ps.anon = kb << 10
			}
		}
	}
	return ps
}

// perfFile makes (once) a 1 GiB log file from the generated corpus and
// indexes it.
func perfFile(t *testing.T) (logs, idx string) {
	dir := envOr("LOGDEX_PERF_DIR", "/tmp/logdex-perf")
	logs, idx = filepath.Join(dir, "logs"), filepath.Join(dir, "index")
	name := filepath.Join(logs, "one.log")
	if st, err := os.Stat(name); err != nil || st.Size() != 1<<30 {
		corpus := envOr("LOGDEX_PERF_CORPUS", "/tmp/corpus1g")
		os.MkdirAll(logs, 0o755)
		out, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		var written int64
		filepath.Walk(corpus, func(p string, fi os.FileInfo, err error) error {
			if err != nil || !fi.Mode().IsRegular() || written >= 1<<30 {
				return nil
			}
			f, err := os.Open(p)
			if err != nil {
				return nil
			}
			defer f.Close()
			n, _ := io.Copy(out, io.LimitReader(f, 1<<30-written))
			written += n
			return nil
		})
		out.Close()
		if written != 1<<30 {
			t.Fatalf("corpus too small for a 1 GiB file (%d bytes)", written)
		}
		os.RemoveAll(idx)
	}
	if _, err := os.Stat(filepath.Join(idx, "MANIFEST")); err != nil {
		if out, err := exec.Command(builtLogdexBin(t), "index", "-q", "--index", idx, logs).CombinedOutput(); err != nil {
			t.Fatalf("index: %v %s", err, out)
		}
	}
	return logs, idx
}

// download reads url to the end with 1 MiB reads; it returns the bytes.
func download(t *testing.T, c *http.Client, url string, hdr ...string) int64 {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Error(err)
		return 0
	}
	defer resp.Body.Close()
	buf := make([]byte, 1<<20)
	var n int64
	for {
		m, err := resp.Body.Read(buf)
		n += int64(m)
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Error(err)
			return n
		}
	}
}

// TestPerfContent compares sendfile with read/write loops on the same
// server, interleaving variants to spread the noise of a shared VM.
func TestPerfContent(t *testing.T) {
	perfOnly(t)
	bin := builtLogdexBin(t)
	logs, idx := perfFile(t)
	type variant struct {
		name string
		env  []string
		s    *served
		id   uint64
		mbps []float64
		cpu  []procStat // per download: user, sys
	}
	variants := []*variant{
		{name: "copy 32 KiB", env: []string{"LOGDEX_DEBUG_COPY_BUFFER=32768"}},
		{name: "copy 256 KiB", env: []string{"LOGDEX_DEBUG_COPY_BUFFER=262144"}},
		{name: "sendfile, chunks from 4 MiB (default)"},
		{name: "sendfile, chunks from 1 MiB", env: []string{"LOGDEX_SENDFILE_CHUNK=1048576"}},
		{name: "sendfile, chunks from 16 MiB", env: []string{"LOGDEX_SENDFILE_CHUNK=16777216"}},
		{name: "sendfile unchunked", env: []string{"LOGDEX_SENDFILE_CHUNK=4294967296"}},
		{name: "sendfile 4 MiB + SO_SNDBUF 4 MiB", env: []string{"LOGDEX_SNDBUF=4194304"}},
		{name: "sendfile 4 MiB + SO_SNDBUF 1 MiB", env: []string{"LOGDEX_SNDBUF=1048576"}},
	}
	if only := os.Getenv("LOGDEX_PERF_VARIANTS"); only != "" {
		var keep []*variant
		for _, v := range variants {
			if strings.Contains(only, v.name) {
				keep = append(keep, v)
			}
		}
		variants = keep
	}
	for _, v := range variants {
		v.s = startServe(t, v.env, bin, "serve", "--addr", "127.0.0.1:0", "--reindex", "0", "--index", idx, logs)
		v.id = fileID(t, v.s.url, "one.log")
	}
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	rounds, _ := strconv.Atoi(envOr("LOGDEX_PERF_ROUNDS", "5"))
	repeat, _ := strconv.Atoi(envOr("LOGDEX_PERF_REPEAT", "2")) // downloads per measurement
	// Round -1 warms the page cache.
	for r := -1; r < rounds; r++ {
		for _, v := range variants {
			url := fmt.Sprintf("%s/api/files/%d/content", v.s.url, v.id)
			p0, t0 := readProc(t, v.s.pid), time.Now()
			var n int64
			for i := 0; i < repeat; i++ {
				if m := download(t, client, url); m != 1<<30 {
					t.Fatalf("%s: %d bytes", v.name, m)
				}
				n += 1 << 30
			}
			el, p1 := time.Since(t0), readProc(t, v.s.pid)
			if r >= 0 {
				v.mbps = append(v.mbps, float64(n)/el.Seconds()/(1<<20))
				v.cpu = append(v.cpu, procStat{utime: (p1.utime - p0.utime) / time.Duration(repeat), stime: (p1.stime - p0.stime) / time.Duration(repeat)})
			}
		}
	}
	med := func(x []float64) float64 { y := append([]float64(nil), x...); sort.Float64s(y); return y[len(y)/2] }
	// CPU is read in clock ticks (10 ms): sum over all rounds.
	cpu := func(v *variant) (user, sys float64) {
		for _, c := range v.cpu {
			user, sys = user+c.utime.Seconds(), sys+c.stime.Seconds()
		}
		return user / float64(len(v.cpu)), sys / float64(len(v.cpu))
	}
	var bestCopy, bestCopyUser float64
	for _, v := range variants {
		if strings.HasPrefix(v.name, "copy") && med(v.mbps) > bestCopy {
			bestCopy = med(v.mbps)
			bestCopyUser, _ = cpu(v)
		}
	}
	t.Logf("1 GiB through /api/files/{id}/content: median throughput of %d rounds; server CPU per GiB (mean)", rounds)
	for _, v := range variants {
		u, sy := cpu(v)
		ratio := ""
		if bestCopy > 0 {
			ratio = fmt.Sprintf("  = %.2fx best copy loop, user CPU %.2fx", med(v.mbps)/bestCopy, u/max(bestCopyUser, 1e-9))
		}
		t.Logf("  %-34s %5.0f MiB/s (min %4.0f max %4.0f)  user %3.0f ms sys %4.0f ms%s", v.name, med(v.mbps), minf(v.mbps), maxf(v.mbps), u*1000, sy*1000, ratio)
	}
}

func minf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = min(m, v)
	}
	return m
}
func maxf(x []float64) float64 {
	m := x[0]
	for _, v := range x {
		m = max(m, v)
	}
	return m
}

// TestPerfConcurrentDownloads: server RSS with 1..256 concurrent downloads.
func TestPerfConcurrentDownloads(t *testing.T) {
	perfOnly(t)
	raiseNofile(t)
	bin := builtLogdexBin(t)
	logs, idx := perfFile(t)
	// No warm-up: its mapped index pages would count in RSS and hide what
	// the downloads cost.
	s := startServe(t, nil, bin, "serve", "--addr", "127.0.0.1:0", "--reindex", "0", "--warmup", "off", "--index", idx, logs)
	url := fmt.Sprintf("%s/api/files/%d/content", s.url, fileID(t, s.url, "one.log"))
	t.Logf("server RSS idle: %d MiB", readProc(t, s.pid).rss>>20)
	for _, k := range []int{1, 16, 64, 256} {
		per := int64(1<<30) / int64(k) // about 1 GiB per step, at least 16 MiB a download
		per = max(per, 16<<20)
		stop := make(chan struct{})
		var peak, peakAnon int64
		var wgSample sync.WaitGroup
		wgSample.Add(1)
		go func() {
			defer wgSample.Done()
			for {
				ps := readProc(t, s.pid)
				peak, peakAnon = max(peak, ps.rss), max(peakAnon, ps.anon)
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}()
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: k, DisableCompression: true}}
		t0 := time.Now()
		var wg sync.WaitGroup
		var total int64
		var mu sync.Mutex
		for i := 0; i < k; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				off := int64(i) * per % (1<<30 - per + 1)
				n := download(t, client, url, "Range", fmt.Sprintf("bytes=%d-%d", off, off+per-1))
				mu.Lock()
				total += n
				mu.Unlock()
			}(i)
		}
		wg.Wait()
		el := time.Since(t0)
		close(stop)
		wgSample.Wait()
		client.CloseIdleConnections()
		t.Logf("  %3d concurrent downloads of %4d MiB: %6.0f MiB/s total, server peak RSS %d MiB (anonymous %d MiB)", k, per>>20, float64(total)/el.Seconds()/(1<<20), peak>>20, peakAnon>>20)
	}
}

func raiseNofile(t *testing.T) {
	var rl syscall.Rlimit
	syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl)
	rl.Cur = rl.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.Cur < 10_500 {
		t.Skipf("RLIMIT_NOFILE hard limit %d is below 10,500", rl.Max)
	}
}

// wrkResult is what wrk --latency prints.
type wrkResult struct {
	rps                float64
	p50, p90, p99      string
	non2xx, sockErrors string
	requests           string
}

func runWrk(t *testing.T, conns int, dur, url string) wrkResult {
	threads := envOr("LOGDEX_PERF_WRK_THREADS", "2")
	out, err := exec.Command("wrk", "-t"+threads, fmt.Sprintf("-c%d", conns), "-d"+dur, "--latency", url).CombinedOutput()
	if err != nil {
		t.Fatalf("wrk: %v\n%s", err, out)
	}
	s := string(out)
	get := func(re string) string {
		m := regexp.MustCompile(re).FindStringSubmatch(s)
		if m == nil {
			return ""
		}
		return m[1]
	}
	var r wrkResult
	r.rps, _ = strconv.ParseFloat(get(`Requests/sec:\s+([\d.]+)`), 64)
	r.p50, r.p90, r.p99 = get(`(?m)^\s+50%\s+(\S+)`), get(`(?m)^\s+90%\s+(\S+)`), get(`(?m)^\s+99%\s+(\S+)`)
	r.non2xx, r.sockErrors = get(`Non-2xx or 3xx responses: (\d+)`), get(`Socket errors: (.*)`)
	r.requests = get(`(\d+) requests in`)
	return r
}

// TestPerfSearch: /api/search for selective terms at 64 connections.
func TestPerfSearch(t *testing.T) {
	perfOnly(t)
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("no wrk")
	}
	raiseNofile(t)
	bin := builtLogdexBin(t)
	corpus, idx := envOr("LOGDEX_PERF_CORPUS", "/tmp/corpus1g"), envOr("LOGDEX_PERF_INDEX", "/tmp/idx1g")
	dur := envOr("LOGDEX_PERF_DURATION", "10s")
	for _, cache := range []string{"1s", "0"} {
		// A queue as deep as the connections: without the cache every
		// request is a search, and the point is latency, not 503s.
		s := startServe(t, nil, bin, "serve", "--addr", "127.0.0.1:0", "--reindex", "0", "--cache-ttl", cache, "--max-queued", "64", "--queue-wait", "10s", "--index", idx, corpus)
		for _, q := range []string{"q=mallory", "q=10.213.7.42&mode=literal"} {
			url := s.url + "/api/search?" + q
			fetch(t, url) // warm
			p0 := readProc(t, s.pid)
			r := runWrk(t, 64, dur, url)
			p1 := readProc(t, s.pid)
			t.Logf("cache-ttl %-2s %-28s %7.0f req/s  p50 %-8s p90 %-8s p99 %-8s requests %s non-2xx %q socket errors %q; server user %.1fs sys %.1fs",
				cache, q, r.rps, r.p50, r.p90, r.p99, r.requests, r.non2xx, r.sockErrors, (p1.utime - p0.utime).Seconds(), (p1.stime - p0.stime).Seconds())
		}
		s.stop(t)
	}
}

// TestPerfIdleConnections holds 10,000 idle keep-alive connections and
// times searches meanwhile.
func TestPerfIdleConnections(t *testing.T) {
	perfOnly(t)
	raiseNofile(t)
	bin := builtLogdexBin(t)
	corpus, idx := envOr("LOGDEX_PERF_CORPUS", "/tmp/corpus1g"), envOr("LOGDEX_PERF_INDEX", "/tmp/idx1g")
	var env []string
	if g := os.Getenv("LOGDEX_PERF_SERVER_GODEBUG"); g != "" {
		env = append(env, "GODEBUG="+g)
	}
	if g := os.Getenv("LOGDEX_PERF_SERVER_GOGC"); g != "" {
		env = append(env, "GOGC="+g)
	}
	// No warm-up: its mapped index pages would count in RSS and hide what
	// the connections cost.
	s := startServe(t, env, bin, "serve", "--addr", "127.0.0.1:0", "--reindex", "0", "--cache-ttl", "0", "--warmup", "off", "--index", idx, corpus)
	addr := strings.TrimPrefix(s.url, "http://")
	search := s.url + "/api/search?q=mallory"
	fetch(t, search)
	p0 := readProc(t, s.pid)
	before := p0.rss
	const n = 10_000
	conns := make([]net.Conn, 0, n)
	readers := make([]*bufio.Reader, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	t0 := time.Now()
	for i := 0; i < n; i += 500 { // batches: the accept backlog is finite
		for j := i; j < i+500; j++ {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatalf("conn %d: %v", j, err)
			}
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			conns = append(conns, c)
			readers = append(readers, bufio.NewReaderSize(c, 512))
		}
		for j := i; j < i+500; j++ {
			resp, err := http.ReadResponse(readers[j], nil)
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("conn %d: %v", j, err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	t.Logf("%d keep-alive connections open after one request each, in %v", n, time.Since(t0).Round(time.Millisecond))
	time.Sleep(2 * time.Second) // let the server settle (GC)
	p1 := readProc(t, s.pid)
	held := p1.rss
	client := &http.Client{Transport: &http.Transport{}}
	var lat []time.Duration
	for i := 0; i < 500; i++ {
		t1 := time.Now()
		resp, err := client.Get(search)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		lat = append(lat, time.Since(t1))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	// One of the idle connections is still served.
	fmt.Fprintf(conns[n/2], "GET /api/search?q=mallory HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
	t2 := time.Now()
	resp, err := http.ReadResponse(readers[n/2], nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("idle connection: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	idleLat := time.Since(t2)
	if os.Getenv("LOGDEX_PERF_SERVER_GODEBUG") != "" {
		gcs := strings.Count(s.stderr.String(), "gc ")
		t.Logf("%d GC cycles logged", gcs)
	}
	q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))].Round(10 * time.Microsecond) }
	t.Logf("server RSS %d MiB before (anonymous %d), %d MiB with %d idle connections (anonymous %d); %d searches (no cache) one after another: p50 %v p90 %v p99 %v max %v; on an idle connection %v",
		before>>20, p0.anon>>20, held>>20, n, p1.anon>>20, len(lat), q(.5), q(.9), q(.99), q(1), idleLat.Round(10*time.Microsecond))
	if held > 300<<20 {
		t.Errorf("RSS %d MiB > 300 MiB", held>>20)
	}
}
