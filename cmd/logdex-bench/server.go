package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
)

// ServerResult is the server section. It runs only when the binary has a
// `serve` command (probed with `logdex serve -h`).
type ServerResult struct {
	Skipped  string        `json:"skipped,omitempty"`
	Probe    string        `json:"probe,omitempty"` // the search whose first answer start-up waits for
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

func (b *bench) server(cr *CorpusResult) error {
	c, ixDir := cr.Corpus, cr.index
	res := &ServerResult{Probe: searchPath(c)}
	cr.Server = res
	common, needle := "mallory (100 of its hits)", loggen.NeedleReqID
	if c.Profile == loggen.ProfileHighCard {
		common, needle = "error (100 of its hits)", loggen.NeedleTrace
	}
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
	if err := b.serverLoad(res, s, common, res.Probe, true, []int{1, 16, 64}); err != nil {
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
	if n, ok := c.needle(needle); ok {
		p := "/api/search?q=" + url.QueryEscape(n.Text) + "&mode=query&limit=100"
		what := map[string]string{loggen.NeedleReqID: "request id", loggen.NeedleTrace: "trace id"}[needle]
		if err := b.serverLoad(res, nc, fmt.Sprintf("%s (%d line%s)", what, n.Lines, plural(n.Lines)), p, false, []int{1, 64}); err != nil {
			return err
		}
	} else {
		res.Notes = append(res.Notes, "no planted "+needle+" needle in this corpus: needle load not measured")
	}
	if err := b.serverLoad(res, nc, common, res.Probe, false, []int{1, 64}); err != nil {
		return err
	}
	if err := b.serverFloor(res, nc.url(res.Probe), common); err != nil {
		return err
	}
	// The same word's page newest first (one timeline across files),
	// beside its own floor.
	newest := strings.Fields(common)[0] + " newest first (100 of its hits)"
	if err := b.serverLoad(res, nc, newest, res.Probe+"&order=newest", false, []int{64}); err != nil {
		return err
	}
	if err := b.serverFloor(res, nc.url(res.Probe+"&order=newest"), newest); err != nil {
		return err
	}
	// A phrase's page, which verifies its candidates, beside its own
	// floor (its body differs in size).
	ph, err := b.serverPhrase(c, ix)
	if err != nil {
		return err
	}
	pp := "/api/search?q=" + url.QueryEscape(ph) + "&mode=query&limit=100"
	name := "phrase " + ph + " (100 of its hits)"
	if err := b.serverLoad(res, nc, name, pp, false, []int{64}); err != nil {
		return err
	}
	return b.serverFloor(res, nc.url(pp), name)
}

// serverPhrase is the phrase of the corpus's query set.
func (b *bench) serverPhrase(c *corpus, ix string) (string, error) {
	if c.Profile == loggen.ProfileHighCard {
		for _, d := range highcardQueryDefs() {
			if d.Kind == "phrase" {
				return d.Text, nil
			}
		}
	}
	s, closeS, err := openSearcher(ix)
	if err != nil {
		return "", err
	}
	defer closeS()
	return choosePhrase(s, c).Text, nil
}

// serverFloor measures the floor the uncached figures stand beside: a
// minimal Go net/http server in this process answering every request with
// the body logdex gave for the same page (same size, same Content-Type),
// at 64 connections, under the same load generator.
func (b *bench) serverFloor(res *ServerResult, u, what string) error {
	resp, err := http.Get(u)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		res.Notes = append(res.Notes, fmt.Sprintf("floor not measured: GET %s: %d %v", u, resp.StatusCode, err))
		return nil
	}
	ct := resp.Header.Get("Content-Type")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", ct)
		w.Write(body)
	})}
	go srv.Serve(ln)
	defer srv.Close()
	floor := &served{addr: ln.Addr().String()}
	name := fmt.Sprintf("floor: minimal Go net/http server, the same %s body (%d bytes)", what, len(body))
	return b.serverLoad(res, floor, name, "/", false, []int{64})
}

// served is a running logdex serve.
type served struct {
	cmd   *exec.Cmd
	addr  string
	probe string // searchPath of the corpus
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
	return b.startServerBin(b.bin, c, ix, extra)
}

// startServerBin starts `bin serve` (another logdex binary: a baseline).
func (b *bench) startServerBin(bin string, c *corpus, ix string, extra []string) (*served, error) {
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
	cmd := exec.Command(bin, append(args, c.Dir)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	s := &served{cmd: cmd, addr: addr, probe: searchPath(c), log: logf.Name(), exit: make(chan error, 1)}
	s.start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.exit <- cmd.Wait() }()
	return s, nil
}

func (s *served) url(path string) string { return "http://" + s.addr + path }

// searchPath is the query the server section asks of a corpus: a term
// with more than a page (100) of hits.
func searchPath(c *corpus) string {
	if c.Profile == loggen.ProfileHighCard {
		return "/api/search?q=error&mode=query&limit=100"
	}
	return "/api/search?q=mallory&mode=query&limit=100"
}

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
		if first == 0 && ok(s.probe) {
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
			return 0, 0, fmt.Errorf("logdex serve: no answer to %s and /readyz within %v: %s", s.probe, limit, tail(s.log))
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

// serverLoad measures search QPS and latency at each of conns connections
// (the most only, with --smoke), with wrk when installed, else with a Go
// load generator in this process. wrk counts whole seconds: a shorter run
// (a smoke run's) takes the Go generator, not a second per row.
func (b *bench) serverLoad(res *ServerResult, s *served, name, path string, cache bool, conns []int) error {
	u := s.url(path)
	if code, err := get(u); err != nil || code != http.StatusOK {
		res.Notes = append(res.Notes, fmt.Sprintf("GET %s answered %d (%v): load not measured", path, code, err))
		return nil
	}
	dur := time.Duration(b.cfg.serverSeconds * float64(time.Second))
	if b.cfg.smoke {
		conns = conns[len(conns)-1:] // the most connections only: a smoke run checks the path, not the curve
	}
	useWrk := b.rep.Machine.Wrk != "" && dur >= time.Second
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

var (
	wrkRPS     = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkPct     = regexp.MustCompile(`(?m)^\s+(50|99)(?:\.000)?%\s+([0-9.]+)(us|ms|s|m)\s*$`)
	wrkNon2xx  = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	wrkSockErr = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
)

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
