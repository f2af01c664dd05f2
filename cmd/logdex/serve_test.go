package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/server"
	"github.com/rs/zerolog"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// asLogdex, set in the environment of the processes the tests start,
// makes this test binary run logdex's main instead of the tests: a
// default run needs no second, non-race build of every package (half a
// minute of both cores on a fresh machine), and the race detector
// watches the real processes too.
const asLogdex = "LOGDEX_TEST_AS_LOGDEX"

// logdexBin is the program the tests run as logdex: serve, search and
// index are tested as real processes (signals, strace, CPU accounting).
// It is this test binary, but for the opt-in performance tests
// (builtLogdexBin).
func logdexBin(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// builtLogdexBin builds cmd/logdex once per test run, as users build it
// (no race detector): what performance tests measure.
func builtLogdexBin(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "logdex-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "logdex")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	if os.Getenv(asLogdex) == "1" && !slices.ContainsFunc(os.Args, func(a string) bool { return strings.HasPrefix(a, "-test.fuzzworker") }) {
		main() // (a fuzzing worker inherits the variable, and stays a test)
	}
	os.Setenv(asLogdex, "1")
	// A race-detecting process sleeps a second at exit by default (to
	// catch races at exit); the tests start hundreds.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	if nobodyDir != "" {
		os.RemoveAll(nobodyDir)
	}
	os.Exit(code)
}

