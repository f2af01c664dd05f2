package main

// The smallfiles section measures a tree of many small log files (100,000
// of a few lines each by default, --small-files): indexing it, the index
// and manifest sizes, and counting a word with logdex (--no-update, and
// the default that brings the index up to date first) against grep -r and
// rg. There the cost is per file, not per byte: the manifest, a look at
// every file, the process.

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/logdex/logdex/mmapstore"
)

// SmallFilesResult is the smallfiles section.
type SmallFilesResult struct {
	Dir          string             `json:"dir"`
	Files        int                `json:"files"`
	Bytes        int64              `json:"bytes"`
	Runs         int                `json:"runs"`
	IndexWall    *Dist              `json:"index_wall"`
	IndexBytes   int64              `json:"index_bytes"`
	ManifestSize int64              `json:"manifest_bytes"`
	Queries      []*SmallFilesQuery `json:"queries,omitempty"`
}

// SmallFilesQuery is one count over the tree.
type SmallFilesQuery struct {
	qdef
	Hits     int64            `json:"hits"`
	Times    map[string]*Dist `json:"times"`
	Mismatch string           `json:"mismatch,omitempty"`
}

const (
	engNoUpdate = "logdex -c --no-update"
	engDefault  = "logdex -c (default: update first)"
	// the same with --smallfiles-baseline's binary
	engBaseNoUpdate = "baseline -c --no-update"
	engBaseDefault  = "baseline -c (default)"
)

// smallWords make up the lines: "timeout" is in about one file in two,
// "login failed" in about one in 70.
var smallWords = []string{"connection", "timeout", "user", "login", "failed", "accepted", "request", "GET", "POST",
	"error", "warning", "disk", "full", "retry", "session", "closed"}

