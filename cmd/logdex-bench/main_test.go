package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
	"github.com/logdex/logdex/indexer"
	"github.com/rs/zerolog"
)

// The test binary doubles as a fake `logdex serve` (the real one is being
// written) when LOGDEX_BENCH_FAKE_SERVE is set, so the server section is
// exercised end to end.
func TestMain(m *testing.M) {
	if os.Getenv("LOGDEX_BENCH_FAKE_SERVE") == "1" {
		os.Exit(fakeServe(os.Args[1:]))
	}
	testBuild, testRace = true, raceTest
	// A race-detecting process sleeps a second at exit by default; the
	// tests start hundreds.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	dir, err := os.MkdirTemp("", "logdex-bench-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	testBinDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func fakeServe(args []string) int {
	if len(args) < 2 || args[0] != "serve" {
		fmt.Fprintln(os.Stderr, "fake: only serve")
		return 2
	}
	if args[1] == "-h" {
		fmt.Fprintln(os.Stderr, "Usage: logdex serve\n  -addr string\n  -index string\n  -warmup string staged|eager|off")
		return 2
	}
	var addr, root string
	for i := 1; i < len(args); i++ {
		switch {
		case args[i] == "--addr":
			addr, i = args[i+1], i+1
		case args[i] == "--index":
			i++
		case strings.HasPrefix(args[i], "--warmup="):
		default:
			root = args[i]
		}
	}
	type file struct {
		ID   uint64 `json:"id"`
		Path string `json:"path"`
		Size int64  `json:"size"`
	}
	var files []file
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			rel, _ := filepath.Rel(root, p)
			files = append(files, file{ID: 1<<63 + uint64(len(files)), Path: rel, Size: fi.Size()})
		}
		return nil
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/api/search", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("q") == "" {
			http.Error(w, "no q", 400)
			return
		}
		fmt.Fprint(w, `{"hits":[]}`)
	})
	mux.HandleFunc("/api/files", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"files": files})
	})
	mux.HandleFunc("/api/files/{id}/content", func(w http.ResponseWriter, r *http.Request) {
		for _, f := range files {
			if fmt.Sprint(f.ID) == r.PathValue("id") {
				http.ServeFile(w, r, filepath.Join(root, f.Path))
				return
			}
		}
		http.NotFound(w, r)
	})
	if err := http.ListenAndServe(addr, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestSmoke runs the whole tool as CI does: tiny corpus, every section,
// one run each, counts verified against rg and grep.
func TestSmoke(t *testing.T) {
	t.Parallel() // these check what is reported, not how fast: they may share the CPUs
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	js := filepath.Join(dir, "bench.json")
	md := filepath.Join(dir, "bench.md")
	code := run(context.Background(), []string{"--smoke", "--cache-dir", dir, "--json", js, "--out", md}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	for _, want := range []string{"Command: `go run ./cmd/logdex-bench --smoke", "### Indexing", "### Queries, loggen corpus (median of 1)",
		"selective term `mallory`", "### Queries, highcard corpus (median of 1)", "rare id: a whole trace_id `4bf92f35",
		"### Speed-up over rg, geometric mean of the queries", "| highcard | all 15 |", "| loggen | the 9 the index narrows |", "### Process start (median of 1)", "| empty Go program (`func main() {}`) |", "| logdex search -c, a missing word, highcard index", "### Scaling", "### Server, loggen corpus",
		"### Server, highcard corpus", "### Start-up and warm-up, loggen corpus", "### Start-up and warm-up, highcard corpus", "`literal:4bf92f35", "| error (100 of its hits) | off | 64 |", "| floor: minimal Go net/http server", "### Time (loggen corpus, median of 1)", "One-hour window of a common word, `failed`",
		"### Compressed logs", "| gzip | selective word `mallory` |", "| zstd | hdfs/datanode.log.zst |", "### Many small files (300 files", "| word in half the files `timeout` |", "Full run took"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "MISMATCH") {
		t.Errorf("count mismatch:\n%s", out.String())
	}
	if f, _ := os.ReadFile(md); string(f) != beginMarker+"\n"+out.String()+endMarker+"\n" {
		t.Errorf("--out is not stdout between the markers")
	}
	var rep Report
	b, err := os.ReadFile(js)
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		t.Fatal(err)
	}
	if rep.Machine.Cores == 0 || len(rep.Corpora) != 2 {
		t.Fatalf("incomplete JSON: %s", b)
	}
	for i, want := range []struct {
		profile string
		queries int
	}{{"loggen", 12}, {"highcard", 15}} {
		cr := rep.Corpora[i]
		if cr.Profile != want.profile || cr.Indexing == nil || cr.Queries == nil || len(cr.Queries.Rows) != want.queries ||
			cr.Queries.GeoCLI <= 0 || cr.Server == nil || len(cr.Server.Load) == 0 {
			t.Fatalf("incomplete JSON for %s: %s", want.profile, b)
		}
		for _, r := range cr.Queries.Rows {
			if r.Hits == 0 && r.Needle != "" {
				t.Errorf("%s: needle query %q found nothing", cr.Profile, r.Text)
			}
		}
	}
	if sf := rep.SmallFiles; sf == nil || sf.Files != 300 || len(sf.Queries) != 2 || sf.Queries[0].Hits == 0 || sf.ManifestSize == 0 {
		t.Errorf("smallfiles: %+v", sf)
	}
	if rep.Scaling == nil || len(rep.Scaling.Rows) != 2 {
		t.Errorf("scaling rows: %+v", rep.Scaling)
	}
	if len(rep.Warmups) != 2 || rep.Warmups[0].Profile != "loggen" || rep.Warmups[1].Profile != "highcard" {
		t.Errorf("warm-up sections: %s", b)
	}
	for _, w := range rep.Warmups {
		if w.Skipped != "" || len(w.Rows) != 3 || w.Rows[0].FirstAnswer == nil {
			t.Errorf("warm-up on %s: %+v", w.Profile, w)
		}
	}
	checkTimeAndCompressed(t, &rep)
	// A second run reuses the cached corpus and index: --only query alone works.
	out.Reset()
	if code := run(context.Background(), []string{"--smoke", "--cache-dir", dir, "--only", "query", "--profile", "highcard"}, &out, &errOut); code != 0 ||
		strings.Contains(out.String(), "Skipped") {
		t.Fatalf("--only query: exit %d\n%s", code, out.String())
	}
}

func TestOnlyQueryWithoutIndexIsSkipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"--smoke", "--mb", "1", "--cache-dir", dir, "--only", "queries"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "_Skipped: no index built yet") {
		t.Errorf("no skip note:\n%s", out.String())
	}
}

