// Command logdex-bench measures logdex against grep and ripgrep, side by
// side and reproducibly:
//
//	go run ./cmd/logdex-bench --mb 1024 --runs 5
//	go run ./cmd/logdex-bench --smoke            # tiny, all sections, for CI
//
// It generates (or reuses, cached by profile, size and seed under the user
// cache directory) corpora with fixtures/loggen — the loggen profile and
// the high-cardinality one, both by default (--profile) — builds the
// logdex binary with CGO_ENABLED=0 go build (as it is released: a static
// binary starts ~1 ms sooner), builds the indexes, and then measures, in
// one session, on every corpus, and
// interleaved (A B C A B C ...), whole-process logdex, in-process searches
// (query.Searcher in this process), rg and grep. Every figure is a median of
// several runs, after one untimed warm-up run (the page cache is warm), and
// every speed ratio is computed from runs of the same session. Counts of
// matching lines are verified between logdex, rg and grep; a mismatch is
// reported loudly and makes the exit status 3.
//
// Sections (--only): index, query, server, warmup (per corpus), process
// (process start, process.go), scaling,
// time and compressed (loggen profile only), smallfiles (a tree of
// --small-files files of a few lines, smallfiles.go); live (highcard lines appended
// while searching, see live.go) only when named. A section whose
// prerequisites are missing (no index yet, no `logdex serve`) is skipped
// with a note. The report is Markdown on stdout (and --out FILE, where it
// replaces the part between the markers, see writeOut) and JSON (--json
// FILE) with a description of the machine.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
)

// config is the parsed command line.
type config struct {
	profiles      []string // loggen profiles of the generated corpora
	mb, seed      int64
	runs          int
	indexRuns     int
	only          map[string]bool
	scaleMB       []int64
	out, jsonOut  string
	smoke         bool
	cacheDir      string
	corpusDir     string // --corpus: reuse this tree instead of generating
	indexDir      string // --index: reuse this index for queries and server
	logdexBin     string // --logdex: a prebuilt binary
	serverSeconds float64
	warmupMB      int64
	inprocMin     time.Duration
	timeout       time.Duration
	liveMBps      float64  // live section: append rate,
	liveSeconds   float64  // its duration,
	liveFiles     int      // files appended to,
	liveQPS       float64  // searches a second meanwhile
	smallFiles    int      // smallfiles section: files in the tree
	smallBase     string   // --smallfiles-baseline: another logdex binary timed beside (same index format)
	warmupBase    string   // --warmup-baseline: another logdex binary started beside (same index format)
	args          []string // as given, for the reproduce line
}

var sections = []string{"index", "query", "process", "scaling", "server", "warmup", "time", "compressed", "smallfiles"}

// optInSections run only when --only names them: the live section is a
// minute of sustained load.
var optInSections = []string{"live"}

var sectionAlias = map[string]string{
	"index": "index", "indexing": "index",
	"query": "query", "queries": "query",
	"process": "process", "processes": "process",
	"scaling": "scaling", "scale": "scaling",
	"server": "server", "serve": "server",
	"warmup": "warmup", "warm-up": "warmup", "startup": "warmup",
	"time": "time", "compressed": "compressed",
	"live": "live", "smallfiles": "smallfiles", "small-files": "smallfiles",
}

