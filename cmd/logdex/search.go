package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/logdex/logdex/mmapstore/logtime"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/lang"
	"github.com/rs/zerolog"
)

const searchUsage = `Usage: logdex search [flags] QUERY [PATH...]
       logdex search [flags] -e PATTERN [-e PATTERN]... [PATH...]

Prints matching lines as grep -rn does (PATH:LINE:TEXT, sorted by path and
line). Exit status: 0 if a line matched, 1 if none, 2 on error.

QUERY is the query language unless -F, -E, -G or --re2 is given:
  error                 lines with the word (case-insensitive)
  "connection reset"    the words adjacent, in this order
  timeout AND db        both (AND may be omitted); OR, NOT, -word, ( )
  conn*                 a word starting with conn
  'rhost=10.0.'         the literal text (case-insensitive in this mode)
  /blk_-?[0-9]+/        a regular expression, read as grep -E reads it

-F, -E and -G read patterns as grep does (C locale): fixed strings, POSIX
extended and basic regular expressions with GNU's \w \W \s \S \b \B \< \>.
Back-references (\1) are refused: the index cannot answer them. --re2 reads
them as Go regular expressions (RE2 syntax: \d, (?i), lazy +?, ...). As in
grep, each line of a pattern is a pattern of its own. Unlike grep, whose
default is -G, a QUERY without these flags is the query language.

Flags:
`

type searchFlags struct {
	fixed, extended, basic, re2, fold, caseSensitive, count bool
	noUpdate, stats                                         bool
	// grep's: -v, -m, -l, -L, -q, -s, -H, -h; -r, -R and -n change nothing (a
	// search always recurses and numbers lines, as grep -rn)
	filesWith, filesWithout, quiet, noMessages, invert bool
	words, lines, only                                 bool
	withFilename, noFilename                           bool
	recursive, dereference, lineNumbers                bool
	patterns                                           patternArgs
	color                                              colorFlag
	before, after, context, limit, maxCount            int
	index                                              string
	since, until, sort                                 string
	reverse, timedOnly, follow                         bool
	filter                                             pathFilter // --include, --exclude, --exclude-dir
	null, lineBuffered, byteOffset                     bool       // -Z, --line-buffered, -b
}

// flagSet defines the search flags on sf; usage and errors go to stderr.
func (sf *searchFlags) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVar(&sf.fixed, "F", false, "QUERY is a literal string (grep -F)")
	fs.BoolVar(&sf.extended, "E", false, "QUERY is a POSIX extended regular expression, as grep -E reads it")
	fs.BoolVar(&sf.basic, "G", false, "QUERY is a POSIX basic regular expression, as grep -G (grep's default) reads it")
	fs.BoolVar(&sf.re2, "re2", false, "QUERY is a regular expression in Go's RE2 syntax (alone or with -E)")
	fs.BoolVar(&sf.fold, "i", false, "ignore case of ASCII letters in -F, -E and -G patterns (all letters with --re2)")
	fs.BoolVar(&sf.caseSensitive, "case-sensitive", false, "in the query language, match 'literals' and /regexes/ with case")
	fs.BoolVar(&sf.count, "c", false, "print the number of matching lines of each file")
	fs.Var(patternFlag{&sf.patterns, false}, "e", "a pattern (repeatable; a line matching any is printed)")
	fs.Var(patternFlag{&sf.patterns, true}, "f", "read patterns from `FILE`, one per line (repeatable; - is standard input; grep -f)")
	fs.Var(patternFlag{&sf.patterns, true}, "file", "same as -f `FILE`")
	fs.Var(&sf.color, "color", "colour matches, file names, line numbers and separators as grep does: `WHEN` is never, always or auto (on a terminal; --color alone); GREP_COLORS is read")
	fs.Var(&sf.color, "colour", "same as --color=`WHEN`")
	fs.BoolVar(&sf.invert, "v", false, "select the lines that do not match (grep -v)")
	fs.BoolVar(&sf.only, "o", false, "print only the matched parts of lines, each on its own line (grep -o; with -F, -E, -G)")
	fs.BoolVar(&sf.words, "w", false, "match whole words only (grep -w; with -F, -E, -G)")
	fs.BoolVar(&sf.lines, "x", false, "match whole lines only (grep -x; with -F, -E, -G)")
	sf.maxCount = -1
	fs.Var(maxCountFlag{&sf.maxCount}, "m", "stop each file after `NUM` matching lines (grep -m; a negative NUM, or one too large to hold: no limit)")
	fs.Var(lastOfTwo{&sf.filesWith, &sf.filesWithout}, "l", "print only the names of files with a match (the last of -l and -L counts)")
	fs.Var(lastOfTwo{&sf.filesWithout, &sf.filesWith}, "L", "print only the names of files without a match")
	fs.BoolVar(&sf.quiet, "q", false, "print nothing; exit 0 on the first match (even if a file could not be read)")
	fs.BoolVar(&sf.noMessages, "s", false, "no messages about files that cannot be read (the exit status still says so)")
	fs.Var(lastOfTwo{&sf.withFilename, &sf.noFilename}, "H", "print the file name with every line, even for a single file (the last of -H and -h counts)")
	fs.Var(lastOfTwo{&sf.noFilename, &sf.withFilename}, "h", "never print file names")
	fs.BoolVar(&sf.recursive, "r", false, "accepted for grep -r habits: directories are always searched recursively")
	fs.BoolVar(&sf.dereference, "R", false, "accepted for grep -R habits (symlinks are never followed out of a PATH)")
	fs.BoolVar(&sf.lineNumbers, "n", false, "accepted for grep -n habits: line numbers are always printed")
	fs.Var(contextFlag{&sf.after}, "A", "print `N` lines of context after each match (over -C's)")
	fs.Var(contextFlag{&sf.before}, "B", "print `N` lines of context before each match (over -C's)")
	fs.Var(contextFlag{&sf.context}, "C", "print `N` lines of context around each match")
	fs.IntVar(&sf.limit, "limit", 0, "stop after `N` matching lines printed (-c, -l and -L still count or name every file; 0: no limit)")
	fs.StringVar(&sf.index, "index", "", "index directory (default: the one for PATHs)")
	fs.BoolVar(&sf.noUpdate, "no-update", false, "search the index as it is; do not index new or changed files first")
	fs.BoolVar(&sf.stats, "stats", false, "print how the index answered (candidates, verified lines, time) to stderr")
	fs.StringVar(&sf.since, "since", "", "only lines at or after `TIME` (RFC 3339, '2026-11-29 14:02', or a duration ago: 2h, 30m, 7d)")
	fs.StringVar(&sf.until, "until", "", "only lines before `TIME` (same forms as --since)")
	fs.BoolVar(&sf.timedOnly, "timed-only", false, "with --since/--until, leave out files without timestamps (kept by default)")
	fs.StringVar(&sf.sort, "sort", "path", "order of the lines: path (grep's: by path, then line) or time (oldest first, across files)")
	fs.BoolVar(&sf.reverse, "reverse", false, "with --sort time, newest first")
	fs.BoolVar(&sf.follow, "follow", false, "print matching lines as they are written to the logs, from now on (tail -f | grep), until interrupted")
	fs.Var(globFlag{&sf.filter, true}, "include", "search only files whose base name matches `GLOB` (grep --include; with --exclude, the last matching one counts)")
	fs.Var(globFlag{&sf.filter, false}, "exclude", "skip files whose base name matches `GLOB` (grep --exclude)")
	fs.Var(dirGlobFlag{&sf.filter}, "exclude-dir", "skip directories whose base name matches `GLOB` (grep --exclude-dir)")
	fs.BoolVar(&sf.null, "Z", false, "print a NUL byte after file names instead of ':' or a newline (grep -Z, for xargs -0)")
	fs.BoolVar(&sf.byteOffset, "b", false, "print each line's byte offset in its file after its number (grep -b; with -o, each part's)")
	fs.BoolVar(&sf.lineBuffered, "line-buffered", false, "write each line out at once (grep --line-buffered; for pipes with --follow)")
	addGrepLongNames(fs)
	fs.Usage = func() {
		fmt.Fprint(stderr, searchUsage)
		// grep's long names (--count for -c) are listed once, not each.
		shown := flag.NewFlagSet("search", flag.ContinueOnError)
		shown.SetOutput(stderr)
		var longs []string
		fs.VisitAll(func(f *flag.Flag) {
			if shortName(f.Name) != f.Name {
				longs = append(longs, "--"+f.Name)
				return
			}
			shown.Var(f.Value, f.Name, f.Usage)
		})
		shown.PrintDefaults()
		fmt.Fprintf(stderr, "\ngrep's long names work too: %s.\n", strings.Join(longs, ", "))
	}
	return fs
}

