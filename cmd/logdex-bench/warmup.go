package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
	"github.com/logdex/logdex/mmapstore"
)

// The warm-up section measures what staged warm-up is for: a server that
// starts on an index whose pages are not in memory. Before each run the
// index files are evicted from the page cache (posix_fadvise DONTNEED, no
// root needed; the log files stay cached), then `logdex serve` starts with
// one --warmup mode while a client issues a fixed mix of queries one after
// another from the first moment, and /api/status is polled for residency.

// WarmupRow is one warm-up mode, medians over rounds.
type WarmupRow struct {
	Mode        string `json:"mode"`
	FirstAnswer *Dist  `json:"first_answer"`         // exec -> first successful /api/search
	AllResident *Dist  `json:"all_resident"`         // exec -> every index byte resident (nil: never)
	DuringP50   *Dist  `json:"during_p50,omitempty"` // query latency while warming up
	DuringP99   *Dist  `json:"during_p99,omitempty"`
	AfterP50    *Dist  `json:"after_p50,omitempty"` // once warm
	AfterP99    *Dist  `json:"after_p99,omitempty"`
	Queries     int    `json:"queries"`
}

// WarmupResult is the warm-up section on one corpus.
type WarmupResult struct {
	Profile    string      `json:"profile"`
	Skipped    string      `json:"skipped,omitempty"`
	CorpusMB   int64       `json:"corpus_mb"`
	IndexBytes int64       `json:"index_bytes"`
	Mix        []string    `json:"mix"`
	Rows       []WarmupRow `json:"rows"`
	Baseline   string      `json:"baseline,omitempty"` // --warmup-baseline
	Notes      []string    `json:"notes,omitempty"`
}

// warmQuery is one query of a warm-up mix.
type warmQuery struct{ q, mode string }

// warmupMix is the fixed query mix issued during start-up on a corpus of
// the profile: a word, literals that read many dictionary blocks (an IP, a
// partial id), a regex, a phrase, a boolean query, a prefix.
func warmupMix(profile string) []warmQuery {
	if profile == loggen.ProfileHighCard {
		txt := needleTexts(loggen.ProfileHighCard)
		return []warmQuery{
			{txt[loggen.NeedleTrace], "literal"},
			{"deadlock", "query"},
			{txt[loggen.NeedleIPPort], "literal"},
			{`pool exhausted: all [0-9]+ connections`, "regex"},
			{`"pool exhausted"`, "query"},
			{txt[loggen.NeedlePartial], "literal"},
			{txt[loggen.NeedleOrder], "literal"},
		}
	}
	return []warmQuery{
		{"mallory", "query"},
		{"10.213.7.42", "literal"},
		{"checksum mismatch on segment [0-9]+", "regex"},
		{`"connection reset"`, "query"},
		{"error AND timeout", "query"},
		{"1e4f7a2c", "literal"},
		{"quint*", "query"},
	}
}

// warmup runs the section on every configured profile's corpus in turn.
func (b *bench) warmup() error {
	for _, p := range b.cfg.profiles {
		if err := b.warmupOn(p); err != nil {
			return err
		}
	}
	return nil
}

