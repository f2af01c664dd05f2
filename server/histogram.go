package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/logdex/logdex/query"
)

// histogramJSON is the answer of /api/histogram.
type histogramJSON struct {
	Query   string       `json:"query"`
	Mode    string       `json:"mode"`
	Case    string       `json:"case"`
	From    string       `json:"from,omitempty"`
	To      string       `json:"to,omitempty"`
	StepMS  int64        `json:"step_ms"`
	Buckets []bucketJSON `json:"buckets"`
	// Total is the sum of the buckets' counts: the total of the same
	// search with untimed=exclude. Untimed counts the matching lines of
	// files without timestamps (in the total of a search that includes
	// them).
	Total   int64    `json:"total"`
	Untimed int64    `json:"untimed"`
	TookMS  float64  `json:"took_ms"`
	Warns   []string `json:"warnings"`
}

type bucketJSON struct {
	Start string `json:"start"`
	End   string `json:"end"`
	Count int64  `json:"count"`
}

// handleHistogram counts the matching lines per time bucket: the same
// query parameters as /api/search, from and to (default: the index's time
// range) and buckets (at most that many, on a round step).
func (s *Server) handleHistogram(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	p, q, perr := parseSearch(r, true)
	if perr != nil {
		writeStatusError(w, perr)
		return
	}
	n, perr := intParam(r.URL.Query(), "buckets", 60, 1, 1000)
	if perr != nil {
		writeStatusError(w, perr)
		return
	}
	presynced := s.awaitCreated(r.Context())
	sn := s.acquire()
	if sn == nil {
		unavailable(w, 5, "index not ready")
		return
	}
	defer sn.unref()
	synced := func() {}
	if !presynced {
		synced = sn.s.StartSyncFiles() // runs while the search queues for a slot
	}
	slot, ok := s.admit(w, r)
	if !ok {
		return
	}
	defer slot.finish()
	synced()
	if s.hookSearch != nil {
		s.hookSearch()
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opt.SearchTimeout)
	defer cancel()

	tr := p.tr
	if tr == nil {
		tr = &query.TimeRange{From: math.MinInt64, To: math.MaxInt64}
	}
	lo, hi, timed := sn.ix.TimeRange()
	from, to := max(tr.From, lo), min(tr.To, hi+1)
	if tr.From != math.MinInt64 {
		from = tr.From
	}
	toGiven := tr.To != math.MaxInt64
	now := time.Now().UnixNano() + 1
	extended := false // the range runs past the index's newest time, to now
	switch {
	case toGiven:
		to = tr.To
	case from >= to && timed:
		to, extended = max(to, now), true // after everything indexed: lines written since
	}
	loc := sn.s.Location()
	out := histogramJSON{Query: p.q, Mode: p.mode.String(), Case: p.caseName(), Buckets: []bucketJSON{}}
	// With no timed line in the range there are no buckets, but the lines
	// of files without timestamps are still counted.
	h := &query.Histogram{Step: 1}
	if timed && from < to {
		h = query.NewHistogram(from, to, n)
	}
	st, err := sn.s.Search(ctx, q, query.Options{Time: tr, Histogram: h, Log: p.log, Synced: true}, nil)
	if err == nil && !toGiven && len(h.Counts) > 0 && h.After > 0 && to < now {
		// Lines after the index's newest (appended since it was built):
		// the buckets go on to now, for them too.
		to, extended = now, true
		h = query.NewHistogram(from, to, n)
		st, err = sn.s.Search(ctx, q, query.Options{Time: tr, Histogram: h, Log: p.log, Synced: true}, nil)
	}
	warnUnknownLog(sn, p.log, st)
	if extended && !slices.ContainsFunc(h.Counts, func(c int64) bool { return c > 0 }) {
		h.Counts = nil // nothing written since: no range of buckets to show, as without it
	}
	slot.finish()
	if err != nil {
		switch {
		case r.Context().Err() != nil:
			return // the client left; nobody reads the answer
		case errors.Is(err, context.DeadlineExceeded):
			writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("search took longer than %v", s.opt.SearchTimeout))
			return
		}
		s.log.Error().Err(err).Str("rid", requestID(r.Context())).Msg("histogram failed")
		writeError(w, http.StatusInternalServerError, "histogram failed")
		return
	}
	// A bucket's edge, held at the last representable time (a histogram
	// reaching 2262 would wrap).
	edge := func(i int) string {
		e := h.Start
		switch d := int64(i); {
		case d > 0 && h.Step > math.MaxInt64/d, h.Start > 0 && d*h.Step > math.MaxInt64-h.Start:
			e = math.MaxInt64
		default:
			e += d * h.Step
		}
		return time.Unix(0, e).In(loc).Format(time.RFC3339Nano)
	}
	if len(h.Counts) > 0 {
		out.StepMS = h.Step / int64(time.Millisecond)
		out.From = edge(0)
		out.To = edge(len(h.Counts))
	}
	for i, c := range h.Counts {
		out.Buckets = append(out.Buckets, bucketJSON{Start: edge(i), End: edge(i + 1), Count: c})
		out.Total += c
	}
	out.Untimed = h.Untimed
	s.metrics.observeSearch("histogram", st, time.Since(start))
	out.TookMS = float64(time.Since(start).Microseconds()) / 1000
	out.Warns = s.warnings(sn, st)
	writeJSON(w, http.StatusOK, out)
}