// parseSearchFlags parses search's arguments. A bad flag or value is said
// in one line and a pointer to -h, as grep says it ("logdex: invalid value
// "x" for flag -A: x: invalid context length argument"), not above the
// whole usage; -h prints the usage.
func (e *env) parseSearchFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	usage := fs.Usage
	fs.Usage = func() {}
	fs.SetOutput(io.Discard)
	pos, err := interspersed(fs, args)
	fs.Usage = usage
	fs.SetOutput(e.stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
	case err != nil:
		if why := grepFlagRefused(err); why != "" {
			err = errors.New(why)
		}
		fmt.Fprintf(e.stderr, "logdex: %v\nUsage: logdex search [flags] QUERY [PATH...]\nTry 'logdex search -h' for more information.\n", err)
	}
	return pos, err
}

// grepFlagRefused says why a grep flag that search does not take is not
// taken, for the error flag.Parse gives for it; "" for other errors.
func grepFlagRefused(err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	name, _, _ = strings.Cut(strings.TrimPrefix(name, "-"), "=")
	type refusal struct{ what, why string }
	letters := map[byte]refusal{
		'P': {"Perl regular expressions", ": --re2 reads Go's RE2 syntax (\\d, (?i), lazy +?), -E grep's ERE"},
		'a': {"binary files as text", ": binary files are read as grep reads them without -a (a NUL byte ends a line)"},
		'I': {"binary files skipped", `: their matches count as grep counts them without -I, said as "binary file matches"`},
		'z': {"lines ending at NUL", ": lines end at '\\n' (and at a NUL byte, as grep reads binary files)"},
		'U': {"binary mode", " (it changes nothing for grep on this system either)"},
		'T': {"initial tab", ""},
		'd': {"directories", ": directories are searched recursively, as by grep -r"},
		'D': {"devices", ": only regular files are read, never devices, FIFOs or sockets"},
	}
	long := map[string]byte{"perl-regexp": 'P', "text": 'a', "binary-files": 'I', "null-data": 'z', "binary": 'U', "initial-tab": 'T', "directories": 'd', "devices": 'D'}
	if name == "label" {
		return "--label is not supported: standard input is not searched"
	}
	if l, ok := long[name]; ok {
		r := letters[l]
		return fmt.Sprintf("--%s (-%c, %s) is not supported%s", name, l, r.what, r.why)
	}
	// (splitBundle gives a bundle's unknown letter alone: -I of -rnI.)
	if r, ok := letters[name[0]]; ok && len(name) == 1 {
		return fmt.Sprintf("-%c (%s) is not supported%s", name[0], r.what, r.why)
	}
	return ""
}

// mode is the pattern syntax the flags ask for; ok is false when they
// conflict (grep refuses -F with -E, -E with -G, ...).
func (sf *searchFlags) mode() (m lang.Mode, ok bool) {
	n := 0
	for _, f := range []bool{sf.fixed, sf.extended || sf.re2, sf.basic} {
		if f {
			n++
		}
	}
	switch {
	case n > 1:
		return 0, false
	case sf.fixed:
		return lang.ModeLiteral, true
	case sf.re2:
		return lang.ModeRE2, true
	case sf.extended:
		return lang.ModeRegex, true
	case sf.basic:
		return lang.ModeBRE, true
	}
	return lang.ModeQuery, true
}