// TestServerSection runs the server section against the fake server.
func TestServerSection(t *testing.T) {
	dir := t.TempDir()
	corpusDir, ixDir := filepath.Join(dir, "logs"), filepath.Join(dir, "ix")
	if _, err := loggen.Generate(corpusDir, loggen.Options{TotalBytes: 1 << 20, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := indexer.Update(context.Background(), indexer.Options{Dir: ixDir, Roots: []string{corpusDir}, Logger: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LOGDEX_BENCH_FAKE_SERVE", "1")
	for _, wrk := range []bool{false, true} {
		// wrk counts whole seconds, a second a row: its load, where
		// installed, is measured only in the long run (the default run
		// stays under five minutes, and TestSmoke's short rows take the Go
		// load generator).
		if wrk && (toolVersion("wrk", "-v") == "" || os.Getenv("LOGDEX_LONG") == "") {
			continue
		}
		cfg := &config{runs: 1, serverSeconds: 0.3, cacheDir: dir, corpusDir: corpusDir, indexDir: ixDir}
		if wrk {
			cfg.serverSeconds = 1
		}
		b := &bench{cfg: cfg, ctx: context.Background(), log: testWriter{t}, tmp: t.TempDir(), bin: os.Args[0],
			rep: &Report{Machine: Machine{Cores: 2}}}
		if wrk {
			b.rep.Machine.Wrk = "wrk"
		}
		c, err := b.corpus(loggen.ProfileLoggen, 0)
		if err != nil {
			t.Fatal(err)
		}
		cr := &CorpusResult{Profile: c.Profile, Corpus: c, index: ixDir}
		wantLoad := 10 // mallory at 1, 16, 64 connections cached, 1 and 64 uncached; the floor; newest first at 64, its floor; a phrase at 64, its floor
		if _, ok := c.needle(loggen.NeedleReqID); ok {
			wantLoad += 2
		}
		t0 := time.Now()
		if err := b.server(cr); err != nil {
			t.Fatal(err)
		}
		res := cr.Server
		if want := map[bool]string{true: "wrk", false: "go load generator (in this process)"}[wrk]; res.LoadTool != want {
			t.Errorf("load tool %q, want %q", res.LoadTool, want)
		}
		if res.Skipped != "" || len(res.Startup) != 3 || len(res.Load) != wantLoad || len(res.Transfer) != 3 {
			t.Fatalf("wrk=%v: %+v", wrk, res)
		}
		for _, l := range res.Load {
			if l.QPS <= 0 || l.P99 < l.P50 || l.Errors > 0 {
				t.Errorf("wrk=%v: load row %+v", wrk, l)
			}
		}
		if floor := res.Load[len(res.Load)-1]; !strings.HasPrefix(floor.Query, "floor: ") || floor.Conns != 64 {
			t.Errorf("wrk=%v: the last load row is not the floor: %+v", wrk, floor)
		}
		_, size := largestFile(c)
		for _, tr := range res.Transfer {
			if tr.Bytes != size || tr.MBps <= 0 {
				t.Errorf("transfer %+v, want %d bytes", tr, size)
			}
		}
		b.rep.Corpora = []*CorpusResult{cr}
		md := b.rep.Markdown()
		if !strings.Contains(md, "| mallory (100 of its hits) | off | 64 |") || !strings.Contains(md, "| staged |") {
			t.Errorf("server markdown:\n%s", md)
		}
		t.Logf("wrk=%v: server section took %v", wrk, time.Since(t0))
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func TestSumCounts(t *testing.T) {
	n, per := sumCounts([]byte("/c/a.log:3\n/c/b/x:y.log:0\n/c/b/c.log:12\n"), "/c")
	if n != 15 || per["a.log"] != 3 || per["b/c.log"] != 12 || len(per) != 2 {
		t.Fatalf("%d %v", n, per)
	}
	if n, _ := sumCounts([]byte("7\n"), "/c"); n != 7 {
		t.Fatalf("single file: %d", n)
	}
}

func TestCellAndQuote(t *testing.T) {
	d := distOf([]time.Duration{3 * time.Millisecond, 1 * time.Millisecond, 2 * time.Millisecond}, false)
	if got := cell(d); got != "2.00 ms [1.00–3.00 ms]" {
		t.Errorf("cell = %q", got)
	}
	if got := reproduce([]string{"--mb", "16", "--only", "index,query", "--out", "a b"}); got != "go run ./cmd/logdex-bench --mb 16 --only index,query --out 'a b'" {
		t.Errorf("reproduce = %q", got)
	}
}

// TestWriteOut checks that --out replaces the generated part of a file and
// keeps the rest, and leaves a file without markers alone.
func TestWriteOut(t *testing.T) {
	dir := t.TempDir()
	gen := func(md string) string { return beginMarker + "\n" + md + endMarker + "\n" }
	tests := []struct {
		name, before, md, after string
		err                     bool
	}{
		{"new file", "", "report 1\n", gen("report 1\n"), false},
		{"replaced, the rest kept", "# Title\n\n" + gen("old\nreport\n") + "\n## Hand-written\n\ntext\n", "new\n",
			"# Title\n\n" + gen("new\n") + "\n## Hand-written\n\ntext\n", false},
		{"generated part last", gen("old\n"), "new\n", gen("new\n"), false},
		{"no markers", "hand-written only\n", "new\n", "hand-written only\n", true},
		{"end before begin", endMarker + "\n" + beginMarker + "\n", "new\n", endMarker + "\n" + beginMarker + "\n", true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprint(i)+".md")
			if tc.before != "" {
				os.WriteFile(path, []byte(tc.before), 0o644)
			}
			err := writeOut(path, tc.md)
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.after {
				t.Errorf("file:\n%s\nwant:\n%s", got, tc.after)
			}
		})
	}
}

// TestLiveSection runs the live section briefly against the real binary:
// every probe line arrives on the tail, every line is indexed, both
// search phases ran, and the report shows it.
func TestLiveSection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	js := filepath.Join(dir, "bench.json")
	code := run(context.Background(), []string{"--only", "live", "--mb", "2", "--live-seconds", "2", "--live-mbps", "1", "--live-files", "4",
		"--live-qps", "10", "--cache-dir", dir, "--json", js}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	var rep Report
	if err := json.Unmarshal([]byte(readString(js)), &rep); err != nil {
		t.Fatal(err)
	}
	l := rep.Live
	if l == nil || l.Probes == 0 || l.ProbesSeen != l.Probes || l.Indexed != l.Lines+4 || l.Loaded.N == 0 || l.Static.N == 0 || len(l.Samples) < 3 ||
		l.ServerLoaded == nil || l.ServerStatic == nil || l.ServerStatic.N != l.Static.N+l.Static.Errors {
		t.Fatalf("incomplete live result: %s", readString(js))
	}
	for _, want := range []string{"### Live indexing under load", "| index lag p50 / p99 / max |", "| serve RSS start / max / end |", "| inside the server (access log): search p99"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestWriteOutLive checks that a live-only report gets its own generated
// part after the main one, and replaces it later, leaving the rest alone.
func TestWriteOutLive(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.md")
	main := beginMarker + "\nmain\n" + endMarker + "\n"
	live := func(md string) string { return liveBeginMarker + "\n" + md + liveEndMarker + "\n" }
	os.WriteFile(path, []byte("# T\n"+main+"\n## Hand-written\n"), 0o644)
	for _, md := range []string{"live 1\n", "live 2\n"} {
		if err := writeOutPart(path, md, liveBeginMarker, liveEndMarker, endMarker); err != nil {
			t.Fatal(err)
		}
		if got, want := readString(path), "# T\n"+main+"\n"+live(md)+"\n## Hand-written\n"; got != want {
			t.Fatalf("file:\n%s\nwant:\n%s", got, want)
		}
	}
	if err := writeOut(path, "main 2\n"); err != nil || !strings.Contains(readString(path), live("live 2\n")) {
		t.Fatalf("the main part's update lost the live part (%v):\n%s", err, readString(path))
	}
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

func TestGeomean(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{4}, 4}, {[]float64{2, 8}, 4}, {[]float64{0.5, 2, 1}, 1}} {
		if got := geomean(tc.xs); got < tc.want-1e-9 || got > tc.want+1e-9 {
			t.Errorf("geomean(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

// checkTimeAndCompressed checks the time and compressed sections of a
// smoke report: every measurement present, counts found and agreed.
func checkTimeAndCompressed(t *testing.T, rep *Report) {
	t.Helper()
	tm := rep.Time
	if tm == nil || tm.Window == nil || tm.Hist == nil || tm.Build == nil {
		t.Fatalf("time section incomplete: %+v", tm)
	}
	if tm.Window.Hits == 0 || tm.Window.RatioCLI <= 0 || tm.Hist.Hits == 0 || tm.Hist.Buckets == 0 || tm.Hist.Ratio <= 0 {
		t.Errorf("time: window %+v, histogram %+v", tm.Window, tm.Hist)
	}
	if b := tm.Build; b.Ratio <= 0 || b.TimedSpans[0] == 0 || b.TimedSpans[1] != 0 {
		t.Errorf("time indexing: %+v (the copy without timestamps must have no timed span)", b)
	}
	cm := rep.Compressed
	if cm == nil || len(cm.Formats) != 2 {
		t.Fatalf("compressed section: %+v", cm)
	}
	for _, f := range cm.Formats {
		if f.Skipped != "" || f.Ratio <= 0 || len(f.Queries) != 2 || f.Random == nil || f.Random.ReadAt == nil || f.Random.Checkpoints == 0 {
			t.Errorf("compressed %s: %+v", f.Kind, f)
			continue
		}
		for _, q := range f.Queries {
			if q.Hits == 0 || q.Mismatch != "" || q.RatioRg <= 0 {
				t.Errorf("compressed %s query %s: %+v", f.Kind, q.Text, q)
			}
		}
	}
}

func TestHourRegexAndStrip(t *testing.T) {
	from := time.Date(2026, 10, 5, 14, 0, 0, 0, time.UTC)
	re := regexp.MustCompile("(?i)" + hourRegex(from, "error")) // rg and RE2 agree on this syntax
	tests := []struct {
		line string
		in   bool // in the hour, with the word after the timestamp
	}{
		{"2026-10-05T14:00:00.123Z ERROR x", true},
		{"2026-10-05 14:59:59.999 UTC [1] LOG: error", true},
		{`ts=2026-10-05T14:10:00.000Z level=error msg="x"`, true},
		{`{"ts":"2026-10-05T14:10:00.000Z","message":"error"}`, true},
		{`1.2.3.4 - - [05/Oct/2026:14:01:02 +0000] "GET /error HTTP/1.1" 500`, true},
		{"2026/10/05 14:00:26 [error] 1#1: x", true},
		{"Oct  5 14:00:16 web-13 app: error", true},
		{"261005 140010 33 ERROR dfs: x", true},
		{"2026-10-05T15:00:00.000Z ERROR x", false},
		{"2026-10-05T13:59:59.999Z ERROR x", false},
		{"2026-10-05T14:00:00.000Z errors x", false},
		{"error 2026-10-05T14:00:00.000Z", false},
	}
	for _, tc := range tests {
		if got := re.MatchString(tc.line); got != tc.in {
			t.Errorf("%q: match %v, want %v", tc.line, got, tc.in)
		}
		stripped := stripTimestamps([]byte(tc.line))
		if len(stripped) != len(tc.line) || timestampRE.Match(stripped) {
			t.Errorf("strip %q = %q", tc.line, stripped)
		}
	}
	if got := string(stripTimestamps([]byte("I1010 00:04:19.743931 x 12"))); got != "Ibaba aa:ae:bj.hedjdb x 12" {
		t.Errorf("klog strip = %q", got)
	}
}

// timestampRE matches the timestamps loggen writes, anywhere in a line
// (messages embed ISO and klog times too), and any other time of day; the
// tests check that stripTimestamps leaves none of them.
var timestampRE = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?|\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d|\d{4}/\d\d/\d\d \d\d:\d\d:\d\d|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d|(?m:^\d{6} \d{6})|[IWEF]\d{4} \d\d:\d\d:\d\d(?:\.\d+)?|\b\d\d:\d\d:\d\d\b`)
