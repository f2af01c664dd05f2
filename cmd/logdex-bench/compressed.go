package main

// The compressed section measures logs stored compressed (loggen corpus,
// every file compressed by the gzip and zstd binaries): indexing against
// decompression alone, selective searches against rg -z and zgrep, and
// reading one line near the end of the largest file through the
// checkpoints against decompressing from the start.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/logdex/logdex/fixtures/loggen"
	"github.com/logdex/logdex/mmapstore/compressed"
)

// CompressedResult is the compressed section.
type CompressedResult struct {
	Runs     int                 `json:"runs"`
	Interval int64               `json:"checkpoint_interval"`
	Formats  []*CompressedFormat `json:"formats,omitempty"`
}

// CompressedFormat is one compression format's figures.
type CompressedFormat struct {
	Kind            string             `json:"kind"`
	Tool            string             `json:"tool"` // how the files were compressed
	Dir             string             `json:"dir"`
	Index           string             `json:"index"`
	RawBytes        int64              `json:"raw_bytes"`
	CompressedBytes int64              `json:"compressed_bytes"`
	IndexWall       *Dist              `json:"index_wall"`
	DecompWall      *Dist              `json:"decompress_wall"`
	IndexMBps       float64            `json:"index_mb_per_s"` // decompressed MB
	DecompMBps      float64            `json:"decompress_mb_per_s"`
	Ratio           float64            `json:"index_over_decompress"`
	PlainWall       *Dist              `json:"plain_index_wall"` // the uncompressed corpus, same rounds
	PlainMBps       float64            `json:"plain_index_mb_per_s"`
	RatioPlain      float64            `json:"index_over_plain_index"`
	Queries         []*CompressedQuery `json:"queries,omitempty"`
	Random          *RandomRead        `json:"random_read,omitempty"`
	Skipped         string             `json:"skipped,omitempty"`
}

// CompressedQuery is one search over the compressed files.
type CompressedQuery struct {
	qdef
	Hits       int64            `json:"hits"`
	Times      map[string]*Dist `json:"times"`
	Zgrep      string           `json:"zgrep"` // zgrep or zstdgrep
	RatioRg    float64          `json:"rg_over_cli"`
	RatioZgrep float64          `json:"zgrep_over_cli"`
	Mismatch   string           `json:"mismatch,omitempty"`
}

// RandomRead is reading one line near the end of the largest file.
type RandomRead struct {
	File         string   `json:"file"`
	Size         int64    `json:"decompressed_bytes"`
	Offset       int64    `json:"offset"`
	Checkpoints  int      `json:"checkpoints"`
	ViaCopy      bool     `json:"via_copy"`   // read through a seekable copy, as the index does
	ReadAt       *Dist    `json:"read_at"`    // fresh Reader, one line
	FromStart    *Dist    `json:"from_start"` // decompressing up to the line
	OneInterval  float64  `json:"one_interval_s"`
	OverInterval float64  `json:"read_over_one_interval"`
	CLI          *Dist    `json:"cli,omitempty"` // logdex search -F LINE, whole process
	CLIArgs      []string `json:"cli_args,omitempty"`
}

var compressors = []struct {
	kind     compressed.Kind
	ext, bin string
	args     []string // then IN -o OUT or > OUT
	zgrep    string
}{
	{compressed.Gzip, ".gz", "gzip", []string{"-6", "-c"}, "zgrep"},
	{compressed.Zstd, ".zst", "zstd", []string{"-q", "-3", "-c"}, "zstdgrep"},
}

func (b *bench) compressedSection() error {
	res := &CompressedResult{Runs: b.cfg.runs, Interval: compressed.DefaultInterval}
	b.rep.Compressed = res
	c, err := b.corpus(loggen.ProfileLoggen, b.cfg.mb)
	if err != nil {
		return err
	}
	for _, cp := range compressors {
		f := &CompressedFormat{Kind: cp.kind.String(), Tool: cp.bin + " " + shellJoin(cp.args[:len(cp.args)-1]), RawBytes: c.Bytes}
		res.Formats = append(res.Formats, f)
		if _, err := exec.LookPath(cp.bin); err != nil {
			f.Skipped = cp.bin + " is not installed"
			continue
		}
		cc, err := b.compressedCorpus(c, cp.ext, cp.bin, cp.args)
		if err != nil {
			return err
		}
		f.Dir, f.CompressedBytes = cc.Dir, cc.Bytes
		if err := b.compressedIndexing(f, c, cc, cp.kind); err != nil {
			return err
		}
		if err := b.compressedQueries(f, cc, cp.zgrep); err != nil {
			return err
		}
		if err := b.randomRead(f, c, cc, cp.kind, cp.ext); err != nil {
			return err
		}
	}
	return nil
}

