package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/rs/zerolog"
)

// indexMemoryBase and indexMemoryPerWorker make the soft memory limit of
// `logdex index` when GOMEMLIMIT sets none. Each indexing worker (one per
// CPU) keeps its term table from one segment to the next, so the live heap
// stays near its peak, and the collector's default goal (twice the live
// heap) let a run over 1 GiB of high-cardinality logs on 2 CPUs reach
// 1.4 GiB of RSS; under 800 MiB it stays near 0.8 GiB for about the same
// CPU. The limit grows with the workers: a fixed one would have a many-core
// machine's collector run without pause.
const (
	indexMemoryBase      = 300 << 20
	indexMemoryPerWorker = 250 << 20
)

func (e *env) index(args []string) int {
	if os.Getenv("GOMEMLIMIT") == "" {
		prev := debug.SetMemoryLimit(indexMemoryBase + indexMemoryPerWorker*int64(runtime.GOMAXPROCS(0)))
		defer debug.SetMemoryLimit(prev)
	}
	fs := flag.NewFlagSet("index", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	dir := fs.String("index", "", "index directory (default: the user cache dir, keyed by the PATHs)")
	segMB := fs.Int64("segment-mb", indexer.DefaultSegmentBytes>>20, "raw MiB of logs per segment")
	quiet := fs.Bool("q", false, "no progress, only the summary")
	postings := fs.String("postings", "auto", "postings encoding: auto (smaller of both per list), varint or roaring (for measurements)")
	verify := fs.Bool("verify", false, "verify every checksum of the existing index and rebuild damaged segments")
	e.addTZ(fs)
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: logdex index [--index DIR] PATH...\n\nIndexes new files and bytes appended since the last run under PATH (directories are walked recursively).")
		fs.PrintDefaults()
	}
	paths, err := interspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(paths) == 0 {
		fs.Usage()
		return 2
	}
	d, err := indexDir(*dir, paths)
	if err != nil {
		fmt.Fprintln(e.stderr, "logdex:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := e.updateIndexOpt(ctx, indexer.Options{Dir: d, Roots: paths, SegmentBytes: *segMB << 20, Postings: *postings, Verify: *verify}, !*quiet, zerolog.InfoLevel)
	if err != nil && ctx.Err() != nil {
		// Ctrl-C: the index is as it was (a run publishes whole or not).
		fmt.Fprintln(e.stderr, "logdex: interrupted; the index is as it was before this run")
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "logdex:", err)
		return 2
	}
	fmt.Fprintln(e.stderr, summary(res))
	fmt.Fprintln(e.stdout, d)
	return 0
}

// exitInterrupted is the status of a command stopped by Ctrl-C (or
// SIGTERM), as a shell reports a process the signal killed.
const exitInterrupted = 130

// errInterrupted: the index update a search runs first was stopped by
// Ctrl-C (or SIGTERM); a cancellation as any other, by the user.
var errInterrupted = fmt.Errorf("interrupted: %w", context.Canceled)

// updateIndex runs the indexer with a progress line on a terminal.
func (e *env) updateIndex(ctx context.Context, dir string, paths []string, segBytes int64, progress bool, level zerolog.Level) (*indexer.Result, error) {
	return e.updateIndexOpt(ctx, indexer.Options{Dir: dir, Roots: paths, SegmentBytes: segBytes}, progress, level)
}

// updateIndexOpt runs the indexer, logging at level (JSON, or readable on
// a terminal).
func (e *env) updateIndexOpt(ctx context.Context, opt indexer.Options, progress bool, level zerolog.Level) (*indexer.Result, error) {
	return e.updateIndexLogged(ctx, opt, progress, func(w io.Writer) zerolog.Logger { return newLoggerTo(w, isTerminal(e.stderr), level) })
}

// updateIndexLogged runs the indexer with the logger newLog makes.
func (e *env) updateIndexLogged(ctx context.Context, opt indexer.Options, progress bool, newLog func(io.Writer) zerolog.Logger) (*indexer.Result, error) {
	// drawn: a progress line is on the terminal. A log line (a warning
	// during the run) clears it first, and so does the end of the run,
	// whatever its outcome (an error, Ctrl-C).
	var drawn atomic.Bool
	opt.Logger = newLog(clearingWriter{e.stderr, &drawn})
	opt.MergesWritten = mergePause(opt.Logger)
	opt.MergeFactor = debugMergeFactor()
	if opt.Location == nil {
		opt.Location = e.tz
	}
	if progress && isTerminal(e.stderr) {
		draw := progressPrinter(e.stderr)
		opt.Progress = func(done, total int64) {
			drawn.Store(true)
			draw(done, total)
		}
	}
	update := e.update
	if update == nil {
		update = indexer.Update
	}
	res, err := update(ctx, opt)
	if drawn.Swap(false) {
		fmt.Fprint(e.stderr, "\r\033[K")
	}
	return res, err
}

// clearingWriter clears the progress line, when one is drawn, before a
// write (a log line would otherwise go on at its end).
type clearingWriter struct {
	w     io.Writer
	drawn *atomic.Bool
}

func (c clearingWriter) Write(p []byte) (int, error) {
	if c.drawn.Swap(false) {
		io.WriteString(c.w, "\r\033[K")
	}
	return c.w.Write(p)
}

// debugMergeFactor reads the undocumented LOGDEX_DEBUG_MERGE_FACTOR=N,
// indexer.Options.MergeFactor: with 2 nearly every run merges, which the
// SIGKILL test needs to kill runs mid-merge.
func debugMergeFactor() int {
	n, _ := strconv.Atoi(os.Getenv("LOGDEX_DEBUG_MERGE_FACTOR"))
	return n
}

// mergePause reads the undocumented LOGDEX_DEBUG_MERGE_PAUSE=DURATION: after
// a run's merges are written, say so (a warning, so that it shows at every
// log level and is written at once) and wait that long before publishing,
// so that the SIGKILL test can kill the process in the middle of a merge.
func mergePause(log zerolog.Logger) func(int) {
	d, err := time.ParseDuration(os.Getenv("LOGDEX_DEBUG_MERGE_PAUSE"))
	if err != nil || d <= 0 {
		return nil
	}
	return func(merged int) {
		log.Warn().Int("merged", merged).Dur("pause", d).Msg("merges written, pausing before publishing (LOGDEX_DEBUG_MERGE_PAUSE)")
		time.Sleep(d)
	}
}