// writeSmallFiles writes n files of 2 to 6 syslog-like lines under dir,
// 1,000 to a directory, the same for the same seed.
func writeSmallFiles(dir string, n int, seed int64) error {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5111))
	for i := range n {
		p := filepath.Join(dir, fmt.Sprintf("d%03d", i/1000), fmt.Sprintf("app-%06d.log", i))
		if i%1000 == 0 {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		w := bufio.NewWriter(f)
		for range 2 + r.IntN(5) {
			fmt.Fprintf(w, "2026-03-%02dT10:%02d:%02dZ host%d svc[%d]: %s %s id=%d\n", 1+r.IntN(28), r.IntN(60), r.IntN(60),
				r.IntN(50), r.IntN(9999), smallWords[r.IntN(len(smallWords))], smallWords[r.IntN(len(smallWords))], r.Uint32())
		}
		if err := w.Flush(); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// smallFilesCorpus returns the tree, generated into the cache on first use.
func (b *bench) smallFilesCorpus() (*corpus, error) {
	n := b.cfg.smallFiles
	dir := filepath.Join(b.cfg.cacheDir, fmt.Sprintf("corpus-smallfiles-%d-seed%d", n, b.cfg.seed))
	if _, err := os.Stat(dir); err != nil {
		b.logf("generating %d small files (seed %d) in %s", n, b.cfg.seed, dir)
		tmp := dir + ".tmp"
		if err := os.RemoveAll(tmp); err != nil {
			return nil, err
		}
		if err := writeSmallFiles(tmp, n, b.cfg.seed); err != nil {
			return nil, fmt.Errorf("generate small files: %w", err)
		}
		if err := os.Rename(tmp, dir); err != nil {
			return nil, err
		}
	}
	c := &corpus{Profile: "smallfiles", Dir: dir, Seed: b.cfg.seed, Generated: true}
	return c, b.measure(c)
}

func (b *bench) smallFilesSection() error {
	c, err := b.smallFilesCorpus()
	if err != nil {
		return err
	}
	res := &SmallFilesResult{Dir: c.Dir, Files: c.Files, Bytes: c.Bytes, Runs: b.cfg.runs}
	b.rep.SmallFiles = res
	ix := filepath.Join(b.tmp, "index-smallfiles")
	var walls []time.Duration
	for i := 0; i < b.cfg.indexRuns; i++ {
		os.RemoveAll(ix)
		r, err := b.logdexIndex(ix, c)
		if err != nil {
			return err
		}
		walls = append(walls, r.Wall)
		b.logf("smallfiles: indexed %d files in %v", c.Files, r.Wall.Round(time.Millisecond))
	}
	res.IndexWall = distOf(walls, true)
	res.IndexBytes = dirSize(ix)
	if fi, err := os.Stat(filepath.Join(ix, mmapstore.ManifestName)); err == nil {
		res.ManifestSize = fi.Size()
	}
	for _, d := range []qdef{term("word in half the files", "timeout"), literal("selective literal", "login failed", "")} {
		q := &SmallFilesQuery{qdef: d, Times: map[string]*Dist{}}
		res.Queries = append(res.Queries, q)
		count := func(name, bin string, noUpdate bool) *engine {
			args := []string{"search", "--index", ix, "-c"}
			if noUpdate {
				args = append(args, "--no-update")
			}
			args = append(args, d.Logdex...)
			return b.toolEngine(name, bin, nil, args, c.Dir)
		}
		noUpdate := count(engNoUpdate, b.bin, true)
		es := []*engine{noUpdate, count(engDefault, b.bin, false), b.grepEngine(c, d)}
		if b.cfg.smallBase != "" {
			es = append(es, count(engBaseNoUpdate, b.cfg.smallBase, true), count(engBaseDefault, b.cfg.smallBase, false))
		}
		if toolVersion("rg", "--version") != "" {
			es = append(es, b.rgEngine(c, d))
		}
		if err := b.interleave(es, b.cfg.runs); err != nil {
			return err
		}
		for _, e := range es {
			q.Times[e.name] = distOf(e.samples, true)
		}
		q.Hits = noUpdate.first
		if q.Mismatch = checkCounts(es, -1, ""); q.Mismatch != "" {
			b.rep.Mismatches = append(b.rep.Mismatches, fmt.Sprintf("smallfiles %q: %s", d.Text, q.Mismatch))
		}
		b.logf("smallfiles %q: %d hits; --no-update %s, default %s, grep %s", d.Text, q.Hits,
			cell(q.Times[engNoUpdate]), cell(q.Times[engDefault]), cell(q.Times["grep"]))
	}
	return nil
}

func (r *Report) mdSmallFiles(p printf) {
	x := r.SmallFiles
	if x == nil {
		return
	}
	p("### Many small files (%d files, %.1f MB; median of %d)\n\n", x.Files, float64(x.Bytes)/1e6, x.Runs)
	p("Indexing: %s (`logdex index` into a fresh directory); index %.1f MB, of which the manifest %.1f MB.\n\n",
		cell(x.IndexWall), float64(x.IndexBytes)/1e6, float64(x.ManifestSize)/1e6)
	p("| query | hits | %s | %s | grep -r | rg | grep / --no-update | grep / default |\n|---|--:|--:|--:|--:|--:|--:|--:|\n", engNoUpdate, engDefault)
	for _, q := range x.Queries {
		hits := fmt.Sprint(q.Hits)
		if q.Mismatch != "" {
			hits += " **MISMATCH** " + q.Mismatch
		}
		p("| %s `%s` | %s | %s | %s | %s | %s | %s | %s |\n", q.Kind, mdCode(q.Text), hits, cell(q.Times[engNoUpdate]), cell(q.Times[engDefault]),
			cell(q.Times["grep"]), cell(q.Times["rg"]), speedup(q.Times, "grep", engNoUpdate), speedup(q.Times, "grep", engDefault))
	}
	if x.Queries != nil && x.Queries[0].Times[engBaseNoUpdate] != nil {
		p("\nAgainst the baseline binary (`--smallfiles-baseline`), in the same interleaved runs:\n\n")
		p("| query | baseline --no-update | this --no-update | speed-up | baseline default | this default | speed-up |\n|---|--:|--:|--:|--:|--:|--:|\n")
		for _, q := range x.Queries {
			p("| %s `%s` | %s | %s | %s | %s | %s | %s |\n", q.Kind, mdCode(q.Text), cell(q.Times[engBaseNoUpdate]), cell(q.Times[engNoUpdate]),
				speedup(q.Times, engBaseNoUpdate, engNoUpdate), cell(q.Times[engBaseDefault]), cell(q.Times[engDefault]), speedup(q.Times, engBaseDefault, engDefault))
		}
	}
	p("\nWhole processes, interleaved: `logdex search [--no-update] --index INDEX -c ARGS`, `LC_ALL=C grep -rc GREP_ARGS DIR`, " +
		"`rg -c RG_ARGS DIR` (word: `-i -w`; literal: `-F`). The default search first brings the index up to date " +
		"(here: nothing changed, every file looked at). Counts are checked equal.\n\n")
}

// speedup is engine this's speed-up over engine base, the ratio of their
// median times ("" when either was not timed).
func speedup(times map[string]*Dist, base, this string) string {
	if b, t := times[base], times[this]; b != nil && t != nil && t.Median > 0 {
		return ratio(b.Median / t.Median)
	}
	return ""
}