func (b *bench) warmupOn(profile string) error {
	res := &WarmupResult{Profile: profile, CorpusMB: b.cfg.warmupMB}
	b.rep.Warmups = append(b.rep.Warmups, res)
	mix := warmupMix(profile)
	for _, m := range mix {
		res.Mix = append(res.Mix, m.mode+":"+m.q)
	}
	var c *corpus
	var err error
	ix := b.cfg.indexDir
	if b.cfg.corpusDir != "" && ix != "" { // --corpus and --index given: measure those
		c, err = b.corpus(profile, 0)
	} else {
		c, err = b.generated(profile, b.cfg.warmupMB)
		if err == nil {
			var why string
			if ix, why = b.readyIndex(c, b.indexCachePath(c), true); why != "" {
				res.Skipped = why
				return nil
			}
		}
	}
	if err != nil {
		return err
	}
	res.CorpusMB = c.Bytes >> 20
	if st, err := indexSize(ix); err == nil {
		res.IndexBytes = st
	}
	after := 3 * time.Second
	if b.cfg.smoke {
		after = 300 * time.Millisecond
	}
	// One server per mode and round, modes interleaved; a baseline binary's
	// staged and eager runs come right after this binary's.
	type startMode struct{ label, bin, mode string }
	modes := []startMode{{mmapstore.WarmStaged, b.bin, mmapstore.WarmStaged}, {mmapstore.WarmEager, b.bin, mmapstore.WarmEager}}
	if base := b.cfg.warmupBase; base != "" {
		modes = append(modes, startMode{"staged, baseline", base, mmapstore.WarmStaged}, startMode{"eager, baseline", base, mmapstore.WarmEager})
	}
	modes = append(modes, startMode{mmapstore.WarmOff, b.bin, mmapstore.WarmOff})
	type acc struct {
		first, resident, dp50, dp99, ap50, ap99 []time.Duration
		queries                                 int
	}
	accs := make([]acc, len(modes))
	var stagedDone time.Duration
	for r := 0; r < b.cfg.runs; r++ {
		for i, m := range modes {
			if err := mmapstore.Evict(ix); err != nil {
				return fmt.Errorf("evict %s: %w", ix, err)
			}
			// off never becomes resident: watch it as long as staged took.
			limit := time.Duration(0)
			if m.mode == mmapstore.WarmOff {
				limit = max(stagedDone, time.Second)
			}
			run, err := b.warmupRun(m.bin, c, ix, mix, m.mode, after, limit)
			if err != nil {
				return fmt.Errorf("warm-up %s: %w", m.label, err)
			}
			if i == 0 && run.done > 0 {
				stagedDone = run.done
			}
			a := &accs[i]
			a.first = append(a.first, run.first)
			if run.resident > 0 {
				a.resident = append(a.resident, run.resident)
			}
			if len(run.during) > 0 {
				a.dp50 = append(a.dp50, pct(run.during, 0.5))
				a.dp99 = append(a.dp99, pct(run.during, 0.99))
			}
			if len(run.after) > 0 {
				a.ap50 = append(a.ap50, pct(run.after, 0.5))
				a.ap99 = append(a.ap99, pct(run.after, 0.99))
			}
			a.queries += len(run.during) + len(run.after)
			b.logf("warm-up %s %s round %d: first answer %v, resident %v, %d queries during, %d after; slowest while warming: %v", profile, m.label, r+1, run.first, run.resident, len(run.during), len(run.after), run.slowest)
		}
	}
	for i, m := range modes {
		a := accs[i]
		res.Rows = append(res.Rows, WarmupRow{Mode: m.label, FirstAnswer: distOf(a.first, true), AllResident: distOf(a.resident, true),
			DuringP50: distOf(a.dp50, true), DuringP99: distOf(a.dp99, true), AfterP50: distOf(a.ap50, true), AfterP99: distOf(a.ap99, true), Queries: a.queries})
	}
	res.Baseline = b.cfg.warmupBase // omitted from the JSON when empty
	res.Notes = append(res.Notes, "off: 'during' is the first run of queries as long as staged took to warm up; its pages come in only as queries fault them")
	return nil
}

