package main

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/logdex/logdex/mmapstore"
)

// IndexResult is the indexing section.
type IndexResult struct {
	Runs       int     `json:"runs"`
	Wall       *Dist   `json:"wall"`
	CPU        *Dist   `json:"cpu"` // user + system
	MBps       float64 `json:"mb_per_s"`
	MBpsMin    float64 `json:"mb_per_s_min"`
	MBpsMax    float64 `json:"mb_per_s_max"`
	PeakRSS    int64   `json:"peak_rss_bytes"` // median over runs
	PeakRSSMax int64   `json:"peak_rss_bytes_max"`
	IndexBytes int64   `json:"index_bytes"`
	RawBytes   int64   `json:"raw_bytes"`
	PctRaw     float64 `json:"pct_of_raw"`
	Rerun      *Dist   `json:"no_change_rerun"`
	Command    string  `json:"command"`
}

// testBuild is set by this package's tests: they check reports, not
// timings, and build logdex as the other tests do (sharing their cache).
// testRace: they run under the race detector, and build logdex with it:
// its packages are then the ones `go test -race ./...` compiles anyway
// (a second, plain build of them all took 112 s of CPU on a fresh
// machine), and the race detector watches the processes too.
// When testBinDir is set too, the tests share one build there: their
// parallel runs, each building its own, compiled logdex side by side on a
// cold build cache.
var (
	testBuild  bool
	testRace   bool
	testBinDir string
	testBin    struct {
		once sync.Once
		err  error
	}
)

// buildBinary builds cmd/logdex into the session directory, so that
// whole-process timings are of a real binary: static (CGO_ENABLED=0), as
// the README builds it, since a dynamically linked logdex starts ~1 ms
// later (the dynamic loader, libc and cgo's thread start-up).
func (b *bench) buildBinary() error {
	if b.cfg.logdexBin != "" {
		b.bin = b.cfg.logdexBin
		b.rep.Machine.Build = "given with `--logdex " + b.bin + "`"
		return nil
	}
	if b.modRoot == "" {
		return errors.New("not inside the logdex module: run from the repository or pass --logdex BIN")
	}
	static := !b.cfg.smoke && !testBuild
	b.rep.Machine.Build = "built with `CGO_ENABLED=0 go build` for this run"
	if !static {
		// The smoke run checks the report, not timings: a default build
		// shares the build cache with the other tests' (11 s of CPU less
		// on a fresh machine).
		b.rep.Machine.Build = "built with `go build` (smoke run)"
	}
	if testBinDir != "" {
		b.bin = filepath.Join(testBinDir, "logdex")
		testBin.once.Do(func() { testBin.err = b.goBuild(static) })
		return testBin.err
	}
	b.bin = filepath.Join(b.tmp, "logdex")
	return b.goBuild(static)
}

// goBuild builds cmd/logdex at b.bin, static (CGO_ENABLED=0) when asked.
func (b *bench) goBuild(static bool) error {
	return b.goBuildPkg(b.bin, "./cmd/logdex", static)
}

// goBuildPkg builds the command pkg of the module at out, static
// (CGO_ENABLED=0) when asked.
func (b *bench) goBuildPkg(out, pkg string, static bool) error {
	b.logf("building %s", out)
	args := []string{"build", "-o", out}
	if testRace {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(b.ctx, "go", append(args, pkg)...)
	cmd.Dir = b.modRoot
	if static {
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	}
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, msg)
	}
	return nil
}

// indexCachePath is where the index of c is kept between sessions.
func (b *bench) indexCachePath(c *corpus) string {
	if c.Generated {
		return filepath.Join(b.cfg.cacheDir, cacheName("index", c.Profile, c.MB, c.Seed))
	}
	h := fnv.New64a()
	h.Write([]byte(c.Dir))
	return filepath.Join(b.cfg.cacheDir, fmt.Sprintf("index-%s-%x", filepath.Base(c.Dir), h.Sum64()))
}

// logdexIndex runs `logdex index` of c into dir.
func (b *bench) logdexIndex(dir string, c *corpus) (procResult, error) {
	return runProc(b.ctx, nil, nil, 0, b.bin, "index", "-q", "--index", dir, c.Dir)
}

