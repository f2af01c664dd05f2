package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fixtureCopy copies fixtures/logs into a temp dir (tests must not write an
// index into the repository, and the copy gets a stable relative name).
func fixtureCopy(t *testing.T) (dir, root string) {
	t.Helper()
	dir = t.TempDir()
	root = filepath.Join(dir, "logs")
	if err := os.CopyFS(root, os.DirFS(filepath.Join("..", "..", "fixtures", "logs"))); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	return dir, root
}

// logdex runs the CLI in-process from dir.
func logdex(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out, errb bytes.Buffer
	code := run(args, nil, &out, &errb)
	return out.String(), errb.String(), code
}

// grep runs the real grep (C locale) from dir; output lines sorted by path
// then line number, as logdex prints them.
func grep(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	out, code := rawGrep(t, dir, args...)
	return sortGrep(out), code
}

// rawGrep is grep's output (C locale, run from dir) as it is, and its
// exit status.
func rawGrep(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("grep", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// grepper runs grep processes (C locale, from dir) in the order queued on
// a few workers in the background, so that they overlap each other and
// the in-process searches they are compared with: a process costs ~10 ms
// of CPU here, and some tests compare hundreds of cases.
type grepper struct {
	dir  string
	jobs chan *grepRun
}

// grepRun is a queued grep; its results are set once done is closed.
type grepRun struct {
	cmd            *exec.Cmd
	done           chan struct{}
	stdout, stderr string
	code           int
	err            error
}

// newGrepper starts the workers; they stop at the end of the test, before
// its temporary directories are removed.
func newGrepper(t *testing.T, dir string) *grepper {
	ctx, cancel := context.WithCancel(context.Background())
	g := &grepper{dir: dir, jobs: make(chan *grepRun, 1<<16)}
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case r := <-g.jobs:
					if ctx.Err() == nil {
						r.run()
					}
				}
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return g
}

// start queues grep args with env added to the environment as it is now.
func (g *grepper) start(env []string, args ...string) *grepRun {
	cmd := exec.Command("grep", args...)
	cmd.Dir = g.dir
	cmd.Env = append(append(os.Environ(), "LC_ALL=C"), env...)
	r := &grepRun{cmd: cmd, done: make(chan struct{})}
	g.jobs <- r
	return r
}

func (r *grepRun) run() {
	defer close(r.done)
	var out, errb strings.Builder
	r.cmd.Stdout, r.cmd.Stderr = &out, &errb
	r.err = r.cmd.Run()
	if ee, ok := r.err.(*exec.ExitError); ok {
		r.code, r.err = ee.ExitCode(), nil
	}
	r.stdout, r.stderr = out.String(), errb.String()
}

// wait returns grep's output as it is and its exit status.
func (r *grepRun) wait(t *testing.T) (string, int) {
	t.Helper()
	<-r.done
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.stdout, r.code
}

// sortGrep orders PATH:LINE:TEXT (or PATH:COUNT) lines by path then
// number. Output without paths (a single file) is already in order.
func sortGrep(s string) string {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) > 0 && lines[0][0] >= '0' && lines[0][0] <= '9' {
		return s
	}
	// Keys are parsed once, not per comparison: some outputs have
	// hundreds of thousands of lines.
	type keyed struct {
		path string
		n    int
		line string
	}
	ks := make([]keyed, len(lines))
	for i, l := range lines {
		ks[i].line, ks[i].path = l, l
		if j := strings.IndexByte(l, ':'); j >= 0 {
			ks[i].path = l[:j]
			for _, c := range l[j+1:] {
				if c < '0' || c > '9' {
					break
				}
				ks[i].n = ks[i].n*10 + int(c-'0')
			}
		}
	}
	sort.SliceStable(ks, func(a, b int) bool {
		if ks[a].path != ks[b].path {
			return ks[a].path < ks[b].path
		}
		return ks[a].n < ks[b].n
	})
	var out strings.Builder
	out.Grow(len(s))
	for _, k := range ks {
		out.WriteString(k.line)
	}
	return out.String()
}

func TestSearchMatchesGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir, _ := fixtureCopy(t)
	cases := []struct {
		name   string
		logdex []string
		grep   []string
	}{
		{"literal", []string{"search", "-F", "ERROR", "logs"}, []string{"-rn", "-F", "ERROR", "logs"}},
		{"literal fold", []string{"search", "-F", "-i", "error", "logs"}, []string{"-rn", "-iF", "error", "logs"}},
		{"bundled flags", []string{"search", "-iF", "connection", "logs"}, []string{"-rn", "-iF", "connection", "logs"}},
		{"literal punctuation", []string{"search", "-F", `] "`, "logs"}, []string{"-rn", "-F", `] "`, "logs"}},
		{"literal quote backslash", []string{"search", "-F", `\"`, "logs"}, []string{"-rn", "-F", `\"`, "logs"}},
		{"literal script", []string{"search", "-F", "<script>", "logs"}, []string{"-rn", "-F", "<script>", "logs"}},
		{"leading dash with -e", []string{"search", "-F", "-e", "-Xmx", "logs"}, []string{"-rn", "-F", "-e", "-Xmx", "logs"}},
		{"a bundle as -e's value", []string{"search", "-F", "-e", "-ci", "logs"}, []string{"-rn", "-F", "-e", "-ci", "logs"}},
		{"context flag as -e's value", []string{"search", "-F", "-e", "-C3", "logs"}, []string{"-rn", "-F", "-e", "-C3", "logs"}},
		{"pattern attached to -e", []string{"search", "-FeERROR", "logs"}, []string{"-rn", "-FeERROR", "logs"}},
		{"bundle ending in -e", []string{"search", "-Fie", "error", "logs"}, []string{"-rn", "-Fie", "error", "logs"}},
		{"-NUM context", []string{"search", "-F", "-2", "ERROR", "logs/app/api.log"}, []string{"-rn", "-F", "-2", "ERROR", "logs/app/api.log"}},
		{"-NUM in a bundle", []string{"search", "-Fn12", "ERROR", "logs/app/api.log"}, []string{"-rn", "-Fn12", "ERROR", "logs/app/api.log"}},
		{"-NUM before a flag", []string{"search", "-1c", "-F", "ERROR", "logs"}, []string{"-rn", "-1c", "-F", "ERROR", "logs"}},
		{"leading dash after --", []string{"search", "-F", "--", "-->", "logs"}, []string{"-rn", "-F", "--", "-->", "logs"}},
		{"two patterns", []string{"search", "-F", "-e", "WARN", "-e", "FATAL", "logs"}, []string{"-rn", "-F", "-e", "WARN", "-e", "FATAL", "logs"}},
		{"regex", []string{"search", "-E", `status=[45][0-9]{2}`, "logs"}, []string{"-rn", "-E", `status=[45][0-9]{2}`, "logs"}},
		{"regex anchors", []string{"search", "-E", `^[A-Z][a-z]{2} [ 0-9]{2} `, "logs"}, []string{"-rn", "-E", `^[A-Z][a-z]{2} [ 0-9]{2} `, "logs"}},
		{"regex end", []string{"search", "-E", `[0-9]ms$`, "logs"}, []string{"-rn", "-E", `[0-9]ms$`, "logs"}},
		{"regex fold", []string{"search", "-iE", `exception|timeout`, "logs"}, []string{"-rn", "-iE", `exception|timeout`, "logs"}},
		{"nothing", []string{"search", "-F", "no such text anywhere", "logs"}, []string{"-rn", "-F", "no such text anywhere", "logs"}},
		{"count", []string{"search", "-c", "-F", "INFO", "logs"}, []string{"-rc", "-F", "INFO", "logs"}},
		{"single file", []string{"search", "-F", "GET", "logs/nginx/access.log"}, []string{"-rn", "-F", "GET", "logs/nginx/access.log"}},
		{"single file count", []string{"search", "-c", "-F", "GET", "logs/nginx/access.log"}, []string{"-rc", "-F", "GET", "logs/nginx/access.log"}},
		{"two roots", []string{"search", "-F", "user", "logs/app", "logs/syslog/auth.log"}, []string{"-rn", "-F", "user", "logs/app", "logs/syslog/auth.log"}},
		{"trailing slash", []string{"search", "-F", "GET", "logs/nginx/"}, []string{"-rn", "-F", "GET", "logs/nginx/"}},
		{"crlf end", []string{"search", "-E", "\r$", "logs/special"}, []string{"-rn", "-E", "\r$", "logs/special"}},
		{"no final newline", []string{"search", "-F", "e", "logs/special/no-final-newline.log"}, []string{"-rn", "-F", "e", "logs/special/no-final-newline.log"}},
		{"grep's -rn", []string{"search", "-rn", "-F", "ERROR", "logs"}, []string{"-rn", "-F", "ERROR", "logs"}},
		{"grep's -R", []string{"search", "-RinF", "error", "logs"}, []string{"-rn", "-iF", "error", "logs"}},
		{"files with matches", []string{"search", "-l", "-F", "ERROR", "logs"}, []string{"-rl", "-F", "ERROR", "logs"}},
		{"files without a match", []string{"search", "-L", "-F", "ERROR", "logs"}, []string{"-rL", "-F", "ERROR", "logs"}},
		{"files without a match, none matching", []string{"search", "-L", "-F", "no such text anywhere", "logs"}, []string{"-rL", "-F", "no such text anywhere", "logs"}},
		{"-l over -c", []string{"search", "-cl", "-F", "ERROR", "logs"}, []string{"-rcl", "-F", "ERROR", "logs"}},
		{"-l of a single file", []string{"search", "-l", "-F", "GET", "logs/nginx/access.log"}, []string{"-rl", "-F", "GET", "logs/nginx/access.log"}},
		{"quiet, a match", []string{"search", "-q", "-F", "ERROR", "logs"}, []string{"-rq", "-F", "ERROR", "logs"}},
		{"quiet, none", []string{"search", "-q", "-F", "no such text anywhere", "logs"}, []string{"-rq", "-F", "no such text anywhere", "logs"}},
		{"no file names", []string{"search", "-h", "-F", "user", "logs/app/api.log", "logs/syslog/auth.log"}, []string{"-rnh", "-F", "user", "logs/app/api.log", "logs/syslog/auth.log"}},
		{"file name of a single file", []string{"search", "-H", "-F", "GET", "logs/nginx/access.log"}, []string{"-rnH", "-F", "GET", "logs/nginx/access.log"}},
		// Of -l and -L, and of -h and -H, the last one given counts.
		{"-l then -L", []string{"search", "-l", "-L", "-F", "ERROR", "logs"}, []string{"-r", "-l", "-L", "-F", "ERROR", "logs"}},
		{"-L then -l", []string{"search", "-Ll", "-F", "ERROR", "logs"}, []string{"-r", "-Ll", "-F", "ERROR", "logs"}},
		{"-h then -H", []string{"search", "-h", "-H", "-F", "GET", "logs/nginx/access.log"}, []string{"-rn", "-h", "-H", "-F", "GET", "logs/nginx/access.log"}},
		{"-H then -h", []string{"search", "-Hh", "-F", "user", "logs/app/api.log", "logs/syslog/auth.log"}, []string{"-rn", "-Hh", "-F", "user", "logs/app/api.log", "logs/syslog/auth.log"}},
		{"-e -- then a flag", []string{"search", "-F", "-e", "--", "logs", "-i"}, []string{"-rn", "-F", "-e", "--", "logs", "-i"}},
		{"inverted", []string{"search", "-v", "-F", "ERROR", "logs"}, []string{"-rnv", "-F", "ERROR", "logs"}},
		{"inverted regex count", []string{"search", "-vcE", "GET|POST", "logs"}, []string{"-rcv", "-E", "GET|POST", "logs"}},
		{"inverted files", []string{"search", "-vl", "-F", "e", "logs"}, []string{"-rvl", "-F", "e", "logs"}},
		{"inverted, no line left", []string{"search", "-v", "-E", "^", "logs/app"}, []string{"-rnv", "-E", "^", "logs/app"}},
		{"max count", []string{"search", "-m", "2", "-F", "ERROR", "logs"}, []string{"-rn", "-m", "2", "-F", "ERROR", "logs"}},
		{"max count, counted", []string{"search", "-cm2", "-F", "ERROR", "logs"}, []string{"-rc", "-m2", "-F", "ERROR", "logs"}},
		{"max count negative: no limit", []string{"search", "-c", "-m", "-1", "-F", "ERROR", "logs"}, []string{"-rc", "-m", "-1", "-F", "ERROR", "logs"}},
		{"max count past the largest integer", []string{"search", "-m", "99999999999999999999", "-F", "ERROR", "logs"}, []string{"-rn", "-m", "99999999999999999999", "-F", "ERROR", "logs"}},
		{"max count 0", []string{"search", "-m0", "-F", "ERROR", "logs"}, []string{"-rn", "-m0", "-F", "ERROR", "logs"}},
		{"max count 0, files without", []string{"search", "-L", "-m0", "-F", "ERROR", "logs/app"}, []string{"-rL", "-m0", "-F", "ERROR", "logs/app"}},
		{"max count 0, quiet", []string{"search", "-q", "-L", "-m0", "-F", "ERROR", "logs/app"}, []string{"-rqL", "-m0", "-F", "ERROR", "logs/app"}},
		{"max count 0, a bad pattern, a missing PATH", []string{"search", "-m0", "-E", "a(", "nope"}, []string{"-rn", "-m0", "-E", "a(", "nope"}},
		{"max count, inverted", []string{"search", "-v", "-m", "3", "-F", "ERROR", "logs/app"}, []string{"-rnv", "-m", "3", "-F", "ERROR", "logs/app"}},
		{"whole words", []string{"search", "-w", "-F", "GET", "logs"}, []string{"-rnw", "-F", "GET", "logs"}},
		{"whole words, regex, folded", []string{"search", "-iwE", "err(or)?|fail", "logs"}, []string{"-rniw", "-E", "err(or)?|fail", "logs"}},
		{"whole words, basic regex", []string{"search", "-wG", `user\|id`, "logs"}, []string{"-rnw", "-G", `user\|id`, "logs"}},
		{"whole lines", []string{"search", "-x", "-E", "[^ ]*", "logs"}, []string{"-rnx", "-E", "[^ ]*", "logs"}},
		{"whole lines, literal", []string{"search", "-cx", "-F", "", "logs"}, []string{"-rcx", "-F", "", "logs"}},
		{"whole words, inverted", []string{"search", "-vw", "-F", "INFO", "logs/app"}, []string{"-rnvw", "-F", "INFO", "logs/app"}},
		{"only matching", []string{"search", "-o", "-E", "req=[0-9a-f]+|user=[a-z]+", "logs"}, []string{"-rno", "-E", "req=[0-9a-f]+|user=[a-z]+", "logs"}},
		{"only matching, longest of several literals", []string{"search", "-oF", "-e", "GET", "-e", "GET /api", "logs"}, []string{"-rno", "-F", "-e", "GET", "-e", "GET /api", "logs"}},
		{"only matching, inverted", []string{"search", "-ov", "-F", "ERROR", "logs/app"}, []string{"-rnov", "-F", "ERROR", "logs/app"}},
		{"only matching, whole words", []string{"search", "-ow", "-E", "-e", "[a-z]+=[^ ]*", "-e", "GET|POST", "logs"}, []string{"-rnow", "-E", "-e", "[a-z]+=[^ ]*", "-e", "GET|POST", "logs"}},
		{"only matching, whole words, a longer match not a word", []string{"search", "-owF", "-e", "ERROR", "-e", "ERROR [", "logs"}, []string{"-rnow", "-F", "-e", "ERROR", "-e", "ERROR [", "logs"}},
		{"only matching, whole lines", []string{"search", "-ox", "-E", "-e", "[^ ]*", "-e", ".*ERROR.*", "logs"}, []string{"-rnox", "-E", "-e", "[^ ]*", "-e", ".*ERROR.*", "logs"}},
		{"only matching, whole lines, inverted", []string{"search", "-oxv", "-F", "", "logs/app"}, []string{"-rnoxv", "-F", "", "logs/app"}},
		{"only matching, counted", []string{"search", "-oc", "-E", "[0-9]+", "logs/app"}, []string{"-rnoc", "-E", "[0-9]+", "logs/app"}},
		{"a missing PATH among others", []string{"search", "-F", "ERROR", "logs/app", "nope", "logs/db"}, []string{"-rn", "-F", "ERROR", "logs/app", "nope", "logs/db"}},
		{"only a missing PATH", []string{"search", "-F", "ERROR", "nope"}, []string{"-rn", "-F", "ERROR", "nope"}},
		{"a file and a missing PATH", []string{"search", "-F", "GET", "logs/nginx/access.log", "nope"}, []string{"-rn", "-F", "GET", "logs/nginx/access.log", "nope"}},
		{"a file and a missing PATH, -c", []string{"search", "-c", "-F", "GET", "logs/nginx/access.log", "nope"}, []string{"-rc", "-F", "GET", "logs/nginx/access.log", "nope"}},
		{"quiet, a match and a missing PATH", []string{"search", "-q", "-F", "ERROR", "nope", "logs"}, []string{"-rq", "-F", "ERROR", "nope", "logs"}},
		{"patterns from a file", []string{"search", "-F", "-f", "pats.txt", "logs"}, []string{"-rn", "-F", "-f", "pats.txt", "logs"}},
		{"patterns from a file and -e", []string{"search", "-E", "--file=pats-re.txt", "-e", "WARN", "logs"}, []string{"-rn", "-E", "--file=pats-re.txt", "-e", "WARN", "logs"}},
		{"patterns from two files, words", []string{"search", "-wF", "-f", "pats.txt", "-fpats-re.txt", "logs"}, []string{"-rnw", "-F", "-f", "pats.txt", "-fpats-re.txt", "logs"}},
		{"an empty pattern file", []string{"search", "-c", "-f", "empty.txt", "logs"}, []string{"-rc", "-f", "empty.txt", "logs"}},
		{"an empty pattern file, inverted", []string{"search", "-vc", "-f", "empty.txt", "logs/app"}, []string{"-rvc", "-f", "empty.txt", "logs/app"}},
		{"an empty pattern file, files without", []string{"search", "-L", "-f", "empty.txt", "logs/app"}, []string{"-rL", "-f", "empty.txt", "logs/app"}},
		{"a pattern file with an empty line", []string{"search", "-cF", "-f", "blank.txt", "logs/app"}, []string{"-rc", "-F", "-f", "blank.txt", "logs/app"}},
		{"an empty pattern file, conflicting matchers", []string{"search", "-v", "-f", "empty.txt", "-E", "-F", "logs/app"}, []string{"-rnv", "-f", "empty.txt", "-E", "-F", "logs/app"}},
		{"a missing pattern file", []string{"search", "-F", "-f", "nope.txt", "logs"}, []string{"-rn", "-F", "-f", "nope.txt", "logs"}},
		// grep -v with one empty pattern (after dropping duplicates) and
		// neither -w nor -x stops before reading anything: no line can
		// be selected, -c prints no count, a missing PATH is not looked
		// at; -L still names every file, and -w or -x count as usual.
		{"inverted empty pattern, counted", []string{"search", "-vc", "-G", "-e", "", "logs"}, []string{"-rvc", "-G", "-e", "", "logs"}},
		{"inverted empty pattern, counted, -F", []string{"search", "-vcF", "", "logs"}, []string{"-rvc", "-F", "", "logs"}},
		{"inverted empty pattern, counted, -E -i", []string{"search", "-vciE", "-e", "", "logs"}, []string{"-rvci", "-E", "-e", "", "logs"}},
		{"inverted empty pattern, counted, twice", []string{"search", "-vcG", "-e", "", "-e", "", "logs"}, []string{"-rvc", "-G", "-e", "", "-e", "", "logs"}},
		{"inverted empty pattern, counted, a newline", []string{"search", "-vcE", "-e", "\n", "logs"}, []string{"-rvc", "-E", "-e", "\n", "logs"}},
		{"inverted empty pattern, counted, one file", []string{"search", "-vcF", "", "logs/nginx/access.log"}, []string{"-rvc", "-F", "", "logs/nginx/access.log"}},
		{"inverted empty pattern file line, counted", []string{"search", "-vcG", "-f", "blank-only.txt", "logs"}, []string{"-rvc", "-G", "-f", "blank-only.txt", "logs"}},
		{"inverted empty pattern file lines, counted", []string{"search", "-vcF", "-f", "blank-two.txt", "logs"}, []string{"-rvc", "-F", "-f", "blank-two.txt", "logs"}},
		{"inverted empty pattern and an empty file, counted", []string{"search", "-vcF", "-e", "", "-f", "empty.txt", "logs"}, []string{"-rvc", "-F", "-e", "", "-f", "empty.txt", "logs"}},
		{"inverted empty pattern, counted, a missing PATH", []string{"search", "-vcF", "", "logs", "nope"}, []string{"-rvc", "-F", "", "logs", "nope"}},
		{"inverted empty pattern, a missing PATH", []string{"search", "-vE", "", "nope", "logs/app"}, []string{"-rnv", "-E", "", "nope", "logs/app"}},
		{"inverted empty pattern, counted, -m", []string{"search", "-vcF", "-m2", "", "logs"}, []string{"-rvc", "-F", "-m2", "", "logs"}},
		{"inverted empty pattern, counted, files without", []string{"search", "-vcLF", "", "logs/app"}, []string{"-rvcL", "-F", "", "logs/app"}},
		{"inverted empty pattern, counted, files with", []string{"search", "-vclF", "", "logs/app"}, []string{"-rvcl", "-F", "", "logs/app"}},
		{"inverted empty pattern, counted, whole lines", []string{"search", "-vcxF", "", "logs"}, []string{"-rvcx", "-F", "", "logs"}},
		{"inverted empty pattern, counted, whole words", []string{"search", "-vcwG", "", "logs"}, []string{"-rvcw", "-G", "", "logs"}},
		{"inverted empty and other pattern, counted", []string{"search", "-vcF", "-e", "", "-e", "ERROR", "logs/app"}, []string{"-rvc", "-F", "-e", "", "-e", "ERROR", "logs/app"}},
	}
	for name, text := range map[string]string{"pats.txt": "ERROR\nGET /api\n", "pats-re.txt": "time(out)?\nuser=[a-z]+", "empty.txt": "", "blank.txt": "zzz\n\n", "blank-only.txt": "\n", "blank-two.txt": "\n\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Every grep is queued first, to run while the searches do.
	g := newGrepper(t, dir)
	greps := make([]*grepRun, len(cases))
	for i, tc := range cases {
		greps[i] = g.start(nil, tc.grep...)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, stderr, code := logdex(t, dir, tc.logdex...)
			want, wcode := greps[i].wait(t)
			want = sortGrep(want)
			if code != wcode {
				t.Fatalf("exit %d, grep %d (stderr %q)", code, wcode, stderr)
			}
			if got != want {
				t.Fatalf("output differs from grep:\n%s", firstDiff(got, want))
			}
		})
	}
}

