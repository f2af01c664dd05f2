package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/logdex/logdex/mmapstore/logtime"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/lang"
)

// searchParams are the parameters shared by /api/search and /api/search/raw.
type searchParams struct {
	q       string
	mode    lang.Mode
	fold    bool
	limit   int
	cursor  *query.Cursor
	context int
	tr      *query.TimeRange // from, to, untimed; nil: every line
	order   query.Order
	log     string // only this log's files (a log and its rotations)
	// exactTotal: count every hit past the page, whatever it costs
	// (total=exact); otherwise counting stops at totalBudget.
	exactTotal bool
}

// DefaultTotalBudget bounds the log bytes a page of /api/search reads
// only to count the hits after it (a positioned read counts as 1 KiB):
// about a thousand lines verified, 2 ms of work here (4 MiB took 9 ms and
// halved the QPS of a common phrase's pages). Counts the index gives
// without reading lines (a word, an exact literal) are exact at any size;
// past the budget, "total" is a lower bound ("total_exact": false) until
// asked for with total=exact.
const DefaultTotalBudget = 1 << 20

// parseSearch reads q, mode and case (and, unless raw, limit, cursor and
// context) and compiles the query.
func parseSearch(r *http.Request, raw bool) (*searchParams, *query.Query, *statusError) {
	v := r.URL.Query()
	p := &searchParams{q: v.Get("q")}
	if len(v["q"]) > 1 {
		return nil, nil, badRequest("give q once (the query language has OR)")
	}
	if p.q == "" {
		pos := 0
		return nil, nil, &statusError{code: http.StatusBadRequest, msg: "missing query (q)", pos: &pos}
	}
	if len(p.q) > maxQueryBytes {
		return nil, nil, &statusError{code: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("query longer than %d bytes", maxQueryBytes)}
	}
	var err error
	if p.mode, err = lang.ParseMode(v.Get("mode")); err != nil {
		return nil, nil, badRequest(err.Error())
	}
	switch v.Get("case") {
	case "":
		p.fold = p.mode == lang.ModeQuery
	case "insensitive":
		p.fold = true
	case "sensitive":
	default:
		return nil, nil, badRequest("case must be sensitive or insensitive")
	}
	if e := p.parseTime(v); e != nil {
		return nil, nil, e
	}
	if p.order, err = query.ParseOrder(v.Get("order")); err != nil {
		return nil, nil, badRequest(err.Error())
	}
	p.log = v.Get("log")
	if !raw {
		var e *statusError
		if p.limit, e = intParam(v, "limit", defaultLimit, 0, maxLimit); e != nil {
			return nil, nil, e
		}
		if p.context, e = intParam(v, "context", 0, 0, maxContext); e != nil {
			return nil, nil, e
		}
		switch v.Get("total") {
		case "", "bounded":
		case "exact":
			p.exactTotal = true
		default:
			return nil, nil, badRequest("total must be exact or bounded")
		}
		if c := v.Get("cursor"); c != "" {
			if p.cursor, err = query.DecodeCursor(c); err != nil {
				return nil, nil, badRequest("invalid cursor")
			}
		}
	}
	q, err := query.Compile([]string{p.q}, p.mode, p.fold)
	if err != nil {
		return nil, nil, queryError(err)
	}
	return p, q, nil
}

// warnUnknownLog adds a warning to st when log names no file of the
// index: a misspelt name (or a file's name where its path is wanted)
// would answer "no hits" without a word. Not an error: a live search may
// wait for a log that is not written yet.
func warnUnknownLog(sn *snapshot, log string, st *query.Stats) {
	if log == "" || st == nil || st.Total > 0 || slices.ContainsFunc(sn.s.Files(), func(f *query.File) bool { return f.Log() == log }) {
		return
	}
	st.Warnings = append(st.Warnings, fmt.Sprintf("no log %q in the index (yet): a log is named by its path, as the log of /api/files (logs/app/api.log)", log))
}

func (p *searchParams) caseName() string {
	if p.fold {
		return "insensitive"
	}
	return "sensitive"
}

