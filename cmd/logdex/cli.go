package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/server"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

const usage = `logdex: index log directories and search them like grep, fast.

Usage:
  logdex index  [--index DIR] PATH...          build or update the index
  logdex search [flags] QUERY [PATH...]        print matching lines like grep -rn
  logdex serve  [--addr ADDR] [--index DIR] PATH...   HTTP API and web UI
  logdex status [--addr ADDR]                  state of a running server
  logdex check  [--index DIR] [PATH...]        verify every checksum of an index
  logdex version                               the build: version, commit, Go release

Run 'logdex COMMAND -h' for a command's flags.
`

// env is what a command gets from the process: arguments and streams,
// injected so tests run commands in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	// tz is the zone of timestamps without one (--tz); nil keeps the
	// index's.
	tz *time.Location
	// exitsAfter says the process exits when the command returns (not
	// so in tests). A search then leaves its index mapped for the exit to
	// release: unmapping a segment costs ~19 µs there (each munmap of a
	// multi-threaded process interrupts the other CPUs), ~7 µs at exit.
	exitsAfter bool
	// update runs the indexer (nil: indexer.Update); tests inject
	// failures such as a full disk through it.
	update func(context.Context, indexer.Options) (*indexer.Result, error)
}

// tzFlag is --tz: a zone name (IANA, e.g. Europe/Berlin, or UTC, Local).
type tzFlag struct{ loc **time.Location }

func (f tzFlag) String() string {
	if f.loc == nil || *f.loc == nil {
		return ""
	}
	return (*f.loc).String()
}

func (f tzFlag) Set(v string) error {
	loc, err := time.LoadLocation(v)
	if err != nil {
		return fmt.Errorf("unknown time zone %q", v)
	}
	*f.loc = loc
	return nil
}

// addTZ defines --tz on fs.
func (e *env) addTZ(fs *flag.FlagSet) {
	fs.Var(tzFlag{&e.tz}, "tz", "`ZONE` of timestamps that do not write one (default: the index's, UTC for a new index); changing it rebuilds the index")
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return (&env{stdin: stdin, stdout: stdout, stderr: stderr}).run(args)
}

func (e *env) run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, usage)
		return 2
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "index":
		return e.index(rest)
	case "search":
		return e.search(rest)
	case "serve":
		return e.serve(rest)
	case "status":
		return e.status(rest)
	case "check":
		return e.check(rest)
	case "-h", "--help", "help":
		fmt.Fprint(e.stdout, usage)
		return 0
	case "version", "--version", "-V":
		fmt.Fprintln(e.stdout, server.ReadBuild())
		return 0
	}
	fmt.Fprintf(e.stderr, "logdex: unknown command %q\n\n%s", cmd, usage)
	return 2
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// newLogger logs to w: human-readable on a terminal, JSON otherwise.
func newLogger(w io.Writer, level zerolog.Level) zerolog.Logger {
	return newLoggerTo(w, isTerminal(w), level)
}