func (e *env) search(args []string) int {
	var sf searchFlags
	fs := sf.flagSet(e.stderr)
	e.addTZ(fs)
	pos, err := e.parseSearchFlags(fs, args)
	if err != nil {
		return 2
	}
	if err := sf.color.check(); err != nil {
		fmt.Fprintln(e.stderr, "logdex:", err)
		return 2
	}
	if len(sf.patterns) == 0 {
		if len(pos) == 0 {
			fs.Usage()
			return 2
		}
		sf.patterns, pos = patternArgs{{text: pos[0]}}, pos[1:]
	}
	// -e patterns and -f FILEs' lines in the order given; where each of a
	// FILE's came from (FILE:LINE), for errors.
	var patterns, origins []string
	for _, a := range sf.patterns {
		if !a.file {
			patterns, origins = append(patterns, a.text), append(origins, "")
			continue
		}
		ps, err := readPatternFile(a.text, e.stdin)
		if err != nil {
			fmt.Fprintln(e.stderr, "logdex:", err)
			return 2
		}
		for i, p := range ps {
			patterns, origins = append(patterns, p), append(origins, fmt.Sprintf("%s:%d", a.text, i+1))
		}
	}
	if sf.maxCount == 0 && (!sf.filesWithout || sf.quiet) {
		return 1 // grep -m 0: no line is read, none matches (patterns and PATHs not looked at)
	}
	if sf.only && sf.words && sf.lines {
		// (grep -owx prints what -ox does; not worth a path of its own)
		fmt.Fprintln(e.stderr, "logdex: -o does not combine with both -w and -x")
		return 2
	}
	if sf.limit < 0 {
		fmt.Fprintln(e.stderr, "logdex: --limit: want a number of lines (0, the default: no limit)")
		return 2
	}
	if sf.maxCount > 0 && (sf.limit > 0 || sf.sort != "path") {
		// Both count hits in the order they come: --limit before -m drops
		// a file's extra lines, and in time order a file's first lines
		// are not its first matches.
		fmt.Fprintln(e.stderr, "logdex: -m does not combine with --limit or --sort time")
		return 2
	}
	mode, ok := sf.mode()
	if !ok {
		fmt.Fprintln(e.stderr, "logdex: conflicting matchers specified (-F, -E, -G and --re2 exclude each other, except -E --re2)")
		return 2
	}
	if sf.invert && !sf.words && !sf.lines && (!sf.filesWithout || sf.quiet) && onlyEmpty(patterns) &&
		(mode == lang.ModeLiteral || mode == lang.ModeERE || mode == lang.ModeBRE) {
		// grep -v whose only pattern is the empty one (duplicates
		// dropped), without -w or -x: every line matches it, none can be
		// selected, and grep stops before reading anything (-c prints
		// no count, a missing PATH is not said); -L still names every
		// file.
		return 1
	}
	if sf.before < 0 || sf.after < 0 || sf.context < 0 {
		fmt.Fprintln(e.stderr, "logdex: invalid context length (negative)")
		return 2
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[shortName(f.Name)] = true })
	if given["C"] {
		// -A and -B say their side whatever their place (grep).
		if !given["B"] {
			sf.before = sf.context
		}
		if !given["A"] {
			sf.after = sf.context
		}
	}
	order := query.OrderPath
	switch {
	case sf.sort == "time" && sf.reverse:
		order = query.OrderNewest
	case sf.sort == "time":
		order = query.OrderOldest
	case sf.sort != "path":
		fmt.Fprintln(e.stderr, "logdex: --sort takes path or time")
		return 2
	case sf.reverse:
		fmt.Fprintln(e.stderr, "logdex: --reverse goes with --sort time")
		return 2
	}
	// Any context flag, 0 included, puts "--" between groups (as grep).
	withContext := given["A"] || given["B"] || given["C"]
	if order != query.OrderPath && withContext {
		fmt.Fprintln(e.stderr, "logdex: --sort time does not combine with -A, -B or -C")
		return 2
	}
	if sf.follow && (sf.count || withContext || order != query.OrderPath || sf.since != "" || sf.until != "" || sf.timedOnly || sf.limit > 0 ||
		sf.filesWith || sf.filesWithout || sf.quiet || sf.maxCount >= 0 || sf.only) {
		fmt.Fprintln(e.stderr, "logdex: --follow does not combine with -c, -l, -L, -q, -m, -o, -A, -B, -C, --sort, --since, --until, --timed-only or --limit")
		return 2
	}
	fold := sf.fold
	if mode == lang.ModeQuery {
		fold = !sf.caseSensitive
	}
	grepFlags := query.GrepFlags{Invert: sf.invert, Words: sf.words, Lines: sf.lines}
	compiled, compiledMode := patterns, mode
	if len(patterns) == 0 {
		// No pattern at all (grep -f /dev/null): no line matches, and
		// with -v every line does, as the empty literal finds them.
		if !sf.invert && (!sf.filesWithout || sf.quiet) {
			return 1 // (grep reads nothing either)
		}
		if !sf.invert {
			sf.maxCount = 0 // -L: every file, none read
		}
		compiled, compiledMode, grepFlags = []string{""}, lang.ModeLiteral, query.GrepFlags{}
	}
	q, err := query.CompileGrep(compiled, compiledMode, fold, grepFlags)
	if err != nil {
		var pe *lang.ParseError
		if !errors.As(err, &pe) || pe.Pattern >= len(patterns) {
			fmt.Fprintf(e.stderr, "logdex: %v\n", err)
			return 2
		}
		// The pattern at fault, quoted with a caret under the character;
		// in a grep mode, of a pattern of several lines, the line at
		// fault (each line is a pattern of its own).
		p, pos, where, from := patterns[pe.Pattern], pe.Pos, "", ""
		if mode != lang.ModeQuery && strings.Contains(p, "\n") {
			var no int
			p, pos, no = lineAt(p, pos)
			where = fmt.Sprintf(" of line %d", no)
		}
		if o := origins[pe.Pattern]; o != "" {
			from = o + ": " // as grep: FILE:LINE
		}
		fmt.Fprintf(e.stderr, "logdex: %s%s (at character %d%s)\n", from, pe.Msg, pos+1, where)
		if !strings.Contains(p, "\n") {
			fmt.Fprintf(e.stderr, "  %s\n  %*s^\n", p, pos, "")
		}
		return 2
	}
	for _, w := range q.Warnings() {
		fmt.Fprintln(e.stderr, "logdex: warning:", w.Msg) // as grep words it
	}

	// No signal handler while reading: like grep, a search dies of
	// SIGINT. Only writing the index installs one (updateInterruptibly),
	// and --follow, which runs until interrupted and exits 0 then.
	ctx := context.Background()
	if sf.follow {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	if slices.Contains(pos, "-") {
		// grep reads standard input for "-"; a pipe has no index to
		// answer from (and no file to read a line again from).
		fmt.Fprintln(e.stderr, "logdex: -: standard input is not searched: logdex answers from the index of files and directories (for a pipe, use grep)")
		return 2
	}
	// A PATH that does not exist is an error said after the other PATHs'
	// matches, as grep says it; the others are still searched.
	pathArgs := pos
	pos, missing, unreachable := existing(pathArgs)
	sayMissing := func() {
		if !sf.noMessages {
			for _, m := range missing {
				fmt.Fprintf(e.stderr, "logdex: %s: No such file or directory\n", m)
			}
		}
	}
	sayUnreadable := func(us []query.Unreadable) {
		if !sf.noMessages {
			for _, u := range us {
				fmt.Fprintf(e.stderr, "logdex: %s: %s\n", u.Path, u.Reason)
			}
		}
	}
	if len(missing)+len(unreachable) > 0 && len(pos) == 0 {
		sayUnreadable(unreachable)
		sayMissing()
		return 2
	}
	oi, err := e.openForSearch(sf.index, pos, sf.noUpdate, &sf.filter)
	if errors.Is(err, errInterrupted) {
		return exitInterrupted // (as grep killed by Ctrl-C: nothing said)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "logdex:", err)
		return 2
	}
	if !e.exitsAfter || sf.follow {
		defer func() { oi.close() }()
	}
	searcher, withPath := oi.s, oi.withPath
	// grep names files when it was given more than one PATH, missing ones
	// included.
	withPath = withPath || len(pos)+len(missing)+len(unreachable) > 1
	withPath = withPath && !sf.noFilename || sf.withFilename && !sf.noFilename

	out := bufio.NewWriterSize(e.stdout, 256<<10)
	defer out.Flush()
	ix := searcher.Index()
	pr := &printer{w: out, stderr: e.stderr, withPath: withPath, before: sf.before, after: sf.after, s: searcher, ctx: ctx,
		null: sf.null, lineBuffered: sf.lineBuffered, byteOffset: sf.byteOffset}
	term, termSet := os.LookupEnv("TERM")
	if sf.color.on(isTerminal(e.stdout), term, termSet) {
		pr.color, pr.invert = newPalette(os.Getenv("GREP_COLOR"), os.Getenv("GREP_COLORS")), sf.invert
		if l := pr.color.legacy; l != "" {
			fmt.Fprintf(e.stderr, "logdex: warning: GREP_COLOR='%s' is deprecated; use GREP_COLORS='mt=%s'\n", l, l) // as grep 3.8
		}
		if !sf.only { // (-o's printed parts are the marks: see markedRanges)
			pr.marks = matchMarks(q, compiled, compiledMode, fold, grepFlags.Words)
		}
	}
	if sf.follow {
		sayMissing()
		return e.follow(ctx, oi, q, pr, sf.noUpdate)
	}

	opt := query.Options{Limit: sf.limit, Text: true, Order: order}
	if sf.since != "" || sf.until != "" || sf.timedOnly {
		if opt.Time, err = timeRange(sf.since, sf.until, sf.timedOnly, searcher.Location()); err != nil {
			fmt.Fprintln(e.stderr, "logdex:", err)
			return 2
		}
	}
	var fn func(*query.Hit) error
	switch {
	case sf.quiet:
		// The first match answers (grep -q): nothing is printed.
		opt.Limit, opt.Text, opt.Order, withContext = 1, false, query.OrderPath, false
		fn = func(*query.Hit) error { return nil }
	case sf.filesWith || sf.filesWithout:
		// Names only (over -c, as in grep), whatever -h says; a file's
		// first match answers.
		opt.Order, opt.Text = query.OrderPath, false
		if opt.Limit == 0 {
			opt.MaxPerFile = 1 // (with --limit, the limit stops the search instead)
		}
		opt.PerFile = func(f *query.File, n int64) error {
			if (n > 0) == sf.filesWith {
				return pr.name(f.Path, '\n')
			}
			return nil
		}
	case sf.count:
		// grep -rc prints a line for every file: no fmt, no allocation.
		var num []byte
		opt.PerFile = func(f *query.File, n int64) error {
			if withPath {
				pr.name(f.Path, ':')
			}
			num = strconv.AppendInt(num[:0], n, 10)
			num = append(num, '\n')
			_, err := out.Write(num)
			return pr.ended(err)
		}
	case sf.only && sf.invert && !withContext:
		// grep -ov: a line that does not match has no matched part.
		fn = func(*query.Hit) error { return nil }
	case sf.only:
		// The matched parts (grep -o); with context, the groups' "--"
		// but no context line.
		parts, err := onlyParts(q, compiled, compiledMode, fold, grepFlags.Words)
		if err != nil {
			fmt.Fprintln(e.stderr, "logdex:", err)
			return 2
		}
		if pr.parts, pr.invert, fn = parts, sf.invert, pr.printParts; withContext {
			opt.Text, fn = false, pr.collect
		}
	case withContext:
		opt.Text = false
		fn = pr.collect
	default:
		fn = pr.print
	}
	switch {
	case sf.maxCount == 0:
		// grep -m 0 stops each file before its first line: nothing
		// matches, and -L names every file (without it, grep answers 1
		// before reading anything: see the flags' checks).
		perFile := opt.PerFile
		opt.PerFile = func(f *query.File, _ int64) error { return perFile(f, 0) }
	case sf.maxCount > 0 && opt.Limit == 0 && opt.MaxPerFile == 0:
		// Each file's first maxCount matching lines (grep -m): the search
		// stops reading a file there, and counts it up to there.
		opt.MaxPerFile = int64(sf.maxCount)
	}
	t0 := time.Now()
	st, err := searcher.Search(ctx, q, opt, fn)
	if sf.stats && st != nil {
		fmt.Fprintf(e.stderr, "query %v: %d hits in %v; %d segments, %d terms, %d blocks, %d candidates, %d verified, %d bytes scanned\n",
			q, st.Total, time.Since(t0), st.Segments, st.Terms, st.Blocks, st.Candidates, st.Verified, st.Scanned)
	}
	if err == nil && fn != nil && withContext {
		err = pr.flushContext()
	}
	if damage := ix.Damaged(); len(damage) > 0 {
		for _, d := range damage {
			fmt.Fprintf(e.stderr, "logdex: warning: index damaged (%v); the lines it held were read from the log files\n", d)
		}
		// Rebuild now rather than on the next search: the answer above
		// is exact, but every search until then would read those files.
		if sf.noUpdate {
			fmt.Fprintln(e.stderr, "logdex: run logdex index to rebuild the damaged segments")
		} else if rerr := e.updateInterruptibly(oi.dir, oi.build, false); rerr != nil {
			fmt.Fprintln(e.stderr, "logdex: rebuilding the damaged segments failed:", rerr)
		} else {
			fmt.Fprintln(e.stderr, "logdex: the damaged segments were rebuilt")
		}
	}
	if st != nil {
		for _, w := range st.Warnings {
			fmt.Fprintln(e.stderr, "logdex: warning:", w)
		}
	}
	if ferr := out.Flush(); ferr != nil {
		// Where the output went is full or gone (grep: "write error").
		fmt.Fprintln(e.stderr, "logdex: write error:", ferr)
		return 2
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "logdex:", err)
		return 2
	}
	// Files that could not be read are errors, as in grep: said after the
	// other files' matches (not with -s), and the exit status is 2 (not
	// with -q when a line matched).
	if sf.quiet && st.Total > 0 {
		// grep -q stops at the first match, having named the missing
		// PATHs it met before the first that holds one.
		if len(missing) > 0 && !sf.noMessages {
			missing = missingBeforeMatch(ctx, searcher, q, pathArgs, missing)
			sayMissing()
		}
		return 0
	}
	unreadable := slices.Concat(unreachable, searcher.Unreadable(), st.Unreadable)
	sayUnreadable(unreadable)
	if !sf.noMessages {
		// Not errors (grep reads them, and would only say whether they
		// match), but not silent either: the exit status is as if they
		// held no match.
		for _, l := range searcher.LeftOut() {
			fmt.Fprintf(e.stderr, "logdex: %s: not searched: left out of the index: %s\n", l.Path, l.Reason)
		}
	}
	sayMissing()
	switch {
	case len(missing) > 0:
		return 2
	case len(unreadable) > 0:
		return 2
	case st.Total == 0, sf.maxCount == 0:
		return 1
	}
	return 0
}

// missingBeforeMatch is the missing PATHs given before the first PATH
// (in the order given, as grep searches them) that holds a match of q.
func missingBeforeMatch(ctx context.Context, s *query.Searcher, q *query.Query, args, missing []string) []string {
	var matched []string
	_, err := s.Search(ctx, q, query.Options{MaxPerFile: 1, PerFile: func(f *query.File, n int64) error {
		if n > 0 {
			matched = append(matched, f.Path)
		}
		return nil
	}}, nil)
	if err != nil {
		return missing // (all of them: said rather than lost)
	}
	holdsMatch := func(arg string) bool {
		dir := strings.TrimSuffix(arg, "/") + "/"
		return slices.ContainsFunc(matched, func(p string) bool { return p == arg || strings.HasPrefix(p, dir) })
	}
	var before []string
	for _, a := range args {
		switch {
		case slices.Contains(missing, a):
			before = append(before, a)
		case holdsMatch(a):
			return before
		}
	}
	return before
}

// existing splits PATHs into those that exist (through symlinks too), those
// that do not, and those that cannot be looked at (in a directory we may
// not search): grep names the last two and goes on with the others.
func existing(paths []string) (found, missing []string, unreachable []query.Unreadable) {
	for _, p := range paths {
		_, err := os.Stat(p)
		var errno syscall.Errno
		switch {
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, p)
		case errors.As(err, &errno): // in a directory we may not enter
			unreachable = append(unreachable, query.Unreadable{Path: p, Reason: errno.Error()})
		default:
			found = append(found, p)
		}
	}
	return found, missing, unreachable
}

// openForSearch finds the index for the PATHs (or --index), brings it up to
// date unless told not to, and opens it for the PATHs: with --index, the
// index keeps its own roots and the search is narrowed to the PATHs, each
// of which must lie under one of them. It also tells whether paths are
// printed (not when the only PATH is a file, as grep).
func (e *env) openForSearch(dirFlag string, paths []string, noUpdate bool, filter *pathFilter) (*openedIndex, error) {
	display := paths
	noOperand := len(paths) == 0
	if noOperand {
		// Like grep -r without operands: search ".", print paths without
		// "./". With --index too: "." as if given (indexed into a fresh
		// DIR, narrowing one of other roots), unless run from outside
		// them (below).
		paths, display = []string{"."}, []string{""}
	}
	dir, err := indexDir(dirFlag, paths)
	if err != nil {
		return nil, err
	}
	var ix *mmapstore.Index
	var roots []mmapstore.Root
	if noUpdate {
		// The index is searched as it is: open it straight away and take
		// its roots, reading the manifest once (ReadRoots, then Open,
		// read it twice). On any error the general path below says what
		// is wrong, or rebuilds.
		if ix, err = mmapstore.Open(dir); err == nil {
			roots = ix.Roots()
		} else {
			ix = nil
		}
	}
	if ix == nil {
		roots, err = mmapstore.ReadRoots(dir)
	}
	build := paths // what the index is built for
	switch {
	case (errors.Is(err, mmapstore.ErrNoIndex) || errors.Is(err, mmapstore.ErrCorrupt)) && len(paths) > 0:
		roots = nil // a new index, of the PATHs (the indexer rebuilds a damaged one)
	case err != nil:
		return nil, err
	case dirFlag != "": // --index with PATHs: its roots, narrowed
		build = nil
		for _, r := range roots {
			build = append(build, r.Abs)
		}
		if _, err := scopeOperands(dir, roots, paths, display); noOperand && err != nil {
			// Run from outside its roots without a PATH: the index is
			// searched whole (`logdex search --index DIR QUERY` from
			// anywhere), named as its roots were given.
			paths, display = build, nil
			for _, r := range roots {
				display = append(display, r.Given)
			}
		}
	}
	var scopes []query.Scope
	if roots != nil {
		// Refuse PATHs outside the roots before writing the index.
		if scopes, err = scopeOperands(dir, roots, paths, display); err != nil {
			if ix != nil {
				ix.Close()
			}
			return nil, err
		}
	}
	var seen []logfile.Seen
	if ix == nil {
		if !noUpdate || roots == nil {
			if ix, seen, err = e.updateForSearch(dir, build, true); err != nil {
				if roots == nil || errors.Is(err, context.Canceled) {
					return nil, err
				}
				// An index that cannot be written (disk full, read-only,
				// permissions) still answers: the searcher reads what
				// changed since it was built from the files themselves.
				fmt.Fprintf(e.stderr, "logdex: warning: the index could not be updated (%v); searching it as it is (files added since are not searched; changed ones are read from the logs)\n", err)
			}
		}
	}
	if ix == nil { // (an update that changed nothing handed over the index it read)
		ix, err = mmapstore.Open(dir)
		if errors.Is(err, mmapstore.ErrVersion) && noUpdate {
			// An index this build cannot read answers nothing: rebuild it
			// even when told not to update (the indexer says so in the log).
			if err := e.updateInterruptibly(dir, build, true); err != nil {
				return nil, err
			}
			ix, err = mmapstore.Open(dir)
		}
		if err != nil {
			return nil, err
		}
	}
	if scopes == nil || !sameRoots(ix.Roots(), roots) {
		// Built (or rebuilt) just now: map the PATHs to the new roots.
		if scopes, err = scopeOperands(dir, ix.Roots(), paths, display); err != nil {
			ix.Close()
			return nil, err
		}
	}
	for i := range scopes {
		scopes[i].Keep = filter.keep(scopes[i])
	}
	s := query.NewScopedSearcher(ix, scopes)
	s.AssumeSeen(seen)
	return &openedIndex{s: s, ix: ix, dir: dir, build: build, scopes: scopes,
		withPath: !(len(scopes) == 1 && scopes[0].IsFile)}, nil
}