func (p *searchParams) key(seq uint64) string {
	c := ""
	if p.cursor != nil {
		c = p.cursor.Encode()
	}
	tr := ""
	if p.tr != nil {
		tr = fmt.Sprintf("%d-%d-%t", p.tr.From, p.tr.To, p.tr.ExcludeUntimed)
	}
	return fmt.Sprintf("%d\x00%d\x00%t\x00%d\x00%d\x00%s\x00%s\x00%d\x00%s\x00%t\x00%s", seq, p.mode, p.fold, p.limit, p.context, c, tr, p.order, p.log, p.exactTotal, p.q)
}

// parseTime reads from, to (RFC 3339, epoch milliseconds, "2026-11-29
// 14:02" in UTC, or a duration ago like 2h) and untimed (include, the
// default, or exclude: lines of files without timestamps).
func (p *searchParams) parseTime(v url.Values) *statusError {
	from, to, ex := v.Get("from"), v.Get("to"), v.Get("untimed")
	if from == "" && to == "" && ex == "" {
		return nil
	}
	tr := &query.TimeRange{From: math.MinInt64, To: math.MaxInt64}
	now := time.Now()
	for _, b := range []struct {
		name, val string
		dst       *int64
	}{{"from", from, &tr.From}, {"to", to, &tr.To}} {
		if b.val == "" {
			continue
		}
		t, err := logtime.ParseUserTime(b.val, now, time.UTC)
		if err != nil {
			return badRequest(fmt.Sprintf("%s: %v", b.name, err))
		}
		*b.dst = t.UnixNano()
	}
	switch ex {
	case "", "include":
	case "exclude":
		tr.ExcludeUntimed = true
	default:
		return badRequest("untimed must be include or exclude")
	}
	if tr.From >= tr.To {
		return badRequest("from must be before to")
	}
	p.tr = tr
	return nil
}

// hitJSON is one hit of /api/search.
type hitJSON struct {
	FileID     uint64     `json:"file_id"`
	Path       string     `json:"path"`
	PathB64    string     `json:"path_b64,omitempty"`
	Line       int64      `json:"line"`
	Offset     int64      `json:"offset"`
	Length     int64      `json:"length"`
	Binary     bool       `json:"binary,omitempty"`
	Time       string     `json:"time,omitempty"`
	Text       string     `json:"text"`
	TextB64    string     `json:"text_b64,omitempty"`
	Truncated  bool       `json:"truncated,omitempty"`
	Highlights [][2]int   `json:"highlights"`
	Before     []lineJSON `json:"before,omitempty"`
	After      []lineJSON `json:"after,omitempty"`
}

