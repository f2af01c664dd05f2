package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
)

// The process section: what a logdex CLI process costs from exec to exit
// beside the floor of any Go process on the machine, and where that cost
// lies. Every search of the query section pays it; on a VM where a page's
// first touch is dear, it is most of a small answer's time (README,
// "Process start").
//
// Side by side, interleaved run by run: an empty Go program; one that
// links only logdex's search packages and returns at once; `logdex
// --version`; and, over each corpus's index, `logdex search -c` of a
// word that is in no line and of the corpus's first query. Each row has
// its minor page faults (wait4's rusage), the VM's main cost of a start.

// ProcessRow is one program of the process section.
type ProcessRow struct {
	Name      string  `json:"name"`
	Command   string  `json:"command"`
	Time      *Dist   `json:"time"`
	OverEmpty float64 `json:"over_empty_s"` // median minus the empty program's
	Faults    int64   `json:"minor_faults_median"`
}

// ProcessResult is the process section.
type ProcessResult struct {
	Runs    int           `json:"runs"`
	Skipped string        `json:"skipped,omitempty"`
	Rows    []*ProcessRow `json:"rows,omitempty"`
}

// missingWord is in no line of a generated corpus: a search of it opens
// the index, looks the word up in every segment and finds nothing.
const missingWord = "qzxwvnotaword"

// processRunsPer is how many timed runs the section makes per --runs: a
// process here takes milliseconds, and their spread is wide.
const processRunsPer = 4

func (b *bench) processSection() error {
	runs := b.cfg.runs * processRunsPer
	if b.cfg.smoke {
		runs = b.cfg.runs // (a smoke run times nothing: one sample, the warm-up's)
	}
	res := &ProcessResult{Runs: runs}
	b.rep.Process = res
	if b.modRoot == "" {
		res.Skipped = "the reference programs are built from the logdex module: run from the repository"
		b.logf("process skipped: %s", res.Skipped)
		return nil
	}
	static := !b.cfg.smoke && !testBuild
	empty := filepath.Join(b.tmp, "startfloor-empty")
	pkgs := filepath.Join(b.tmp, "startfloor-searchpkgs")
	for _, p := range []struct{ out, pkg string }{
		{empty, "./cmd/logdex-bench/internal/startfloor/empty"},
		{pkgs, "./cmd/logdex-bench/internal/startfloor/searchpkgs"},
	} {
		if err := b.goBuildPkg(p.out, p.pkg, static); err != nil {
			return err
		}
	}
	type prog struct {
		name, cmd string
		bin       string
		args      []string
		faults    []float64
	}
	progs := []*prog{
		{name: "empty Go program", cmd: "func main() {}", bin: empty},
		{name: "Go program linking only logdex's search packages", cmd: "indexer, query, mmapstore imported; main returns", bin: pkgs},
		{name: "logdex --version", cmd: "logdex --version", bin: b.bin, args: []string{"--version"}},
	}
	for _, cr := range b.rep.Corpora {
		ix, why := b.readyIndex(cr.Corpus, cr.index, false)
		if why != "" {
			b.note("process section, %s corpus: %s", cr.Profile, why)
			continue
		}
		d := queryDefs(phrase("phrase", phraseCandidates[0]))[0]
		if cr.Profile == loggen.ProfileHighCard {
			d = highcardQueryDefs()[0]
		}
		base := []string{"search", "--no-update", "--index", ix, "-c"}
		progs = append(progs,
			&prog{name: fmt.Sprintf("logdex search -c, a missing word, %s index", cr.Profile),
				cmd: "logdex search --no-update -c " + missingWord, bin: b.bin, args: append(append([]string(nil), base...), missingWord)},
			&prog{name: fmt.Sprintf("logdex search -c, %s, %s index", d.Kind, cr.Profile),
				cmd: "logdex search --no-update -c " + shellJoin(d.Logdex), bin: b.bin, args: append(append([]string(nil), base...), d.Logdex...)})
	}
	var es []*engine
	for _, p := range progs {
		es = append(es, &engine{name: p.name, settle: true, run: func(warmup bool) ([]time.Duration, int64, map[string]int64, error) {
			r, err := runProc(b.ctx, nil, nil, 1, p.bin, p.args...)
			if !warmup || b.cfg.smoke { // (a smoke run keeps the warm-up's sample)
				p.faults = append(p.faults, float64(r.MinFlt))
			}
			return []time.Duration{r.Wall}, 0, nil, err
		}})
	}
	b.logf("process: %d programs, %d rounds", len(es), runs)
	if err := b.interleave(es, runs); err != nil {
		return err
	}
	for i, p := range progs {
		row := &ProcessRow{Name: p.name, Command: p.cmd, Time: distOf(es[i].samples, false), Faults: int64(median(p.faults))}
		if res.Rows != nil && row.Time != nil && res.Rows[0].Time != nil {
			row.OverEmpty = row.Time.Median - res.Rows[0].Time.Median
		}
		res.Rows = append(res.Rows, row)
	}
	return nil
}

func (r *Report) mdProcess(p printf) {
	x := r.Process
	if x == nil {
		return
	}
	p("### Process start (median of %d)\n\n", x.Runs)
	if x.Skipped != "" {
		p("_Skipped: %s._\n\n", x.Skipped)
		return
	}
	p("| program | exec to exit | over the empty program | minor page faults |\n|---|--:|--:|--:|\n")
	for _, row := range x.Rows {
		over := "—"
		switch {
		case row == x.Rows[0]:
		case row.OverEmpty < 0:
			over = "−" + dur(-row.OverEmpty)
		default:
			over = "+" + dur(row.OverEmpty)
		}
		p("| %s (`%s`) | %s | %s | %d |\n", row.Name, row.Command, cell(row.Time), over, row.Faults)
	}
	p("\nAll programs built the same way and run interleaved, each timed run right after an untimed one. " +
		"The empty program is the floor of any Go process here; the second links logdex's search packages and returns at once; " +
		"what `logdex --version` adds over it is the rest of the binary (the server, its HTTP and TLS stack, the CLI); " +
		"a search adds opening the index and the query. Minor page faults from wait4's rusage: on a VM, a page's first touch is most of a start's cost.\n\n")
}
