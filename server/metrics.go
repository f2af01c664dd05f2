package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/server/internal/promtext"
)

// metrics live in the server's own registry: two servers in one process
// (tests) never collide, and nothing global is touched. The names, types
// and HELP text are those the server exported through the Prometheus Go
// client, go_* and process_* included (promtext says why it is gone).
type metrics struct {
	reg             promtext.Registry
	requests        *promtext.CounterVec
	latency         *promtext.HistogramVec
	searchLatency   *promtext.HistogramVec
	candidates      *promtext.CounterValue
	verified        *promtext.CounterValue
	sendfileBytes   *promtext.CounterValue
	sendfileCalls   *promtext.CounterValue
	rejected        *promtext.CounterValue
	streamsRejected *promtext.CounterValue
	cacheHits       *promtext.CounterValue
	reindexRuns     *promtext.CounterVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{}
	reg := &m.reg
	m.requests = reg.CounterVec("logdex_http_requests_total", "HTTP requests by route pattern, method and status code.",
		"route", "method", "code")
	m.latency = reg.HistogramVec("logdex_http_request_duration_seconds", "Time to serve a request, by route pattern (whole body sent).",
		[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}, "route")
	m.searchLatency = reg.HistogramVec("logdex_search_duration_seconds", "Time to run a search (not served from cache), by endpoint.",
		[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}, "endpoint")
	m.candidates = reg.Counter("logdex_search_candidate_lines_total", "Lines the index proposed as candidates.")
	m.verified = reg.Counter("logdex_search_verified_lines_total", "Candidate lines read and checked (the rest were exact index answers).")
	m.sendfileBytes = reg.Counter("logdex_sendfile_bytes_total", "Bytes sent from log files through ReadFrom (sendfile).")
	m.sendfileCalls = reg.Counter("logdex_sendfile_calls_total", "ReadFrom calls handed a file (each one or more sendfile syscalls).")
	m.rejected = reg.Counter("logdex_search_rejected_total", "Searches refused with 503 because all slots were busy.")
	m.streamsRejected = reg.Counter("logdex_stream_rejected_total", "Raw searches and downloads refused (503, or 429 for one client) because too many were streaming.")
	m.cacheHits = reg.Counter("logdex_search_cache_hits_total", "/api/search answers served from the response cache.")
	m.reindexRuns = reg.CounterVec("logdex_reindex_runs_total", "Re-index runs by result (updated, unchanged, error).", "result")
	ixGauge := func(name, help string, v func(*snapshot) float64) {
		reg.GaugeFunc(name, help, func() float64 {
			sn := s.acquire()
			if sn == nil {
				return 0
			}
			defer sn.unref()
			return v(sn)
		})
	}
	ixGauge("logdex_index_bytes", "Size of the index served: its segments and the seekable copies of compressed files.", func(sn *snapshot) float64 { return float64(sn.ix.Stats().IndexBytes) })
	ixGauge("logdex_index_raw_bytes", "Log bytes covered by the index served.", func(sn *snapshot) float64 { return float64(sn.ix.Stats().RawBytes) })
	ixGauge("logdex_index_files", "Files in the index served.", func(sn *snapshot) float64 { return float64(len(sn.ix.Files())) })
	ixGauge("logdex_index_resident_bytes", "Bytes of the index segments in the page cache (mincore).", func(sn *snapshot) float64 { return float64(resident(sn)) })
	ixGauge("logdex_index_damaged_segments", "Index segments found damaged (at open or when read); their lines are read from the log files until a re-index rebuilds them.", func(sn *snapshot) float64 { return float64(len(sn.ix.Damaged())) })
	reg.Collector(s.warmupMetrics)
	reg.Collector(func() []promtext.Family {
		b := s.build
		return []promtext.Family{{Name: "logdex_build_info", Help: "1, labelled with the build the server runs (as /api/status's build).", Type: promtext.Gauge,
			Labels:  []string{"version", "revision", "goversion"},
			Metrics: []promtext.Metric{{LabelValues: []string{b.Version, b.Revision, b.Go}, Value: 1}}}}
	})
	reg.Collector(promtext.GoMetrics)
	reg.Collector(promtext.ProcessMetrics)
	return m
}

func (m *metrics) handler() http.Handler { return &m.reg }

func (m *metrics) observeRequest(route, method string, code int, d time.Duration) {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions:
	default:
		method = "other" // bounded label values, whatever clients send
	}
	m.requests.With(route, method, strconv.Itoa(code)).Inc()
	m.latency.With(route).Observe(d.Seconds())
}

func (m *metrics) observeSearch(endpoint string, st *query.Stats, d time.Duration) {
	m.searchLatency.With(endpoint).Observe(d.Seconds())
	if st != nil {
		m.candidates.Add(uint64(st.Candidates))
		m.verified.Add(uint64(st.Verified))
	}
}

// warmupMetrics reports the warm-up of the snapshot served, per segment
// file and in total, measured (mincore) at scrape time.
func (s *Server) warmupMetrics() []promtext.Family {
	sn := s.acquire()
	if sn == nil {
		return nil
	}
	defer sn.unref()
	if sn.warmer == nil {
		return nil
	}
	st := sn.warmer.Status()
	mapped := promtext.Family{Name: "logdex_warmup_mapped_bytes", Help: "Bytes mapped per index segment file.", Type: promtext.Gauge, Labels: []string{"file"}}
	resident := promtext.Family{Name: "logdex_warmup_resident_bytes", Help: "Bytes resident per index segment file (mincore).", Type: promtext.Gauge, Labels: []string{"file"}}
	for _, f := range st.Files {
		mapped.Metrics = append(mapped.Metrics, promtext.Metric{LabelValues: []string{f.Name}, Value: float64(f.Mapped)})
		resident.Metrics = append(resident.Metrics, promtext.Metric{LabelValues: []string{f.Name}, Value: float64(f.Resident)})
	}
	return []promtext.Family{mapped, resident,
		{Name: "logdex_warmup_state", Help: "1 for the warm-up's current state.", Type: promtext.Gauge, Labels: []string{"mode", "state"},
			Metrics: []promtext.Metric{{LabelValues: []string{st.Mode, st.State}, Value: 1}}},
		{Name: "logdex_warmup_read_rate_bytes_per_second", Help: "Bytes read from disk by the warm-up per second of its run.", Type: promtext.Gauge,
			Metrics: []promtext.Metric{{Value: st.RateMBps * 1e6}}},
		{Name: "logdex_warmup_warmed_bytes", Help: "Bytes the warm-up has made resident or found resident.", Type: promtext.Gauge,
			Metrics: []promtext.Metric{{Value: float64(st.Warmed)}}},
	}
}
