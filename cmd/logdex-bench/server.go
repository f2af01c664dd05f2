package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
)

// ServerResult is the server section. It runs only when the binary has a
// `serve` command (probed with `logdex serve -h`).
type ServerResult struct {
	Skipped  string        `json:"skipped,omitempty"`
	Load     []LoadRow     `json:"load,omitempty"`
	LoadTool string        `json:"load_tool,omitempty"`
	Transfer []TransferRow `json:"transfer,omitempty"`
	Startup  []StartupRow  `json:"startup,omitempty"`
	Notes    []string      `json:"notes,omitempty"`
}

// LoadRow is search throughput and latency at one concurrency (medians
// over runs of --server-seconds each).
type LoadRow struct {
	Query  string  `json:"query"` // what was asked, and how
	Cache  bool    `json:"cache"` // the server's 1 s answer cache was on
	Conns  int     `json:"conns"`
	QPS    float64 `json:"qps"`
	QPSMin float64 `json:"qps_min"`
	QPSMax float64 `json:"qps_max"`
	P50    float64 `json:"p50_s"`
	P99    float64 `json:"p99_s"`
	Errors int     `json:"errors"`
}

// TransferRow is the download throughput of one way of sending a file.
type TransferRow struct {
	Name   string  `json:"name"`
	Bytes  int64   `json:"bytes"`
	MBps   float64 `json:"mb_per_s"` // median
	MBpsLo float64 `json:"mb_per_s_min"`
	MBpsHi float64 `json:"mb_per_s_max"`
}

// StartupRow is the time from exec to the first answer for a warm-up mode.
type StartupRow struct {
	Mode        string `json:"mode"`
	FirstAnswer *Dist  `json:"first_answer"`
	Ready       *Dist  `json:"readyz"`
}

type serveProbe struct {
	exists, warmup bool
	why            string
}

// probeServe asks the binary whether it can serve yet.
func (b *bench) probeServe() serveProbe {
	cmd := exec.CommandContext(b.ctx, b.bin, "serve", "-h")
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		code = -1
		if cmd.ProcessState != nil {
			code = cmd.ProcessState.ExitCode()
		}
	}
	s := string(out)
	p := serveProbe{warmup: strings.Contains(s, "warmup")}
	// flag.ContinueOnError commands exit 2 on -h after printing their flags.
	p.exists = code == 0 || strings.Contains(s, "-addr") && !strings.Contains(s, "not yet")
	if !p.exists {
		p.why = fmt.Sprintf("`logdex serve -h` exits %d (%s): the server is not built yet", code, strings.TrimSpace(firstLine(s)))
	}
	return p
}

func (b *bench) server(c *corpus, ixDir string) error {
	res := &ServerResult{}
	b.rep.Server = res
	p := b.probeServe()
	if !p.exists {
		res.Skipped = p.why
		b.logf("server skipped: %s", p.why)
		return nil
	}
	ix, why := b.readyIndex(c, ixDir, false)
	if why != "" {
		res.Skipped = why
		b.logf("server skipped: %s", why)
		return nil
	}
	warm(c.Dir, ix)
	if err := b.serverStartup(res, c, ix, p.warmup); err != nil {
		return err
	}
	s, err := b.startServer(c, ix, nil)
	if err != nil {
		return err
	}
	defer s.stop()
	if _, _, err := s.waitUp(b.ctx, 2*time.Minute); err != nil {
		return err
	}
	if err := b.serverLoad(res, s, "mallory (100 of its hits)", searchPath, true, []int{1, 16, 64}); err != nil {
		return err
	}
	if err := b.serverTransfer(res, s, c); err != nil {
		return err
	}
	// Again with the answer cache off: every request is a search.
	s.stop()
	nc, err := b.startServer(c, ix, []string{"--cache-ttl", "0"})
	if err != nil {
		return err
	}
	defer nc.stop()
	if _, _, err := nc.waitUp(b.ctx, 2*time.Minute); err != nil {
		return err
	}
	if n, ok := c.needle(loggen.NeedleReqID); ok {
		p := "/api/search?q=" + url.QueryEscape(n.Text) + "&mode=query&limit=100"
		if err := b.serverLoad(res, nc, fmt.Sprintf("request id (%d line%s)", n.Lines, plural(n.Lines)), p, false, []int{1, 64}); err != nil {
			return err
		}
	} else {
		res.Notes = append(res.Notes, "no planted request id in this corpus: needle load not measured")
	}
	return b.serverLoad(res, nc, "mallory (100 of its hits)", searchPath, false, []int{1, 64})
}

