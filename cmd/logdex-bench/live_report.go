package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// liveStatus is the part of /api/status the live section samples.
type liveStatus struct {
	Index struct {
		Segments int
		Lines    int64
	}
	Reindex struct{ Runs int64 }
}

func fetchStatus(s *served) liveStatus {
	var st liveStatus
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(s.url("/api/status"))
	if err != nil {
		return st
	}
	defer resp.Body.Close()
	json.NewDecoder(resp.Body).Decode(&st)
	return st
}

func statusSegments(s *served) int { return fetchStatus(s).Index.Segments }
func statusLines(s *served) int64  { return fetchStatus(s).Index.Lines }
func statusRuns(s *served) int64   { return fetchStatus(s).Reindex.Runs }

// procRSS is a process's resident set (VmRSS), 0 if unknown.
func procRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// procCPU is a process's user+system CPU seconds (utime+stime, at the
// USER_HZ of 100 ticks a second Linux exports).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may hold spaces.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

func distSorted(ds []time.Duration) []float64 {
	s := make([]float64, len(ds))
	for i, d := range ds {
		s[i] = d.Seconds()
	}
	slices.Sort(s)
	return s
}

func (r *Report) mdLive(p printf) {
	l := r.Live
	if l == nil {
		return
	}
	p("### Live indexing under load\n\n")
	if l.Skipped != "" {
		p("Skipped: %s\n\n", l.Skipped)
		return
	}
	p("`logdex serve %s` (otherwise default: --live-delay 250ms) over %d files receiving %.2f MB/s (target %.1f) of highcard lines (from a %d MiB corpus) for %.0f s, "+
		"%s lines, %.0f MB, while %.0f searches/s run (open-loop, in turn: %s). Index lag: from a probe line's write(2) to its arrival on `/api/tail` "+
		"(which streams the lines a re-index adds), %d probes (%d seen).\n\n",
		strings.Join(l.Serve, " "), l.Files, l.MBps, l.TargetMBps, l.poolMB, l.Seconds, humanCount(l.Lines), float64(l.Bytes)/1e6, l.QPS,
		mdCode(strings.Join(quoted(l.Queries), ", ")), l.Probes, l.ProbesSeen)
	p("The machine's 1-minute load average was %.1f at the start and %.1f at the end (other work on it takes CPU from the server).\n\n", l.LoadAvg[0], l.LoadAvg[1])
	p("| measure | value |\n|---|---|\n")
	if l.Lag != nil {
		p("| index lag p50 / p99 / max | %s / %s / %s |\n", dur(l.Lag.Median), dur(l.LagP99), dur(l.Lag.Max))
	}
	p("| catch-up after the last write | %s |\n", dur(l.CatchUp))
	p("| re-index runs (load + catch-up) | %d |\n", l.Reindexes)
	if l.Loaded != nil && l.Static != nil {
		p("| search p50 during load / static (ratio) | %s / %s (%s) |\n", dur(l.Loaded.P50), dur(l.Static.P50), ratioOf(l.Loaded.P50, l.Static.P50))
		p("| search p99 during load / static (ratio) | %s / %s (%s) |\n", dur(l.Loaded.P99), dur(l.Static.P99), ratioOf(l.Loaded.P99, l.Static.P99))
		p("| searches (errors) during load / static | %d (%d%s) / %d (%d) |\n", l.Loaded.N, l.Loaded.Errors, failedOf(l.Loaded), l.Static.N, l.Static.Errors)
	}
	if l.ServerLoaded != nil && l.ServerStatic != nil {
		p("| inside the server (access log): search p50 during load / static (ratio) | %s / %s (%s) |\n", dur(l.ServerLoaded.P50), dur(l.ServerStatic.P50), ratioOf(l.ServerLoaded.P50, l.ServerStatic.P50))
		p("| inside the server (access log): search p99 during load / static (ratio) | %s / %s (%s) |\n", dur(l.ServerLoaded.P99), dur(l.ServerStatic.P99), ratioOf(l.ServerLoaded.P99, l.ServerStatic.P99))
	}
	segMin, segMax, rssMax := -1, 0, int64(0)
	var loadSegs []string
	for _, s := range l.Samples {
		if s.Phase == "load" {
			if segMin < 0 || s.Segments < segMin {
				segMin = s.Segments
			}
			segMax = max(segMax, s.Segments)
			loadSegs = append(loadSegs, strconv.Itoa(s.Segments))
		}
		rssMax = max(rssMax, s.RSS)
	}
	if n := len(l.Samples); n > 0 {
		first, last := l.Samples[0], l.Samples[n-1]
		p("| segments during load min / max; at the end | %d / %d; %d |\n", segMin, segMax, last.Segments)
		p("| serve RSS start / max / end | %s / %s / %s |\n", mbOf(first.RSS), mbOf(rssMax), mbOf(last.RSS))
	}
	if l.Bytes > 0 {
		mb := float64(l.Bytes) / 1e6
		if l.Loaded == nil {
			p("| serve CPU per MB appended (indexing, merging, tail) | %.3f s |\n", l.CPULoad/mb)
		} else {
			p("| serve CPU per MB appended (indexing and the searches, which also scan the unindexed tail) | %.3f s |\n", l.CPULoad/mb)
		}
	}
	p("\nSegments each second of the load: %s.\n\n", strings.Join(loadSegs, " "))
	if len(l.SlowRuns) > 0 {
		slowest := l.SlowRuns[0]
		for _, r := range l.SlowRuns {
			if r.MS > slowest.MS {
				slowest = r
			}
		}
		p("%d re-index runs took 1 s or more; the slowest, %s: %s.\n\n", len(l.SlowRuns), dur(slowest.MS/1000), slowest.Summary)
	}
}

func quoted(qs []string) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = "`" + q + "`"
	}
	return out
}

func ratioOf(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func mbOf(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/1e6) }

func failedOf(st *SearchStats) string {
	var parts []string
	for k, n := range st.Failed {
		parts = append(parts, fmt.Sprintf("%d× %s", n, k))
	}
	slices.Sort(parts)
	if len(parts) == 0 {
		return ""
	}
	return ": " + strings.Join(parts, ", ")
}

// loadAvg is the 1-minute load average (0 if unknown).
func loadAvg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