// newLoggerTo logs to w, human-readable when term (w writes to a
// terminal), JSON otherwise.
func newLoggerTo(w io.Writer, term bool, level zerolog.Level) zerolog.Logger {
	if l, err := zerolog.ParseLevel(os.Getenv("LOGDEX_LOG_LEVEL")); err == nil && l != zerolog.NoLevel {
		level = l
	}
	if term {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: time.TimeOnly}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

// indexDir picks the index directory: --index, else the default for paths.
func indexDir(flagDir string, paths []string) (string, error) {
	if flagDir != "" {
		return flagDir, nil
	}
	if len(paths) == 0 {
		return "", errors.New("give PATHs or --index DIR")
	}
	return indexer.DefaultDir(paths)
}

// indexRoots returns the PATHs (absolute, and as given) an index was built
// for, when --index comes without PATHs. It reads them from an index of
// any format version, so that one this build cannot read is rebuilt.
func indexRoots(dir string) (paths, display []string, err error) {
	roots, err := mmapstore.ReadRoots(dir)
	for _, r := range roots {
		paths = append(paths, r.Abs)
		display = append(display, r.Given)
	}
	return paths, display, err
}

// progressPrinter renders indexing progress on one terminal line.
func progressPrinter(w io.Writer) func(done, total int64) {
	start := time.Now()
	return func(done, total int64) {
		el := time.Since(start).Seconds()
		rate := float64(done) / el / 1e6
		eta := "?"
		if rate > 0 && total >= done {
			eta = (time.Duration(float64(total-done)/(rate*1e6)) * time.Second).Round(time.Second).String()
		}
		fmt.Fprintf(w, "\r\033[Kindexing %s / %s  %.0f MB/s  ETA %s", mb(done), mb(total), rate, eta)
	}
}

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// summary is the one line every indexing run ends with.
func summary(res *indexer.Result) string {
	pct := 0.0
	if res.RawBytes > 0 {
		pct = 100 * float64(res.IndexBytes) / float64(res.RawBytes)
	}
	rate := float64(res.Bytes) / res.Duration.Seconds() / 1e6
	unreadable := ""
	if res.Unreadable > 0 {
		unreadable = fmt.Sprintf(", %d unreadable", res.Unreadable)
	}
	merged := ""
	if res.Merged > 0 {
		merged = fmt.Sprintf(", %d segments merged", res.Merged)
	}
	return fmt.Sprintf("indexed %d files (%d new, %d appended, %d renamed, %d re-indexed, %d deleted, %d skipped%s), %d lines, %s in %s (%.0f MB/s%s); index %s in %d segments = %.1f%% of %s raw",
		res.Files, res.New, res.Appended, res.Renamed, res.Reindexed, res.Deleted, res.Skipped, unreadable, res.Lines, mb(res.Bytes),
		res.Duration.Round(time.Millisecond), rate, merged, mb(res.IndexBytes), res.Segments, pct, mb(res.RawBytes))
}

// interspersed parses fs from args allowing flags after positional
// arguments (as GNU grep does); "--" ends flags. It also splits grep-style
// bundles: -ci into -c -i, -C3 into -C 3, -eERROR into -e ERROR, -ie X
// into -i -e X. A flag's value is never split, even when it starts with a
// dash (-e -ci searches for "-ci", as grep does).
func interspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	var norm []string
	dashdash := -1 // where in norm the "--" ending flags is (a flag's value may be "--" too)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			dashdash = len(norm)
			norm = append(norm, args[i:]...)
			break
		}
		split := splitBundle(fs, a)
		norm = append(norm, split...)
		if last := split[len(split)-1]; i+1 < len(args) && takesValue(fs, last) {
			i++
			norm = append(norm, args[i]) // its value, as it is
		}
	}
	args = norm
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && len(norm)-len(args)+consumed-1 == dashdash {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}

// splitBundle splits a grep-style bundle of one-letter flags: boolean
// ones, then at most one taking a value, which is the rest of the bundle
// when there is one (-C3, -eERROR); digits are grep's -NUM (-n3: -n -C 3)
// where fs has -C; an unknown letter before or after known ones ends it
// (-rnX: -r -n -X; -Ir: -I), for the error to name it. A long flag
// (-index, --stats) or anything else is left whole.
func splitBundle(fs *flag.FlagSet, a string) []string {
	if len(a) < 2 || a[0] != '-' || a[1] == '-' || len(a) == 2 && !isDigit(a[1]) {
		return []string{a}
	}
	if name, _, _ := strings.Cut(a[1:], "="); fs.Lookup(name) != nil {
		return []string{a} // a flag by its name (-index, -no-update=true)
	}
	var out []string
	for i := 1; i < len(a); i++ {
		if isDigit(a[i]) && fs.Lookup("C") != nil {
			// grep's -NUM, alone or in a bundle (-5, -n3): -C NUM.
			j := i
			for j < len(a) && isDigit(a[j]) {
				j++
			}
			out = append(out, "-C", a[i:j])
			i = j - 1
			continue
		}
		f := fs.Lookup(a[i : i+1])
		if f == nil {
			if i == 1 && (len(a) == 2 || fs.Lookup(a[2:3]) == nil) {
				return []string{a} // no bundle: an unknown name, said whole
			}
			// An unknown letter of a bundle (-rnI, -Ir): parsed alone,
			// the error names it, not the whole bundle.
			return append(out, "-"+a[i:i+1])
		}
		out = append(out, "-"+a[i:i+1])
		if !isBool(f) {
			if rest := a[i+1:]; rest != "" {
				out = append(out, rest)
			}
			break
		}
	}
	return out
}

// takesValue reports whether arg is a flag of fs that takes the next
// argument as its value (not -f=v, not a boolean).
func takesValue(fs *flag.FlagSet, arg string) bool {
	if len(arg) < 2 || arg[0] != '-' || strings.Contains(arg, "=") {
		return false
	}
	f := fs.Lookup(strings.TrimLeft(arg, "-"))
	return f != nil && !isBool(f)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// stringsFlag collects a repeatable flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return strings.Join(*s, ",") }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }
