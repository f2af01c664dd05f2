package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	goprinter "go/printer"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// The grep-style parsing of cli.go (interspersed, splitBundle) on top of
// the standard flag package stays only while spf13/pflag, the maintained
// library that does the same, would parse logdex's command lines worse or
// cost more. This file holds the comparison; docs/benchmarks.md has the
// figures:
//
//	go test ./cmd/logdex -run PflagGrepStyle -v              behaviour
//	go test ./cmd/logdex -run '^$' -bench FlagParse -benchmem   parse time
//	LOGDEX_FLAGCOST=1 go test ./cmd/logdex -run FlagLibraryCost -v
//	                   binary size and process start (builds programs)

// pflagFlagSet defines the search flags the way a pflag user would: each
// grep letter a shorthand of grep's long name, the other flags long only.
func pflagFlagSet(sf *searchFlags, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("search", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.BoolVarP(&sf.fixed, "fixed-strings", "F", false, "QUERY is a literal string (grep -F)")
	fs.BoolVarP(&sf.extended, "extended-regexp", "E", false, "QUERY is a regular expression, RE2 syntax (grep -E)")
	fs.BoolVarP(&sf.fold, "ignore-case", "i", false, "ignore case of ASCII letters in -F and -E patterns")
	fs.BoolVar(&sf.caseSensitive, "case-sensitive", false, "in the query language, match 'literals' and /regexes/ with case")
	fs.BoolVarP(&sf.count, "count", "c", false, "print the number of matching lines of each file")
	fs.VarP(pflagPattern{patternFlag{&sf.patterns, false}}, "regexp", "e", "a pattern (repeatable; a line matching any is printed)")
	fs.BoolVarP(&sf.invert, "invert-match", "v", false, "select the lines that do not match")
	fs.BoolVarP(&sf.only, "only-matching", "o", false, "print only the matched parts")
	fs.BoolVarP(&sf.words, "word-regexp", "w", false, "match whole words only")
	fs.BoolVarP(&sf.lines, "line-regexp", "x", false, "match whole lines only")
	fs.IntVarP(&sf.maxCount, "max-count", "m", -1, "stop each file after NUM matching lines")
	fs.BoolVarP(&sf.filesWith, "files-with-matches", "l", false, "print only the names of files with a match")
	fs.BoolVarP(&sf.filesWithout, "files-without-match", "L", false, "print only the names of files without a match")
	fs.BoolVarP(&sf.quiet, "quiet", "q", false, "print nothing; exit 0 on the first match")
	fs.BoolVarP(&sf.noMessages, "no-messages", "s", false, "no messages about files that cannot be read")
	fs.BoolVarP(&sf.withFilename, "with-filename", "H", false, "print the file name with every line")
	fs.BoolVarP(&sf.noFilename, "no-filename", "h", false, "never print file names")
	fs.BoolVarP(&sf.recursive, "recursive", "r", false, "(always)")
	fs.BoolVarP(&sf.dereference, "dereference-recursive", "R", false, "(always)")
	fs.BoolVarP(&sf.lineNumbers, "line-number", "n", false, "(always)")
	fs.IntVarP(&sf.after, "after-context", "A", 0, "print `N` lines of context after each match")
	fs.IntVarP(&sf.before, "before-context", "B", 0, "print `N` lines of context before each match")
	fs.IntVarP(&sf.context, "context", "C", 0, "print `N` lines of context around each match")
	fs.IntVar(&sf.limit, "limit", 0, "stop after `N` matches")
	fs.StringVar(&sf.index, "index", "", "index directory (default: the one for PATHs)")
	fs.StringVar(&sf.since, "since", "", "only lines at or after `TIME`")
	fs.StringVar(&sf.until, "until", "", "only lines before `TIME`")
	fs.BoolVar(&sf.timedOnly, "timed-only", false, "leave out files without timestamps")
	fs.StringVar(&sf.sort, "sort", "path", "order of the lines: path or time")
	fs.BoolVar(&sf.reverse, "reverse", false, "with --sort time, newest first")
	fs.BoolVar(&sf.noUpdate, "no-update", false, "search the index as it is; do not index new or changed files first")
	fs.BoolVar(&sf.stats, "stats", false, "print how the index answered (candidates, verified lines, time) to stderr")
	return fs
}

// parsed is what a command line gives: the flags, the operands, or an error.
type parsed struct {
	sf  searchFlags
	pos []string
	err error
}

func (p parsed) same(o parsed) bool {
	if p.err != nil || o.err != nil {
		return p.err != nil && o.err != nil
	}
	return reflect.DeepEqual(p.sf, o.sf) && slices.Equal(p.pos, o.pos)
}

func (p parsed) String() string {
	if p.err != nil {
		return "error: " + p.err.Error()
	}
	return fmt.Sprintf("%+v %q", p.sf, p.pos)
}

func parseLogdex(args []string) parsed {
	var p parsed
	p.pos, p.err = interspersed(p.sf.flagSet(io.Discard), args)
	return p
}

func parsePflag(args []string) parsed {
	var p parsed
	fs := pflagFlagSet(&p.sf, io.Discard)
	if p.err = fs.Parse(args); p.err == nil {
		p.pos = fs.Args()
	}
	return p
}

// grepStyleLines are `logdex search` command lines from search_test.go and
// the README, and grep habits around them. pflagSame says whether pflag
// parses the line as logdex does.
var grepStyleLines = []struct {
	args      string // split on spaces; ␣ stands for a space inside an argument
	pflagSame bool
	note      string
}{
	{"-F ERROR logs", true, ""},
	{"-F -i error logs", true, ""},
	{"-iF connection logs", true, "bundle"},
	{`-F ]␣" logs`, true, ""},
	{"-F -e -Xmx logs", true, "-e takes the next argument even with a leading dash"},
	{"-F -- --> logs", true, "-- ends flags"},
	{"-F -e WARN -e FATAL logs", true, "repeated -e"},
	{"-e -- logs", true, "the pattern --"},
	{"-A -1 error", true, "a negative value"},
	{"error logs -- -c", true, "-- after the operands"},
	{"-E status=[45][0-9]{2} logs", true, ""},
	{"-iE exception|timeout logs", true, ""},
	{"-c -F INFO logs", true, ""},
	{"-F -C 2 ERROR logs", true, ""},
	{"-F -C1 ERROR logs", true, "value attached"},
	{"-C3 error logs", true, ""},
	{"-A10 error logs", true, ""},
	{"-ci error logs", true, ""},
	{"error -c", true, "flag after the operand"},
	{"error logs --limit 5 -c", true, "flags after both operands"},
	{"error␣-timeout logs", true, "a query with a -word"},
	{"-- -debug logs", true, "a query starting with -"},
	{"--limit 3 -F INFO logs", true, ""},
	{"--limit=5 error", true, ""},
	{"--no-update --index /tmp/ix error", true, ""},
	{"--stats --case-sensitive 'Foo'", true, ""},
	{"-C=3 error", true, ""},
	{"-h", true, "grep's -h (no file names) in both"},
	{"--help", true, "help (ErrHelp) from both"},
	{"-rn -F ERROR logs", true, "grep's habits"},
	{"-F -e -- logs -i", true, "the pattern --, then a flag"},
	{"-x error", true, "grep's -x in both"},
	{"-P error", true, "unknown flag: an error from both"},
	{"-limit 5 error", false, "Go-style single-dash long flag: pflag reads -l -i -m -i -t"},
	{"-limit=5 error", false, "same"},
	{"-index /tmp/ix error", false, "same"},
	{"-no-update error", false, "same"},
	{"-stats error", false, "same"},
	{"-case-sensitive 'Foo'", false, "same"},
	{"--C 3 error", false, "Go-style double-dash letter: pflag knows only --context"},
	{"--count error", true, "grep's long name: both take it"},
	{"--context=2 --ignore-case error", true, "same"},
	{"-error logs", true, "grep's -e rror (a query starting with - needs --, as in grep)"},
	{"-efoo logs", true, "grep's value attached to -e"},
	{"-ie error logs", true, "grep's bundle ending in a flag with a value"},
	{"-iC2 error logs", true, "same"},
	{"-cC3 error logs", true, "same"},
	{"-F -e -ci logs", true, "-e's value is never split"},
}

func splitArgs(s string) []string {
	args := strings.Fields(s)
	for i := range args {
		args[i] = strings.ReplaceAll(args[i], "␣", " ")
	}
	return args
}

// TestPflagGrepStyle parses each of grepStyleLines with logdex's parser
// and with pflag and holds the table to what they do; -v prints both
// results of every line that differs.
func TestPflagGrepStyle(t *testing.T) {
	for _, c := range grepStyleLines {
		args := splitArgs(c.args)
		ours, theirs := parseLogdex(args), parsePflag(args)
		if same := ours.same(theirs); same != c.pflagSame {
			t.Errorf("%s: same=%v, want %v\n logdex: %v\n pflag:  %v", c.args, same, c.pflagSame, ours, theirs)
		} else if !same {
			t.Logf("%-36s logdex: %v\n%-36s pflag:  %v", c.args, ours, "", theirs)
		}
	}
}

// flagParseLines are the lines both parse alike, as a user types them.
var flagParseLines = [][]string{
	{"error", "-c"},
	{"-iF", "connection", "logs"},
	{"-C3", "-e", "WARN", "-e", "FATAL", "logs", "--limit=5"},
	{"--no-update", "--index", "/tmp/ix", "-E", "status=[45][0-9]{2}", "logs/app", "logs/nginx"},
}

// BenchmarkFlagParse defines the search flags and parses one command line,
// as a logdex process does once.
func BenchmarkFlagParse(b *testing.B) {
	for _, lib := range []struct {
		name  string
		parse func([]string) parsed
	}{{"flag", parseLogdex}, {"pflag", parsePflag}} {
		b.Run("lib="+lib.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				for _, args := range flagParseLines {
					if p := lib.parse(args); p.err != nil {
						b.Fatal(p.err)
					}
				}
			}
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// TestFlagLibraryCost builds, in a temporary directory, a minimal program
// that parses the search flags with logdex's parser (the code of cli.go
// and search.go), one that parses them with pflag, one that does nothing,
// and logdex with and without pflag linked in; it prints their sizes,
// their init cost (GODEBUG=inittrace=1) and their time from exec to exit.
// It takes a minute, so it runs only with LOGDEX_FLAGCOST=1.
func TestFlagLibraryCost(t *testing.T) {
	if os.Getenv("LOGDEX_FLAGCOST") == "" {
		t.Skip("set LOGDEX_FLAGCOST=1")
	}
	dir := t.TempDir()
	types := extractDecls(t, "cli.go", "stringsFlag", "stringsFlag.*") + extractDecls(t, "search.go", "searchFlags")
	ours := extractDecls(t, "cli.go", "interspersed", "splitBundle", "isBool") +
		extractDecls(t, "search.go", "searchFlags.flagSet", "searchUsage")
	withPflag := extractDecls(t, "flags_bench_test.go", "pflagFlagSet")
	progs := []struct{ name, src string }{
		{"none", `package main

import (
	"fmt"
	"os"
)

func main() { fmt.Println(os.Args[1:]) }
`},
		{"flag", `package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	var sf searchFlags
	pos, err := interspersed(sf.flagSet(os.Stderr), os.Args[1:])
	fmt.Println(sf, pos, err)
}
` + types + ours},
		{"pflag", `package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

func main() {
	var sf searchFlags
	fs := pflagFlagSet(&sf, os.Stderr)
	err := fs.Parse(os.Args[1:])
	fmt.Println(sf, fs.Args(), err)
}
` + types + withPflag},
	}
	bins := map[string]string{}
	for _, p := range progs {
		src := filepath.Join(dir, p.name+".go")
		if err := os.WriteFile(src, []byte(p.src), 0o644); err != nil {
			t.Fatal(err)
		}
		bins[p.name] = goBuild(t, dir, p.name, src)
	}
	// logdex itself, and logdex with pflagFlagSet reachable (added through
	// an overlay, so the tree is not touched): what switching would add.
	bins["logdex"] = goBuild(t, dir, "logdex", ".")
	wd, _ := os.Getwd()
	extra := filepath.Join(dir, "zz_pflag.go")
	os.WriteFile(extra, []byte(`package main

import (
	"io"
	"os"

	"github.com/spf13/pflag"
)

func init() {
	if os.Getenv("LOGDEX_PFLAG_NEVER_SET") != "" {
		var sf searchFlags
		pflagFlagSet(&sf, os.Stderr).Parse(os.Args[1:])
	}
}

var _ io.Writer
`+withPflag), 0o644)
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(wd, "zz_pflag.go"): extra}})
	os.WriteFile(filepath.Join(dir, "overlay.json"), overlay, 0o644)
	bins["logdex+pflag"] = goBuild(t, dir, "logdex+pflag", ".", "-overlay", filepath.Join(dir, "overlay.json"))

	// Rounds interleave the programs so that load on the machine hits all
	// alike; the figures are medians. logdex runs -h (usage, no index).
	type measured struct {
		name   string
		args   []string
		init   initCost
		clocks []float64
		walls  []time.Duration
	}
	typical := []string{"error", "-ci", "-C3", "logs", "--limit=5"}
	ms := []*measured{{name: "none", args: typical}, {name: "flag", args: typical}, {name: "pflag", args: typical},
		{name: "logdex", args: []string{"-h"}}, {name: "logdex+pflag", args: []string{"-h"}}}
	for round := range 101 {
		for _, m := range ms {
			c := initTrace(t, bins[m.name], m.args)
			t0 := time.Now()
			exec.Command(bins[m.name], m.args...).Run()
			if round > 0 { // the first exec reads the binary in
				m.init, m.clocks, m.walls = c, append(m.clocks, c.clockMs), append(m.walls, time.Since(t0))
			}
		}
	}
	t.Logf("| program | bytes | linked | packages initialised | init, all packages (ms) | init allocs | exec→exit | pflag's own init |")
	t.Logf("|---|--:|---|--:|--:|--:|--:|---|")
	for _, m := range ms {
		st, err := os.Stat(bins[m.name])
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(m.clocks)
		slices.Sort(m.walls)
		t.Logf("| %s | %d | %s | %d | %.3f | %d | %v | %s |", m.name, st.Size(), linking(t, bins[m.name]), m.init.packages, m.clocks[len(m.clocks)/2],
			m.init.allocs, m.walls[len(m.walls)/2].Round(10*time.Microsecond), m.init.pflag)
	}
}

