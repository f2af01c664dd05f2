package server

import (
	"net/http"
	"time"

	"github.com/logdex/logdex/mmapstore"
)

// Status is the body of /api/status (also decoded by `logdex status`).
type Status struct {
	Ready    bool                  `json:"ready"`
	Started  time.Time             `json:"started"`
	UptimeS  float64               `json:"uptime_s"`
	Build    Build                 `json:"build"`
	Index    *IndexStatus          `json:"index,omitempty"`
	Reindex  ReindexStatus         `json:"reindex"`
	Searches SearchesStatus        `json:"searches"`
	Streams  StreamsStatus         `json:"streams"`
	Warmup   *mmapstore.WarmStatus `json:"warmup"` // null when warm-up is off
	Watch    WatchStatus           `json:"watch"`
}

// WatchStatus tells whether searches can trust inotify about unchanged
// files; when not, every search checks every file (slower, still exact).
type WatchStatus struct {
	Active bool   `json:"active"`
	Error  string `json:"error,omitempty"` // why not, when it failed
}

// IndexStatus summarizes the snapshot served.
type IndexStatus struct {
	Generation    uint64    `json:"generation"`
	Opened        time.Time `json:"opened"`
	Roots         []string  `json:"roots"`
	Files         int       `json:"files"`
	Lines         int64     `json:"lines"`
	Bytes         int64     `json:"bytes"` // log bytes covered
	Segments      int       `json:"segments"`
	IndexBytes    int64     `json:"index_bytes"`
	ResidentBytes int64     `json:"resident_bytes"` // of the segments, in the page cache now
	Damaged       []string  `json:"damaged"`
}

// ReindexStatus tells of background re-indexing.
type ReindexStatus struct {
	IntervalS float64     `json:"interval_s"` // 0: only on SIGHUP
	Running   bool        `json:"running"`
	Runs      int64       `json:"runs"`
	Failures  int64       `json:"failures"`
	Last      *ReindexRun `json:"last,omitempty"`
}

// StreamsStatus tells of the bound on raw searches and downloads sending.
type StreamsStatus struct {
	Active    int `json:"active"`
	Max       int `json:"max"`
	PerClient int `json:"max_per_client"`
}

// SearchesStatus tells of the search limiter.
type SearchesStatus struct {
	Active int `json:"active"`
	Max    int `json:"max"`
	Queue  int `json:"max_queued"`
}

func (s *Server) status() Status {
	st := Status{
		Started:  s.started.UTC(),
		UptimeS:  time.Since(s.started).Seconds(),
		Build:    s.build,
		Searches: SearchesStatus{Active: s.limiter.active(), Max: s.opt.MaxSearches, Queue: s.opt.MaxQueued},
		Streams:  StreamsStatus{Active: s.streams.active(), Max: s.opt.MaxStreams, PerClient: s.opt.MaxStreamsPerClient},
		Reindex:  ReindexStatus{IntervalS: s.opt.ReindexEvery.Seconds()},
	}
	s.reindex.mu.Lock()
	st.Reindex.Running, st.Reindex.Runs, st.Reindex.Failures = s.reindex.running, s.reindex.runs, s.reindex.failures
	if s.reindex.last != nil {
		last := *s.reindex.last
		st.Reindex.Last = &last
	}
	s.reindex.mu.Unlock()
	if w := s.watching.Load(); w != nil {
		st.Watch.Active = true
		if err := w.Err(); err != nil {
			st.Watch = WatchStatus{Error: err.Error()}
		}
	} else if s.opt.NoWatch {
		st.Watch.Error = "off (--no-watch)"
	}
	if sn := s.acquire(); sn != nil {
		defer sn.unref()
		st.Ready = true
		if sn.warmer != nil {
			ws := sn.warmer.Status()
			st.Warmup = &ws
		}
		ixs := sn.ix.Stats()
		is := &IndexStatus{
			Generation: sn.ix.Generation(), Opened: sn.opened.UTC(),
			Files: ixs.Files, Lines: ixs.Lines, Bytes: ixs.RawBytes, Segments: ixs.Segments, IndexBytes: ixs.IndexBytes,
			Damaged: []string{}, Roots: []string{},
		}
		for i, r := range sn.ix.Roots() {
			g := r.Given
			if i < len(s.opt.Display) {
				g = s.opt.Display[i]
			}
			is.Roots = append(is.Roots, g)
		}
		is.ResidentBytes = resident(sn)
		for _, d := range sn.ix.Damaged() {
			is.Damaged = append(is.Damaged, s.sanitize(d.Error()))
		}
		st.Index = is
	}
	return st
}

// resident sums the segments' bytes in the page cache (mincore).
func resident(sn *snapshot) int64 {
	rs, err := sn.ix.Residency()
	if err != nil {
		return 0
	}
	var n int64
	for _, r := range rs {
		n += r.Resident
	}
	return n
}

func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.status())
}

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "alive"})
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if s.cur.Load() == nil {
		unavailable(w, 5, "index not open")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
