package main

// The live section: `logdex serve` (default live settings) under a
// sustained append load while searches run at a fixed rate.
//
// Writers append lines of the highcard corpus to --live-files files at
// --live-mbps for --live-seconds, one write(2) per file every 50 ms, and
// every 200 ms per file a probe line with a unique token. Index lag is the
// time from a probe's write returning to its arrival on /api/tail (which
// streams the lines a re-index adds, so the lag is that of the index, not
// of the scan of unindexed bytes searches also do). Searches are sent
// open-loop at --live-qps (a late answer does not delay the next request)
// during the load, and then at the same rate on the settled index: the
// ratio of their latencies is the cost of searching while indexing.
// Segment count and RSS are sampled every second, CPU from /proc/PID/stat.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
)

// LiveResult is the live section.
type LiveResult struct {
	Skipped    string       `json:"skipped,omitempty"`
	Files      int          `json:"files"`
	TargetMBps float64      `json:"target_mb_per_s"`
	MBps       float64      `json:"mb_per_s"` // achieved
	Seconds    float64      `json:"seconds"`
	QPS        float64      `json:"qps"`
	Bytes      int64        `json:"bytes"`
	Lines      int64        `json:"lines"`
	Indexed    int64        `json:"indexed_lines"` // after the catch-up
	Probes     int          `json:"probes"`
	ProbesSeen int          `json:"probes_seen"`
	Lag        *Dist        `json:"lag"`
	LagP99     float64      `json:"lag_p99_s"`
	CatchUp    float64      `json:"catch_up_s"` // from the last write to the last probe seen
	Queries    []string     `json:"queries"`
	Loaded     *SearchStats `json:"search_during_load"`
	Static     *SearchStats `json:"search_static"`
	// The same searches timed inside the server (its access log): the
	// client's figures also hold the benchmark process's own delays, as
	// it writes the load on the same cores while it times the searches.
	ServerLoaded *SearchStats `json:"server_side_search_during_load,omitempty"`
	ServerStatic *SearchStats `json:"server_side_search_static,omitempty"`
	Samples      []LiveSample `json:"samples"`
	CPULoad      float64      `json:"cpu_s_load"`         // server CPU from the load's start to the catch-up
	CPUStaticPS  float64      `json:"cpu_s_per_s_static"` // server CPU per second of searching alone
	Reindexes    int64        `json:"reindex_runs"`       // during the load and catch-up
	Serve        []string     `json:"serve_args"`         // the server's flags
	LoadAvg      [2]float64   `json:"loadavg"`            // the machine's 1-minute load average at the start and the end
	SlowRuns     []SlowRun    `json:"slow_runs"`          // re-index runs of 1 s or more, from the server's log
	poolMB       int64        // highcard corpus the lines come from
	pool         [][]byte     // its lines
	probeWrites  map[int]time.Time
}

// SlowRun is a re-index run the server logged for taking 1 s or more.
type SlowRun struct {
	MS      float64 `json:"ms"`
	Summary string  `json:"summary"`
}

// LiveSample is one second of the run.
type LiveSample struct {
	T        float64 `json:"t_s"` // since the load started
	Segments int     `json:"segments"`
	RSS      int64   `json:"rss_bytes"`
	Phase    string  `json:"phase"` // load, catch-up, static
}

// SearchStats are the latencies of one phase's searches.
type SearchStats struct {
	N      int            `json:"n"`
	P50    float64        `json:"p50_s"`
	P99    float64        `json:"p99_s"`
	Max    float64        `json:"max_s"`
	Errors int            `json:"errors"`
	Failed map[string]int `json:"failed,omitempty"` // errors by status or cause
}

const (
	liveTick      = 50 * time.Millisecond
	liveProbeTick = 4 // ticks between a file's probes
)