// openedIndex is the index a search reads, and what it was opened for.
type openedIndex struct {
	s        *query.Searcher
	ix       *mmapstore.Index
	dir      string
	build    []string // the paths the index is built for (updateIndex's)
	scopes   []query.Scope
	withPath bool // print paths (not when the only PATH is a file, as grep)
}

func (oi *openedIndex) close() {
	oi.s.Close()
	oi.ix.Close()
}

// updateInterruptibly brings the index in dir up to date for build; SIGINT
// and SIGTERM stop the indexer cleanly. The handler lives only as long:
// installing one starts a thread, a cost every search would pay.
func (e *env) updateInterruptibly(dir string, build []string, progress bool) error {
	_, err := e.updateWithSignals(indexer.Options{Dir: dir, Roots: build}, progress)
	return err
}

// updateForSearch is updateInterruptibly returning what the run's walk
// found at the files' paths, which the search then need not look at again,
// and, when the run changed nothing, the index it read and checked (else
// nil: the caller opens it).
func (e *env) updateForSearch(dir string, build []string, progress bool) (*mmapstore.Index, []logfile.Seen, error) {
	opt := indexer.Options{Dir: dir, Roots: build, ReportSeen: true, OpenIndex: true}
	res, err := e.updateWithSignals(opt, progress)
	if err != nil || res == nil {
		return nil, nil, err
	}
	return res.Index, res.Seen, nil
}

// updateWithSignals runs one update with SIGINT and SIGTERM cancelling it.
func (e *env) updateWithSignals(opt indexer.Options, progress bool) (*indexer.Result, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := e.updateIndexLogged(ctx, opt, progress, grepLogger)
	if err != nil && ctx.Err() != nil {
		err = errInterrupted
	}
	return res, err
}

// grepLogger logs a search's index update (its warnings) as grep words its
// messages, "logdex: warning: MESSAGE key=value ...", not in JSON. Files
// that cannot be read are left to the search, which names each of its own
// as grep does (not with -s).
func grepLogger(w io.Writer) zerolog.Logger {
	cw := zerolog.ConsoleWriter{Out: w, NoColor: true, PartsOrder: []string{zerolog.LevelFieldName, zerolog.MessageFieldName},
		FieldsExclude: []string{zerolog.TimestampFieldName},
		FormatLevel: func(l any) string {
			if l == zerolog.LevelWarnValue {
				return "logdex: warning:"
			}
			return fmt.Sprintf("logdex: %v:", l)
		}}
	unreadable := zerolog.HookFunc(func(ev *zerolog.Event, _ zerolog.Level, msg string) {
		if msg == indexer.MsgUnreadable {
			ev.Discard()
		}
	})
	return newLoggerTo(w, false, zerolog.WarnLevel).Output(cw).Hook(unreadable)
}

// sameRoots reports whether a and b are the same roots in the same order.
func sameRoots(a, b []mmapstore.Root) bool {
	return slices.EqualFunc(a, b, func(x, y mmapstore.Root) bool { return x.Abs == y.Abs && x.IsFile == y.IsFile })
}

// printer writes hits in grep's format, with context when asked.
type printer struct {
	w             *bufio.Writer
	stderr        io.Writer
	withPath      bool
	before, after int
	s             *query.Searcher
	ctx           context.Context

	// context mode: the current file's matched lines
	file    *query.File
	lines   []int64
	printed bool // whether any group was printed (for "--")

	binary *query.File // the last file said to be binary

	// parts, with -o, gives the matched parts of a line (rs: its ranges);
	// invert: -v, the lines selected are those that do not match
	parts  func(dst [][2]int, line []byte) [][2]int
	rs     [][2]int
	invert bool

	// color, when on, colours the output as grep --color does; marks
	// gives the ranges of a matching line it colours (nil: none).
	color   *palette
	marks   func(dst [][2]int, line []byte) [][2]int
	marked  [][2]int // the current line's (marks' buffer)
	lineBuf []byte   // the current coloured line
	numBuf  []byte

	// null: a NUL follows file names (grep -Z); lineBuffered: each line
	// is written out at once (grep --line-buffered)
	null, lineBuffered bool
	// byteOffset: each line's (-o: each part's) byte offset in its file
	// follows its number (grep -b; of the decompressed bytes in a
	// compressed file)
	byteOffset bool
}

// ended flushes the output after a line when it is line-buffered; the
// error is the output's.
func (p *printer) ended(err error) error {
	if p.lineBuffered && err == nil {
		return p.w.Flush()
	}
	return err
}

// markedRanges is what of a printed line is coloured as matched: the
// marks of a line that matches the patterns (a selected line, or with -v
// a context line); with -o, the line is one matched part.
func (p *printer) markedRanges(sep byte, text []byte) [][2]int {
	switch {
	case p.parts != nil:
		p.marked = append(p.marked[:0], [2]int{0, len(text)})
	case p.marks != nil && (sep == ':') != p.invert:
		p.marked = p.marks(p.marked[:0], text)
	default:
		p.marked = p.marked[:0]
	}
	return p.marked
}