// served is a running logdex serve.
type served struct {
	cmd   *exec.Cmd
	addr  string
	start time.Time
	log   string
	exit  chan error
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func (b *bench) startServer(c *corpus, ix string, extra []string) (*served, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.CreateTemp(b.tmp, "serve-*.log")
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	args := append([]string{"serve", "--addr", addr, "--index", ix}, extra...)
	cmd := exec.Command(b.bin, append(args, c.Dir)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	s := &served{cmd: cmd, addr: addr, log: logf.Name(), exit: make(chan error, 1)}
	s.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.exit <- cmd.Wait() }()
	return s, nil
}

func (s *served) url(path string) string { return "http://" + s.addr + path }

// searchPath is the query the server section asks.
const searchPath = "/api/search?q=mallory&mode=query&limit=100"

// waitUp polls the search endpoint and /readyz until both answer 200 and
// returns the time from exec to each.
func (s *served) waitUp(ctx context.Context, limit time.Duration) (first, ready time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cl := &http.Client{Timeout: 5 * time.Second}
	ok := func(path string) bool {
		req, _ := http.NewRequestWithContext(ctx, "GET", s.url(path), nil)
		resp, err := cl.Do(req)
		if err != nil {
			return false
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
	for first == 0 || ready == 0 {
		if first == 0 && ok(searchPath) {
			first = time.Since(s.start)
		}
		if ready == 0 && ok("/readyz") {
			ready = time.Since(s.start)
		}
		select {
		case err := <-s.exit:
			s.exit <- err
			return 0, 0, fmt.Errorf("logdex serve exited (%v): %s", err, tail(s.log))
		case <-ctx.Done():
			return 0, 0, fmt.Errorf("logdex serve: no answer to %s and /readyz within %v: %s", searchPath, limit, tail(s.log))
		case <-time.After(5 * time.Millisecond):
		}
	}
	return first, ready, nil
}

// stop ends the server this session started (SIGTERM, then SIGKILL).
func (s *served) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exit:
		s.exit <- err
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 800 {
		b = b[len(b)-800:]
	}
	return strings.TrimSpace(string(b))
}

// serverStartup measures exec → first answer per warm-up mode, modes
// interleaved per round; the page cache is warm.
func (b *bench) serverStartup(res *ServerResult, c *corpus, ix string, hasWarmup bool) error {
	modes := []string{"default"}
	if hasWarmup {
		modes = []string{"staged", "eager", "off"}
	} else {
		res.Notes = append(res.Notes, "`logdex serve` has no --warmup flag yet: start-up measured in its default mode only")
	}
	firsts := make([][]time.Duration, len(modes))
	readys := make([][]time.Duration, len(modes))
	for r := 0; r < b.cfg.runs; r++ {
		for i, m := range modes {
			var extra []string
			if m != "default" {
				extra = []string{"--warmup=" + m}
			}
			s, err := b.startServer(c, ix, extra)
			if err != nil {
				return err
			}
			f, rd, err := s.waitUp(b.ctx, 2*time.Minute)
			s.stop()
			if err != nil {
				return err
			}
			firsts[i] = append(firsts[i], f)
			readys[i] = append(readys[i], rd)
		}
	}
	for i, m := range modes {
		res.Startup = append(res.Startup, StartupRow{Mode: m, FirstAnswer: distOf(firsts[i], true), Ready: distOf(readys[i], true)})
	}
	return nil
}

// serverLoad measures search QPS and latency at 1, 16 and 64 connections,
// with wrk when installed, else with a Go load generator in this process.
func (b *bench) serverLoad(res *ServerResult, s *served, name, path string, cache bool, conns []int) error {
	u := s.url(path)
	if code, err := get(u); err != nil || code != http.StatusOK {
		res.Notes = append(res.Notes, fmt.Sprintf("GET %s answered %d (%v): load not measured", path, code, err))
		return nil
	}
	dur := time.Duration(b.cfg.serverSeconds) * time.Second
	useWrk := b.rep.Machine.Wrk != ""
	res.LoadTool = "go load generator (in this process)"
	if useWrk {
		res.LoadTool = "wrk"
	}
	type acc struct {
		qps, p50, p99 []float64
		errs          int
	}
	accs := make([]acc, len(conns))
	for r := 0; r < b.cfg.runs; r++ {
		for i, n := range conns {
			var qps, p50, p99 float64
			var errs int
			var err error
			if useWrk {
				qps, p50, p99, errs, err = b.wrk(u, n, dur)
			} else {
				qps, p50, p99, errs = goLoad(b.ctx, u, n, dur)
			}
			if err != nil {
				return err
			}
			a := &accs[i]
			a.qps, a.p50, a.p99 = append(a.qps, qps), append(a.p50, p50), append(a.p99, p99)
			a.errs += errs
		}
	}
	for i, n := range conns {
		a := accs[i]
		q := append([]float64(nil), a.qps...)
		sort.Float64s(q)
		res.Load = append(res.Load, LoadRow{Query: name, Cache: cache, Conns: n, QPS: median(q), QPSMin: q[0], QPSMax: q[len(q)-1],
			P50: median(a.p50), P99: median(a.p99), Errors: a.errs})
	}
	return nil
}

func get(u string) (int, error) {
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(u)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

var (
	wrkRPS     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkPct     = regexp.MustCompile(`(?m)^\s+(50|99)(?:\.000)?%\s+([0-9.]+)(us|ms|s|m)\s*$`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	wrkSockErr = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

func (b *bench) wrk(u string, conns int, dur time.Duration) (qps, p50, p99 float64, errs int, err error) {
	threads := min(conns, b.rep.Machine.Cores)
	r, err := runProc(b.ctx, nil, nil, 0, "wrk", "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns),
		"-d", fmt.Sprintf("%ds", int(dur.Seconds())), "--latency", u)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	out := string(r.Stdout)
	if m := wrkRPS.FindStringSubmatch(out); m != nil {
		qps, _ = strconv.ParseFloat(m[1], 64)
	} else {
		return 0, 0, 0, 0, fmt.Errorf("cannot read wrk output: %s", out)
	}
	unit := map[string]float64{"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}
	for _, m := range wrkPct.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		if m[1] == "50" {
			p50 = v * unit[m[3]]
		} else {
			p99 = v * unit[m[3]]
		}
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		errs += n
	}
	if m := wrkSockErr.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.Atoi(s)
			errs += n
		}
	}
	return qps, p50, p99, errs, nil
}

// goLoad keeps conns requests in flight for dur against u (loopback only:
// the URL is always the session's own server).
func goLoad(ctx context.Context, u string, conns int, dur time.Duration) (qps, p50, p99 float64, errs int) {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	var mu sync.Mutex
	var lats []float64
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []float64
			bad := 0
			for ctx.Err() == nil {
				t := time.Now()
				req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
				resp, err := cl.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if ctx.Err() != nil {
					break
				}
				if err != nil || resp.StatusCode != http.StatusOK {
					bad++
					continue
				}
				mine = append(mine, time.Since(t).Seconds())
			}
			mu.Lock()
			lats = append(lats, mine...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(t0).Seconds()
	sort.Float64s(lats)
	return float64(len(lats)) / el, quantile(lats, 0.5), quantile(lats, 0.99), errs
}

// serverTransfer compares downloading the largest file from logdex's
// content endpoint with two reference servers in this process on the same
// file: http.ServeContent (sendfile) and a 32 KiB read/write copy loop.
func (b *bench) serverTransfer(res *ServerResult, s *served, c *corpus) error {
	path, size := largestFile(c)
	id, err := fileID(s.url("/api/files"), relPath(path, c.Dir), size)
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("transfer not measured: %v", err))
		return nil
	}
	ref, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/sendfile", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			http.Error(w, "open", 500)
			return
		}
		defer f.Close()
		http.ServeContent(w, r, "", time.Time{}, f)
	})
	mux.HandleFunc("/copy", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			http.Error(w, "open", 500)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		buf := make([]byte, 32<<10)
		io.CopyBuffer(struct{ io.Writer }{w}, struct{ io.Reader }{f}, buf) // no ReadFrom: a plain loop
	})
	hs := &http.Server{Handler: mux}
	go hs.Serve(ref)
	defer hs.Close()
	refURL := "http://" + ref.Addr().String()
	targets := []struct{ name, url string }{
		{"logdex /api/files/{id}/content", s.url("/api/files/" + url.PathEscape(id) + "/content")},
		{"reference: http.ServeContent (sendfile)", refURL + "/sendfile"},
		{"reference: 32 KiB read/write loop", refURL + "/copy"},
	}
	var es []*engine
	got := make([]int64, len(targets))
	for i, t := range targets {
		es = append(es, &engine{name: t.name, run: func(bool) ([]time.Duration, int64, map[string]int64, error) {
			t0 := time.Now()
			n, err := download(b.ctx, t.url)
			got[i] = n
			return []time.Duration{time.Since(t0)}, -1, nil, err
		}})
	}
	if err := b.interleave(es, b.cfg.runs); err != nil {
		return err
	}
	for i, e := range es {
		if got[i] != size {
			res.Notes = append(res.Notes, fmt.Sprintf("%s sent %d bytes, the file has %d", e.name, got[i], size))
		}
		d := distOf(e.samples, true)
		mbps := func(s float64) float64 { return float64(got[i]) / s / 1e6 }
		res.Transfer = append(res.Transfer, TransferRow{Name: e.name, Bytes: got[i], MBps: mbps(d.Median), MBpsLo: mbps(d.Max), MBpsHi: mbps(d.Min)})
	}
	res.Notes = append(res.Notes, fmt.Sprintf("transfer: %s (%.1f MB) downloaded over loopback by a Go client in this process, which shares the %d cores", relPath(path, c.Dir), float64(size)/1e6, b.rep.Machine.Cores))
	return nil
}