// TestSearchContext compares -A/-B/-C with grep, given the files in
// logdex's order (grep -r's own file order is the directory's).
func TestSearchContext(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir, root := fixtureCopy(t)
	var files []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	// A context of 0 still prints "--" between groups, as grep does.
	for _, flags := range [][]string{{"-C", "2"}, {"-A", "1"}, {"-B", "3"}, {"-C1"}, {"-A", "0"}, {"-B0"}, {"-C", "0"}, {"-m1", "-A2"}, {"-m", "2", "-C1"}, {"-o", "-A1"}, {"-oi", "-C2"},
		// -A and -B over -C, before or after it, smaller or larger; a
		// length past the largest integer is every line.
		{"-A", "1", "-C", "3"}, {"-C", "2", "-B", "0"}, {"-A0", "-C2"}, {"-C1", "-A3"}, {"-B", "99999999999999999999", "-C", "1"}} {
		for _, pat := range []string{"ERROR", "Exception", "GET /api"} {
			args := append(append([]string{"search", "-F"}, flags...), pat, "logs")
			got, _, _ := logdex(t, dir, args...)
			// One grep over the files in order: it prints "--" between
			// files as between groups (a process per file cost seconds).
			want := unsortGrep(dir, append(append(append([]string{"-n", "-H", "-F"}, flags...), pat), files...)...)
			if got != want {
				t.Fatalf("%v %q:\n%s", flags, pat, firstDiff(got, want))
			}
		}
	}
}