// colorLine prints a line as line does, in grep's colours, the ranges
// marked of its text in the colour of matches.
func (p *printer) colorLine(path string, no, off int64, sep byte, text []byte, marked [][2]int) error {
	c, b := p.color, p.lineBuf[:0]
	seps := [...]byte{sep}
	if p.withPath {
		b = paint(c, b, c.file, path)
		if p.null {
			b = append(b, 0)
		} else {
			b = paint(c, b, c.sep, seps[:])
		}
	}
	p.numBuf = strconv.AppendInt(p.numBuf[:0], no, 10)
	b = paint(c, b, c.lineNo, p.numBuf)
	b = paint(c, b, c.sep, seps[:])
	if p.byteOffset {
		p.numBuf = strconv.AppendInt(p.numBuf[:0], off, 10)
		b = paint(c, b, c.offset, p.numBuf)
		b = paint(c, b, c.sep, seps[:])
	}
	// As grep's print_line: the line's colour goes before the text ahead
	// of each match and on the text after the last (a final '\r' left
	// out); -o's parts have none.
	selected := sep == ':'
	matchColor, lineColor := c.match, c.selected
	if !selected {
		matchColor = c.contextMatch
	}
	if selected == (p.invert && c.swapLines) {
		lineColor = c.context
	}
	if p.parts != nil {
		lineColor = ""
	}
	at := 0
	if matchColor != "" {
		for _, m := range marked {
			if m[0] < at || m[1] <= m[0] || m[1] > len(text) {
				continue // (empty matches are not coloured, as in grep)
			}
			b = c.start(b, lineColor) // (grep ends it with the match's colour)
			b = append(b, text[at:m[0]]...)
			b = paint(c, b, matchColor, text[m[0]:m[1]])
			at = m[1]
		}
	}
	if tail := bytes.TrimSuffix(text[at:], []byte{'\r'}); lineColor != "" && len(tail) > 0 {
		b = paint(c, b, lineColor, tail)
		at += len(tail)
	}
	b = append(append(b, text[at:]...), '\n')
	p.lineBuf = b
	_, err := p.w.Write(b)
	return p.ended(err)
}

// groupSep writes the "--" between groups of context (an output error
// stays in p.w for the next line's write to return).
func (p *printer) groupSep() {
	if p.color != nil {
		p.lineBuf = append(paint(p.color, p.lineBuf[:0], p.color.sep, "--"), '\n')
		p.w.Write(p.lineBuf)
		return
	}
	p.w.WriteString("--\n")
}

// name writes a file name and then end (grep -c's ':', -l's newline).
func (p *printer) name(path string, end byte) error {
	lineEnd := end == '\n'
	if p.null {
		end = 0
	}
	if p.color == nil {
		p.w.WriteString(path)
		if err := p.w.WriteByte(end); err != nil || !lineEnd {
			return err
		}
		return p.ended(nil)
	}
	b := paint(p.color, p.lineBuf[:0], p.color.file, path)
	if end == '\n' || end == 0 {
		b = append(b, end)
	} else {
		ends := [...]byte{end}
		b = paint(p.color, b, p.color.sep, ends[:])
	}
	p.lineBuf = b
	if _, err := p.w.Write(b); err != nil || !lineEnd {
		return err
	}
	return p.ended(nil)
}

// line prints one line; the error is the output's (bufio keeps the first:
// a search stops at it, as grep does at a write error).
func (p *printer) line(path string, no, off int64, sep byte, text []byte) error {
	if p.color != nil {
		return p.colorLine(path, no, off, sep, text, p.markedRanges(sep, text))
	}
	if p.withPath {
		p.w.WriteString(path)
		if p.null {
			p.w.WriteByte(0)
		} else {
			p.w.WriteByte(sep)
		}
	}
	p.numBuf = strconv.AppendInt(p.numBuf[:0], no, 10)
	p.w.Write(append(p.numBuf, sep))
	if p.byteOffset {
		p.numBuf = strconv.AppendInt(p.numBuf[:0], off, 10)
		p.w.Write(append(p.numBuf, sep))
	}
	p.w.Write(text)
	return p.ended(p.w.WriteByte('\n'))
}

func (p *printer) print(h *query.Hit) error {
	if p.isBinary(h) {
		return nil
	}
	return p.line(h.File.Path, h.Line, h.Offset, ':', h.Text)
}

// printParts prints the parts of a hit's line that p.parts gives, each as
// a line of its own (grep -o).
func (p *printer) printParts(h *query.Hit) error {
	if p.isBinary(h) {
		return nil
	}
	return p.lineParts(h.File.Path, h.Line, h.Offset, ':', h.Text)
}

// lineParts prints the parts p.parts gives of a line, each as a line of
// its own.
func (p *printer) lineParts(path string, no, off int64, sep byte, text []byte) error {
	p.rs = p.parts(p.rs[:0], text)
	for _, r := range p.rs {
		if err := p.line(path, no, off+int64(r[0]), sep, text[r[0]:r[1]]); err != nil {
			return err
		}
	}
	return nil
}

// isBinary reports whether h lies in the binary part of its file; at the
// file's first such hit it says, as grep does, that the binary file
// matches (its lines are not printed; they still count).
func (p *printer) isBinary(h *query.Hit) bool {
	if !h.Binary {
		return false
	}
	if p.binary != h.File {
		p.binary = h.File
		p.w.Flush() // after the file's text lines
		fmt.Fprintf(p.stderr, "logdex: %s: binary file matches\n", h.File.Path)
	}
	return true
}

func (p *printer) collect(h *query.Hit) error {
	if h.Binary {
		// The text lines before come first; no group reaches past here.
		if err := p.flushContext(); err != nil {
			return err
		}
		p.isBinary(h)
		// grep counts its silent match as output: the next group, in
		// this file or another, is preceded by "--".
		p.printed = true
		return nil
	}
	if p.file != h.File {
		if err := p.flushContext(); err != nil {
			return err
		}
		p.file = h.File
	}
	p.lines = append(p.lines, h.Line)
	return nil
}

// flushContext prints the current file's matches with context, merging
// overlapping windows and separating groups with "--" as grep does.
func (p *printer) flushContext() error {
	if p.file == nil || len(p.lines) == 0 {
		return nil
	}
	f, lines := p.file, p.lines
	p.file, p.lines = nil, p.lines[:0]
	match := make(map[int64]bool, len(lines))
	for _, l := range lines {
		match[l] = true
	}
	for i := 0; i < len(lines); {
		from, to := max(lines[i]-int64(p.before), 1), lines[i]+int64(p.after)
		j := i + 1
		for j < len(lines) && lines[j]-int64(p.before) <= to+1 {
			to = lines[j] + int64(p.after)
			j++
		}
		if p.printed {
			p.groupSep()
		}
		p.printed = true
		err := p.s.ReadLines(p.ctx, f, from, to, func(l query.Line) error {
			if l.Offset+int64(len(l.Text)) >= logfile.BinaryFrom(f.Record().NULAt) {
				return errBinaryPart // no context from the binary part (grep prints none)
			}
			sep := byte('-')
			if match[l.No] {
				sep = ':'
			}
			if p.parts != nil {
				// grep -o with context: the groups and their "--", but
				// only the matched parts: of the selected lines, or with
				// -v of the others (the lines that match), as context.
				if match[l.No] == p.invert {
					return nil
				}
				return p.lineParts(f.Path, l.No, l.Offset, sep, l.Text)
			}
			return p.line(f.Path, l.No, l.Offset, sep, l.Text)
		})
		if err != nil && err != errBinaryPart {
			return err
		}
		i = j
	}
	return nil
}