func largestFile(c *corpus) (string, int64) {
	best, size := "", int64(-1)
	for _, p := range c.paths {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	return best, size
}

type noReadFrom struct{ io.Writer }

func download(ctx context.Context, u string) (int64, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return io.CopyBuffer(noReadFrom{io.Discard}, resp.Body, make([]byte, 256<<10))
}

// fileID finds the id of the file rel (or else the largest) in the
// /api/files answer, whatever its exact shape: any JSON object with an "id"
// field counts; "path"/"name" and "size" help choose.
func fileID(u, rel string, size int64) (string, error) {
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /api/files: %s", resp.Status)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // ids may be 64-bit
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("GET /api/files: %w", err)
	}
	type cand struct {
		id   string
		size int64
		path string
	}
	var cs []cand
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if id, ok := x["id"]; ok {
				c := cand{id: fmt.Sprint(id)}
				for _, k := range []string{"size", "bytes", "Size"} {
					if n, ok := x[k].(json.Number); ok {
						c.size, _ = n.Int64()
					}
				}
				for _, k := range []string{"path", "name", "Path"} {
					if p, ok := x[k].(string); ok {
						c.path = p
					}
				}
				cs = append(cs, c)
				return
			}
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	if len(cs) == 0 {
		return "", errors.New("GET /api/files: no object with an \"id\" in the answer")
	}
	for _, c := range cs {
		if c.path != "" && (filepath.ToSlash(c.path) == rel || strings.HasSuffix(filepath.ToSlash(c.path), "/"+rel)) {
			return c.id, nil
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].size > cs[j].size })
	return cs[0].id, nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