// copyFixtures copies the committed sample tree into dir/logs.
func copyFixtures(t testing.TB, dir string) string {
	t.Helper()
	dst := filepath.Join(dir, "logs")
	err := filepath.WalkDir("../../fixtures/logs", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../../fixtures/logs", p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// served is a `logdex serve` process.
type served struct {
	cmd    *exec.Cmd
	url    string
	pid    int // of logdex (under strace, not the command's pid)
	stderr *logFile
	done   chan error
}

// logFile is the server's stderr: a file, so that no reader in the test
// process competes for CPU in measurements.
type logFile struct{ name string }

func (l *logFile) String() string {
	b, _ := os.ReadFile(l.name)
	return string(b)
}

// startServe runs argv (which ends in a logdex serve command line, perhaps
// behind strace) and waits until it listens and is ready.
func startServe(t testing.TB, env []string, argv ...string) *served {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errf, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer errf.Close()
	s := &served{cmd: cmd, stderr: &logFile{errf.Name()}, done: make(chan error, 1)}
	cmd.Stderr = errf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if s.pid > 0 {
			syscall.Kill(s.pid, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		<-s.done
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL on stdout: %v\n%s", err, s.stderr)
	}
	s.url = strings.TrimSuffix(strings.TrimSpace(line), "/")
	go io.Copy(io.Discard, stdout)
	var m []string
	for i := 0; m == nil && i < 100; i++ { // the log line may trail the URL
		m = regexp.MustCompile(`"pid":(\d+)`).FindStringSubmatch(s.stderr.String())
		if m == nil {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if m == nil {
		t.Fatalf("no pid in the log:\n%s", s.stderr)
	}
	s.pid, _ = strconv.Atoi(m[1])
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %v\n%s", err, s.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// stop sends SIGTERM and returns the exit error.
func (s *served) stop(t testing.TB) error {
	t.Helper()
	syscall.Kill(s.pid, syscall.SIGTERM)
	select {
	case err := <-s.done:
		s.done <- err
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("no exit after SIGTERM\n%s", s.stderr)
	}
	return nil
}

func fetch(t testing.TB, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestSendfileStrace proves the raw endpoints move their bodies with
// sendfile(2): the server runs under strace and the sum of sendfile's
// return values must cover the body.
func TestSendfileStrace(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("strace not installed: cannot prove sendfile (CI installs it)")
	}
	// Only sendfile stops the traced server (strace 5.3 on), not its
	// every syscall: that slowed it down several times.
	straceArgs := []string{"-f", "-e", "trace=sendfile"}
	if exec.Command(strace, "--seccomp-bpf", "-f", "-e", "trace=sendfile", "-o", os.DevNull, "true").Run() == nil {
		straceArgs = append(straceArgs, "--seccomp-bpf")
	}
	bin := logdexBin(t)
	dir := t.TempDir()
	logs := copyFixtures(t, dir)
	// A file of several sendfile chunks (4 MiB each): lines "... %07d ...",
	// without fmt (130,000 calls of it took seconds under the race detector).
	var big []byte
	for i := 0; len(big) < 10<<20; i++ {
		big = append(big, "2026-10-10T00:00:00Z INFO bulk line "...)
		n := strconv.Itoa(i)
		big = append(append(big, "0000000"[len(n):]...), n...)
		big = append(big, " with some padding text to make it longer\n"...)
	}
	must(t, os.WriteFile(filepath.Join(logs, "bulk.log"), big, 0o644))
	idx := filepath.Join(dir, "index")
	if out, err := exec.Command(bin, "index", "-q", "--index", idx, logs).CombinedOutput(); err != nil {
		t.Fatalf("index: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		name, path string
		minBody    int
	}{
		{"search/raw", "/api/search/raw?q=bulk", 10 << 20},
		{"search/raw scattered", "/api/search/raw?q=error", 5000},
		{"files/content", "/api/files/%d/content", 10 << 20},
		{"files/content range", "/api/files/%d/content#range", 5 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // (mostly waiting on the server)
			trace := filepath.Join(t.TempDir(), "strace.out")
			argv := append(append([]string{strace}, straceArgs...), "-o", trace,
				bin, "serve", "--addr", "127.0.0.1:0", "--reindex", "0", "--index", idx, logs)
			s := startServe(t, nil, argv...)
			path := tc.path
			if strings.Contains(path, "%d") {
				path = fmt.Sprintf(path, fileID(t, s.url, "bulk.log"))
			}
			req, _ := http.NewRequest(http.MethodGet, s.url+strings.TrimSuffix(path, "#range"), nil)
			if strings.HasSuffix(path, "#range") {
				req.Header.Set("Range", "bytes=1000-5243879")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode/100 != 2 || len(body) < tc.minBody {
				t.Fatalf("%d, %d bytes, %v", resp.StatusCode, len(body), err)
			}
			if err := s.stop(t); err != nil {
				t.Fatalf("exit: %v\n%s", err, s.stderr)
			}
			sum, calls := sendfileSum(t, trace)
			t.Logf("%s: body %d bytes, %d sendfile calls moved %d bytes", tc.name, len(body), calls, sum)
			if sum < int64(len(body)) {
				t.Fatalf("sendfile moved %d bytes of a %d-byte body: the body was copied through user space", sum, len(body))
			}
		})
	}
}

// sendfileSum adds up sendfile's results in an strace -f log, including
// calls split into "<unfinished ...>" and "<... sendfile resumed>".
func sendfileSum(t *testing.T, name string) (sum int64, calls int) {
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`sendfile.*\) += (\d+)`)
	for _, l := range strings.Split(string(b), "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			sum += n
			calls++
		}
	}
	return sum, calls
}

// TestServeLifecycle runs the binary: indexing at start, SIGHUP re-index,
// JSON access log, graceful SIGTERM with a download in flight.
func TestServeLifecycle(t *testing.T) {
	bin := logdexBin(t)
	dir := t.TempDir()
	logs := copyFixtures(t, dir)
	// ~120 MiB, more than loopback's socket buffers hold, in lines too long
	// to tokenize: quick to index for a race-detecting logdex. Never held
	// whole in this race-detecting process (that took seconds).
	line := append(bytes.Repeat([]byte("padding for a long download "), 80<<10), '\n')
	bigf, err := os.Create(filepath.Join(logs, "big.log"))
	must(t, err)
	for range 54 {
		_, err = bigf.Write(line)
		must(t, err)
	}
	must(t, bigf.Close())
	bigLen := int64(54 * len(line))
	idx := filepath.Join(dir, "index")
	s := startServe(t, nil, bin, "serve", "--addr", "127.0.0.1:0", "--reindex", "0", "--index", idx, logs)

	if code, b := fetch(t, s.url+"/api/search?q=error&limit=1"); code != 200 || !bytes.Contains(b, []byte(`"total":48`)) {
		t.Fatalf("search: %d %s", code, b)
	}
	os.WriteFile(filepath.Join(logs, "new.log"), []byte("quetzalcoatl was here\n"), 0o644)
	syscall.Kill(s.pid, syscall.SIGHUP)
	for deadline := time.Now().Add(20 * time.Second); ; {
		_, b := fetch(t, s.url+"/api/search?q=quetzalcoatl")
		if bytes.Contains(b, []byte(`"total":1`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP did not re-index: %s\n%s", b, s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// A download in flight when SIGTERM arrives completes.
	resp, err := http.Get(fmt.Sprintf("%s/api/files/%d/content", s.url, fileID(t, s.url, "big.log")))
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 1<<20)
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(s.pid, syscall.SIGTERM)
	time.Sleep(200 * time.Millisecond)
	rest, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || int64(len(first))+rest != bigLen {
		t.Fatalf("download across SIGTERM: %d of %d bytes, %v", int64(len(first))+rest, bigLen, err)
	}
	if err := s.stop(t); err != nil {
		t.Fatalf("exit status: %v\n%s", err, s.stderr)
	}
	logs2 := s.stderr.String()
	for _, want := range []string{`"message":"listening"`, `"message":"shutting down"`, `"route":"/api/search"`, `"rid":"`, `"status":200`, `"message":"SIGHUP: re-indexing"`} {
		if !strings.Contains(logs2, want) {
			t.Errorf("log lacks %s", want)
		}
	}
	// Every line of stderr is JSON (not a terminal).
	for _, l := range strings.Split(strings.TrimSpace(logs2), "\n") {
		if !json.Valid([]byte(l)) {
			t.Errorf("not JSON: %q", l)
		}
	}
}

func fileID(t *testing.T, url, suffix string) uint64 {
	_, b := fetch(t, url+"/api/files")
	var fr struct {
		Files []struct {
			ID   uint64
			Path string
		}
	}
	json.Unmarshal(b, &fr)
	for _, f := range fr.Files {
		if strings.HasSuffix(f.Path, suffix) {
			return f.ID
		}
	}
	t.Fatalf("no %s", suffix)
	return 0
}

// TestServeMissingPath: a PATH that is not there is an error at start (a
// typo), not a server answering every search with nothing.
func TestServeMissingPath(t *testing.T) {
	dir := t.TempDir()
	logs := copyFixtures(t, dir)
	var stdout, stderr bytes.Buffer
	missing := filepath.Join(dir, "nope")
	code := run([]string{"serve", "--addr", "127.0.0.1:0", "--index", filepath.Join(dir, "idx"), logs, missing}, nil, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), missing+": no such file or directory") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "idx")); err == nil {
		t.Fatal("indexed before refusing")
	}
}

func TestServeBindRequiresToken(t *testing.T) {
	dir := t.TempDir()
	logs := copyFixtures(t, dir)
	var stdout, stderr bytes.Buffer
	t.Setenv("LOGDEX_TOKEN", "")
	code := run([]string{"serve", "--addr", "0.0.0.0:0", "--index", filepath.Join(dir, "idx"), logs}, nil, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "requires --auth-token") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "idx")); err == nil {
		t.Fatal("indexed before refusing")
	}
}

// TestServeRefusesUnusableToken: a token no HTTP client can send (header
// values lose surrounding whitespace) is refused before anything starts.
func TestServeRefusesUnusableToken(t *testing.T) {
	dir := t.TempDir()
	logs := copyFixtures(t, dir)
	for _, tc := range []struct{ flag, env, want string }{
		{"   ", "", "only whitespace"},
		{"", "\t", "only whitespace"},
		{" secret", "", "begins or ends with whitespace"},
		{"sec\nret", "", "line break"},
	} {
		var stdout, stderr bytes.Buffer
		t.Setenv("LOGDEX_TOKEN", tc.env)
		args := []string{"serve", "--addr", "127.0.0.1:0", "--index", filepath.Join(dir, "idx")}
		if tc.flag != "" {
			args = append(args, "--auth-token", tc.flag)
		}
		code := run(append(args, logs), nil, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) {
			t.Fatalf("token %q/%q: exit %d: %s", tc.flag, tc.env, code, stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "idx")); err == nil {
			t.Fatal("indexed before refusing")
		}
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7070": true, "127.1.2.3:80": true, "[::1]:7070": true, "localhost:7070": true,
		":7070": false, "0.0.0.0:7070": false, "[::]:7070": false, "10.0.0.1:7070": false, "example.com:80": false, "nonsense": false,
	} {
		if got := isLoopback(addr); got != want {
			t.Errorf("%s: %v", addr, got)
		}
	}
}

func TestStatusCommand(t *testing.T) {
	dir := t.TempDir()
	logs := copyFixtures(t, dir)
	idx := filepath.Join(dir, "idx")
	e := &env{stderr: io.Discard}
	if _, err := e.updateIndex(context.Background(), idx, []string{logs}, 0, false, zerolog.WarnLevel); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Options{IndexDir: idx, Logger: zerolog.Nop(), AuthToken: "tok", Warmup: &mmapstore.WarmOptions{Mode: mmapstore.WarmEager}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Close()
	status := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := run(append([]string{"status", "--addr", ts.URL}, args...), nil, &out, &errb)
		return code, out.String(), errb.String()
	}
	if code, _, errs := status(); code != 2 || !strings.Contains(errs, "401") {
		t.Fatalf("without token: %d %s", code, errs)
	}
	t.Setenv("LOGDEX_TOKEN", "tok")
	if code, out, _ := status(); code != 1 || !strings.Contains(out, "starting") {
		t.Fatalf("before the index opens: %d %s", code, out)
	}
	srv.Reload()
	code, out, _ := status()
	if code != 0 || !strings.Contains(out, ": ready") || !strings.Contains(out, "20 files, 2570 lines") || !strings.Contains(out, "warmup:   eager, done") ||
		!strings.Contains(out, "build:    ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("ready: %d\n%s", code, out)
	}
	code, out, _ = status("--json")
	var st server.Status
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Index.Files != 20 {
		t.Fatalf("--json: %d %s", code, out)
	}
	if code, _, errs := run3("status", "--addr", "127.0.0.1:1"); code != 2 || !strings.Contains(errs, "no server") {
		t.Fatalf("unreachable: %d %s", code, errs)
	}
}

func TestVersionCommand(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-V"} {
		code, out, errs := run3(arg)
		if code != 0 || errs != "" || out != server.ReadBuild().String()+"\n" || !strings.HasPrefix(out, "logdex ") || !strings.Contains(out, runtime.Version()) {
			t.Errorf("logdex %s: %d %q %q", arg, code, out, errs)
		}
	}
	if _, out, _ := run3("help"); !strings.Contains(out, "logdex version") {
		t.Errorf("usage does not name the version command:\n%s", out)
	}
}

func run3(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, nil, &out, &errb)
	return code, out.String(), errb.String()
}