var errBinaryPart = errors.New("binary part of the file")

// timeRange reads --since and --until (the half-open range [since,
// until)), zone-less times in loc.
func timeRange(since, until string, timedOnly bool, loc *time.Location) (*query.TimeRange, error) {
	tr := &query.TimeRange{From: math.MinInt64, To: math.MaxInt64, ExcludeUntimed: timedOnly}
	now := time.Now()
	for _, b := range []struct {
		name, val string
		dst       *int64
	}{{"--since", since, &tr.From}, {"--until", until, &tr.To}} {
		if b.val == "" {
			continue
		}
		t, err := logtime.ParseUserTime(b.val, now, loc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.name, err)
		}
		*b.dst = t.UnixNano()
	}
	if tr.From >= tr.To {
		return nil, errors.New("--since must be before --until")
	}
	return tr, nil
}

// readPatternFile reads grep -f's FILE ("-": stdin): a pattern a line,
// the last newline ending the last pattern; an empty file holds none.
func readPatternFile(name string, stdin io.Reader) ([]string, error) {
	var b []byte
	var err error
	if name == "-" {
		b, err = io.ReadAll(stdin)
	} else {
		b, err = os.ReadFile(name)
	}
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: No such file or directory", name) // as grep says it
	case errors.As(err, &pe):
		return nil, fmt.Errorf("%s: %v", name, pe.Err)
	case err != nil:
		return nil, err
	case len(b) == 0:
		return nil, nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"), nil
}

// patternArgs are the -e patterns and -f FILEs, in the order given.
type patternArgs []patternArg

type patternArg struct {
	text string // the pattern, or with file the FILE's name
	file bool
}

// patternFlag is -e (file false) or -f, adding to one list.
type patternFlag struct {
	list *patternArgs
	file bool
}

func (f patternFlag) String() string {
	if f.list == nil {
		return ""
	}
	var s []string
	for _, a := range *f.list {
		s = append(s, a.text)
	}
	return strings.Join(s, ",")
}

func (f patternFlag) Set(v string) error {
	*f.list = append(*f.list, patternArg{text: v, file: f.file})
	return nil
}

// matchMarks gives what --color marks in a matching line: what grep -o
// would print of it (a repeated anchor or word test too, which -o
// refuses), or in the query language what the UI highlights; nil when
// they cannot be found (-w with a repeated anchor or word test), and then
// only names and numbers are coloured.
func matchMarks(q *query.Query, patterns []string, mode lang.Mode, fold, words bool) func(dst [][2]int, line []byte) [][2]int {
	if mode == lang.ModeQuery {
		return q.AppendHighlights
	}
	if words {
		marks, err := onlyParts(q, patterns, mode, fold, words)
		if err != nil {
			return nil
		}
		return marks
	}
	marks, err := q.Marks()
	if err != nil {
		return nil
	}
	return marks
}

// onlyParts gives what grep -o prints of a line that q matches; with -w
// (words), the whole-word matches of the patterns: those of the -w query
// would take in the bytes around a word.
func onlyParts(q *query.Query, patterns []string, mode lang.Mode, fold, words bool) (func(dst [][2]int, line []byte) [][2]int, error) {
	if !words {
		return q.OnlyMatching()
	}
	plain, err := query.CompileGrep(patterns, mode, fold, query.GrepFlags{})
	if err != nil {
		return nil, err
	}
	return plain.WordMatches()
}

// lineAt is the line of p holding its character pos, pos counted in that
// line, and the line's number (from 1).
func lineAt(p string, pos int) (line string, col, no int) {
	lines := strings.Split(p, "\n")
	for i, l := range lines {
		n := utf8.RuneCountInString(l)
		if pos <= n || i == len(lines)-1 {
			return l, pos, i + 1
		}
		pos -= n + 1
	}
	return p, pos, 1 // (not reached: Split returns a line at least)
}

// onlyEmpty reports whether patterns (each line of each a pattern) are
// at least one, and all empty.
func onlyEmpty(patterns []string) bool {
	for _, p := range patterns {
		if strings.Trim(p, "\n") != "" {
			return false
		}
	}
	return len(patterns) > 0
}

// maxCountFlag is grep's -m NUM: a negative NUM, or one past the largest
// integer, sets no limit (-1), as grep 3.8 reads them.
type maxCountFlag struct{ n *int }

func (f maxCountFlag) String() string {
	if f.n == nil {
		return ""
	}
	return strconv.Itoa(*f.n)
}

func (f maxCountFlag) Set(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		n = -1
	case err != nil:
		return errors.New("invalid max count")
	case n < 0:
		n = -1
	}
	*f.n = int(n)
	return nil
}

// lastOfTwo is a boolean flag that, set, clears its rival's: of grep's -l
// and -L, and of -H and -h, the last given counts.
type lastOfTwo struct{ p, rival *bool }

func (f lastOfTwo) IsBoolFlag() bool { return true }

func (f lastOfTwo) String() string {
	if f.p == nil {
		return "false"
	}
	return strconv.FormatBool(*f.p)
}

func (f lastOfTwo) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return err
	}
	if *f.p = b; b {
		*f.rival = false
	}
	return nil
}

// contextFlag is grep's -A, -B or -C NUM: one past the largest integer is
// every line (as grep 3.8 reads it).
type contextFlag struct{ n *int }

func (f contextFlag) String() string {
	if f.n == nil {
		return "0"
	}
	return strconv.Itoa(*f.n)
}

func (f contextFlag) Set(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-"):
		n = math.MaxInt32 // (line numbers plus it stay in an int64)
	case err != nil:
		return fmt.Errorf("%s: invalid context length argument", v)
	}
	*f.n = int(min(n, math.MaxInt32))
	return nil
}
