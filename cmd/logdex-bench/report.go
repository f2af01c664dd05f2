package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Report is everything one session measured.
type Report struct {
	Command    string            `json:"command"`
	Machine    Machine           `json:"machine"`
	Corpora    []*CorpusResult   `json:"corpora,omitempty"`
	Scaling    *ScalingResult    `json:"scaling,omitempty"`    // loggen profile
	Warmups    []*WarmupResult   `json:"warmups,omitempty"`    // one per profile
	Time       *TimeResult       `json:"time,omitempty"`       // loggen profile
	Compressed *CompressedResult `json:"compressed,omitempty"` // loggen profile
	SmallFiles *SmallFilesResult `json:"smallfiles,omitempty"`
	Process    *ProcessResult    `json:"process,omitempty"`
	Live       *LiveResult       `json:"live,omitempty"`
	Mismatches []string          `json:"mismatches"`
	Notes      []string          `json:"notes,omitempty"`
	Elapsed    string            `json:"elapsed"`
}

// CorpusResult is what the per-corpus sections measured on one corpus.
type CorpusResult struct {
	Profile  string         `json:"profile"`
	Corpus   *corpus        `json:"corpus"`
	Indexing *IndexResult   `json:"indexing,omitempty"`
	Queries  *QueriesResult `json:"queries,omitempty"`
	Server   *ServerResult  `json:"server,omitempty"`
	index    string         // the index directory of the corpus
}

// The generated part of a Markdown file that --out writes lies between
// these lines; the rest of the file is the authors'.
const (
	beginMarker = "<!-- logdex-bench: generated from here to the end marker; edit nothing in between -->"
	endMarker   = "<!-- logdex-bench: end of the generated part -->"
)

// A run of the live section alone (a minute of load, run apart from the
// others) has its own generated part, after the main one.
const (
	liveBeginMarker = "<!-- logdex-bench --only live: generated from here to the end marker; edit nothing in between -->"
	liveEndMarker   = "<!-- logdex-bench --only live: end of the generated part -->"
)

// writeOut writes the report md into path: a new file is the report
// between the markers; an existing one has the part between its markers
// replaced, and is left alone, with an error, if it has none.
func writeOut(path, md string) error {
	return writeOutPart(path, md, beginMarker, endMarker, "")
}

// writeOutPart is writeOut between the markers begin and end; a file
// without them gets the part inserted after the line after, when given
// and present.
func writeOutPart(path, md, begin, end, after string) error {
	gen := begin + "\n" + md + end + "\n"
	old, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return os.WriteFile(path, []byte(gen), 0o644)
	}
	if err != nil {
		return err
	}
	s := string(old)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 && j < 0 && after != "" {
		if k := strings.Index(s, after+"\n"); k >= 0 {
			k += len(after) + 1
			return os.WriteFile(path, []byte(s[:k]+"\n"+gen+s[k:]), 0o644)
		}
	}
	if i < 0 || j < i {
		return fmt.Errorf("%s has no generated part (a line %q, later a line %q): not overwritten", path, begin, end)
	}
	rest := strings.TrimPrefix(s[j+len(end):], "\n")
	return os.WriteFile(path, []byte(s[:i]+gen+rest), 0o644)
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	var w strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&w, format, a...) }
	m := r.Machine
	rg := strings.TrimSpace(strings.TrimPrefix(m.Ripgrep, "ripgrep"))
	p("## logdex benchmarks — %s, %s, %d cores, %.0f GiB, %s, %s, ripgrep %s, %s\n\n",
		m.Date, orNA(m.CPU), m.Cores, float64(m.MemBytes)/(1<<30), orNA(m.Kernel), m.Go, orNA(rg), orNA(m.Grep))
	p("Command: `%s`  \n", r.Command)
	tree := ""
	if m.LogdexTree != "" {
		tree = " (" + m.LogdexTree + ")"
	}
	p("logdex: commit %s%s, binary %s  \n", orNA(m.LogdexRev), tree, orNA(m.Build))
	for _, cr := range r.Corpora {
		p("Corpus %s: %s  \n", cr.Profile, cr.Corpus.describe())
	}
	if len(r.Corpora) > 0 {
		p("Page cache warm: files read once, and one untimed warm-up run of every command before the timed runs. " +
			"Each section runs on every corpus in turn.  \n")
	}
	if len(r.Corpora) > 0 || r.Scaling != nil || len(r.Warmups) > 0 {
		p("Every figure comes from this one session; commands are interleaved run by run (A B C A B C ...), each timed run of a short process (logdex CLI, rg, grep) right after an untimed run of the same command. " +
			"Cells are `median [min–max]`; ratios are rg's median over logdex's (>1: logdex faster).\n\n")
	} else {
		p("\n")
	}
	if len(r.Mismatches) > 0 {
		p("**COUNT MISMATCHES OR FAILURES (%d) — logdex, rg and grep disagree:**\n\n", len(r.Mismatches))
		for _, s := range r.Mismatches {
			p("- **%s**\n", s)
		}
		p("\n")
	}
	r.mdIndexing(p)
	for _, cr := range r.Corpora {
		cr.mdQueries(p)
	}
	r.mdSpeedups(p)
	r.mdProcess(p)
	r.mdScaling(p)
	for _, cr := range r.Corpora {
		cr.mdServer(p)
	}
	r.mdWarmup(p)
	r.mdTime(p)
	r.mdCompressed(p)
	r.mdSmallFiles(p)
	r.mdLive(p)
	if len(r.Notes) > 0 {
		p("### Notes\n\n")
		for _, n := range r.Notes {
			p("- %s\n", n)
		}
		p("\n")
	}
	p("Full run took %s.\n", r.Elapsed)
	return w.String()
}

