package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/lang"
)

// qdef is one benchmark query and its grep and rg equivalents.
type qdef struct {
	Kind     string    `json:"kind"`
	Mode     lang.Mode `json:"-"`
	Text     string    `json:"text"`
	Fold     bool      `json:"-"`
	Logdex   []string  `json:"logdex_args"`
	Rg       []string  `json:"rg_args"`
	Grep     []string  `json:"grep_args"`
	Needle   string    `json:"needle,omitempty"` // a planted needle: its count is known
	Selected string    `json:"selected,omitempty"`
	// Scan: the query holds no word or literal the index can narrow by,
	// so every line is read (issue 14 judges these against rg on their
	// own: no slower, where the others are to be 10x faster).
	Scan bool `json:"scan,omitempty"`
}

// scan marks d as a query the index cannot narrow.
func scan(d qdef) qdef { d.Scan = true; return d }

// In the query language a word matches a whole token (letters, digits,
// '_'), case-insensitively: grep -w -i and rg -w -i.
func term(kind, t string) qdef {
	return qdef{Kind: kind, Mode: lang.ModeQuery, Text: t, Fold: true, Logdex: []string{t},
		Rg: []string{"-i", "-w", "-e", t}, Grep: []string{"-i", "-w", "-e", t}}
}

// phrase: the words adjacent, separated by anything that is not a token.
func phrase(kind string, words []string) qdef {
	q := `"` + strings.Join(words, " ") + `"`
	return qdef{Kind: kind, Mode: lang.ModeQuery, Text: q, Fold: true, Logdex: []string{q},
		Rg:   []string{"-i", "-w", "-e", strings.Join(words, `[^\p{L}\p{Nd}_]+`)},
		Grep: []string{"-i", "-w", "-E", "-e", strings.Join(words, `[^[:alnum:]_]+`)}}
}

func literal(kind, t, needle string) qdef {
	return qdef{Kind: kind, Mode: lang.ModeLiteral, Text: t, Logdex: []string{"-F", t},
		Rg: []string{"-F", "-e", t}, Grep: []string{"-F", "-e", t}, Needle: needle}
}

func regex(kind, e string) qdef {
	return qdef{Kind: kind, Mode: lang.ModeRegex, Text: e, Logdex: []string{"-E", e},
		Rg: []string{"-e", e}, Grep: []string{"-E", "-e", e}}
}

// queryDefs is the fixed query set; the phrase is chosen from the data.
func queryDefs(ph qdef) []qdef {
	txt := map[string]string{}
	for _, n := range loggen.Needles() {
		txt[n.Name] = n.Text
	}
	reqid := txt[loggen.NeedleReqID]
	return []qdef{
		term("selective term", "mallory"),
		term("common term", "error"),
		ph,
		literal("literal, whole token", "NullPointerException", ""),
		literal("literal, IP needle", txt[loggen.NeedleIP], loggen.NeedleIP),
		literal("literal, request-id needle", reqid, loggen.NeedleReqID),
		literal("literal, partial token (8 bytes inside the request id)", reqid[2:10], ""),
		scan(literal("literal, punctuation only", "] [", "")),
		literal("literal, non-ASCII needle", txt[loggen.NeedleUnicode], loggen.NeedleUnicode),
		regex("regex, selective required literal", `checksum mismatch on segment [0-9]+`),
		scan(regex("regex, no required literal", `[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+`)),
		scan(regex("regex, no required literal", `[A-Z]{4,} [0-9]+`)),
	}
}

var phraseCandidates = [][]string{{"connection", "reset"}, {"connection", "refused"}, {"failed", "password"}, {"broken", "pipe"}}

// choosePhrase picks, deterministically, the first candidate phrase that
// occurs in the data; failing that, two adjacent words of the first line of
// the first file that has two words of 4+ letters in a row.
func choosePhrase(s *query.Searcher, c *corpus) qdef {
	for _, w := range phraseCandidates {
		d := phrase("phrase", w)
		if q, err := query.Compile([]string{d.Text}, d.Mode, d.Fold); err == nil {
			if st, err := s.Search(context.Background(), q, query.Options{}, nil); err == nil && st.Total > 0 {
				d.Selected = "first of the candidate phrases that occurs in the data"
				return d
			}
		}
	}
	re := regexp.MustCompile(`\b([A-Za-z]{4,}) ([A-Za-z]{4,})\b`)
	for _, p := range c.paths {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				f.Close()
				d := phrase("phrase", []string{strings.ToLower(m[1]), strings.ToLower(m[2])})
				d.Selected = "derived from the first line of " + relPath(p, c.Dir)
				return d
			}
		}
		f.Close()
	}
	return phrase("phrase", phraseCandidates[0])
}