// lineJSON is a line of context or of a file excerpt.
type lineJSON struct {
	Line      int64  `json:"line"`
	Offset    *int64 `json:"offset,omitempty"`
	Text      string `json:"text"`
	TextB64   string `json:"text_b64,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// Length is the whole line's length in bytes (without '\n') when it
	// was cut (file lines only): what a client fetches to get it all.
	Length int64 `json:"length,omitempty"`
}

// pathB64 is a path's bytes in base64 when they are not valid UTF-8 (the
// JSON string "path" has U+FFFD in their place), else "".
func pathB64(p string) string {
	if utf8.ValidString(p) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(p))
}

// lineText renders a line for JSON: cut at maxLineBytes; the exact bytes
// in base64 too when they are not valid UTF-8 (JSON would replace them).
func lineText(b []byte) (text, b64 string, truncated bool) {
	b, needB64, truncated := clipLine(b)
	if needB64 {
		b64 = base64.StdEncoding.EncodeToString(b)
	}
	return string(b), b64, truncated
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	p, q, perr := parseSearch(r, false)
	if perr != nil {
		writeStatusError(w, perr)
		return
	}
	// Files created since the last live run, in the snapshot.
	presynced := s.awaitCreated(r.Context())
	sn := s.acquire()
	if sn == nil {
		unavailable(w, 5, "index not ready")
		return
	}
	defer sn.unref()

	// A cached answer is reused only while the watch vouches that no log
	// changed since it was made: a line written before a search began is
	// in its answer. Either way the watch is synced once: without a cache
	// the round trip starts here and runs while the search queues for a
	// slot. (Run in the slot, it held one of the few slots through
	// milliseconds of waiting when the CPUs were busy, leaving them 10-15%
	// idle with 64 clients.)
	var body []byte
	var lead *flight
	key := ""
	synced := func() {}
	if changes, ok := s.changeSeq(sn, presynced); ok {
		key = p.key(sn.seq) + "\x00" + strconv.FormatUint(changes, 10)
		body, lead = s.cache.get(r.Context(), key)
	} else if !presynced {
		synced = sn.s.StartSyncFiles() // waited for in the slot
	}
	if body != nil {
		s.metrics.cacheHits.Inc()
		writeBody(w, body, "hit")
		return
	}
	// Identical requests waiting on this one are let go as soon as its
	// answer is known (or known to be streamed, and so not shared): not
	// when its client has read it, which a slow client may never do.
	share := func(body []byte) {
		s.cache.finish(key, lead, body)
		lead = nil
	}
	defer func() { share(nil) }()

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

	out := &jsonOut{w: w, buf: getBuf(), onCommit: func() { share(nil) }}
	defer out.release()
	st, err := s.searchJSON(ctx, sn, q, p, out, start)
	slot.finish() // the rest is sending
	s.metrics.observeSearch("search", st, time.Since(start))
	if err != nil {
		if out.committed {
			s.log.Warn().Err(err).Str("rid", requestID(r.Context())).Msg("search failed after the response began")
			panic(http.ErrAbortHandler)
		}
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("search took longer than %v", s.opt.SearchTimeout))
		case r.Context().Err() != nil:
			// The client left; nobody reads the answer.
		default:
			s.log.Error().Err(err).Str("rid", requestID(r.Context())).Msg("search failed")
			writeError(w, http.StatusInternalServerError, "search failed")
		}
		return
	}
	if lead != nil && !out.committed && out.err == nil {
		share(bytes.Clone(out.buf))
	}
	out.finish()
}

// changeSeq is the watch's change sequence when answers are cached (ok
// false otherwise: nothing to key them by); synced: the watch was synced
// for this request already.
func (s *Server) changeSeq(sn *snapshot, synced bool) (uint64, bool) {
	if !s.cache.enabled() {
		return 0, false
	}
	return sn.s.ChangeSeq(synced)
}

// writeBody sends a rendered JSON body.
func writeBody(w http.ResponseWriter, body []byte, cacheState string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("X-Logdex-Cache", cacheState)
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// searchJSON runs the search and renders the response into out, hits as
// they arrive.
func (s *Server) searchJSON(ctx context.Context, sn *snapshot, q *query.Query, p *searchParams, out *jsonOut, start time.Time) (*query.Stats, error) {
	// The fields around the hits are appended by hand like the hits
	// (fmt and json.Marshal were a few percent of a selective search).
	head := appendJSONString(append(make([]byte, 0, 256), `{"query":`...), p.q)
	head = appendJSONString(append(head, `,"mode":`...), p.mode.String())
	head = appendJSONString(append(head, `,"case":`...), p.caseName())
	head = appendJSONString(append(head, `,"order":`...), p.order.String())
	out.Write(append(head, `,"hits":[`...))
	opt := query.Options{Limit: p.limit, After: p.cursor, Text: true, CountAll: true, Time: p.tr, Times: true, Order: p.order, Log: p.log, Synced: true}
	if !p.exactTotal {
		opt.TotalBudget = s.opt.TotalBudget
	}
	loc := sn.s.Location()
	var last query.Cursor
	n := 0
	var hl [][2]int
	var fn func(*query.Hit) error
	var hitFile *query.File // the file whose hits begin with hitHead
	var hitHead []byte
	if p.limit > 0 {
		fn = func(h *query.Hit) error {
			if n > 0 {
				out.writeByte(',')
			}
			n++
			last = h.Cursor()
			hl = clipRanges(q.AppendHighlights(hl[:0], h.Text), clippedLen(h.Text))
			var before, after []query.Line
			if p.context > 0 {
				before, after = s.contextLines(ctx, sn, h, p.context)
			}
			if h.File != hitFile {
				hitFile, hitHead = h.File, appendHitHead(hitHead[:0], h.File)
			}
			out.add(func(b []byte) []byte { return appendHitRest(append(b, hitHead...), h, hl, before, after, loc) })
			return out.err
		}
	}
	st, err := sn.s.Search(ctx, q, opt, fn)
	if err != nil {
		return st, err
	}
	warnUnknownLog(sn, p.log, st)
	if out.err != nil {
		return st, out.err
	}
	tail := strconv.AppendInt(append(make([]byte, 0, 512), `],"total":`...), st.Total, 10)
	_, behind := s.behind()
	tail = strconv.AppendBool(append(tail, `,"total_exact":`...), !st.TotalAtLeast && !behind)
	tail = strconv.AppendFloat(append(tail, `,"took_ms":`...), float64(time.Since(start).Microseconds())/1000, 'f', 3, 64)
	tail = append(tail, `,"next_cursor":`...)
	if st.Truncated && n > 0 && n == p.limit {
		tail = appendJSONString(tail, last.Encode())
	} else {
		tail = append(tail, "null"...)
	}
	tail = strconv.AppendInt(append(tail, `,"stats":{"candidates":`...), st.Candidates, 10)
	tail = strconv.AppendInt(append(tail, `,"verified":`...), st.Verified, 10)
	tail = strconv.AppendInt(append(tail, `,"segments":`...), int64(st.Segments), 10)
	tail = strconv.AppendInt(append(tail, `,"planned_segments":`...), int64(st.Planned), 10)
	tail = strconv.AppendInt(append(tail, `,"scanned_bytes":`...), st.Scanned, 10)
	tail = append(tail, `},"warnings":[`...)
	for i, w := range append(patternWarnings(q), s.warnings(sn, st)...) {
		if i > 0 {
			tail = append(tail, ',')
		}
		tail = appendJSONString(tail, w)
	}
	out.Write(append(tail, "]}\n"...))
	return st, out.err
}

// patternWarnings are the warnings grep prints for the query's patterns
// (it still answers), such as "* at start of expression".
func patternWarnings(q *query.Query) []string {
	var ws []string
	for _, w := range q.Warnings() {
		ws = append(ws, fmt.Sprintf("pattern: %s (at character %d)", w.Msg, w.Pos+1))
	}
	return ws
}

// warnings lists what the answer may miss: files changed since indexing,
// files that could not be read, and damaged segments.
func (s *Server) warnings(sn *snapshot, st *query.Stats) []string {
	ws := []string{}
	if st != nil {
		ws = append(ws, st.Warnings...)
		for _, u := range st.Unreadable {
			ws = append(ws, fmt.Sprintf("%s: %s (could not be read now; its lines are missing)", u.Path, u.Reason))
		}
	}
	for _, u := range sn.s.Unreadable() {
		ws = append(ws, fmt.Sprintf("%s: %s (could not be read when indexed; its lines are missing)", u.Path, u.Reason))
	}
	if l := sn.s.LeftOut(); len(l) > 0 {
		// One warning, not one a file: every search of the index has them.
		more := ""
		if len(l) > 1 {
			more = ", …"
		}
		ws = append(ws, fmt.Sprintf("%d file(s) left out of the index and not searched (%s: %s%s)", len(l), l[0].Path, l[0].Reason, more))
	}
	if w, behind := s.behind(); behind {
		ws = append(ws, w)
	}
	if n := len(sn.ix.Damaged()); n > 0 {
		// The answer is exact (the damaged segments' lines were read from
		// the log files); a re-index rebuilds them.
		ws = append(ws, fmt.Sprintf("%d index segment(s) damaged; their lines were read from the log files until a re-index (started) rebuilds them", n))
		s.TriggerReindex()
	}
	return ws
}

// contextLines returns the lines around a hit through the offset index. A
// file that cannot be read any more just gets no context (the hit's own
// warning says why).
func (s *Server) contextLines(ctx context.Context, sn *snapshot, h *query.Hit, n int) (before, after []query.Line) {
	var arena []byte
	var ls []query.Line
	// A line's text is cut one byte past what JSON sends, so that it is
	// still seen to be truncated (a huge line is not held whole).
	sn.s.ReadLinesMax(ctx, h.File, h.Line-int64(n), h.Line+int64(n), maxLineBytes+1, func(l query.Line) error {
		if l.No != h.Line {
			arena = append(arena, l.Text...)
			ls = append(ls, query.Line{No: l.No, Offset: l.Offset, Text: arena[len(arena)-len(l.Text):], Length: l.Length})
		}
		return nil
	})
	// The arena may have moved while growing: re-slice the texts from it.
	pos := 0
	for i := range ls {
		k := len(ls[i].Text)
		ls[i].Text = arena[pos : pos+k : pos+k]
		pos += k
	}
	i := 0
	for i < len(ls) && ls[i].No < h.Line {
		i++
	}
	return ls[:i], ls[i:]
}

// clipRanges keeps highlight ranges inside the first n bytes, in place.
func clipRanges(rs [][2]int, n int) [][2]int {
	out := rs[:0]
	for _, r := range rs {
		if r[0] >= n {
			continue
		}
		out = append(out, [2]int{r[0], min(r[1], n)})
	}
	if out == nil {
		out = [][2]int{}
	}
	return out
}

// jsonOut buffers a response up to spillBytes so that small answers get a
// Content-Length and a proper status if the search fails; past that it
// commits a 200 and streams (memory stays bounded), and a later failure
// aborts the connection so the truncated JSON cannot pass for complete.
type jsonOut struct {
	w         http.ResponseWriter
	buf       []byte
	bw        *bufio.Writer
	committed bool
	err       error
	onCommit  func() // called when the body starts streaming
}

// bodyBufs recycles response buffers: an answer of 100 hits is ~30 KiB.
var bodyBufs = sync.Pool{New: func() any { return new([]byte) }}

func getBuf() []byte { return (*bodyBufs.Get().(*[]byte))[:0] }

func (o *jsonOut) release() {
	if cap(o.buf) <= spillBytes*2 {
		b := o.buf[:0]
		bodyBufs.Put(&b)
	}
	o.buf = nil
}

func (o *jsonOut) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	if o.committed {
		_, o.err = o.bw.Write(p)
		return len(p), o.err
	}
	o.buf = append(o.buf, p...)
	if len(o.buf) > spillBytes {
		o.commit()
	}
	return len(p), o.err
}

func (o *jsonOut) writeByte(c byte) {
	if o.err == nil && !o.committed && len(o.buf) < spillBytes {
		o.buf = append(o.buf, c) // (Write's []byte{c} escaped: an allocation a hit)
		return
	}
	o.Write([]byte{c})
}

// add appends what fn appends: straight into the body while buffering, into
// the writer's free buffer once committed (no copy either way).
func (o *jsonOut) add(fn func([]byte) []byte) {
	if o.err != nil {
		return
	}
	if o.committed {
		_, o.err = o.bw.Write(fn(o.bw.AvailableBuffer()))
		return
	}
	o.buf = fn(o.buf)
	if len(o.buf) > spillBytes {
		o.commit()
	}
}

func (o *jsonOut) commit() {
	if o.onCommit != nil {
		o.onCommit()
	}
	h := o.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	o.w.WriteHeader(http.StatusOK)
	o.bw = bufio.NewWriterSize(o.w, 64<<10)
	o.committed = true
	_, o.err = o.bw.Write(o.buf)
	o.buf = o.buf[:0]
}

// finish sends what is buffered.
func (o *jsonOut) finish() error {
	if o.err != nil {
		return o.err
	}
	if o.committed {
		return o.bw.Flush()
	}
	writeBody(o.w, o.buf, "miss")
	return nil
}
