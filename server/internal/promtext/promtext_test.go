package promtext

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The Prometheus Go client is the reference: these tests only link it.

// clientText is the exposition the Prometheus client writes for reg.
func clientText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, f := range fams {
		if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

func ourText(t *testing.T, reg *Registry) string {
	t.Helper()
	var b bytes.Buffer
	if err := reg.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSameTextAsPrometheusClient registers the same metrics in both and
// feeds them the same values: the texts must be byte-identical.
func TestSameTextAsPrometheusClient(t *testing.T) {
	bounds := []float64{.0005, .001, .0025, .005, .01, 1, 2.5, 60}
	weird := "a\"b\\c\nd" // every character the format escapes
	tests := []struct {
		name string
		do   func(p *prometheus.Registry, o *Registry)
	}{
		{"counter", func(p *prometheus.Registry, o *Registry) {
			pc := prometheus.NewCounter(prometheus.CounterOpts{Name: "x_total", Help: "Help with \\ and\nnewline."})
			p.MustRegister(pc)
			oc := o.Counter("x_total", "Help with \\ and\nnewline.")
			for _, n := range []uint64{1, 41, 1444917, 1 << 53} {
				pc.Add(float64(n))
				oc.Add(n)
			}
		}},
		{"counter at zero", func(p *prometheus.Registry, o *Registry) {
			p.MustRegister(prometheus.NewCounter(prometheus.CounterOpts{Name: "z_total", Help: "h"}))
			o.Counter("z_total", "h")
		}},
		{"counter vec, labels sorted by name", func(p *prometheus.Registry, o *Registry) {
			pv := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "req_total", Help: "h"}, []string{"route", "method", "code"})
			p.MustRegister(pv)
			ov := o.CounterVec("req_total", "h", "route", "method", "code")
			for _, l := range [][]string{{"/b", "GET", "200"}, {"/a", "HEAD", "200"}, {"/a", "GET", "404"}, {weird, "GET", "200"}, {"/b", "GET", "200"}, {"", "", ""}} {
				pv.WithLabelValues(l...).Inc()
				ov.With(l...).Inc()
			}
		}},
		{"counter vec without children", func(p *prometheus.Registry, o *Registry) {
			p.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{Name: "none_total", Help: "h"}, []string{"result"}))
			o.CounterVec("none_total", "h", "result")
		}},
		{"histogram vec", func(p *prometheus.Registry, o *Registry) {
			ph := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "d_seconds", Help: "h", Buckets: bounds}, []string{"route"})
			p.MustRegister(ph)
			oh := o.HistogramVec("d_seconds", "h", bounds, "route")
			for i, v := range []float64{0, .0005, .00051, .001, 1, 2.5, 3, 60, 61, 1e9, .3, 7e-5} {
				route := []string{"/x", "unmatched", weird}[i%3]
				ph.WithLabelValues(route).Observe(v)
				oh.With(route).Observe(v)
			}
		}},
		{"gauges, families sorted by name", func(p *prometheus.Registry, o *Registry) {
			for _, g := range []struct {
				name string
				v    float64
			}{{"b_bytes", 180392}, {"a_bytes", 1.8446744073709552e19}, {"c", -1}, {"d", 0.1}, {"e", math.Inf(1)}, {"f", math.NaN()}, {"g", 1e-7}} {
				v := g.v
				p.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: g.name, Help: "help of " + g.name}, func() float64 { return v }))
				o.GaugeFunc(g.name, "help of "+g.name, func() float64 { return v })
			}
		}},
		{"collector with labels", func(p *prometheus.Registry, o *Registry) {
			desc := prometheus.NewDesc("w_state", "1 for the state.", []string{"mode", "state"}, nil)
			p.MustRegister(constCollector{desc, []prometheus.Metric{
				prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 1, "staged", "done"),
				prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, 0, "eager", "running"),
			}})
			o.Collector(func() []Family {
				return []Family{{Name: "w_state", Help: "1 for the state.", Type: Gauge, Labels: []string{"mode", "state"},
					Metrics: []Metric{{LabelValues: []string{"staged", "done"}, Value: 1}, {LabelValues: []string{"eager", "running"}}}}}
			})
		}},
		{"summary", func(p *prometheus.Registry, o *Registry) {
			desc := prometheus.NewDesc("s_seconds", "A summary.", nil, nil)
			p.MustRegister(constCollector{desc, []prometheus.Metric{
				prometheus.MustNewConstSummary(desc, 7, 0.25, map[float64]float64{0: 0.001, 0.25: 0.002, 0.5: 0.003, 0.75: 0.004, 1: 0.1}),
			}})
			o.Collector(func() []Family {
				return []Family{{Name: "s_seconds", Help: "A summary.", Type: Summary, Metrics: []Metric{{
					Quantiles: []float64{0, 0.25, 0.5, 0.75, 1}, Values: []float64{0.001, 0.002, 0.003, 0.004, 0.1}, Sum: 0.25, Count: 7}}}}
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, o := prometheus.NewRegistry(), &Registry{}
			tc.do(p, o)
			want, got := clientText(t, p), ourText(t, o)
			if got != want {
				t.Errorf("text differs\n--- Prometheus client:\n%s--- promtext:\n%s", want, got)
			}
		})
	}
}

