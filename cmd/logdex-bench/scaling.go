package main

import (
	"fmt"

	"github.com/logdex/logdex/fixtures/loggen"
)

// ScaleRow is the selective query at one corpus size.
type ScaleRow struct {
	MB          int64            `json:"mb"`
	Bytes       int64            `json:"bytes"`
	Hits        int64            `json:"hits"`
	Times       map[string]*Dist `json:"times"`
	RatioCLI    float64          `json:"rg_over_cli"`
	RatioInProc float64          `json:"rg_over_inproc"`
	Mismatch    string           `json:"mismatch,omitempty"`
}

// ScalingResult is the scaling section.
type ScalingResult struct {
	Query   string      `json:"query"`
	Runs    int         `json:"runs"`
	Skipped string      `json:"skipped,omitempty"`
	Rows    []*ScaleRow `json:"rows,omitempty"`
}

// scaling runs the selective term at several corpus sizes, all sizes
// interleaved in the same rounds.
func (b *bench) scaling() error {
	d := term("selective term", "mallory")
	res := &ScalingResult{Query: d.Text, Runs: b.cfg.runs}
	b.rep.Scaling = res
	if !b.haveTool("rg") {
		res.Skipped = "rg is not installed"
		b.logf("scaling skipped: %s", res.Skipped)
		return nil
	}
	var all []*engine
	type sized struct {
		c   *corpus
		es  []*engine
		row *ScaleRow
	}
	var ss []sized
	for _, mb := range b.cfg.scaleMB {
		c, err := b.generated(loggen.ProfileLoggen, mb)
		if err != nil {
			return err
		}
		ix, why := b.readyIndex(c, b.indexCachePath(c), true)
		if why != "" {
			res.Skipped = why
			b.logf("scaling skipped: %s", why)
			return nil
		}
		s, closeS, err := openSearcher(ix)
		if err != nil {
			return err
		}
		defer closeS()
		warm(c.Dir, ix)
		in, err := b.inprocEngine(s, c, d)
		if err != nil {
			return err
		}
		es := []*engine{b.cliEngine(ix, c, d), in, b.rgEngine(c, d)}
		all = append(all, es...)
		ss = append(ss, sized{c, es, &ScaleRow{MB: mb, Bytes: c.Bytes, Times: map[string]*Dist{}}})
	}
	b.logf("scaling: %s at %v MiB", d.Text, b.cfg.scaleMB)
	if err := b.interleave(all, b.cfg.runs); err != nil {
		return err
	}
	for _, s := range ss {
		r := s.row
		for _, e := range s.es {
			r.Times[e.name] = distOf(e.samples, e.name != "logdex in-process")
		}
		r.Hits = s.es[0].first
		rg := r.Times["rg"].Median
		r.RatioCLI, r.RatioInProc = rg/r.Times["logdex CLI -c"].Median, rg/r.Times["logdex in-process"].Median
		if r.Mismatch = checkCounts(s.es, -1, ""); r.Mismatch != "" {
			b.rep.Mismatches = append(b.rep.Mismatches, fmt.Sprintf("scaling %d MiB: %s", r.MB, r.Mismatch))
		}
		res.Rows = append(res.Rows, r)
	}
	return nil
}