// engine is one way of answering a query, timed in rounds.
type engine struct {
	name    string
	counted bool
	// settle: run once untimed right before each timed run (short
	// processes, which what the previous command left behind slows).
	settle bool
	// run performs one round: one process, or in-process iterations.
	run     func(warmup bool) ([]time.Duration, int64, map[string]int64, error)
	samples []time.Duration
	counts  map[int64]bool
	per     map[string]int64 // per-file counts from the warm-up
	first   int64
}

// interleave runs one untimed warm-up of every engine, then rounds of
// all engines in turn (A B C A B C ...), so that every engine sees the same
// machine conditions. Each timed run of a short process (settle) directly
// follows an untimed run of the same engine: a run right after another command pays for what that
// command left behind (a logdex process timed right after an rg pass over
// 1 GiB took 5.3 ms against 4.0 ms alone, even 100 ms later), so each
// engine is timed in the state it leaves the machine in, as hyperfine's
// warm-up runs do.
//
// A smoke run, which checks counts and the report, not times, keeps the
// warm-up's time as the sample of an engine that gives one (a process):
// half the processes.
func (b *bench) interleave(es []*engine, runs int) error {
	for _, e := range es {
		ds, n, per, err := e.run(true)
		if err != nil {
			return err
		}
		e.counts, e.per, e.first = map[int64]bool{n: true}, per, n
		if b.cfg.smoke {
			e.samples = ds
		}
	}
	for r := 0; r < runs; r++ {
		for _, e := range es {
			if b.cfg.smoke && len(e.samples) > 0 {
				continue
			}
			if e.settle && !b.cfg.smoke { // (a smoke run checks counts, not times)
				if _, _, _, err := e.run(true); err != nil {
					return err
				}
			}
			ds, n, _, err := e.run(false)
			if err != nil {
				return err
			}
			e.samples = append(e.samples, ds...)
			e.counts[n] = true
		}
		if err := b.ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// checkCounts reports disagreements between counting engines.
func checkCounts(es []*engine, expect int64, expectFrom string) string {
	var ref *engine
	var msgs []string
	for _, e := range es {
		if !e.counted {
			continue
		}
		if len(e.counts) > 1 {
			msgs = append(msgs, fmt.Sprintf("%s gave different counts across runs %v", e.name, keys(e.counts)))
		}
		if ref == nil {
			ref = e
			continue
		}
		if e.first != ref.first {
			msgs = append(msgs, fmt.Sprintf("%s %d vs %s %d%s", ref.name, ref.first, e.name, e.first, perFileDiff(ref, e)))
		}
	}
	if ref != nil && expect >= 0 && ref.first != expect {
		msgs = append(msgs, fmt.Sprintf("%s %d vs %s %d", ref.name, ref.first, expectFrom, expect))
	}
	return strings.Join(msgs, "; ")
}

func keys(m map[int64]bool) []int64 {
	var out []int64
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func perFileDiff(a, b *engine) string {
	if a.per == nil || b.per == nil {
		return ""
	}
	var files []string
	for f := range a.per {
		files = append(files, f)
	}
	for f := range b.per {
		if _, ok := a.per[f]; !ok {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	var d []string
	for _, f := range files {
		if a.per[f] != b.per[f] {
			d = append(d, fmt.Sprintf("%s: %d vs %d", f, a.per[f], b.per[f]))
		}
	}
	if len(d) > 6 {
		d = append(d[:6], "...")
	}
	if len(d) == 0 {
		return ""
	}
	return " (" + strings.Join(d, ", ") + ")"
}

// Engines. Whole-process ones capture -c output to count; the lines variant
// of logdex writes to /dev/null.

func (b *bench) cliEngine(ix string, c *corpus, d qdef) *engine {
	args := append([]string{"search", "--no-update", "--index", ix, "-c"}, d.Logdex...)
	return b.toolEngine("logdex CLI -c", b.bin, nil, args, c.Dir)
}

func (b *bench) cliLinesEngine(ix string, d qdef) *engine {
	args := append([]string{"search", "--no-update", "--index", ix}, d.Logdex...)
	return &engine{name: "logdex CLI lines", settle: true, run: func(bool) ([]time.Duration, int64, map[string]int64, error) {
		null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return nil, 0, nil, err
		}
		defer null.Close()
		r, err := runProc(b.ctx, nil, null, 1, b.bin, args...)
		return []time.Duration{r.Wall}, -1, nil, err
	}}
}

func (b *bench) inprocEngine(s *query.Searcher, c *corpus, d qdef) (*engine, error) {
	q, err := query.Compile([]string{d.Text}, d.Mode, d.Fold)
	if err != nil {
		return nil, fmt.Errorf("compile %q: %w", d.Text, err)
	}
	return &engine{name: "logdex in-process", counted: true, run: func(warmup bool) ([]time.Duration, int64, map[string]int64, error) {
		if warmup {
			per := map[string]int64{}
			st, err := s.Search(b.ctx, q, query.Options{PerFile: func(f *query.File, n int64) error {
				if n > 0 {
					per[relPath(f.Path, c.Dir)] += n
				}
				return nil
			}}, nil)
			if err != nil {
				return nil, 0, nil, err
			}
			return nil, st.Total, per, nil
		}
		var ds []time.Duration
		var n int64
		t0 := time.Now()
		for len(ds) == 0 || time.Since(t0) < b.cfg.inprocMin && len(ds) < 200 {
			t := time.Now()
			st, err := s.Search(b.ctx, q, query.Options{}, nil)
			ds = append(ds, time.Since(t))
			if err != nil {
				return nil, 0, nil, err
			}
			n = st.Total
		}
		return ds, n, nil, nil
	}}, nil
}

func (b *bench) toolEngine(name, tool string, env []string, args []string, root string) *engine {
	return &engine{name: name, counted: true, settle: true, run: func(bool) ([]time.Duration, int64, map[string]int64, error) {
		r, err := runProc(b.ctx, env, nil, 1, tool, args...)
		n, per := sumCounts(r.Stdout, root)
		return []time.Duration{r.Wall}, n, per, err
	}}
}

func (b *bench) rgEngine(c *corpus, d qdef) *engine {
	return b.toolEngine("rg", "rg", nil, append(append([]string{"-c"}, d.Rg...), c.Dir), c.Dir)
}

func (b *bench) grepEngine(c *corpus, d qdef) *engine {
	return b.toolEngine("grep", "grep", []string{"LC_ALL=C"}, append(append([]string{"-rc"}, d.Grep...), c.Dir), c.Dir)
}

// QueryResult is one row of the query section.
type QueryResult struct {
	qdef
	Hits        int64            `json:"hits"`
	Times       map[string]*Dist `json:"times"` // by engine name
	RatioCLI    float64          `json:"rg_over_cli"`
	RatioInProc float64          `json:"rg_over_inproc"`
	Mismatch    string           `json:"mismatch,omitempty"`
}

// QueriesResult is the query section of one corpus.
type QueriesResult struct {
	Skipped string         `json:"skipped,omitempty"`
	Index   string         `json:"index,omitempty"`
	Runs    int            `json:"runs"`
	InProc  string         `json:"inproc_min_per_round"`
	Rows    []*QueryResult `json:"rows,omitempty"`
	Tools   []string       `json:"tools,omitempty"` // engines measured
	// Geometric means over the rows of rg's time over logdex's.
	GeoCLI    float64 `json:"geomean_rg_over_cli,omitempty"`
	GeoInProc float64 `json:"geomean_rg_over_inproc,omitempty"`
	GeoN      int     `json:"geomean_queries,omitempty"`
	// The same over the queries the index narrows (not Scan).
	GeoNarrowCLI    float64 `json:"geomean_narrowed_rg_over_cli,omitempty"`
	GeoNarrowInProc float64 `json:"geomean_narrowed_rg_over_inproc,omitempty"`
	GeoNarrowN      int     `json:"geomean_narrowed_queries,omitempty"`
}

func (r *QueriesResult) geomeans() {
	var all, narrow [2][]float64
	for _, row := range r.Rows {
		if row.RatioCLI <= 0 {
			continue
		}
		all[0], all[1] = append(all[0], row.RatioCLI), append(all[1], row.RatioInProc)
		if !row.Scan {
			narrow[0], narrow[1] = append(narrow[0], row.RatioCLI), append(narrow[1], row.RatioInProc)
		}
	}
	r.GeoCLI, r.GeoInProc, r.GeoN = geomean(all[0]), geomean(all[1]), len(all[0])
	r.GeoNarrowCLI, r.GeoNarrowInProc, r.GeoNarrowN = geomean(narrow[0]), geomean(narrow[1]), len(narrow[0])
}

// geomean is the geometric mean of positive xs (0 for none).
func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += math.Log(x)
	}
	return math.Exp(sum / float64(len(xs)))
}

func (b *bench) haveTool(name string) bool {
	switch name {
	case "rg":
		return b.rep.Machine.Ripgrep != ""
	case "grep":
		return b.rep.Machine.Grep != ""
	}
	return false
}

// openSearcher opens an index in this process.
func openSearcher(dir string) (*query.Searcher, func(), error) {
	ix, err := mmapstore.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	s := query.NewSearcher(ix, nil)
	return s, func() { s.Close(); ix.Close() }, nil
}

func (b *bench) queries(cr *CorpusResult) error {
	c := cr.Corpus
	res := &QueriesResult{Runs: b.cfg.runs, InProc: b.cfg.inprocMin.String()}
	cr.Queries = res
	ix, why := b.readyIndex(c, cr.index, false)
	if why != "" {
		res.Skipped = why
		b.logf("queries skipped: %s", why)
		return nil
	}
	res.Index = ix
	s, closeS, err := openSearcher(ix)
	if err != nil {
		return err
	}
	defer closeS()
	warm(c.Dir, ix)
	for _, tool := range []string{"rg", "grep"} {
		if !b.haveTool(tool) && c.Profile == b.cfg.profiles[0] {
			b.note("%s is not installed: its columns are empty", tool)
		}
	}
	defer res.geomeans()
	defs := highcardQueryDefs()
	if c.Profile != loggen.ProfileHighCard {
		defs = queryDefs(choosePhrase(s, c))
	}
	for _, d := range defs {
		b.logf("query %s: %s", d.Kind, d.Text)
		cli := b.cliEngine(ix, c, d)
		in, err := b.inprocEngine(s, c, d)
		if err != nil {
			return err
		}
		es := []*engine{cli, b.cliLinesEngine(ix, d), in}
		if b.haveTool("rg") {
			es = append(es, b.rgEngine(c, d))
		}
		if b.haveTool("grep") {
			es = append(es, b.grepEngine(c, d))
		}
		if err := b.interleave(es, b.cfg.runs); err != nil {
			if b.ctx.Err() != nil {
				return err
			}
			// A failing command is a finding, not the end of the session.
			msg := firstLine(err.Error())
			b.rep.Mismatches = append(b.rep.Mismatches, fmt.Sprintf("%s corpus, query %s (%s) FAILED: %s", c.Profile, d.Text, d.Kind, msg))
			res.Rows = append(res.Rows, &QueryResult{qdef: d, Mismatch: "failed: " + msg})
			b.logf("FAILED: %s", msg)
			continue
		}
		row := &QueryResult{qdef: d, Hits: cli.first, Times: map[string]*Dist{}}
		for _, e := range es {
			row.Times[e.name] = distOf(e.samples, e.name != "logdex in-process")
		}
		expect, from := int64(-1), ""
		if n, ok := c.needle(d.Needle); ok {
			expect, from = int64(n.Lines), "loggen's planted count"
		}
		if row.Mismatch = checkCounts(es, expect, from); row.Mismatch != "" {
			b.rep.Mismatches = append(b.rep.Mismatches, fmt.Sprintf("%s corpus, query %s (%s): %s", c.Profile, d.Text, d.Kind, row.Mismatch))
			b.logf("COUNT MISMATCH: %s", row.Mismatch)
		}
		if rg := row.Times["rg"]; rg != nil {
			row.RatioCLI = rg.Median / row.Times[cli.name].Median
			row.RatioInProc = rg.Median / row.Times[in.name].Median
		}
		res.Rows = append(res.Rows, row)
		if len(res.Tools) == 0 {
			for _, e := range es {
				res.Tools = append(res.Tools, e.name)
			}
		}
	}
	return nil
}
