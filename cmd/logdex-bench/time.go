package main

// The time section measures what the time index is for (loggen corpus):
// a one-hour window of a common word against rg with a timestamp regex, a
// 100-bucket histogram against counting the hits by reading their lines,
// and indexing with timestamps against indexing the same bytes with every
// timestamp made unrecognisable.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/lang"
)

// TimeResult is the time section.
type TimeResult struct {
	Skipped string              `json:"skipped,omitempty"`
	Runs    int                 `json:"runs"`
	Index   string              `json:"index,omitempty"`
	Window  *TimeWindowResult   `json:"window,omitempty"`
	Hist    *TimeHistResult     `json:"histogram,omitempty"`
	Build   *TimeIndexingResult `json:"indexing,omitempty"`
}

// TimeWindowResult is a one-hour window of a word.
type TimeWindowResult struct {
	Word        string           `json:"word"`
	Since       string           `json:"since"`
	Until       string           `json:"until"`
	Logdex      []string         `json:"logdex_args"`
	Rg          []string         `json:"rg_args"`
	Hits        int64            `json:"hits"`
	Times       map[string]*Dist `json:"times"`
	RatioCLI    float64          `json:"rg_over_cli"`
	RatioInProc float64          `json:"rg_over_inproc"`
	Mismatch    string           `json:"mismatch,omitempty"`
}

// TimeHistResult is a histogram of a word on about a tenth of the lines.
type TimeHistResult struct {
	Word     string           `json:"word"`
	Share    float64          `json:"share_of_lines"`
	Hits     int64            `json:"hits"`
	Buckets  int              `json:"buckets"`
	Step     string           `json:"step"`
	Times    map[string]*Dist `json:"times"`
	Ratio    float64          `json:"lines_over_histogram"`
	Mismatch string           `json:"mismatch,omitempty"`
}

// TimeIndexingResult compares indexing with and without timestamps.
type TimeIndexingResult struct {
	Runs        int     `json:"runs"`
	With        *Dist   `json:"with"`
	Without     *Dist   `json:"without"`
	MBpsWith    float64 `json:"mb_per_s_with"`
	MBpsWithout float64 `json:"mb_per_s_without"`
	Ratio       float64 `json:"with_over_without"`
	TimedSpans  [2]int  `json:"timed_spans"` // with, without: spans of lines that have times
	Spans       [2]int  `json:"spans"`
	StrippedDir string  `json:"stripped_dir"`
}

const (
	engCLI    = "logdex CLI -c"
	engInProc = "logdex in-process"
	engHist   = "in-process histogram"
	engLines  = "in-process, reading the hits' lines"
)

// timeWords: the histogram's word is the one of these nearest to 10% of
// the lines, counted in the index (deterministic for a corpus).
var timeWords = []string{"info", "get", "user", "from", "http", "block", "debug", "api", "session", "failed", "error"}

func (b *bench) timeSection() error {
	res := &TimeResult{Runs: b.cfg.runs}
	b.rep.Time = res
	c, err := b.corpus(loggen.ProfileLoggen, b.cfg.mb)
	if err != nil {
		return err
	}
	ix, why := b.readyIndex(c, b.indexCachePath(c), true)
	if why != "" {
		res.Skipped = why
		return nil
	}
	res.Index = ix
	s, closeS, err := openSearcher(ix)
	if err != nil {
		return err
	}
	defer closeS()
	lo, hi, ok := s.Index().TimeRange()
	if !ok {
		res.Skipped = "the index has no timed lines"
		return nil
	}
	warm(c.Dir, ix)
	if err := b.timeWindow(res, s, c, ix, hi); err != nil {
		return err
	}
	if err := b.timeHistogram(res, s, c, lo, hi); err != nil {
		return err
	}
	return b.timeIndexing(res, c)
}

// hourWindow is the hour 14:00-15:00 UTC of the newest day, or the last
// whole hour before the newest line when that day ends earlier.
func hourWindow(newest int64) (time.Time, time.Time) {
	t := time.Unix(0, newest).UTC()
	from := t.Truncate(24 * time.Hour).Add(14 * time.Hour)
	if !from.Add(time.Hour).Before(t) {
		from = t.Truncate(time.Hour).Add(-time.Hour)
	}
	return from, from.Add(time.Hour)
}