type printf func(format string, a ...any)

func (r *Report) mdIndexing(p printf) {
	var rows []*CorpusResult
	for _, cr := range r.Corpora {
		if cr.Indexing != nil {
			rows = append(rows, cr)
		}
	}
	if len(rows) == 0 {
		return
	}
	p("### Indexing (whole process, median of %d)\n\n", rows[0].Indexing.Runs)
	p("| corpus | MB/s | wall | CPU user+sys | peak RSS | index size | %% of raw | no-change re-run |\n|---|---|---|---|---|---|---|---|\n")
	for _, cr := range rows {
		x := cr.Indexing
		p("| %s | %.0f [%.0f–%.0f] | %s | %s | %s (max %s) | %.1f MB | %.1f%% | %s |\n", cr.Profile, x.MBps, x.MBpsMin, x.MBpsMax,
			cell(x.Wall), cell(x.CPU), mib(x.PeakRSS), mib(x.PeakRSSMax), float64(x.IndexBytes)/1e6, x.PctRaw, cell(x.Rerun))
	}
	p("\n`logdex index -q --index FRESH_DIR CORPUS` into a fresh directory each run; MB = 10^6 bytes of raw logs; peak RSS from wait4's rusage.\n\n")
}

// mdSpeedups sums up the query sections: per corpus, the geometric mean of
// rg's time over logdex's.
func (r *Report) mdSpeedups(p printf) {
	var rows []*CorpusResult
	for _, cr := range r.Corpora {
		if cr.Queries != nil && cr.Queries.GeoCLI > 0 {
			rows = append(rows, cr)
		}
	}
	if len(rows) == 0 {
		return
	}
	p("### Speed-up over rg, geometric mean of the queries\n\n| corpus | queries | logdex CLI vs rg | in-process vs rg |\n|---|---|--:|--:|\n")
	for _, cr := range rows {
		q := cr.Queries
		p("| %s | all %d | %s | %s |\n", cr.Profile, q.GeoN, ratio(q.GeoCLI), ratio(q.GeoInProc))
		if q.GeoNarrowN > 0 && q.GeoNarrowN < q.GeoN {
			p("| %s | the %d the index narrows | %s | %s |\n", cr.Profile, q.GeoNarrowN, ratio(q.GeoNarrowCLI), ratio(q.GeoNarrowInProc))
		}
	}
	p("\nThe index narrows a query by a word or literal in it; the others (a literal of punctuation only, a regex with no required literal) read every line, as rg does.\n\n")
}

func (cr *CorpusResult) mdQueries(p printf) {
	x := cr.Queries
	if x == nil {
		return
	}
	p("### Queries, %s corpus (median of %d)\n\n", cr.Profile, x.Runs)
	if x.Skipped != "" {
		p("_Skipped: %s._\n\n", x.Skipped)
		return
	}
	p("| query | hits | logdex CLI -c | logdex CLI lines | logdex in-process | rg -c | grep -c | CLI vs rg | in-process vs rg |\n")
	p("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, q := range x.Rows {
		hits := fmt.Sprint(q.Hits)
		if q.Mismatch != "" {
			hits += " **MISMATCH**"
		}
		p("| %s `%s` | %s | %s | %s | %s | %s | %s | %s | %s |\n", q.Kind, mdCode(q.Text), hits,
			cell(q.Times["logdex CLI -c"]), cell(q.Times["logdex CLI lines"]), inprocCell(q.Times["logdex in-process"]),
			cell(q.Times["rg"]), cell(q.Times["grep"]), ratio(q.RatioCLI), ratio(q.RatioInProc))
	}
	p("\nlogdex CLI = `logdex search --no-update --index %s ARGS` as a child process (`-c` counts; \"lines\" prints every line to /dev/null). "+
		"In-process = `query.Searcher.Search` in this process, counting only, warm, median of all iterations (>= %s per round; `[p90, n]`). "+
		"rg = `rg -c RG_ARGS CORPUS` (default threads); grep = `LC_ALL=C grep -rc GREP_ARGS CORPUS`. Hits = matching lines, checked equal across all of them.\n\n",
		x.Index, x.InProc)
	p("| query | logdex ARGS | rg RG_ARGS | grep GREP_ARGS |\n|---|---|---|---|\n")
	for _, q := range x.Rows {
		p("| %s | `%s` | `%s` | `%s` |\n", q.Kind, mdCode(shellJoin(q.Logdex)), mdCode(shellJoin(q.Rg)), mdCode(shellJoin(q.Grep)))
	}
	for _, q := range x.Rows {
		if q.Selected != "" {
			p("\nThe phrase `%s` was chosen as the %s.\n", q.Text, q.Selected)
		}
	}
	p("\n")
}