type constCollector struct {
	desc    *prometheus.Desc
	metrics []prometheus.Metric
}

func (c constCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c.metrics {
		ch <- m
	}
}

// TestGoAndProcessLikePrometheusClient compares the go_* and process_*
// families with the client's default collectors: the same families, types,
// HELP text and labels; values that cannot move between the two reads
// must be equal.
func TestGoAndProcessLikePrometheusClient(t *testing.T) {
	p := prometheus.NewRegistry()
	p.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	o := &Registry{}
	o.Collector(GoMetrics)
	o.Collector(ProcessMetrics)
	want, got := parse(t, clientText(t, p)), parse(t, ourText(t, o))
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s: missing", name)
			continue
		}
		if g.GetHelp() != w.GetHelp() || g.GetType() != w.GetType() || len(g.Metric) != len(w.Metric) {
			t.Errorf("%s: help %q type %v, %d metrics; want %q %v %d", name, g.GetHelp(), g.GetType(), len(g.Metric), w.GetHelp(), w.GetType(), len(w.Metric))
			continue
		}
		for i := range w.Metric {
			if gl, wl := g.Metric[i].String(), w.Metric[i].String(); labelsOf(gl) != labelsOf(wl) {
				t.Errorf("%s: labels %s, want %s", name, gl, wl)
			}
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: not exported by the Prometheus client", name)
		}
	}
	stable := []string{"go_gc_gogc_percent", "go_gc_gomemlimit_bytes", "go_info", "go_sched_gomaxprocs_threads",
		"process_max_fds", "process_virtual_memory_max_bytes", "process_start_time_seconds"}
	for _, name := range stable {
		if w, g := want[name].GetMetric()[0].GetGauge().GetValue(), got[name].GetMetric()[0].GetGauge().GetValue(); w != g {
			t.Errorf("%s = %v, want %v", name, g, w)
		}
	}
}

// labelsOf keeps the label part of a metric's text form.
func labelsOf(s string) string {
	if i := strings.Index(s, "gauge:"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "counter:"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, "summary:"); i >= 0 {
		s = s[:i]
	}
	return s
}

func parse(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return fams
}

func TestParseStat(t *testing.T) {
	fields := func(comm string) string {
		// fields 3..24: state, then 21 numbers; utime 14, stime 15,
		// starttime 22, vsize 23, rss 24.
		return "4242 (" + comm + ") S 1 2 3 4 5 6 7 8 9 10 1400 1500 16 17 18 19 20 21 2200 2300 2400 25 26"
	}
	want := selfStat{utime: 1400, stime: 1500, starttime: 2200, vsize: 2300, rss: 2400}
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"plain", fields("logdex"), true},
		{"spaces and parentheses in the name", fields("a) b (c)) x"), true},
		{"empty name", fields(""), true},
		{"no parenthesis", "4242 logdex S 1 2", false},
		{"truncated", "4242 (logdex) S 1 2 3", false},
		{"not a number", strings.Replace(fields("l"), "1400", "x", 1), false},
		{"empty", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseStat([]byte(tc.in))
			if ok != tc.ok || ok && got != want {
				t.Errorf("parseStat = %+v, %v; want %+v, %v", got, ok, want, tc.ok)
			}
		})
	}
}