// compressedCorpus is c with every file compressed by bin, cached beside it.
func (b *bench) compressedCorpus(c *corpus, ext, bin string, args []string) (*corpus, error) {
	dir := c.Dir + "-" + ext[1:]
	cc := &corpus{Profile: c.Profile, Dir: dir, MB: c.MB, Seed: c.Seed}
	if _, err := os.Stat(dir); err != nil {
		b.logf("compressed: writing %s (%s %v)", dir, bin, args)
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		err := parallelFiles(c, func(p string) error {
			out := filepath.Join(tmp, relPath(p, c.Dir)+ext)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			w, err := os.Create(out)
			if err != nil {
				return err
			}
			defer w.Close()
			cmd := exec.CommandContext(b.ctx, bin, append(append([]string{}, args...), p)...)
			var msg bytes.Buffer
			cmd.Stdout, cmd.Stderr = w, &msg
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s %s: %v %s", bin, p, err, msg.String())
			}
			return w.Close()
		})
		if err == nil {
			err = os.Rename(tmp, dir)
		}
		if err != nil {
			return nil, err
		}
	}
	return cc, b.measure(cc)
}

// decompressAll decompresses every file of cc with the indexer's library
// (compressed.Indexer, checkpoints recorded), one goroutine per CPU as the
// indexer works, and returns the decompressed bytes.
func decompressAll(cc *corpus, kind compressed.Kind) (int64, error) {
	var mu sync.Mutex
	var total int64
	err := parallelFiles(cc, func(p string) error {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		n, err := io.CopyBuffer(io.Discard, compressed.NewIndexer(f, fi.Size(), kind, 0), make([]byte, 256<<10))
		mu.Lock()
		total += n
		mu.Unlock()
		return err
	})
	return total, err
}

func (b *bench) compressedIndexing(f *CompressedFormat, c, cc *corpus, kind compressed.Kind) error {
	var idx, dec, plain []time.Duration
	f.Index = filepath.Join(b.tmp, "index-"+f.Kind)
	plainIx := filepath.Join(b.tmp, "index-plain")
	defer os.RemoveAll(plainIx)
	for i := 0; i < b.cfg.indexRuns; i++ {
		warm(c.Dir)
		os.RemoveAll(plainIx)
		r, err := b.logdexIndex(plainIx, c)
		if err != nil {
			return err
		}
		plain = append(plain, r.Wall)
		warm(cc.Dir)
		os.RemoveAll(f.Index)
		r, err = b.logdexIndex(f.Index, cc)
		if err != nil {
			return err
		}
		idx = append(idx, r.Wall)
		t0 := time.Now()
		n, err := decompressAll(cc, kind)
		dec = append(dec, time.Since(t0))
		if err != nil {
			return err
		}
		if n != c.Bytes {
			b.rep.Mismatches = append(b.rep.Mismatches, fmt.Sprintf("compressed %s: decompressed %d bytes, the plain corpus has %d", f.Kind, n, c.Bytes))
		}
		b.logf("compressed %s: indexing %v, decompression alone %v, indexing the plain corpus %v", f.Kind, r.Wall.Round(time.Millisecond), dec[i].Round(time.Millisecond), plain[i].Round(time.Millisecond))
	}
	f.IndexWall, f.DecompWall = distOf(idx, true), distOf(dec, true)
	f.IndexMBps = float64(c.Bytes) / f.IndexWall.Median / 1e6
	f.DecompMBps = float64(c.Bytes) / f.DecompWall.Median / 1e6
	f.Ratio = f.IndexMBps / f.DecompMBps
	f.PlainWall = distOf(plain, true)
	f.PlainMBps = float64(c.Bytes) / f.PlainWall.Median / 1e6
	f.RatioPlain = f.IndexMBps / f.PlainMBps
	return nil
}