// linking says whether bin needs the dynamic loader (pflag imports net,
// which with cgo links the C library).
func linking(t *testing.T, bin string) string {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return "dynamic"
		}
	}
	return "static"
}

// extractDecls returns the source of the named top-level declarations of
// file: functions, types, constants, methods as T.m, all methods of T as
// T.*.
func extractDecls(t *testing.T, file string, names ...string) string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out bytes.Buffer
	emit := func(n ast.Node) {
		out.WriteString("\n")
		goprinter.Fprint(&out, fset, n)
		out.WriteString("\n")
	}
	seen := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			name := d.Name.Name
			if d.Recv != nil {
				recv := d.Recv.List[0].Type
				if s, ok := recv.(*ast.StarExpr); ok {
					recv = s.X
				}
				typ := recv.(*ast.Ident).Name
				if name = typ + "." + name; want[typ+".*"] {
					seen[typ+".*"] = true
					want[name] = true
				}
			}
			if want[name] {
				d.Doc = nil
				emit(d)
				seen[name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				var name string
				switch s := s.(type) {
				case *ast.TypeSpec:
					name = s.Name.Name
				case *ast.ValueSpec:
					name = s.Names[0].Name
				}
				if want[name] {
					emit(&ast.GenDecl{Tok: d.Tok, Specs: []ast.Spec{s}})
					seen[name] = true
				}
			}
		}
	}
	for _, n := range names {
		if !seen[n] {
			t.Fatalf("%s: no declaration %s", file, n)
		}
	}
	return out.String()
}