func parseFlags(args []string, stderr io.Writer) (*config, error) {
	c := &config{args: args}
	fs := flag.NewFlagSet("logdex-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Int64Var(&c.mb, "mb", 1024, "corpus size in MiB")
	profile := fs.String("profile", "both", "corpora: loggen, highcard or both (the index, query and server sections run on each)")
	fs.Int64Var(&c.seed, "seed", 1, "corpus generator seed")
	fs.IntVar(&c.runs, "runs", 5, "timed runs per figure (medians of these)")
	fs.IntVar(&c.indexRuns, "index-runs", 3, "timed indexing runs")
	only := fs.String("only", strings.Join(sections, ","), "comma-separated sections: "+strings.Join(sections, ",")+"; and, only when named, "+strings.Join(optInSections, ","))
	scale := fs.String("scale-mb", "", "corpus sizes in MiB for the scaling section (default: MB/4,MB, i.e. 256,1024)")
	fs.StringVar(&c.out, "out", "", "also write the Markdown report to `FILE`")
	fs.StringVar(&c.jsonOut, "json", "", "write the results as JSON to `FILE`")
	fs.BoolVar(&c.smoke, "smoke", false, "CI smoke run: tiny corpus, 1 run each, all sections")
	fs.StringVar(&c.cacheDir, "cache-dir", "", "where corpora and indexes are cached (default: user cache dir/logdex-bench)")
	fs.StringVar(&c.corpusDir, "corpus", "", "use this existing log tree instead of a generated corpus")
	fs.StringVar(&c.indexDir, "index", "", "use this existing index of --corpus for queries and server (not rebuilt)")
	fs.StringVar(&c.logdexBin, "logdex", "", "use this logdex binary instead of building one")
	fs.Float64Var(&c.serverSeconds, "server-seconds", 5, "duration of each load run against the server (wrk counts whole seconds: below 1, the Go load generator runs instead)")
	fs.Int64Var(&c.warmupMB, "warmup-mb", 4096, "corpus size in MiB for the warm-up section (small indexes page in within milliseconds)")
	fs.DurationVar(&c.inprocMin, "inproc-min", 300*time.Millisecond, "in-process: iterate at least this long per round")
	fs.DurationVar(&c.timeout, "timeout", 15*time.Minute, "limit for any one child process")
	fs.Float64Var(&c.liveMBps, "live-mbps", 5, "live section: MB/s appended")
	fs.Float64Var(&c.liveSeconds, "live-seconds", 60, "live section: seconds of appending")
	fs.IntVar(&c.liveFiles, "live-files", 20, "live section: files appended to")
	fs.IntVar(&c.smallFiles, "small-files", 100_000, "smallfiles section: files in the tree (a few lines each)")
	fs.StringVar(&c.smallBase, "smallfiles-baseline", "", "smallfiles section: also time this logdex `binary` (of the same index format), interleaved, as a baseline")
	fs.StringVar(&c.warmupBase, "warmup-baseline", "", "warmup section: also start this logdex `binary` (of the same index format), staged and eager, interleaved, as a baseline")
	fs.Float64Var(&c.liveQPS, "live-qps", 20, "live section: searches a second during the load (and on the settled index); 0: none, to see indexing alone")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.smoke {
		for name, v := range map[string]string{"mb": "4", "runs": "1", "index-runs": "1", "server-seconds": "0.15", "inproc-min": "20ms", "warmup-mb": "4", "small-files": "300"} {
			if !set[name] {
				fs.Set(name, v)
			}
		}
	}
	switch *profile {
	case "both":
		c.profiles = loggen.Profiles()
	case loggen.ProfileLoggen, loggen.ProfileHighCard:
		c.profiles = []string{*profile}
	default:
		return nil, fmt.Errorf("--profile: want loggen, highcard or both, not %q", *profile)
	}
	if c.corpusDir != "" {
		c.profiles = c.profiles[:1] // one given tree; its queries are those of the first profile
	}
	if *scale == "" {
		*scale = fmt.Sprintf("%d,%d", max(c.mb/4, 1), c.mb)
	}
	c.only = map[string]bool{}
	for _, s := range strings.Split(*only, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		name, ok := sectionAlias[s]
		if !ok {
			return nil, fmt.Errorf("--only: unknown section %q (want %s)", s, strings.Join(append(sections, optInSections...), ","))
		}
		c.only[name] = true
	}
	for _, s := range strings.Split(*scale, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("--scale-mb: bad size %q", s)
		}
		c.scaleMB = append(c.scaleMB, n)
	}
	if c.mb <= 0 || c.runs < 1 || c.indexRuns < 1 || c.smallFiles < 1 {
		return nil, errors.New("--mb, --runs, --index-runs and --small-files must be positive")
	}
	if c.liveMBps <= 0 || c.liveSeconds <= 0 || c.liveFiles < 1 || c.liveQPS < 0 {
		return nil, errors.New("--live-mbps, --live-seconds and --live-files must be positive, --live-qps not negative")
	}
	if c.indexDir != "" && c.corpusDir == "" {
		return nil, errors.New("--index needs --corpus (the tree it indexes)")
	}
	if c.cacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("no user cache dir (set --cache-dir): %w", err)
		}
		c.cacheDir = filepath.Join(base, "logdex-bench")
	}
	for _, p := range []*string{&c.cacheDir, &c.corpusDir, &c.indexDir, &c.logdexBin, &c.smallBase, &c.warmupBase} {
		if *p != "" {
			abs, err := filepath.Abs(*p)
			if err != nil {
				return nil, err
			}
			*p = abs
		}
	}
	return c, nil
}

// onlyOptIn tells whether only opt-in sections run: their report goes to
// a generated part of its own.
func (c *config) onlyOptIn() bool {
	for _, s := range sections {
		if c.only[s] {
			return false
		}
	}
	return len(c.only) > 0
}