// indexing measures whole-process indexing of the corpus into fresh
// directories; the last index built becomes the cached one for queries.
func (b *bench) indexing(cr *CorpusResult) error {
	c, cacheIx := cr.Corpus, cr.index
	cfg := b.cfg
	b.logf("indexing: %d runs of logdex index over %s", cfg.indexRuns, c.Dir)
	warm(c.Dir)
	var walls, cpus, reruns []time.Duration
	var rss []float64
	res := &IndexResult{Runs: cfg.indexRuns, RawBytes: c.Bytes,
		Command: fmt.Sprintf("logdex index -q --index FRESH_DIR %s", c.Dir)}
	last := ""
	for i := 0; i < cfg.indexRuns; i++ {
		dir := filepath.Join(b.tmp, fmt.Sprintf("index-run-%d", i))
		os.RemoveAll(dir)
		// Dirty pages left by generating the corpus or by the run before
		// are written back first, not while this run is timed: right
		// after a 1 GiB corpus was generated the writeback took a quarter
		// of the indexing runs' speed (78 against 104 MB/s).
		syscall.Sync()
		r, err := b.logdexIndex(dir, c)
		if err != nil {
			return err
		}
		walls = append(walls, r.Wall)
		cpus = append(cpus, r.User+r.Sys)
		rss = append(rss, float64(r.MaxRSS))
		res.PeakRSSMax = max(res.PeakRSSMax, r.MaxRSS)
		res.IndexBytes = dirSize(dir)
		r2, err := b.logdexIndex(dir, c)
		if err != nil {
			return err
		}
		reruns = append(reruns, r2.Wall)
		if last != "" {
			os.RemoveAll(last)
		}
		last = dir
		b.logf("  run %d: %v, peak RSS %d MiB, re-run %v", i+1, r.Wall.Round(time.Millisecond), r.MaxRSS>>20, r2.Wall.Round(time.Millisecond))
	}
	res.Wall, res.CPU, res.Rerun = distOf(walls, true), distOf(cpus, true), distOf(reruns, true)
	mbps := func(s float64) float64 { return float64(c.Bytes) / s / 1e6 }
	res.MBps, res.MBpsMin, res.MBpsMax = mbps(res.Wall.Median), mbps(res.Wall.Max), mbps(res.Wall.Min)
	res.PeakRSS = int64(median(rss))
	if c.Bytes > 0 {
		res.PctRaw = 100 * float64(res.IndexBytes) / float64(c.Bytes)
	}
	cr.Indexing = res
	if b.cfg.indexDir == "" { // keep the last build for the query and server sections
		if err := os.RemoveAll(cacheIx); err != nil {
			return err
		}
		if err := os.Rename(last, cacheIx); err != nil {
			return err
		}
	} else {
		os.RemoveAll(last)
	}
	return nil
}

// readyIndex returns an index of c that is usable now, or "" and why not.
// A given --index is used as it is; a cached one is brought up to date with
// an (untimed) logdex index run; build creates a missing one.
func (b *bench) readyIndex(c *corpus, dir string, build bool) (string, string) {
	if b.cfg.indexDir != "" && dir == b.cfg.indexDir {
		if _, err := mmapstore.ReadManifest(dir); err != nil {
			return "", fmt.Sprintf("the index %s cannot be read: %v", dir, err)
		}
		return dir, ""
	}
	if _, err := os.Stat(dir); err != nil && !build {
		return "", "no index built yet (run the index section first: --only index)"
	}
	if _, err := b.logdexIndex(dir, c); err != nil {
		if !build {
			return "", fmt.Sprintf("logdex index could not update the cached index: %v", firstLine(err.Error()))
		}
		os.RemoveAll(dir)
		if _, err := b.logdexIndex(dir, c); err != nil {
			return "", fmt.Sprintf("logdex index failed: %v", firstLine(err.Error()))
		}
	}
	ix, err := mmapstore.Open(dir)
	if err != nil {
		return "", fmt.Sprintf("the index %s cannot be opened: %v", dir, err)
	}
	ix.Close()
	return dir, ""
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