func (b *bench) live() error {
	cfg := b.cfg
	res := &LiveResult{Files: cfg.liveFiles, TargetMBps: cfg.liveMBps, QPS: cfg.liveQPS, probeWrites: map[int]time.Time{}}
	b.rep.Live = res
	if p := b.probeServe(); !p.exists {
		res.Skipped = p.why
		return nil
	}
	res.poolMB = min(cfg.mb, 64)
	c, err := b.corpus(loggen.ProfileHighCard, res.poolMB)
	if err != nil {
		return err
	}
	if res.pool, err = readLines(c.paths); err != nil {
		return err
	}
	dir := filepath.Join(b.tmp, "live")
	logs := filepath.Join(dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	files := make([]*os.File, cfg.liveFiles)
	for i := range files {
		f, err := os.OpenFile(filepath.Join(logs, fmt.Sprintf("svc%02d.log", i)), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := f.Write(res.pool[i%len(res.pool)]); err != nil {
			return err
		}
		files[i] = f
	}
	res.Serve = []string{"--cache-ttl", "0"} // the access log times each search inside the server
	lc := &corpus{Profile: loggen.ProfileHighCard, Dir: logs}
	s, err := b.startServer(lc, filepath.Join(dir, "index"), res.Serve)
	if err != nil {
		return err
	}
	defer s.stop()
	if _, _, err := s.waitUp(b.ctx, time.Minute); err != nil {
		return err
	}
	pid := s.cmd.Process.Pid
	res.LoadAvg[0] = loadAvg()
	defer func() { res.LoadAvg[1] = loadAvg() }()
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()

	probesSeen := map[int]time.Time{}
	var seenMu sync.Mutex
	tailUp := make(chan struct{})
	go tailProbes(ctx, s.url("/api/tail?q=lagprobe"), tailUp, func(id int, at time.Time) {
		seenMu.Lock()
		probesSeen[id] = at
		seenMu.Unlock()
	})
	select {
	case <-tailUp:
	case <-time.After(30 * time.Second):
		return fmt.Errorf("live: /api/tail did not start: %s", tail(s.log))
	}
	queries := liveQueries()
	res.Queries = queries
	phase := "load"
	var phaseMu sync.Mutex
	start := time.Now()
	sampleDone := make(chan struct{})
	go func() {
		defer close(sampleDone)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			phaseMu.Lock()
			ph := phase
			phaseMu.Unlock()
			res.Samples = append(res.Samples, LiveSample{T: time.Since(start).Seconds(), Segments: statusSegments(s), RSS: procRSS(pid), Phase: ph})
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	cpu0, runs0 := procCPU(pid), statusRuns(s)
	loadCtx, stopLoad := context.WithTimeout(ctx, time.Duration(cfg.liveSeconds*float64(time.Second)))
	searchDone := make(chan *SearchStats)
	go func() { searchDone <- searchAtRate(loadCtx, s, queries, cfg.liveQPS) }() // nil at 0 QPS
	b.logf("live: appending %.1f MB/s to %d files for %.0f s, searching at %.0f/s", cfg.liveMBps, cfg.liveFiles, cfg.liveSeconds, cfg.liveQPS)
	err = res.append(loadCtx, files)
	lastWrite := time.Now()
	stopLoad()
	res.Loaded = <-searchDone
	if err != nil {
		return err
	}
	res.Seconds = lastWrite.Sub(start).Seconds()
	res.MBps = float64(res.Bytes) / 1e6 / res.Seconds
	phaseMu.Lock()
	phase = "catch-up"
	phaseMu.Unlock()

	// Catch-up: every probe seen, and the index holding every line.
	want := res.Lines + int64(cfg.liveFiles) // and each file's first line
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		seenMu.Lock()
		n := len(probesSeen)
		seenMu.Unlock()
		if n == res.Probes {
			if res.Indexed = statusLines(s); res.Indexed >= want {
				break
			}
		}
	}
	cpu1, runs1 := procCPU(pid), statusRuns(s)
	res.CPULoad, res.Reindexes = cpu1-cpu0, runs1-runs0
	var lags []time.Duration
	var last time.Time
	seenMu.Lock()
	for id, w := range res.probeWrites {
		if at, ok := probesSeen[id]; ok {
			lags = append(lags, max(at.Sub(w), 0))
			if at.After(last) {
				last = at
			}
		}
	}
	res.ProbesSeen = len(lags)
	seenMu.Unlock()
	res.Lag = distOf(lags, false)
	if len(lags) > 0 {
		res.LagP99 = quantileOf(lags, 0.99)
		res.CatchUp = max(last.Sub(lastWrite).Seconds(), 0)
	}
	if res.Indexed != want {
		b.note("live: the index holds %d lines after the catch-up, %d were written", res.Indexed, want)
	}

	phaseMu.Lock()
	phase = "static"
	phaseMu.Unlock()
	staticFor := time.Duration(min(cfg.liveSeconds, 20) * float64(time.Second))
	if cfg.liveQPS <= 0 {
		staticFor = 0
	}
	cpu2 := procCPU(pid)
	sctx, scancel := context.WithTimeout(ctx, staticFor)
	res.Static = searchAtRate(sctx, s, queries, cfg.liveQPS)
	scancel()
	if res.Static != nil {
		res.CPUStaticPS = (procCPU(pid) - cpu2) / staticFor.Seconds()
	}
	cancel()
	<-sampleDone
	res.Samples = append(res.Samples, LiveSample{T: time.Since(start).Seconds(), Segments: statusSegments(s), RSS: procRSS(pid), Phase: "end"})
	s.stop() // SIGTERM: the server writes out its batched access log
	logb, _ := os.ReadFile(s.log)
	res.SlowRuns = slowRuns(logb)
	if res.Loaded != nil && res.Static != nil {
		res.ServerLoaded, res.ServerStatic = serverSideSearches(logb, res.Loaded.N+res.Loaded.Errors, res.Static.N+res.Static.Errors)
	}
	return nil
}

// serverSideSearches reads the /api/search times of a server log's access
// lines: the last nStatic are the static phase's, the nLoad before them
// the load's (the searches of one phase all end before the next starts).
// nil when the log holds fewer.
func serverSideSearches(b []byte, nLoad, nStatic int) (load, static *SearchStats) {
	var ms []time.Duration
	for _, l := range bytes.Split(b, []byte{'\n'}) {
		var e struct {
			Path string   `json:"path"`
			MS   *float64 `json:"ms"`
		}
		if json.Unmarshal(l, &e) != nil || e.MS == nil || e.Path != "/api/search" {
			continue
		}
		ms = append(ms, time.Duration(*e.MS*float64(time.Millisecond)))
	}
	if len(ms) < nLoad+nStatic || nLoad == 0 || nStatic == 0 {
		return nil, nil
	}
	stats := func(ds []time.Duration) *SearchStats {
		return &SearchStats{N: len(ds), P50: quantileOf(ds, 0.5), P99: quantileOf(ds, 0.99), Max: quantileOf(ds, 1)}
	}
	n := len(ms)
	return stats(ms[n-nStatic-nLoad : n-nStatic]), stats(ms[n-nStatic:])
}

// slowRuns reads the re-index runs of 1 s or more from a server log (the
// server logs its first run too: that one is left out).
func slowRuns(b []byte) []SlowRun {
	var runs []SlowRun
	first := true
	for _, l := range bytes.Split(b, []byte{'\n'}) {
		var e struct {
			MS      *float64 `json:"ms"`
			Result  string   `json:"result"`
			Message string   `json:"message"`
		}
		if json.Unmarshal(l, &e) != nil || e.MS == nil || e.Result == "" {
			continue
		}
		if first {
			first = false
			continue
		}
		runs = append(runs, SlowRun{MS: *e.MS, Summary: e.Message})
	}
	return runs
}

// append writes the load until ctx ends: per tick and file its share of
// the rate in whole lines, one write each, and a probe every
// liveProbeTick ticks per file (files staggered).
func (r *LiveResult) append(ctx context.Context, files []*os.File) error {
	perTick := r.TargetMBps * 1e6 * liveTick.Seconds() / float64(len(files))
	owed := make([]float64, len(files))
	next := 0
	t := time.NewTicker(liveTick)
	defer t.Stop()
	var buf []byte
	for tick := 0; ; tick++ {
		for i, f := range files {
			owed[i] += perTick
			buf = buf[:0]
			for float64(len(buf)) < owed[i] {
				buf = append(buf, r.pool[next]...)
				next = (next + 1) % len(r.pool)
			}
			probe := -1
			if tick%liveProbeTick == i%liveProbeTick {
				probe = r.Probes
				r.Probes++
				buf = fmt.Appendf(buf, "2026-11-30T12:00:00Z INFO lagprobe lp%d written to %s\n", probe, filepath.Base(f.Name()))
			}
			owed[i] -= float64(len(buf))
			if _, err := f.Write(buf); err != nil {
				return err
			}
			if probe >= 0 {
				r.probeWrites[probe] = time.Now()
			}
			r.Bytes += int64(len(buf))
			r.Lines += int64(bytes.Count(buf, []byte{'\n'}))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// liveQueries are the searches of the load: a common term (a page of
// hits), a selective term, a rare id and a regex.
func liveQueries() []string {
	trace := needleTexts(loggen.ProfileHighCard)[loggen.NeedleTrace]
	return []string{
		"/api/search?q=error&limit=100",
		"/api/search?q=deadlock&limit=100",
		"/api/search?mode=literal&limit=100&q=" + url.QueryEscape(trace),
		"/api/search?mode=regex&limit=100&q=" + url.QueryEscape(`pool exhausted: all [0-9]+ connections`),
	}
}

// searchAtRate sends the queries in turn at qps, open-loop, until ctx
// ends, and returns their latencies.
func searchAtRate(ctx context.Context, s *served, queries []string, qps float64) *SearchStats {
	if qps <= 0 {
		return nil
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var lat []time.Duration
	errs, failed := 0, map[string]int{}
	cl := &http.Client{Timeout: 30 * time.Second}
	t := time.NewTicker(time.Duration(float64(time.Second) / qps))
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-ctx.Done():
			wg.Wait()
			st := &SearchStats{N: len(lat), Errors: errs, Failed: failed}
			if len(lat) > 0 {
				st.P50, st.P99 = quantileOf(lat, 0.5), quantileOf(lat, 0.99)
				st.Max = quantileOf(lat, 1)
			}
			return st
		case <-t.C:
		}
		wg.Add(1)
		go func(u string) {
			defer wg.Done()
			t0 := time.Now()
			resp, err := cl.Get(u)
			ok := err == nil && resp.StatusCode == http.StatusOK
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			d := time.Since(t0)
			mu.Lock()
			switch {
			case ok:
				lat = append(lat, d)
			case err != nil:
				errs++
				failed["client error"]++
			default:
				errs++
				failed[strconv.Itoa(resp.StatusCode)]++
			}
			mu.Unlock()
		}(s.url(queries[i%len(queries)]))
	}
}

// tailProbes follows /api/tail and reports each probe line's number and
// arrival time; up is closed once the stream has started.
func tailProbes(ctx context.Context, u string, up chan struct{}, seen func(int, time.Time)) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	started := false
	for sc.Scan() {
		line := sc.Text()
		if !started && strings.HasPrefix(line, "id:") {
			started = true
			close(up)
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		var hit struct{ Text string }
		if json.Unmarshal([]byte(data), &hit) != nil {
			continue
		}
		if _, rest, ok := strings.Cut(hit.Text, "lagprobe lp"); ok {
			num, _, _ := strings.Cut(rest, " ")
			if id, err := strconv.Atoi(num); err == nil {
				seen(id, time.Now())
			}
		}
	}
}

// readLines reads the lines of files (each with its newline).
func readLines(paths []string) ([][]byte, error) {
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		for len(b) > 0 {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				break // a last line without newline would join the next
			}
			out = append(out, b[:i+1])
			b = b[i+1:]
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("live: no lines in the pool corpus")
	}
	return out, nil
}

func quantileOf(ds []time.Duration, q float64) float64 {
	return quantile(distSorted(ds), q)
}
