package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Machine describes where the benchmarks ran.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	MemBytes   int64  `json:"mem_bytes"`
	Kernel     string `json:"kernel"`
	Go         string `json:"go"`
	Ripgrep    string `json:"ripgrep"`
	Grep       string `json:"grep"`
	Wrk        string `json:"wrk"`
	Date       string `json:"date"`
	LogdexRev  string `json:"logdex_rev"`
	LogdexTree string `json:"logdex_tree"`  // "clean" or "uncommitted changes"
	Build      string `json:"logdex_build"` // how the binary measured was made
}

func describeMachine(modRoot string) Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), Date: time.Now().Format("2006-01-02 15:04 MST")}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				m.MemBytes = kb << 10
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	m.Ripgrep = toolVersion("rg", "--version")
	m.Grep = toolVersion("grep", "--version")
	m.Wrk = toolVersion("wrk", "-v")
	if modRoot != "" {
		if out, err := exec.Command("git", "-C", modRoot, "rev-parse", "--short", "HEAD").Output(); err == nil {
			m.LogdexRev = strings.TrimSpace(string(out))
		}
		if out, err := exec.Command("git", "-C", modRoot, "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
			m.LogdexTree = "clean"
			if len(bytes.TrimSpace(out)) > 0 {
				m.LogdexTree = "uncommitted changes"
			}
		}
	}
	return m
}

// toolVersion is the first line of a tool's version output, "" if absent.
func toolVersion(name string, arg string) string {
	if _, err := exec.LookPath(name); err != nil {
		return ""
	}
	out, _ := exec.Command(name, arg).CombinedOutput()
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// moduleRoot is the directory of the go.mod that the current directory
// belongs to ("" outside a module).
func moduleRoot() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return ""
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return ""
	}
	return filepath.Dir(mod)
}

// procResult is one finished child process.
type procResult struct {
	Wall      time.Duration
	User, Sys time.Duration
	MaxRSS    int64 // bytes (wait4 rusage)
	MinFlt    int64 // minor page faults (wait4 rusage)
	Exit      int
	Stdout    []byte // when captured
}

// runProc runs a child and times it from start to exit. stdout nil
// captures it in procResult.Stdout; a non-nil writer receives it. Exit
// statuses above maxOK are errors (grep, rg and logdex use 1 for "no match").
func runProc(ctx context.Context, env []string, stdout io.Writer, maxOK int, name string, args ...string) (procResult, error) {
	var res procResult
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var buf bytes.Buffer
	if stdout == nil {
		cmd.Stdout = &buf
	} else {
		cmd.Stdout = stdout
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	res.Wall = time.Since(t0)
	res.Stdout = buf.Bytes()
	if ps := cmd.ProcessState; ps != nil {
		res.Exit = ps.ExitCode()
		res.User, res.Sys = ps.UserTime(), ps.SystemTime()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			res.MaxRSS = ru.Maxrss << 10 // KiB on Linux
			res.MinFlt = ru.Minflt
		}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && res.Exit >= 0 && res.Exit <= maxOK {
		err = nil
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 600 {
			msg = msg[:600] + "..."
		}
		return res, fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, msg)
	}
	return res, nil
}

// sumCounts adds up grep -c style output ("path:N" or "N" per line) and
// returns the total and the per-file counts keyed by path relative to root.
func sumCounts(out []byte, root string) (int64, map[string]int64) {
	per := map[string]int64{}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		i := strings.LastIndexByte(l, ':')
		n, err := strconv.ParseInt(l[i+1:], 10, 64)
		if err != nil {
			continue
		}
		total += n
		if n > 0 {
			per[relPath(l[:max(i, 0)], root)] += n
		}
	}
	return total, per
}

// relPath makes p relative to root when it is beneath it.
func relPath(p, root string) string {
	p = filepath.Clean(p)
	if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// dirSize is the total size of the regular files beneath dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// Dist summarizes repeated timings, in seconds.
type Dist struct {
	Median float64   `json:"median_s"`
	Min    float64   `json:"min_s"`
	Max    float64   `json:"max_s"`
	P90    float64   `json:"p90_s"`
	N      int       `json:"n"`
	All    []float64 `json:"samples_s,omitempty"`
}

func distOf(ds []time.Duration, keep bool) *Dist {
	if len(ds) == 0 {
		return nil
	}
	s := make([]float64, len(ds))
	for i, d := range ds {
		s[i] = d.Seconds()
	}
	d := &Dist{N: len(s)}
	if keep {
		d.All = append([]float64(nil), s...)
	}
	sort.Float64s(s)
	d.Min, d.Max = s[0], s[len(s)-1]
	d.Median = quantile(s, 0.5)
	d.P90 = quantile(s, 0.9)
	return d
}

// quantile of sorted s, interpolating between neighbours.
func quantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return 0
	}
	pos := q * float64(len(s)-1)
	i := int(pos)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (pos-float64(i))*(s[i+1]-s[i])
}

func median(s []float64) float64 {
	c := append([]float64(nil), s...)
	sort.Float64s(c)
	return quantile(c, 0.5)
}