func goBuild(t *testing.T, dir, name, pkg string, flags ...string) string {
	bin := filepath.Join(dir, name)
	args := append(append([]string{"build", "-o", bin}, flags...), pkg)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", name, err, out)
	}
	return bin
}

type initCost struct {
	packages int
	clockMs  float64 // sum of every package's init
	allocs   int
	pflag    string // pflag's own line
}

var initLine = regexp.MustCompile(`^init (\S+) @[0-9.]+ ms, ([0-9.]+) ms clock, (\d+) bytes, (\d+) allocs`)

// initTrace runs bin once with GODEBUG=inittrace=1.
func initTrace(t *testing.T, bin string, args []string) initCost {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, _ := cmd.CombinedOutput()
	var c initCost
	for _, l := range strings.Split(string(out), "\n") {
		m := initLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		ms, _ := strconv.ParseFloat(m[2], 64)
		n, _ := strconv.Atoi(m[4])
		c.clockMs += ms
		c.packages++
		c.allocs += n
		if m[1] == "github.com/spf13/pflag" {
			c.pflag = fmt.Sprintf("%s ms, %s bytes, %s allocs", m[2], m[3], m[4])
		}
	}
	if c.packages == 0 {
		t.Fatalf("%s: no inittrace lines in %q", bin, out)
	}
	return c
}

// processCPU is the CPU time of this process so far. Benchmarks report it
// per operation (cpu-ns/op) beside the wall time: on a machine shared
// with other jobs the wall time also counts the time the benchmark waited
// for a core, its CPU time far less. It includes the garbage collector's
// work on other threads, which the allocating alternatives cause.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pflagPattern is -e for pflag (a string array's: each value whole).
type pflagPattern struct{ patternFlag }

func (pflagPattern) Type() string { return "stringArray" }