func (b *bench) compressedQueries(f *CompressedFormat, cc *corpus, zgrep string) error {
	txt := map[string]string{}
	for _, n := range loggen.Needles() {
		txt[n.Name] = n.Text
	}
	defs := []qdef{term("selective word", "mallory"), literal("selective literal, IP needle", txt[loggen.NeedleIP], loggen.NeedleIP)}
	haveZ := toolVersion(zgrep, "--version") != ""
	for _, d := range defs {
		b.logf("compressed %s: query %s", f.Kind, d.Text)
		cli := b.cliEngine(f.Index, cc, d)
		es := []*engine{cli}
		if b.haveTool("rg") {
			es = append(es, b.toolEngine("rg -z", "rg", nil, append(append([]string{"-z", "-c"}, d.Rg...), cc.Dir), cc.Dir))
		}
		if haveZ {
			es = append(es, b.toolEngine(zgrep, zgrep, []string{"LC_ALL=C"}, append(append([]string{"-c"}, d.Grep...), cc.paths...), cc.Dir))
		}
		q := &CompressedQuery{qdef: d, Zgrep: zgrep, Times: map[string]*Dist{}}
		f.Queries = append(f.Queries, q)
		if err := b.interleave(es, b.cfg.runs); err != nil {
			if b.ctx.Err() != nil {
				return err
			}
			q.Mismatch = "failed: " + firstLine(err.Error())
			b.rep.Mismatches = append(b.rep.Mismatches, fmt.Sprintf("compressed %s, query %s: %s", f.Kind, d.Text, q.Mismatch))
			continue
		}
		q.Hits = cli.first
		for _, e := range es {
			q.Times[e.name] = distOf(e.samples, true)
		}
		expect, from := int64(-1), ""
		if n, ok := cc.needle(d.Needle); ok {
			expect, from = int64(n.Lines), "loggen's planted count"
		}
		if q.Mismatch = checkCounts(es, expect, from); q.Mismatch != "" {
			b.rep.Mismatches = append(b.rep.Mismatches, fmt.Sprintf("compressed %s, query %s: %s", f.Kind, d.Text, q.Mismatch))
		}
		if t := q.Times["rg -z"]; t != nil {
			q.RatioRg = t.Median / q.Times[cli.name].Median
		}
		if t := q.Times[zgrep]; t != nil {
			q.RatioZgrep = t.Median / q.Times[cli.name].Median
		}
	}
	return nil
}

// randomRead reads one line near the end (99%) of the largest file's
// compressed copy: through a fresh compressed.Reader and its checkpoints,
// against decompressing from the start up to the line.
func (b *bench) randomRead(f *CompressedFormat, c, cc *corpus, kind compressed.Kind, ext string) error {
	plain, _ := largestFile(c)
	if plain == "" {
		return nil
	}
	path := filepath.Join(cc.Dir, relPath(plain, c.Dir)+ext)
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return err
	}
	ixr := compressed.NewIndexer(fh, fi.Size(), kind, 0)
	// The seekable copy the indexer keeps of a file without restart points
	// (a zstd file of one frame), made the same way.
	cp, err := os.CreateTemp(b.tmp, "copy-*.zst")
	if err != nil {
		return err
	}
	defer os.Remove(cp.Name())
	defer cp.Close()
	sw := compressed.NewShadowWriter(cp, 0)
	if _, err := io.Copy(sw, ixr); err != nil {
		return err
	}
	if err := sw.Close(); err != nil {
		return err
	}
	t := ixr.Table()
	rr := &RandomRead{File: relPath(path, cc.Dir), Size: t.Size, Checkpoints: t.Len(), ViaCopy: t.NeedsShadow()}
	f.Random = rr
	reader := func() io.ReaderAt { return compressed.NewReader(fh, fi.Size(), kind, t) }
	if rr.ViaCopy {
		st := sw.Table()
		reader = func() io.ReaderAt { return compressed.NewShadowReader(cp, st.CompressedSize, st) }
	}
	// The line: the first one starting at or after 99% of the content.
	near := t.Size * 99 / 100
	buf := make([]byte, 64<<10)
	n, err := reader().ReadAt(buf, near)
	if err != nil && err != io.EOF {
		return err
	}
	i := bytes.IndexByte(buf[:n], '\n')
	if i < 0 || i+1 >= n {
		return nil
	}
	rr.Offset = near + int64(i) + 1
	line, _, _ := bytes.Cut(buf[i+1:n], []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	want := string(line)
	var reads, starts []time.Duration
	lineBuf := make([]byte, len(line))
	t0 := time.Now()
	for r := 0; r < b.cfg.runs || time.Since(t0) < b.cfg.inprocMin && r < 200; r++ {
		s := time.Now()
		if _, err := reader().ReadAt(lineBuf, rr.Offset); err != nil {
			return err
		}
		reads = append(reads, time.Since(s))
		if string(lineBuf) != want {
			b.rep.Mismatches = append(b.rep.Mismatches, fmt.Sprintf("compressed %s: the line at %d read back differently", f.Kind, rr.Offset))
			break
		}
	}
	for r := 0; r < b.cfg.runs; r++ {
		s := time.Now()
		ixr := compressed.NewIndexer(fh, fi.Size(), kind, 0)
		if _, err := io.CopyN(io.Discard, bufio.NewReaderSize(ixr, 256<<10), rr.Offset+int64(len(line))); err != nil {
			return err
		}
		starts = append(starts, time.Since(s))
	}
	rr.ReadAt, rr.FromStart = distOf(reads, false), distOf(starts, true)
	rr.OneInterval = rr.FromStart.Median * float64(compressed.DefaultInterval) / float64(rr.Offset+int64(len(line)))
	rr.OverInterval = rr.ReadAt.Median / rr.OneInterval
	// The same line found by the CLI, whole process.
	rr.CLIArgs = []string{"search", "--no-update", "--index", f.Index, "-F", "-c", want}
	var clis []time.Duration
	for r := 0; r < b.cfg.runs; r++ {
		p, err := runProc(b.ctx, nil, nil, 1, b.bin, rr.CLIArgs...)
		if err != nil {
			return err
		}
		if n, _ := sumCounts(p.Stdout, cc.Dir); n < 1 {
			b.rep.Mismatches = append(b.rep.Mismatches, fmt.Sprintf("compressed %s: logdex search -F of the line at %d found nothing", f.Kind, rr.Offset))
		}
		clis = append(clis, p.Wall)
	}
	rr.CLI = distOf(clis, true)
	return nil
}