// hourRegex matches a line that starts with a timestamp of loggen's
// formats in the hour from (UTC) and has word in it after the timestamp.
func hourRegex(from time.Time, word string) string {
	q := regexp.QuoteMeta
	alts := []string{
		`(?:ts=|\{"ts":")?` + q(from.Format("2006-01-02")) + `[T ]` + from.Format("15") + `:`, // ISO 8601: api, gateway, k8s, worker, postgres, windows
		`\S+ \S+ \S+ \[` + q(from.Format("02/Jan/2006:15:")),                                  // nginx access
		q(from.Format("2006/01/02 15:")),                                                      // nginx error
		q(from.Format("Jan _2 15:")),                                                          // syslog
		from.Format("060102 15"),                                                              // HDFS
	}
	re := "^(?:"
	for i, a := range alts {
		if i > 0 {
			re += "|"
		}
		re += a
	}
	return re + `).*\b` + q(word) + `\b`
}

// loopEngine runs fn in-process for at least inprocMin per round.
func (b *bench) loopEngine(name string, fn func() (int64, error)) *engine {
	return &engine{name: name, counted: true, run: func(bool) ([]time.Duration, int64, map[string]int64, error) {
		var ds []time.Duration
		var n int64
		t0 := time.Now()
		for len(ds) == 0 || time.Since(t0) < b.cfg.inprocMin && len(ds) < 200 {
			t := time.Now()
			m, err := fn()
			ds = append(ds, time.Since(t))
			if err != nil {
				return nil, 0, nil, err
			}
			n = m
		}
		return ds, n, nil, nil
	}}
}

func (b *bench) timeWindow(res *TimeResult, s *query.Searcher, c *corpus, ix string, newest int64) error {
	const word = "failed" // never on a continuation line (stack traces), which logdex times by the line before and rg cannot
	from, to := hourWindow(newest)
	w := &TimeWindowResult{Word: word, Since: from.Format(time.RFC3339), Until: to.Format(time.RFC3339)}
	w.Logdex = []string{"--since", w.Since, "--until", w.Until, word}
	w.Rg = []string{"-i", "-e", hourRegex(from, word)}
	res.Window = w
	b.logf("time: window %s .. %s of %q", w.Since, w.Until, word)
	q, err := query.Compile([]string{word}, lang.ModeQuery, true)
	if err != nil {
		return err
	}
	tr := &query.TimeRange{From: from.UnixNano(), To: to.UnixNano()}
	cli := b.cliEngine(ix, c, qdef{Logdex: w.Logdex})
	in := b.loopEngine(engInProc, func() (int64, error) {
		st, err := s.Search(b.ctx, q, query.Options{Time: tr}, nil)
		if err != nil {
			return 0, err
		}
		return st.Total, nil
	})
	es := []*engine{cli, in}
	if b.haveTool("rg") {
		es = append(es, b.toolEngine("rg", "rg", nil, append(append([]string{"-c"}, w.Rg...), c.Dir), c.Dir))
	}
	if err := b.interleave(es, b.cfg.runs); err != nil {
		return b.timeFailed(&w.Mismatch, "window", err)
	}
	w.Hits, w.Times = cli.first, map[string]*Dist{}
	for _, e := range es {
		w.Times[e.name] = distOf(e.samples, e.name != engInProc)
	}
	if w.Mismatch = checkCounts(es, -1, ""); w.Mismatch != "" {
		b.rep.Mismatches = append(b.rep.Mismatches, "time window: "+w.Mismatch)
	}
	if rg := w.Times["rg"]; rg != nil {
		w.RatioCLI, w.RatioInProc = rg.Median/w.Times[engCLI].Median, rg.Median/w.Times[engInProc].Median
	}
	return nil
}

// timeFailed records a failed measurement as a finding.
func (b *bench) timeFailed(dst *string, what string, err error) error {
	if b.ctx.Err() != nil {
		return err
	}
	*dst = "failed: " + firstLine(err.Error())
	b.rep.Mismatches = append(b.rep.Mismatches, fmt.Sprintf("time %s FAILED: %s", what, *dst))
	return nil
}

