package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/logdex/logdex/query"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics live in the server's own registry: two servers in one process
// (tests) never collide, and nothing global is touched.
type metrics struct {
	reg           *prometheus.Registry
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	searchLatency *prometheus.HistogramVec
	candidates    prometheus.Counter
	verified      prometheus.Counter
	sendfileBytes prometheus.Counter
	sendfileCalls prometheus.Counter
	rejected      prometheus.Counter
	cacheHits     prometheus.Counter
	reindexRuns   *prometheus.CounterVec
}

func newMetrics(s *Server) *metrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	m := &metrics{reg: reg}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "logdex_http_requests_total", Help: "HTTP requests by route pattern, method and status code.",
	}, []string{"route", "method", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "logdex_http_request_duration_seconds", Help: "Time to serve a request, by route pattern (whole body sent).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	}, []string{"route"})
	m.searchLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "logdex_search_duration_seconds", Help: "Time to run a search (not served from cache), by endpoint.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"endpoint"})
	m.candidates = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "logdex_search_candidate_lines_total", Help: "Lines the index proposed as candidates.",
	})
	m.verified = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "logdex_search_verified_lines_total", Help: "Candidate lines read and checked (the rest were exact index answers).",
	})
	m.sendfileBytes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "logdex_sendfile_bytes_total", Help: "Bytes sent from log files through ReadFrom (sendfile).",
	})
	m.sendfileCalls = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "logdex_sendfile_calls_total", Help: "ReadFrom calls handed a file (each one or more sendfile syscalls).",
	})
	m.rejected = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "logdex_search_rejected_total", Help: "Searches refused with 503 because all slots were busy.",
	})
	m.cacheHits = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "logdex_search_cache_hits_total", Help: "/api/search answers served from the response cache.",
	})
	m.reindexRuns = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "logdex_reindex_runs_total", Help: "Re-index runs by result (updated, unchanged, error).",
	}, []string{"result"})
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.searchLatency, m.candidates, m.verified,
		m.sendfileBytes, m.sendfileCalls, m.rejected, m.cacheHits, m.reindexRuns} {
		f(c)
	}
	ixGauge := func(name, help string, v func(*snapshot) float64) {
		f(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
			sn := s.acquire()
			if sn == nil {
				return 0
			}
			defer sn.unref()
			return v(sn)
		}))
	}
	ixGauge("logdex_index_bytes", "Size of the index segments served.", func(sn *snapshot) float64 { return float64(sn.ix.Stats().IndexBytes) })
	ixGauge("logdex_index_raw_bytes", "Log bytes covered by the index served.", func(sn *snapshot) float64 { return float64(sn.ix.Stats().RawBytes) })
	ixGauge("logdex_index_files", "Files in the index served.", func(sn *snapshot) float64 { return float64(len(sn.ix.Files())) })
	ixGauge("logdex_index_resident_bytes", "Bytes of the index segments in the page cache (mincore).", func(sn *snapshot) float64 { return float64(resident(sn)) })
	ixGauge("logdex_index_damaged_segments", "Index segments found damaged (at open or when read); their lines are read from the log files until a re-index rebuilds them.", func(sn *snapshot) float64 { return float64(len(sn.ix.Damaged())) })
	f(&warmupCollector{s: s})
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func (m *metrics) observeRequest(route, method string, code int, d time.Duration) {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions:
	default:
		method = "other" // bounded label values, whatever clients send
	}
	m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

func (m *metrics) observeSearch(endpoint string, st *query.Stats, d time.Duration) {
	m.searchLatency.WithLabelValues(endpoint).Observe(d.Seconds())
	if st != nil {
		m.candidates.Add(float64(st.Candidates))
		m.verified.Add(float64(st.Verified))
	}
}

// warmupCollector reports the warm-up of the snapshot served, per segment
// file and in total, measured (mincore) at scrape time.
type warmupCollector struct{ s *Server }

var (
	warmMappedDesc   = prometheus.NewDesc("logdex_warmup_mapped_bytes", "Bytes mapped per index segment file.", []string{"file"}, nil)
	warmResidentDesc = prometheus.NewDesc("logdex_warmup_resident_bytes", "Bytes resident per index segment file (mincore).", []string{"file"}, nil)
	warmStateDesc    = prometheus.NewDesc("logdex_warmup_state", "1 for the warm-up's current state.", []string{"mode", "state"}, nil)
	warmRateDesc     = prometheus.NewDesc("logdex_warmup_read_rate_bytes_per_second", "Bytes read from disk by the warm-up per second of its run.", nil, nil)
	warmWarmedDesc   = prometheus.NewDesc("logdex_warmup_warmed_bytes", "Bytes the warm-up has made resident or found resident.", nil, nil)
)

func (c *warmupCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{warmMappedDesc, warmResidentDesc, warmStateDesc, warmRateDesc, warmWarmedDesc} {
		ch <- d
	}
}

func (c *warmupCollector) Collect(ch chan<- prometheus.Metric) {
	sn := c.s.acquire()
	if sn == nil {
		return
	}
	defer sn.unref()
	if sn.warmer == nil {
		return
	}
	st := sn.warmer.Status()
	for _, f := range st.Files {
		ch <- prometheus.MustNewConstMetric(warmMappedDesc, prometheus.GaugeValue, float64(f.Mapped), f.Name)
		ch <- prometheus.MustNewConstMetric(warmResidentDesc, prometheus.GaugeValue, float64(f.Resident), f.Name)
	}
	ch <- prometheus.MustNewConstMetric(warmStateDesc, prometheus.GaugeValue, 1, st.Mode, st.State)
	ch <- prometheus.MustNewConstMetric(warmRateDesc, prometheus.GaugeValue, st.RateMBps*1e6)
	ch <- prometheus.MustNewConstMetric(warmWarmedDesc, prometheus.GaugeValue, float64(st.Warmed))
}