func (r *Report) mdCompressed(p printf) {
	x := r.Compressed
	if x == nil {
		return
	}
	p("### Compressed logs (loggen corpus, every file compressed; median of %d)\n\n", x.Runs)
	p("Indexing against decompression alone (MB/s of decompressed logs):\n\n")
	p("| format | compressed | logdex index | MB/s | decompression alone | MB/s | index / decompression | plain corpus indexed | MB/s | compressed / plain |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, f := range x.Formats {
		if f.Skipped != "" {
			p("| %s | _skipped: %s_ | | | | | | | | |\n", f.Kind, f.Skipped)
			continue
		}
		p("| %s (`%s`) | %.1f MB (%.1f%%) | %s | %.0f | %s | %.0f | %.2f | %s | %.0f | %.2f |\n", f.Kind, f.Tool, float64(f.CompressedBytes)/1e6,
			100*float64(f.CompressedBytes)/float64(max(f.RawBytes, 1)), cell(f.IndexWall), f.IndexMBps, cell(f.DecompWall), f.DecompMBps, f.Ratio,
			cell(f.PlainWall), f.PlainMBps, f.RatioPlain)
	}
	p("\n`logdex index -q --index FRESH_DIR DIR` (whole process) against `compressed.Indexer` read to the end for every file in this process, "+
		"%d goroutines (one per CPU) over the files, and the same corpus uncompressed indexed the same way, interleaved run by run. Goal: index / decompression ≥ 0.8.\n\n", runtime.NumCPU())
	p("Selective searches over the compressed files:\n\n| format | query | hits | logdex CLI -c | rg -z -c | zgrep -c | vs rg -z | vs zgrep |\n|---|---|--:|--:|--:|--:|--:|--:|\n")
	for _, f := range x.Formats {
		for _, q := range f.Queries {
			hits := fmt.Sprint(q.Hits)
			if q.Mismatch != "" {
				hits += " **MISMATCH** " + q.Mismatch
			}
			p("| %s | %s `%s` | %s | %s | %s | %s (%s) | %s | %s |\n", f.Kind, q.Kind, mdCode(q.Text), hits, cell(q.Times[engCLI]),
				cell(q.Times["rg -z"]), cell(q.Times[q.Zgrep]), q.Zgrep, ratio(q.RatioRg), ratio(q.RatioZgrep))
		}
	}
	p("\nlogdex: `logdex search --no-update --index INDEX -c ARGS`; rg: `rg -z -c RG_ARGS DIR`; zgrep: `LC_ALL=C zgrep -c GREP_ARGS FILES...` " +
		"(`zstdgrep` for zstd); ARGS as in the query table (word: `-i -w`, literal: `-F`). Hits checked equal across all three. Goal ≥ 20×.\n\n")
	p("One line near the end (99%%) of the largest file; checkpoint interval %d KiB (`compressed.DefaultInterval`):\n\n", x.Interval>>10)
	p("| format | file | decompressed | checkpoints | read the line (fresh Reader) | decompress from the start | one interval of decompression | read / one interval | logdex search -F LINE -c |\n|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, f := range x.Formats {
		if rr := f.Random; rr != nil {
			p("| %s | %s | %.1f MB | %d | %s | %s | %s | %.2f | %s |\n", f.Kind, rr.File, float64(rr.Size)/1e6, rr.Checkpoints,
				inprocCell(rr.ReadAt), cell(rr.FromStart), dur(rr.OneInterval), rr.OverInterval, cell(rr.CLI))
		}
	}
	p("\nRead = `compressed.NewReader(...).ReadAt` of the line, a new Reader each time (so it restarts at a checkpoint); " +
		"from the start = `compressed.Indexer` read up to the line's end; one interval = that time × interval / offset. " +
		"Goal: read ≤ one interval. A zstd file written by `zstd` is one frame with one checkpoint: it is read, as the index reads it, " +
		"through its seekable copy (`compressed.ShadowReader`, a frame per interval, made here as the indexer makes it)")
	for _, f := range x.Formats {
		if rr := f.Random; rr != nil && rr.ViaCopy {
			p(" (%s: yes)", f.Kind)
		}
	}
	p(".\n\n")
}