// bench is one session: its configuration, the binary and the report.
type bench struct {
	cfg     *config
	ctx     context.Context
	log     io.Writer // progress (stderr)
	modRoot string
	tmp     string // session temp dir (binary, scratch indexes)
	bin     string // logdex binary
	rep     *Report
}

func (b *bench) logf(format string, a ...any) {
	fmt.Fprintf(b.log, "logdex-bench: "+format+"\n", a...)
}

func (b *bench) note(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	b.rep.Notes = append(b.rep.Notes, s)
	b.logf("note: %s", s)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command; exit status 0, 1 on errors, 2 on usage, 3 when
// counts disagree between logdex, rg and grep.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "logdex-bench:", err)
		}
		return 2
	}
	start := time.Now()
	b := &bench{cfg: cfg, ctx: ctx, log: stderr, modRoot: moduleRoot()}
	b.rep = &Report{Command: reproduce(cfg.args), Machine: describeMachine(b.modRoot)}
	if err := b.all(); err != nil {
		fmt.Fprintln(stderr, "logdex-bench:", err)
		return 1
	}
	b.rep.Elapsed = time.Since(start).Round(time.Second).String()
	md := b.rep.Markdown()
	fmt.Fprint(stdout, md)
	if cfg.out != "" {
		write := writeOut
		if cfg.onlyOptIn() {
			write = func(path, md string) error {
				return writeOutPart(path, md, liveBeginMarker, liveEndMarker, endMarker)
			}
		}
		if err := write(cfg.out, md); err != nil {
			fmt.Fprintln(stderr, "logdex-bench:", err)
			return 1
		}
	}
	if cfg.jsonOut != "" {
		if err := b.rep.WriteJSON(cfg.jsonOut); err != nil {
			fmt.Fprintln(stderr, "logdex-bench:", err)
			return 1
		}
	}
	if len(b.rep.Mismatches) > 0 {
		fmt.Fprintf(stderr, "logdex-bench: %d COUNT MISMATCHES (see the report)\n", len(b.rep.Mismatches))
		return 3
	}
	return 0
}

func (b *bench) all() error {
	cfg := b.cfg
	if err := os.MkdirAll(cfg.cacheDir, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(cfg.cacheDir, "session-")
	if err != nil {
		return err
	}
	b.tmp = tmp
	defer os.RemoveAll(tmp)

	if err := b.buildBinary(); err != nil {
		return err
	}
	// Each section runs on every corpus before the next section starts, so
	// that the figures of the corpora come from the same stretch of time.
	if cfg.only["index"] || cfg.only["query"] || cfg.only["process"] || cfg.only["server"] {
		for _, p := range cfg.profiles {
			c, err := b.corpus(p, cfg.mb)
			if err != nil {
				return err
			}
			ix := cfg.indexDir
			if ix == "" {
				ix = b.indexCachePath(c)
			}
			b.rep.Corpora = append(b.rep.Corpora, &CorpusResult{Profile: p, Corpus: c, index: ix})
		}
	}
	perCorpus := func(section func(*CorpusResult) error) error {
		for _, cr := range b.rep.Corpora {
			if err := section(cr); err != nil {
				return err
			}
		}
		return nil
	}
	if cfg.only["index"] {
		if err := perCorpus(b.indexing); err != nil {
			return err
		}
	}
	if cfg.only["query"] {
		if err := perCorpus(b.queries); err != nil {
			return err
		}
	}
	if cfg.only["process"] {
		if err := b.processSection(); err != nil {
			return err
		}
	}
	if cfg.only["scaling"] {
		if err := b.scaling(); err != nil {
			return err
		}
	}
	if cfg.only["server"] {
		if err := perCorpus(b.server); err != nil {
			return err
		}
	}
	if cfg.only["warmup"] {
		if err := b.warmup(); err != nil {
			return err
		}
	}
	if cfg.only["time"] {
		if err := b.timeSection(); err != nil {
			return err
		}
	}
	if cfg.only["compressed"] {
		if err := b.compressedSection(); err != nil {
			return err
		}
	}
	if cfg.only["smallfiles"] {
		if err := b.smallFilesSection(); err != nil {
			return err
		}
	}
	if cfg.only["live"] {
		if err := b.live(); err != nil {
			return err
		}
	}
	return b.ctx.Err()
}

// reproduce is the command line that produces the same report.
func reproduce(args []string) string {
	parts := []string{"go run ./cmd/logdex-bench"}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=./,:@+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