// unsortGrep is grep's output as is (context output is already in line
// order within a file).
func unsortGrep(dir string, args ...string) string {
	cmd := exec.Command("grep", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, _ := cmd.Output()
	return string(out)
}

// TestSearchMessages: what grep says on stderr (missing PATHs after the
// matches, a write error), logdex says too; -s silences the first.
func TestSearchMessages(t *testing.T) {
	dir, _ := fixtureCopy(t)
	_, stderr, code := logdex(t, dir, "search", "-F", "ERROR", "logs", "nope")
	if code != 2 || stderr != "logdex: nope: No such file or directory\n" {
		t.Errorf("missing PATH: exit %d, stderr %q", code, stderr)
	}
	if _, stderr, code = logdex(t, dir, "search", "-s", "-F", "ERROR", "logs", "nope"); code != 2 || stderr != "" {
		t.Errorf("missing PATH with -s: exit %d, stderr %q", code, stderr)
	}
	// "-" is grep's standard input: refused, said why, nothing searched.
	if out, stderr, code := logdex(t, dir, "search", "-F", "ERROR", "logs", "-"); code != 2 || out != "" || !strings.Contains(stderr, "logdex: -: standard input is not searched") {
		t.Errorf("PATH -: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// -q: grep stops at the first PATH holding a match, having named the
	// missing ones given before it, and no other.
	for _, args := range [][]string{{"nope", "logs"}, {"logs", "nope"}, {"nope", "logs", "nope2"}, {"nope", "logs/", "nope2"}} {
		cmd := exec.Command("grep", append([]string{"-rq", "-F", "ERROR"}, args...)...)
		var want bytes.Buffer
		cmd.Dir, cmd.Stderr = dir, &want
		_ = cmd.Run()
		_, stderr, code := logdex(t, dir, append([]string{"search", "-q", "-F", "ERROR"}, args...)...)
		if code != cmd.ProcessState.ExitCode() || strings.ReplaceAll(stderr, "logdex:", "grep:") != want.String() {
			t.Errorf("-q %v: exit %d, stderr %q; grep: exit %d, %q", args, code, stderr, cmd.ProcessState.ExitCode(), want.String())
		}
	}
	wd, _ := os.Getwd()
	must(t, os.Chdir(dir))
	defer os.Chdir(wd)
	var errb bytes.Buffer
	if code := run([]string{"search", "-F", "INFO", "logs"}, nil, failingWriter{}, &errb); code != 2 || !strings.Contains(errb.String(), "write error") {
		t.Errorf("output that cannot be written: exit %d, stderr %q", code, errb.String())
	}
}

// failingWriter is an output that is full (as /dev/full).
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

func TestSearchErrors(t *testing.T) {
	dir, _ := fixtureCopy(t)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"search", "-E", "a(b", "logs"}, `Unmatched ( or \(`},
		{[]string{"search", "(error", "logs"}, "unclosed ("},
		{[]string{"search", "error AND", "logs"}, "AND needs a right-hand side"},
		{[]string{"search", "-F", "x", "no-such-dir"}, "no-such-dir"},
		{[]string{"search"}, "Usage"},
		{[]string{"search", "-A", "-1", "x", "logs"}, "invalid context length"},
		{[]string{"search", "-m", "1", "--limit", "2", "x", "logs"}, "-m does not combine"},
		{[]string{"search", "--limit", "-5", "x", "logs"}, "--limit: want a number of lines"},
		{[]string{"search", "-m", "1", "--sort", "time", "x", "logs"}, "-m does not combine"},
		{[]string{"search", "-w", "error", "logs"}, "not to the query language"},
		{[]string{"search", "-w", "--re2", "error", "logs"}, "not to --re2"},
		{[]string{"search", "-o", "error", "logs"}, "not the query language"},
		{[]string{"search", "-owx", "-F", "error", "logs"}, "-o does not combine"},
		{[]string{"search", "-oE", `(\<[a-z])+`, "logs"}, `unsupported: an anchor or word test`},
		{[]string{"search", "-owE", `([a-z]\>)*`, "logs"}, `unsupported: an anchor or word test`},
		{[]string{"search", "-oG", `a\B*`, "logs"}, `unsupported: an anchor or word test`},
		{[]string{"search", "-oE", `x|a$?`, "logs"}, `unsupported: an anchor or word test`},
		{[]string{"search", "-oxE", `(^a)+`, "logs"}, `unsupported: an anchor or word test`},
		{[]string{"search", "-o", "--follow", "-F", "x", "logs"}, "--follow does not combine"},
		{[]string{"search", "-wE", edgeTooComplexWithW, "logs"}, `too complex to translate`},
	} {
		_, stderr, code := logdex(t, dir, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.msg)
		}
	}
}