func (r *Report) mdScaling(p printf) {
	x := r.Scaling
	if x == nil {
		return
	}
	p("### Scaling: selective term `%s` (median of %d)\n\n", x.Query, x.Runs)
	if x.Skipped != "" {
		p("_Skipped: %s._\n\n", x.Skipped)
		return
	}
	p("| corpus | hits | logdex CLI -c | logdex in-process | rg -c | CLI vs rg | in-process vs rg |\n|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, s := range x.Rows {
		hits := fmt.Sprint(s.Hits)
		if s.Mismatch != "" {
			hits += " **MISMATCH**"
		}
		p("| %d MiB | %s | %s | %s | %s | %s | %s |\n", s.MB, hits, cell(s.Times["logdex CLI -c"]),
			inprocCell(s.Times["logdex in-process"]), cell(s.Times["rg"]), ratio(s.RatioCLI), ratio(s.RatioInProc))
	}
	p("\nAll sizes measured interleaved in the same rounds. The index's cost follows the hits, a scan's the bytes: the ratio should grow with size.\n\n")
}

func (cr *CorpusResult) mdServer(p printf) {
	x := cr.Server
	if x == nil {
		return
	}
	p("### Server, %s corpus\n\n", cr.Profile)
	if x.Skipped != "" {
		p("_Skipped: %s. Placeholders, measured once `logdex serve` exists: search QPS and p50/p99 at 1/16/64 connections, "+
			"sendfile vs copy-loop throughput, start-up to first answer per warm-up mode._\n\n", x.Skipped)
		return
	}
	if len(x.Startup) > 0 {
		p("Start-up, exec to first answer of `%s` (page cache warm):\n\n| warm-up mode | first answer | /readyz 200 |\n|---|--:|--:|\n", x.Probe)
		for _, s := range x.Startup {
			p("| %s | %s | %s |\n", s.Mode, cell(s.FirstAnswer), cell(s.Ready))
		}
		p("\n")
	}
	if len(x.Load) > 0 {
		p("Search load with %s (`/api/search`, limit 100):\n\n| query | answer cache | connections | QPS | p50 | p99 | errors |\n|---|---|--:|--:|--:|--:|--:|\n", x.LoadTool)
		for _, l := range x.Load {
			c := "off"
			if l.Cache {
				c = "1 s"
			}
			p("| %s | %s | %d | %.0f [%.0f–%.0f] | %s | %s | %d |\n", l.Query, c, l.Conns, l.QPS, l.QPSMin, l.QPSMax, dur(l.P50), dur(l.P99), l.Errors)
		}
		p("\n")
	}
	if len(x.Transfer) > 0 {
		p("File download:\n\n| sender | MB/s |\n|---|--:|\n")
		for _, t := range x.Transfer {
			p("| %s | %.0f [%.0f–%.0f] |\n", t.Name, t.MBps, t.MBpsLo, t.MBpsHi)
		}
		p("\n")
	}
	for _, n := range x.Notes {
		p("- %s\n", n)
	}
	p("\n")
}

// cell renders "median [min–max]" in one unit.
func cell(d *Dist) string {
	if d == nil {
		return "—"
	}
	if d.N == 1 {
		return dur(d.Median)
	}
	u, f := unitOf(d.Median)
	return fmt.Sprintf("%s [%s–%s]", dur(d.Median), num(d.Min/f), num(d.Max/f)+" "+u)
}

func inprocCell(d *Dist) string {
	if d == nil {
		return "—"
	}
	return fmt.Sprintf("%s [p90 %s, n=%d]", dur(d.Median), dur(d.P90), d.N)
}

func unitOf(s float64) (string, float64) {
	switch {
	case s >= 1:
		return "s", 1
	case s >= 1e-3:
		return "ms", 1e-3
	}
	return "µs", 1e-6
}

func dur(s float64) string {
	u, f := unitOf(s)
	return num(s/f) + " " + u
}

// num prints 3 significant digits at most.
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func ratio(r float64) string {
	if r == 0 {
		return "—"
	}
	return num(r) + "×"
}

func mib(n int64) string { return fmt.Sprintf("%d MiB", n>>20) }

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}

// mdCode makes text safe inside a code span in a table cell.
func mdCode(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}