func (b *bench) timeHistogram(res *TimeResult, s *query.Searcher, c *corpus, lo, hi int64) error {
	// The word nearest a tenth of the lines.
	var word string
	var best, share float64 = math.Inf(1), 0
	for _, w := range timeWords {
		q, err := query.Compile([]string{w}, lang.ModeQuery, true)
		if err != nil {
			return err
		}
		st, err := s.Search(b.ctx, q, query.Options{}, nil)
		if err != nil {
			return err
		}
		f := float64(st.Total) / float64(max(c.Lines, 1))
		if d := math.Abs(f - 0.1); d < best {
			word, best, share = w, d, f
		}
	}
	const buckets = 100
	proto := query.NewHistogram(lo, hi+1, buckets)
	h := &TimeHistResult{Word: word, Share: share, Buckets: len(proto.Counts), Step: time.Duration(proto.Step).String()}
	res.Hist = h
	b.logf("time: histogram of %q (%.1f%% of the lines), %d buckets of %s", word, 100*share, h.Buckets, h.Step)
	q, err := query.Compile([]string{word}, lang.ModeQuery, true)
	if err != nil {
		return err
	}
	fresh := func() *query.Histogram {
		return &query.Histogram{Start: proto.Start, Step: proto.Step, Counts: make([]int64, len(proto.Counts))}
	}
	var lastHist, lastLines *query.Histogram
	hist := b.loopEngine(engHist, func() (int64, error) {
		hg := fresh()
		if _, err := s.Search(b.ctx, q, query.Options{Histogram: hg}, nil); err != nil {
			return 0, err
		}
		lastHist = hg
		return histTotal(hg), nil
	})
	lines := b.loopEngine(engLines, func() (int64, error) {
		hg := fresh()
		_, err := s.Search(b.ctx, q, query.Options{Text: true, Times: true}, func(hit *query.Hit) error {
			bucketAdd(hg, hit.Time, hit.Timed)
			return nil
		})
		lastLines = hg
		return histTotal(hg), err
	})
	es := []*engine{hist, lines}
	if err := b.interleave(es, b.cfg.runs); err != nil {
		return b.timeFailed(&h.Mismatch, "histogram", err)
	}
	h.Hits, h.Times = hist.first, map[string]*Dist{}
	for _, e := range es {
		h.Times[e.name] = distOf(e.samples, false)
	}
	h.Mismatch = checkCounts(es, -1, "")
	if h.Mismatch == "" && !slices.Equal(lastHist.Counts, lastLines.Counts) {
		h.Mismatch = "bucket counts differ between the histogram and the lines read"
	}
	if h.Mismatch != "" {
		b.rep.Mismatches = append(b.rep.Mismatches, "time histogram: "+h.Mismatch)
	}
	h.Ratio = h.Times[engLines].Median / h.Times[engHist].Median
	return nil
}

// bucketAdd counts one line at time t as query.Histogram does.
func bucketAdd(h *query.Histogram, t int64, timed bool) {
	switch {
	case !timed:
		h.Untimed++
	case t < h.Start:
		h.Before++
	case (t-h.Start)/h.Step >= int64(len(h.Counts)):
		h.After++
	default:
		h.Counts[(t-h.Start)/h.Step]++
	}
}