// edgeTooComplexWithW is a pattern whose \< and \> translate alone but
// not within -w's restriction (found by a random search): -w and -x take
// simpler ones, repeated or not.
const (
	edgeTooComplexWithW = `((()())$^|\B\<|$(\>(||_*$-)+|$|aw)?){,3}`
	edgeComplexMsg      = `unsupported: \< or \> in this position is too complex to translate`
)

// TestSearchPatternErrorsSayWhich: an error in one of several patterns
// names and quotes that pattern, the line of it at fault (each line of a
// pattern is a pattern of its own) and, from -f FILE, FILE:LINE of that
// line, as grep names it.
func TestSearchPatternErrorsSayWhich(t *testing.T) {
	dir, _ := fixtureCopy(t)
	must(t, os.WriteFile(filepath.Join(dir, "edge.txt"), []byte("abcdef\n"+edgeTooComplexWithW+"\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "paren.txt"), []byte("abc\nx(\n"), 0o644))
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{[]string{"-w", "-E", "-e", "abcdef", "-e", edgeTooComplexWithW}, "logdex: " + edgeComplexMsg + " (at character 1)\n  " + edgeTooComplexWithW + "\n  ^\n"},
		{[]string{"-w", "-E", "-e", "a", "-e", "b\n" + edgeTooComplexWithW}, "logdex: " + edgeComplexMsg + " (at character 1 of line 2)\n  " + edgeTooComplexWithW + "\n  ^\n"},
		{[]string{"-w", "-E", "-f", "edge.txt"}, "logdex: edge.txt:2: " + edgeComplexMsg + " (at character 1)\n  " + edgeTooComplexWithW + "\n  ^\n"},
		{[]string{"-w", "-E", "-e", "abcdef", "-f", "edge.txt"}, "logdex: edge.txt:2: " + edgeComplexMsg + " (at character 1)\n  " + edgeTooComplexWithW + "\n  ^\n"},
		{[]string{"-E", "-f", "paren.txt"}, "logdex: paren.txt:2: Unmatched ( or \\( (at character 2)\n  x(\n   ^\n"},
		{[]string{"-E", "-e", "abcdef", "-e", "q\nx("}, "logdex: Unmatched ( or \\( (at character 2 of line 2)\n  x(\n   ^\n"},
		{[]string{"-E", "-e", "q\nab\nxy("}, "logdex: Unmatched ( or \\( (at character 3 of line 3)\n  xy(\n    ^\n"},
		{[]string{"-E", "-e", "abcdef", "-e", "x("}, "logdex: Unmatched ( or \\( (at character 2)\n  x(\n   ^\n"},
	} {
		args := append(append([]string{"search", "--no-update"}, tc.args...), "logs")
		_, stderr, code := logdex(t, dir, args...)
		if code != 2 || stderr != tc.stderr {
			t.Errorf("%q: exit %d, stderr\n%s\nwant\n%s", tc.args, code, stderr, tc.stderr)
		}
	}
}

func TestSearchLimitAndQueryLanguage(t *testing.T) {
	dir, _ := fixtureCopy(t)
	out, _, code := logdex(t, dir, "search", "--limit", "3", "-F", "INFO", "logs")
	if code != 0 || strings.Count(out, "\n") != 3 {
		t.Fatalf("limit 3: exit %d, %d lines", code, strings.Count(out, "\n"))
	}
	// -l and -L name files whatever --limit says.
	for _, flag := range []string{"-l", "-L"} {
		names, _, code := logdex(t, dir, "search", flag, "-F", "ERROR", "logs")
		limited, stderr, lcode := logdex(t, dir, "search", flag, "--limit", "1", "-F", "ERROR", "logs")
		if code != 0 || lcode != code || limited != names {
			t.Fatalf("%s --limit 1: exit %d (%s), %q; without: exit %d, %q", flag, lcode, stderr, limited, code, names)
		}
	}
	// Words are case-insensitive; phrases need adjacency; NOT excludes.
	all, _, _ := logdex(t, dir, "search", "error", "logs")
	neg, _, _ := logdex(t, dir, "search", "error -timeout", "logs")
	if strings.Count(neg, "\n") >= strings.Count(all, "\n") || strings.Count(neg, "\n") == 0 {
		t.Fatalf("error: %d lines, error -timeout: %d", strings.Count(all, "\n"), strings.Count(neg, "\n"))
	}
	for _, l := range strings.Split(strings.TrimSpace(neg), "\n") {
		if strings.Contains(strings.ToLower(l), "timeout") {
			t.Fatalf("NOT timeout printed %q", l)
		}
	}
}

// TestSearchNoOperand: like grep -r without a file operand, search "." and
// print paths without "./".
func TestSearchNoOperand(t *testing.T) {
	dir, root := fixtureCopy(t)
	_ = dir
	got, _, code := logdex(t, root, "search", "-F", "GET")
	want, wcode := grep(t, root, "-rn", "-F", "GET")
	if code != wcode || got != want {
		t.Fatalf("exit %d/%d\n%s", code, wcode, firstDiff(got, want))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < min(len(g), len(w)); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got:  %.200q\n want: %.200q", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// TestSearchTime: --since and --until select the half-open range, a line
// without a timestamp takes the previous line's time, --sort time merges
// files oldest first (--reverse newest first), and bad times are errors.
func TestSearchTime(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(logs, 0o755))
	must(t, os.WriteFile(filepath.Join(logs, "a.log"), []byte(
		"2026-11-29T14:00:00Z ERROR one\n"+
			"  at frame (continues the error above)\n"+
			"2026-11-29T14:05:00Z ERROR two\n"+
			"2026-11-29T14:10:00Z ERROR three\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(logs, "b.log"), []byte(
		"Nov 29 14:02:00 host app[1]: ERROR four\n"+
			"Nov 29 14:07:00 host app[1]: ERROR five\n"), 0o644))
	must(t, os.Chtimes(filepath.Join(logs, "b.log"), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)))
	ix := filepath.Join(dir, "ix")
	for _, c := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--since", "2026-11-29 14:00", "--until", "2026-11-29T14:05:00Z", "error"},
			"logs/a.log:1:2026-11-29T14:00:00Z ERROR one\nlogs/a.log:2:  at frame (continues the error above)\nlogs/b.log:1:Nov 29 14:02:00 host app[1]: ERROR four\n", 0},
		{[]string{"--since", "2026-11-29 14:00", "--until", "2026-11-29 14:01", "frame"}, "logs/a.log:2:  at frame (continues the error above)\n", 0},
		{[]string{"--sort", "time", "-F", "ERROR"}, "logs/a.log:1:2026-11-29T14:00:00Z ERROR one\nlogs/b.log:1:Nov 29 14:02:00 host app[1]: ERROR four\n" +
			"logs/a.log:3:2026-11-29T14:05:00Z ERROR two\nlogs/b.log:2:Nov 29 14:07:00 host app[1]: ERROR five\nlogs/a.log:4:2026-11-29T14:10:00Z ERROR three\n", 0},
		{[]string{"--sort", "time", "--reverse", "--limit", "2", "-F", "ERROR"}, "logs/a.log:4:2026-11-29T14:10:00Z ERROR three\nlogs/b.log:2:Nov 29 14:07:00 host app[1]: ERROR five\n", 0},
		{[]string{"--since", "2026-11-30", "error"}, "", 1},
		{[]string{"--since", "soon", "error"}, "", 2},
		{[]string{"--sort", "time", "-C", "1", "error"}, "", 2},
	} {
		out, _, code := logdex(t, dir, append(append([]string{"search", "--index", ix}, c.args...), "logs")...)
		if out != c.want || code != c.code {
			t.Errorf("search %q: exit %d\n%s\nwant exit %d\n%s", c.args, code, out, c.code, c.want)
		}
	}
}

// TestSearchBytesLikeGrep: on lines holding bytes >= 0x80 (UTF-8 text,
// stray bytes) '.', brackets, \W, \S, \B and repetitions after a non-ASCII
// character match bytes, as grep does in the C locale, in -E and -G, with
// -i and -c too, whether the index narrows the pattern or not.
func TestSearchBytesLikeGrep(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	lines := "aèb\né\néé\n\xc3\xa9\xa9\n\xc3x\nü\naxb\nabc\nZoë retry\nzoë RETRY\ncafé au lait\ncaf\xe9 latin-1\n\xff\xfe\n\ufffd replaced\nab\na\xc3b\nxyz\n" +
		"2026-11-30 user=zoë status=500\n2026-11-30 user=bob status=200\n"
	must(t, os.WriteFile(filepath.Join(dir, "t.log"), []byte(lines), 0o644))
	// Every grep is queued first, to run while the searches do.
	type bytesCase struct {
		flags []string
		pat   string
		args  []string
		grep  *grepRun
	}
	var cases []bytesCase
	g := newGrepper(t, dir)
	for _, pat := range []string{`a.b`, `a..b`, `^.$`, `^..$`, `^\W$`, `a\Sb`, `\w\W\w`, `[é]`, `[a-é]`, `[^a]b`, `é{2}`, `^é?x$`,
		`é`, `zoë r`, `caf. `, `caf.. `, `user=.{3,4} `, `user=[^ ]* status=5`, `^[^a-z]`, `ë.retry`,
		"caf\xe9", "caf\xe9|retry", "[\xe9\xff]", "\ufffd", "^\xff.$", `aé*b`, `aé?b`, `aé{0}b`, `é*`, `^é*$`, `\B`, `[^ ]\B[^ ]`, `\Bt`,
		`\<[a-z]+\>`, `\<caf`, `é\>`, `\<.`, `.\>`, `\<[0-9]{3}\>`, `\<r[^ ]*`} {
		for _, flags := range [][]string{{"-E"}, {"-G"}, {"-iE"}, {"-cE"}, {"-wE"}, {"-xE"}, {"-oE"}, {"-oF"}, {"-oxE"}} {
			args := append(append([]string{}, flags...), pat, "t.log")
			gargs := append([]string{"-n"}, args...)
			if flags[0] == "-cE" {
				gargs = args
			}
			cases = append(cases, bytesCase{flags, pat, args, g.start(nil, gargs...)})
		}
	}
	for _, c := range cases {
		got, stderr, code := logdex(t, dir, append([]string{"search"}, c.args...)...)
		want, wcode := c.grep.wait(t)
		if want = sortGrep(want); code != wcode || got != want {
			t.Errorf("%v %q: exit %d (grep %d), stderr %q\n got  %q\n want %q", c.flags, c.pat, code, wcode, stderr, got, want)
		}
	}
}

// TestSearchOnlyInvertedContext: grep -ov with context prints the matched
// parts of the context lines (the lines that match) as context, and "--"
// between groups even when a group prints nothing.
func TestSearchOnlyInvertedContext(t *testing.T) {
	if _, err := exec.LookPath("grep"); err != nil {
		t.Skip("grep not installed")
	}
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	must(t, os.WriteFile(filepath.Join(dir, "ov.log"), []byte("a1\nb\nc\nd\na2\ne\nf\na3 a4\n"), 0o644))
	for _, flags := range [][]string{{"-ov", "-A1"}, {"-ov", "-A0"}, {"-ov", "-C1"}, {"-ov", "-B2"}, {"-ov"}, {"-o", "-A1"}} {
		args := append(append([]string{}, flags...), "-F", "a", "ov.log")
		want := unsortGrep(dir, append([]string{"-n"}, args...)...)
		got, _, _ := logdex(t, dir, append([]string{"search"}, args...)...)
		if got != want {
			t.Errorf("%v: got %q, want %q", flags, got, want)
		}
	}
}

// TestSearchFlagErrors: a bad flag or value is one line and a pointer to
// -h, as grep says it, not the whole usage; -h prints the usage.
func TestSearchFlagErrors(t *testing.T) {
	dir, _ := fixtureCopy(t)
	const hint = "Usage: logdex search [flags] QUERY [PATH...]\nTry 'logdex search -h' for more information.\n"
	for _, tc := range []struct {
		args       []string
		wantStderr string
	}{
		{[]string{"-A", "x"}, "logdex: invalid value \"x\" for flag -A: x: invalid context length argument\n" + hint},
		{[]string{"-m", "x"}, "logdex: invalid value \"x\" for flag -m: invalid max count\n" + hint},
		{[]string{"--bogus"}, "logdex: flag provided but not defined: -bogus\n" + hint},
		{[]string{"-rnX"}, "logdex: flag provided but not defined: -X\n" + hint},
		{[]string{"-rnI"}, "logdex: -I (binary files skipped) is not supported: their matches count as grep counts them without -I, said as \"binary file matches\"\n" + hint},
		{[]string{"-Pr"}, "logdex: -P (Perl regular expressions) is not supported: --re2 reads Go's RE2 syntax (\\d, (?i), lazy +?), -E grep's ERE\n" + hint},
		{[]string{"--perl-regexp"}, "logdex: --perl-regexp (-P, Perl regular expressions) is not supported: --re2 reads Go's RE2 syntax (\\d, (?i), lazy +?), -E grep's ERE\n" + hint},
		{[]string{"--label=x"}, "logdex: --label is not supported: standard input is not searched\n" + hint},
	} {
		args := append(append([]string{"search"}, tc.args...), "ERROR", "logs")
		out, errOut, code := logdex(t, dir, args...)
		if code != 2 || out != "" || errOut != tc.wantStderr {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing, %q", tc.args, code, out, errOut, tc.wantStderr)
		}
	}
	_, errOut, _ := logdex(t, dir, "search", "-h")
	if !strings.HasPrefix(errOut, searchUsage) || !strings.Contains(errOut, "-A ") {
		t.Errorf("search -h: %q, want the usage and the flags", errOut)
	}
}
