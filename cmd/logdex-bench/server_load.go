package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Load generation against a running server (wrk, or a Go client when wrk
// is missing) and file transfers through it.

func get(u string) (int, error) {
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(u)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

func (b *bench) wrk(u string, conns int, dur time.Duration) (qps, p50, p99 float64, errs int, err error) {
	threads := min(conns, b.rep.Machine.Cores)
	r, err := runProc(b.ctx, nil, nil, 0, "wrk", "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns),
		"-d", fmt.Sprintf("%ds", max(1, int(math.Ceil(dur.Seconds())))), "--latency", u)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	out := string(r.Stdout)
	if m := wrkRPS.FindStringSubmatch(out); m != nil {
		qps, _ = strconv.ParseFloat(m[1], 64)
	} else {
		return 0, 0, 0, 0, fmt.Errorf("cannot read wrk output: %s", out)
	}
	unit := map[string]float64{"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}
	for _, m := range wrkPct.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		if m[1] == "50" {
			p50 = v * unit[m[3]]
		} else {
			p99 = v * unit[m[3]]
		}
	}
	if m := wrkNon2xx.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		errs += n
	}
	if m := wrkSockErr.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.Atoi(s)
			errs += n
		}
	}
	return qps, p50, p99, errs, nil
}

// goLoad keeps conns requests in flight for dur against u (loopback only:
// the URL is always the session's own server).
func goLoad(ctx context.Context, u string, conns int, dur time.Duration) (qps, p50, p99 float64, errs int) {
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(ctx, dur)
	defer cancel()
	var mu sync.Mutex
	var lats []float64
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []float64
			bad := 0
			for ctx.Err() == nil {
				t := time.Now()
				req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
				resp, err := cl.Do(req)
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if ctx.Err() != nil {
					break
				}
				if err != nil || resp.StatusCode != http.StatusOK {
					bad++
					continue
				}
				mine = append(mine, time.Since(t).Seconds())
			}
			mu.Lock()
			lats = append(lats, mine...)
			errs += bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(t0).Seconds()
	sort.Float64s(lats)
	return float64(len(lats)) / el, quantile(lats, 0.5), quantile(lats, 0.99), errs
}

// serverTransfer compares downloading the largest file from logdex's
// content endpoint with two reference servers in this process on the same
// file: http.ServeContent (sendfile) and a 32 KiB read/write copy loop.
func (b *bench) serverTransfer(res *ServerResult, s *served, c *corpus) error {
	path, size := largestFile(c)
	id, err := fileID(s.url("/api/files"), relPath(path, c.Dir), size)
	if err != nil {
		res.Notes = append(res.Notes, fmt.Sprintf("transfer not measured: %v", err))
		return nil
	}
	ref, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/sendfile", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			http.Error(w, "open", 500)
			return
		}
		defer f.Close()
		http.ServeContent(w, r, "", time.Time{}, f)
	})
	mux.HandleFunc("/copy", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(path)
		if err != nil {
			http.Error(w, "open", 500)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		buf := make([]byte, 32<<10)
		io.CopyBuffer(struct{ io.Writer }{w}, struct{ io.Reader }{f}, buf) // no ReadFrom: a plain loop
	})
	hs := &http.Server{Handler: mux}
	go hs.Serve(ref)
	defer hs.Close()
	refURL := "http://" + ref.Addr().String()
	targets := []struct{ name, url string }{
		{"logdex /api/files/{id}/content", s.url("/api/files/" + url.PathEscape(id) + "/content")},
		{"reference: http.ServeContent (sendfile)", refURL + "/sendfile"},
		{"reference: 32 KiB read/write loop", refURL + "/copy"},
	}
	var es []*engine
	got := make([]int64, len(targets))
	for i, t := range targets {
		es = append(es, &engine{name: t.name, run: func(bool) ([]time.Duration, int64, map[string]int64, error) {
			t0 := time.Now()
			n, err := download(b.ctx, t.url)
			got[i] = n
			return []time.Duration{time.Since(t0)}, -1, nil, err
		}})
	}
	if err := b.interleave(es, b.cfg.runs); err != nil {
		return err
	}
	for i, e := range es {
		if got[i] != size {
			res.Notes = append(res.Notes, fmt.Sprintf("%s sent %d bytes, the file has %d", e.name, got[i], size))
		}
		d := distOf(e.samples, true)
		mbps := func(s float64) float64 { return float64(got[i]) / s / 1e6 }
		res.Transfer = append(res.Transfer, TransferRow{Name: e.name, Bytes: got[i], MBps: mbps(d.Median), MBpsLo: mbps(d.Max), MBpsHi: mbps(d.Min)})
	}
	res.Notes = append(res.Notes, fmt.Sprintf("transfer: %s (%.1f MB) downloaded over loopback by a Go client in this process, which shares the %d cores", relPath(path, c.Dir), float64(size)/1e6, b.rep.Machine.Cores))
	return nil
}

func largestFile(c *corpus) (string, int64) {
	best, size := "", int64(-1)
	for _, p := range c.paths {
		if fi, err := os.Stat(p); err == nil && fi.Size() > size {
			best, size = p, fi.Size()
		}
	}
	return best, size
}

type noReadFrom struct{ io.Writer }

func download(ctx context.Context, u string) (int64, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return io.CopyBuffer(noReadFrom{io.Discard}, resp.Body, make([]byte, 256<<10))
}

// fileID finds the id of the file rel (or else the largest) in the
// /api/files answer, whatever its exact shape: any JSON object with an "id"
// field counts; "path"/"name" and "size" help choose.
func fileID(u, rel string, size int64) (string, error) {
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /api/files: %s", resp.Status)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // ids may be 64-bit
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", fmt.Errorf("GET /api/files: %w", err)
	}
	type cand struct {
		id   string
		size int64
		path string
	}
	var cs []cand
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if id, ok := x["id"]; ok {
				c := cand{id: fmt.Sprint(id)}
				for _, k := range []string{"size", "bytes", "Size"} {
					if n, ok := x[k].(json.Number); ok {
						c.size, _ = n.Int64()
					}
				}
				for _, k := range []string{"path", "name", "Path"} {
					if p, ok := x[k].(string); ok {
						c.path = p
					}
				}
				cs = append(cs, c)
				return
			}
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	if len(cs) == 0 {
		return "", errors.New("GET /api/files: no object with an \"id\" in the answer")
	}
	for _, c := range cs {
		if c.path != "" && (filepath.ToSlash(c.path) == rel || strings.HasSuffix(filepath.ToSlash(c.path), "/"+rel)) {
			return c.id, nil
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].size > cs[j].size })
	return cs[0].id, nil
}