func indexSize(dir string) (int64, error) {
	m, err := mmapstore.ReadManifest(dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, s := range m.Segments {
		n += s.Size
	}
	return n, nil
}

func pct(ds []time.Duration, q float64) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

type warmRun struct {
	first, resident, done time.Duration
	during, after         []time.Duration
	slowest               map[string]time.Duration // per query of the mix, while warming
}

// warmupRun starts one server and drives it until warm-up is done and
// `after` more has passed (or, with limit > 0, for limit after the first
// answer).
func (b *bench) warmupRun(bin string, c *corpus, ix string, mix []warmQuery, mode string, after, limit time.Duration) (*warmRun, error) {
	s, err := b.startServerBin(bin, c, ix, []string{"--warmup=" + mode, "--reindex", "0", "--cache-ttl", "0", "-q"})
	if err != nil {
		return nil, err
	}
	defer s.stop()
	ctx, cancel := context.WithTimeout(b.ctx, 3*time.Minute)
	defer cancel()
	run := &warmRun{slowest: map[string]time.Duration{}}
	var mu sync.Mutex
	var done time.Duration // since exec; 0 while warming
	cl := &http.Client{Timeout: 30 * time.Second}

	// Status poller: residency and the warmer's state.
	go func() {
		for ctx.Err() == nil {
			var st struct {
				Warmup *mmapstore.WarmStatus `json:"warmup"`
			}
			if resp, err := cl.Get(s.url("/api/status")); err == nil {
				json.NewDecoder(resp.Body).Decode(&st)
				resp.Body.Close()
				if w := st.Warmup; w != nil {
					el := time.Since(s.start)
					mu.Lock()
					if w.Mapped > 0 && w.Resident >= w.Mapped && run.resident == 0 {
						run.resident = el
					}
					if w.State == mmapstore.StateDone && done == 0 {
						done = el
					}
					mu.Unlock()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()

	for i := 0; ; i++ {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("no end of warm-up within 3 minutes: %s", tail(s.log))
		}
		m := mix[i%len(mix)]
		u := s.url("/api/search?limit=20&mode=" + m.mode + "&q=" + url.QueryEscape(m.q))
		t0 := time.Now()
		resp, err := cl.Get(u)
		lat := time.Since(t0)
		ok := err == nil && resp.StatusCode == http.StatusOK
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if !ok {
			if run.first == 0 {
				select {
				case err := <-s.exit:
					s.exit <- err
					return nil, fmt.Errorf("logdex serve exited: %s", tail(s.log))
				case <-time.After(2 * time.Millisecond):
				}
				i-- // the first answer comes from the first query of the mix
				continue
			}
			return nil, fmt.Errorf("search failed during the run: %v %s", err, tail(s.log))
		}
		el := time.Since(s.start)
		if run.first == 0 {
			run.first = el
		}
		mu.Lock()
		d := done
		if mode == mmapstore.WarmEager && d == 0 {
			d = run.first // eager is warm before it answers
			done = d
		}
		mu.Unlock()
		switch {
		case limit > 0:
			if el-run.first > limit {
				return run, nil
			}
			run.during = append(run.during, lat)
		case d == 0 || el-lat < d:
			run.during = append(run.during, lat)
			run.slowest[m.q] = max(run.slowest[m.q], lat)
		default:
			run.after = append(run.after, lat)
			if el-d > after {
				run.done = d
				return run, nil
			}
		}
	}
}

func (r *Report) mdWarmup(p printf) {
	for _, x := range r.Warmups {
		x.md(p)
	}
}

func (x *WarmupResult) md(p printf) {
	p("### Start-up and warm-up, %s corpus (index evicted from the page cache before each run)\n\n", x.Profile)
	if x.Skipped != "" {
		p("_Skipped: %s._\n\n", x.Skipped)
		return
	}
	p("Corpus %d MiB, index %.0f MB. From exec of `logdex serve --warmup=MODE --cache-ttl 0`, a client issues this mix one query after another: %s. "+
		"Latencies are per query; p50/p99 per run, then the median over runs.\n\n", x.CorpusMB, float64(x.IndexBytes)/1e6, "`"+strings.Join(x.Mix, "`, `")+"`")
	p("| mode | first answer | all resident | p50 during | p99 during | p50 after | p99 after | queries |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, w := range x.Rows {
		p("| %s | %s | %s | %s | %s | %s | %s | %d |\n", w.Mode, cell(w.FirstAnswer), cell(w.AllResident), cell(w.DuringP50), cell(w.DuringP99), cell(w.AfterP50), cell(w.AfterP99), w.Queries)
	}
	p("\n")
	if x.Baseline != "" {
		p("Rows marked baseline are `%s`, run right after this binary's in every round.\n\n", x.Baseline)
	}
	row := func(label string) *WarmupRow {
		for i := range x.Rows {
			if x.Rows[i].Mode == label {
				return &x.Rows[i]
			}
		}
		return nil
	}
	ratios(p, row(mmapstore.WarmStaged), row(mmapstore.WarmEager))
	if x.Baseline != "" {
		p("Baseline:\n\n")
		ratios(p, row("staged, baseline"), row("eager, baseline"))
	}
	for _, n := range x.Notes {
		p("_%s._\n\n", n)
	}
}

// ratios prints the warm-up goals' ratios of one binary's staged and eager rows.
func ratios(p printf, staged, eager *WarmupRow) {
	if staged != nil && eager != nil && staged.FirstAnswer != nil && eager.FirstAnswer != nil {
		p("- first answer, staged / eager: %.2f (goal ≤ 0.10)\n", staged.FirstAnswer.Median/eager.FirstAnswer.Median)
		if staged.DuringP99 != nil && staged.AfterP99 != nil {
			p("- p99 during staged warm-up / warm p99: %.2f (goal ≤ 3)\n", staged.DuringP99.Median/staged.AfterP99.Median)
		}
		if staged.AllResident != nil && eager.AllResident != nil {
			p("- time until all resident, staged / eager: %.2f (goal ≤ 2)\n", staged.AllResident.Median/eager.AllResident.Median)
		}
		p("\n")
	}
}