func histTotal(h *query.Histogram) int64 {
	n := h.Before + h.After + h.Untimed
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// timeIndexing indexes the corpus and a copy without recognisable
// timestamps, interleaved, each into a fresh directory.
func (b *bench) timeIndexing(res *TimeResult, c *corpus) error {
	nc, err := b.strippedCorpus(c)
	if err != nil {
		return err
	}
	x := &TimeIndexingResult{Runs: b.cfg.indexRuns, StrippedDir: nc.Dir}
	res.Build = x
	var walls [2][]time.Duration
	for i := 0; i < b.cfg.indexRuns; i++ {
		for k, cc := range []*corpus{c, nc} {
			dir := filepath.Join(b.tmp, fmt.Sprintf("time-index-%d", k))
			os.RemoveAll(dir)
			warm(cc.Dir)
			r, err := b.logdexIndex(dir, cc)
			if err != nil {
				return err
			}
			walls[k] = append(walls[k], r.Wall)
			if i == 0 {
				x.Spans[k], x.TimedSpans[k] = timedSpans(dir)
			}
			os.RemoveAll(dir)
		}
		b.logf("time: indexing run %d: with timestamps %v, without %v", i+1, walls[0][i].Round(time.Millisecond), walls[1][i].Round(time.Millisecond))
	}
	x.With, x.Without = distOf(walls[0], true), distOf(walls[1], true)
	x.MBpsWith = float64(c.Bytes) / x.With.Median / 1e6
	x.MBpsWithout = float64(nc.Bytes) / x.Without.Median / 1e6
	x.Ratio = x.MBpsWith / x.MBpsWithout
	if x.TimedSpans[1] > 0 {
		b.note("time: the copy without timestamps still has %d of %d spans timed (the detector found other times in it)", x.TimedSpans[1], x.Spans[1])
	}
	return nil
}

func timedSpans(dir string) (all, timed int) {
	ix, err := mmapstore.Open(dir)
	if err != nil {
		return 0, 0
	}
	defer ix.Close()
	for _, s := range ix.Segments() {
		for _, sp := range s.Spans() {
			all++
			if sp.Timed {
				timed++
			}
		}
	}
	return all, timed
}

func (r *Report) mdTime(p printf) {
	x := r.Time
	if x == nil {
		return
	}
	p("### Time (loggen corpus, median of %d)\n\n", x.Runs)
	if x.Skipped != "" {
		p("_Skipped: %s._\n\n", x.Skipped)
		return
	}
	if w := x.Window; w != nil {
		hits := fmt.Sprint(w.Hits)
		if w.Mismatch != "" {
			hits += " **MISMATCH** " + w.Mismatch
		}
		p("One-hour window of a common word, `%s` in [%s, %s):\n\n", w.Word, w.Since, w.Until)
		p("| hits | logdex CLI -c | logdex in-process | rg -c | CLI vs rg | in-process vs rg |\n|--:|--:|--:|--:|--:|--:|\n")
		p("| %s | %s | %s | %s | %s | %s |\n\n", hits, cell(w.Times[engCLI]), inprocCell(w.Times[engInProc]), cell(w.Times["rg"]), ratio(w.RatioCLI), ratio(w.RatioInProc))
		p("logdex: `logdex search --no-update --index %s -c %s`; in-process: `Search` with `Options.Time`. "+
			"rg: `rg -c %s CORPUS`, a regex of that hour's timestamp in each of loggen's formats, at the start of the line, then the word "+
			"(the word is `\\b`-bounded like a logdex token; hits checked equal, per file). Goal: CLI vs rg ≥ 50×.\n\n",
			x.Index, mdCode(shellJoin(w.Logdex)), mdCode(shellJoin(w.Rg)))
	}
	if h := x.Hist; h != nil {
		hits := fmt.Sprint(h.Hits)
		if h.Mismatch != "" {
			hits += " **MISMATCH** " + h.Mismatch
		}
		p("Histogram of `%s` (%.1f%% of the lines; the word of `%s` nearest 10%%), %d buckets of %s over the corpus's time span:\n\n",
			h.Word, 100*h.Share, mdCode(fmt.Sprint(timeWords)), h.Buckets, h.Step)
		p("| hits | histogram | reading the hits' lines | speed-up |\n|--:|--:|--:|--:|\n")
		p("| %s | %s | %s | %s |\n\n", hits, inprocCell(h.Times[engHist]), inprocCell(h.Times[engLines]), ratio(h.Ratio))
		p("Both in-process on the same Searcher: `Search` with `Options.Histogram` (counts from postings and the time index) against `Search` with " +
			"`Options{Text: true, Times: true}` bucketing every hit as its line is read; bucket counts checked equal. Goal ≥ 20×.\n\n")
	}
	if bi := x.Build; bi != nil {
		p("Indexing with and without timestamps (whole process, median of %d, interleaved):\n\n", bi.Runs)
		p("| corpus | wall | MB/s | timed spans |\n|---|--:|--:|--:|\n")
		p("| with timestamps | %s | %.0f | %d of %d |\n", cell(bi.With), bi.MBpsWith, bi.TimedSpans[0], bi.Spans[0])
		p("| timestamps made unrecognisable | %s | %.0f | %d of %d |\n\n", cell(bi.Without), bi.MBpsWithout, bi.TimedSpans[1], bi.Spans[1])
		p("Throughput with / without: %.2f (goal ≥ 0.85). `logdex index -q --index FRESH_DIR DIR`; the copy maps every digit of every "+
			"timestamp to a letter (same bytes per line, same tokens one for one), so only time detection and parsing differ.\n\n", bi.Ratio)
	}
}