func TestParseNetstat(t *testing.T) {
	tests := []struct {
		name, in string
		in8, out float64
		ok       bool
	}{
		{"linux", "TcpExt: A B\nTcpExt: 1 2\nIpExt: InNoRoutes InOctets OutOctets\nIpExt: 0 66200044581 65749353686\n", 66200044581, 65749353686, true},
		{"no octets", "IpExt: InNoRoutes\nIpExt: 3\n", 0, 0, true},
		{"more values than names", "IpExt: InOctets\nIpExt: 5 6 7\n", 5, 0, true},
		{"names only", "IpExt: InOctets OutOctets\n", 0, 0, false},
		{"bad value", "IpExt: InOctets\nIpExt: x\n", 0, 0, false},
		{"empty", "", 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, out, ok := parseNetstat([]byte(tc.in))
			if in != tc.in8 || out != tc.out || ok != tc.ok {
				t.Errorf("parseNetstat = %v, %v, %v; want %v, %v, %v", in, out, ok, tc.in8, tc.out, tc.ok)
			}
		})
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (a) b) S 1 2 3 4 5 6 7 8 9 10 1400 1500 16 17 18 19 20 21 2200 2300 2400 25"))
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { parseStat(b) })
}

func FuzzParseNetstat(f *testing.F) {
	f.Add([]byte("IpExt: InOctets OutOctets\nIpExt: 1 2\n"))
	if b, err := os.ReadFile("/proc/self/net/netstat"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { parseNetstat(b) })
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		header string
		want   bool
	}{
		{"", false},
		{"gzip", true},
		{"identity, gzip;q=0.5", true},
		{"gzip; q=0", false},
		{"gzip;q=0.0", false},
		{"x-gzip", false},
		{"br, deflate", false},
	}
	for _, tc := range tests {
		if got := acceptsGzip(tc.header); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestServeHTTP(t *testing.T) {
	o := &Registry{}
	o.Counter("x_total", "h").Inc()
	for _, gz := range []bool{false, true} {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		rec := httptest.NewRecorder()
		o.ServeHTTP(rec, req)
		if ct := rec.Header().Get("Content-Type"); ct != ContentType {
			t.Errorf("Content-Type %q", ct)
		}
		body := io.Reader(rec.Body)
		if gz {
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		if want := "# HELP x_total h\n# TYPE x_total counter\nx_total 1\n"; string(b) != want {
			t.Errorf("gzip %v: body %q, want %q", gz, b, want)
		}
	}
}

// TestConcurrentUse updates and scrapes at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	o := &Registry{}
	c := o.CounterVec("c_total", "h", "k")
	h := o.HistogramVec("h_seconds", "h", []float64{1, 2}, "k")
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				k := string(rune('a' + i%3))
				c.With(k).Inc()
				h.With(k).Observe(float64(i % 3))
				if i%100 == 0 {
					o.WriteText(io.Discard)
				}
			}
		}()
	}
	wg.Wait()
	text := ourText(t, o)
	fams := parse(t, text)
	var sum float64
	for _, m := range fams["c_total"].Metric {
		sum += m.GetCounter().GetValue()
	}
	if sum != 2000 {
		t.Errorf("counted %v, want 2000", sum)
	}
	for _, m := range fams["h_seconds"].Metric {
		if hc := m.GetHistogram(); hc.GetSampleCount() < hc.GetBucket()[len(hc.GetBucket())-1].GetCumulativeCount() {
			t.Errorf("inconsistent histogram: %v", m)
		}
	}
}

// TestGCPercentLikeRuntime checks gcPercent against runtime/metrics'
// /gc/gogc:percent, in a child process per GOGC value.
func TestGCPercentLikeRuntime(t *testing.T) {
	if v, ok := os.LookupEnv("PROMTEXT_GOGC_CHILD"); ok {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		if got, want := gcPercent(), int(s[0].Value.Uint64()); got != want {
			t.Fatalf("GOGC=%q: gcPercent %d, runtime %d", v, got, want)
		}
		return
	}
	values := []string{"off", "-5"} // a child costs ~1 s under -race
	if os.Getenv("LOGDEX_LONG") != "" {
		values = append(values, "", "100", "50", "0", "x", "2147483648")
	}
	for _, v := range values {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestGCPercentLikeRuntime$")
			cmd.Env = append(os.Environ(), "GOGC="+v, "PROMTEXT_GOGC_CHILD="+v)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("GOGC=%q: %v\n%s", v, err, out)
			}
		})
	}
}
