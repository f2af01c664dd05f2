package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/server"
	"github.com/logdex/logdex/web"
	"github.com/rs/zerolog"
)

const serveUsage = `Usage: logdex serve [flags] PATH...
       logdex serve [flags] --index DIR

Indexes PATH (or brings its index up to date), serves the HTTP API and web
UI at --addr, indexes appended lines as they come (--live-delay after a
change inotify reports), re-indexes every --reindex and on SIGHUP, merging
small segments in the background, and shuts down
gracefully on SIGINT or SIGTERM. Listening starts at once; /readyz answers
200 once an index is open. Binding a non-loopback address requires a token
(--auth-token or LOGDEX_TOKEN), then sent as "Authorization: Bearer TOKEN".

Flags:
`

type serveFlags struct {
	addr, index, token                       string
	reindex, timeout, writeTimeout, cacheTTL time.Duration
	liveDelay                                time.Duration
	shutdownTimeout, queueWait               time.Duration
	maxSearches, maxQueued                   int
	maxStreams, maxStreamsPerClient          int
	segMB                                    int64
	quiet, noWatch                           bool
	warmup                                   string
	warmupRate, warmupMax                    float64
}

func (e *env) serve(args []string) int {
	var sf serveFlags
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.StringVar(&sf.addr, "addr", "127.0.0.1:7070", "listen address")
	e.addTZ(fs)
	fs.StringVar(&sf.index, "index", "", "index directory (default: the user cache dir, keyed by the PATHs)")
	fs.StringVar(&sf.token, "auth-token", "", "bearer token required on /api and /metrics (default $LOGDEX_TOKEN)")
	fs.DurationVar(&sf.reindex, "reindex", 30*time.Second, "re-index interval, the fallback for changes inotify misses (0: only on SIGHUP)")
	fs.DurationVar(&sf.liveDelay, "live-delay", 250*time.Millisecond, "index appended lines this long after a change is seen (0: only every --reindex)")
	fs.DurationVar(&sf.timeout, "timeout", 30*time.Second, "longest /api/search")
	fs.DurationVar(&sf.writeTimeout, "write-timeout", 30*time.Second, "longest a client may stall a response")
	fs.DurationVar(&sf.cacheTTL, "cache-ttl", time.Second, "keep /api/search answers this long (0: no cache)")
	fs.DurationVar(&sf.shutdownTimeout, "shutdown-timeout", 30*time.Second, "longest wait for in-flight requests on shutdown")
	fs.DurationVar(&sf.queueWait, "queue-wait", time.Second, "longest a search waits for a slot before 503")
	fs.IntVar(&sf.maxSearches, "max-searches", 2*runtime.GOMAXPROCS(0), "searches running at once")
	fs.IntVar(&sf.maxStreams, "max-streams", 64, "raw searches and downloads sending at once; more get 503")
	fs.IntVar(&sf.maxStreamsPerClient, "max-streams-per-client", 8, "raw searches and downloads one client address may have sending; more get 429")
	fs.IntVar(&sf.maxQueued, "max-queued", 128*runtime.GOMAXPROCS(0), "searches waiting for a slot; more get 503 at once")
	fs.Int64Var(&sf.segMB, "segment-mb", indexer.DefaultSegmentBytes>>20, "raw MiB of logs per segment")
	fs.BoolVar(&sf.quiet, "q", false, "no indexing progress line")
	fs.BoolVar(&sf.noWatch, "no-watch", false, "do not follow file changes with inotify: every search checks every file (for network file systems, whose remote changes inotify misses)")
	fs.StringVar(&sf.warmup, "warmup", mmapstore.WarmStaged, "bring index pages into memory: staged (in the background, paced, after listening), eager (all before serving), off")
	fs.Float64Var(&sf.warmupRate, "warmup-rate", 1024, "staged warm-up: MB/s read from disk at most (0: no limit)")
	fs.Float64Var(&sf.warmupMax, "warmup-max", 0, "warm at most this many MB of index (0: half of physical memory)")
	fs.Usage = func() {
		fmt.Fprint(e.stderr, serveUsage)
		fs.PrintDefaults()
	}
	paths, err := interspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(paths) == 0 && sf.index == "" {
		fs.Usage()
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	return e.runServe(ctx, &sf, paths, hup)
}

// checkToken refuses a token no client could send: HTTP clients and
// servers strip the whitespace around a header value, so a token that is
// only whitespace, or begins or ends with it, never matches.
func checkToken(tok string) error {
	switch {
	case tok == "":
		return nil
	case strings.TrimSpace(tok) == "":
		return errors.New("--auth-token (or LOGDEX_TOKEN) is only whitespace: no client could send it")
	case strings.TrimSpace(tok) != tok:
		return errors.New("--auth-token (or LOGDEX_TOKEN) begins or ends with whitespace, which HTTP strips: no client could send it")
	case strings.ContainsAny(tok, "\r\n\x00"):
		return errors.New("--auth-token (or LOGDEX_TOKEN) holds a line break or NUL, which no HTTP header can carry")
	}
	return nil
}

// runServe serves until ctx ends (signals, or a test).
func (e *env) runServe(ctx context.Context, sf *serveFlags, paths []string, hup <-chan os.Signal) int {
	fail := func(err error) int { fmt.Fprintln(e.stderr, "logdex:", err); return 2 }
	if sf.token == "" {
		sf.token = os.Getenv("LOGDEX_TOKEN")
	}
	if err := checkToken(sf.token); err != nil {
		return fail(err)
	}
	if !isLoopback(sf.addr) && sf.token == "" {
		return fail(fmt.Errorf("listening on %s (not loopback) requires --auth-token or LOGDEX_TOKEN", sf.addr))
	}
	dir, err := indexDir(sf.index, paths)
	if err != nil {
		return fail(err)
	}
	for _, p := range paths {
		// A PATH that is not there is a typo more often than a directory
		// yet to come: served, it would answer every search with nothing.
		// (A root that goes away later is said by each failed re-index.)
		if _, err := os.Lstat(p); err != nil {
			return fail(fmt.Errorf("%s: %w", p, errors.Unwrap(err)))
		}
	}
	display := paths
	if len(paths) == 0 { // --index alone: the roots it was built for
		if paths, display, err = indexRoots(dir); err != nil {
			return fail(err)
		}
	}
	logOut := e.stderr
	if !isTerminal(e.stderr) {
		lb := newLogBuffer(e.stderr)
		defer lb.Close()
		logOut = lb
	}
	log := newLogger(logOut, zerolog.InfoLevel)
	cpus, liveWorkers, bg := backgroundProcs()
	defer bg.restore()

	// The first run shows progress as `logdex index` does; later ones
	// run in the background quietly.
	var first atomic.Bool
	first.Store(true)
	var lastRun atomic.Int64  // the last run's duration
	var liveSegs atomic.Int64 // live segments after the last run
	reindex := func(ctx context.Context, open *mmapstore.Index) (server.ReindexResult, error) {
		take, release := bg.onDemand()
		defer release()
		progress := first.Swap(false) && !sf.quiet
		level := zerolog.InfoLevel
		if !progress {
			level = zerolog.WarnLevel // live runs come several a second: warnings only
		}
		// Merging is left to the background merger: appended lines
		// never wait for it.
		lower := liveWorkerStart(time.Duration(lastRun.Load()))
		opt := indexer.Options{Dir: dir, Roots: paths, SegmentBytes: sf.segMB << 20, MergeLater: true, Workers: liveWorkers, Open: open,
			WorkerStart: func() {
				take()
				if lower != nil {
					lower()
				}
			}}
		t0 := time.Now()
		res, err := e.updateIndexOpt(ctx, opt, progress, level)
		lastRun.Store(int64(time.Since(t0)))
		if err != nil {
			return server.ReindexResult{}, err
		}
		liveSegs.Store(int64(res.Segments))
		return server.ReindexResult{Changed: res.Changed, Summary: summary(res), MergeDue: res.MergeDue}, nil
	}
	merge := func(ctx context.Context) (server.ReindexResult, error) {
		defer bg.hold()()
		opt := indexer.Options{Dir: dir, SegmentBytes: sf.segMB << 20, Logger: newLogger(e.stderr, zerolog.WarnLevel)}
		opt.MergesWritten, opt.MergeFactor = mergePause(opt.Logger), debugMergeFactor()
		var res *indexer.Result
		var err error
		onThread(mergeNice(int(liveSegs.Load())), func() { res, err = indexer.Merge(ctx, opt) })
		if err != nil {
			// Sets merged before the failure are published: say so.
			return server.ReindexResult{Changed: res != nil && res.Changed}, err
		}
		return server.ReindexResult{Changed: res.Changed, Summary: fmt.Sprintf("merged %d segments into %d", res.Merged, res.NewSegs)}, nil
	}
	switch sf.warmup {
	case mmapstore.WarmStaged, mmapstore.WarmEager, mmapstore.WarmOff:
	default:
		return fail(fmt.Errorf("--warmup must be staged, eager or off, not %q", sf.warmup))
	}
	warmMax := int64(sf.warmupMax * 1e6)
	if warmMax <= 0 {
		warmMax = physicalMemory() / 2
	}
	opt := server.Options{
		Warmup:   &mmapstore.WarmOptions{Mode: sf.warmup, Rate: sf.warmupRate * 1e6, MaxBytes: warmMax},
		IndexDir: dir, Display: display, Reindex: reindex, Merge: merge, ReindexEvery: sf.reindex, AuthToken: sf.token,
		MaxSearches: sf.maxSearches, MaxQueued: sf.maxQueued, QueueWait: sf.queueWait,
		MaxStreams: sf.maxStreams, MaxStreamsPerClient: sf.maxStreamsPerClient,
		SearchTimeout: sf.timeout, WriteTimeout: sf.writeTimeout, CacheTTL: sf.cacheTTL, Logger: log,
		NoWatch: sf.noWatch, LiveDelay: sf.liveDelay, SearchWorkers: cpus,
	}
	opt.UI = web.FS()
	if sf.maxQueued == 0 {
		opt.MaxQueued = -1 // the flag's 0 means none; Options' 0 means default
	}
	debugOptions(&opt)
	srv, err := server.New(opt)
	if err != nil {
		return fail(err)
	}
	// Eager warm-up means warm before listening: open (and so warm) the
	// existing index first.
	if sf.warmup == mmapstore.WarmEager {
		if _, err := os.Stat(dir); err == nil {
			openExisting(srv, log)
		}
	}
	ln, err := net.Listen("tcp", sf.addr)
	if err != nil {
		return fail(err)
	}
	defer server.PaceGC()()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info().Str("addr", ln.Addr().String()).Int("pid", os.Getpid()).Str("version", server.ReadBuild().Version).Msg("listening")
	fmt.Fprintf(e.stdout, "http://%s/\n", ln.Addr())

	shutdown := func() int {
		log.Info().Msg("shutting down")
		sctx, cancel := context.WithTimeout(context.Background(), sf.shutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			log.Warn().Err(err).Msg("requests still running at the shutdown timeout were cut")
		}
		return 0
	}

	// Serve the existing index while it is brought up to date.
	if _, err := os.Stat(dir); err == nil {
		openExisting(srv, log)
	}
	if err := srv.ReindexNow(ctx); err != nil {
		if ctx.Err() != nil {
			return shutdown()
		}
		if _, ok := srv.Ready(); !ok {
			shutdown()
			return fail(err)
		}
	}
	for {
		select {
		case <-ctx.Done():
			return shutdown()
		case <-hup:
			log.Info().Msg("SIGHUP: re-indexing")
			srv.TriggerReindex()
		case err := <-serveErr:
			if errors.Is(err, http.ErrServerClosed) {
				return 0
			}
			log.Error().Err(err).Msg("server stopped")
			shutdown()
			return 2
		}
	}
}

// physicalMemory is MemTotal from /proc/meminfo (0 if unknown).
func physicalMemory() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// isLoopback reports whether addr binds only the loopback interface.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// debugOptions reads undocumented tuning knobs, for measurements:
// LOGDEX_DEBUG_COPY_BUFFER=N replaces sendfile by an N-byte read/write loop,
// LOGDEX_SENDFILE_CHUNK=N sets the bytes per sendfile call,
// LOGDEX_SNDBUF=N sets SO_SNDBUF on accepted connections.
func debugOptions(o *server.Options) {
	num := func(name string) int64 {
		n, _ := strconv.ParseInt(os.Getenv(name), 10, 64)
		return n
	}
	o.DebugCopyBuffer = int(num("LOGDEX_DEBUG_COPY_BUFFER"))
	o.SendfileChunk = num("LOGDEX_SENDFILE_CHUNK")
	o.SocketSendBuffer = int(num("LOGDEX_SNDBUF"))
}

// openExisting serves the index already in the directory, if it can, while
// it is brought up to date. One of another format version is rebuilt by
// the first re-index, which says so itself.
func openExisting(srv *server.Server, log zerolog.Logger) {
	_, err := srv.Reload()
	if err != nil && !errors.Is(err, mmapstore.ErrNoIndex) && !errors.Is(err, mmapstore.ErrVersion) {
		log.Warn().Err(err).Msg("existing index unreadable; rebuilding")
	}
}
