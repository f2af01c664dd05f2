package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/logdex/logdex/query"
)

// Framing of /api/search/raw. Matched lines are found in order while they
// are sent, and sendfile needs a response that is not chunked. So:
//
//   - While the answer is small (at most rawBufferRanges ranges from at most
//     rawBufferFiles files, found within rawBufferTime), the ranges are only
//     collected; when the search ends the sum of their lengths is the
//     Content-Length. The connection stays alive and a client can tell a
//     cut-short body from a complete one.
//   - Past any of those bounds, the header goes out with
//     "Transfer-Encoding: identity" and no length, the ranges collected so
//     far and every later one are sent as they are found, and the server
//     closes the connection at the end. Memory stays bounded whatever the
//     number of hits; the first bytes arrive early for long searches.
//
// Either way each range is one sendfile from the log file (after a seek):
// hits never pass through user space.
const (
	rawBufferRanges = 4096
	rawBufferFiles  = 32
	rawBufferTime   = 250 * time.Millisecond
	rawStreamFlush  = 8 << 20 // streaming: send a growing range at this size
)

// rawBufferLimits are the bounds above, per server (tests lower them).
type rawBufferLimits struct {
	ranges, files int
	wait          time.Duration
}

var errShrunk = errors.New("file shrank while being sent")

type rawFile struct {
	f    *os.File
	size int64
	// dec reads a compressed file's decompressed content: its lines are
	// copied out (there is no file range to sendfile).
	dec io.ReaderAt
}

type rawRange struct {
	file   *rawFile
	off, n int64
	nl     bool // the range ends with a final line that has no '\n': add one
}

// rawStream collects and sends the byte ranges of matched lines.
type rawStream struct {
	s       *Server
	w       http.ResponseWriter
	sn      *snapshot
	start   time.Time
	pending rawRange // the range being extended; n == 0: none
	ranges  []rawRange
	open    map[*query.File]*rawFile // the files open, to close at the end
	curFile *query.File
	cur     *rawFile // nil with curFile set: the file is unreadable
	dropped int      // hits past the file's current end
	binary  int      // hits in binary parts of files, left out
	head    bool     // HEAD: headers only, nothing is read
	stream  bool     // ranges go out as found
	headed  bool     // the header was sent
	sent    int64
}

func (s *Server) handleRaw(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	p, q, perr := parseSearch(r, true)
	if perr != nil {
		writeStatusError(w, perr)
		return
	}
	leave, ok := s.openStream(w, r)
	if !ok {
		return
	}
	defer leave()
	s.awaitCreated(r.Context()) // (not in a slot: it may wait for a live run)
	slot, ok := s.admit(w, r)
	if !ok {
		return
	}
	defer slot.finish()
	sn := s.acquire()
	if sn == nil {
		unavailable(w, 5, "index not ready")
		return
	}
	defer sn.unref()
	if s.hookSearch != nil {
		s.hookSearch()
	}

	rs := &rawStream{s: s, w: w, sn: sn, start: start, head: r.Method == http.MethodHead}
	defer rs.close()
	// No overall timeout: a download takes as long as the client reads;
	// write deadlines catch a client that stops reading, and its leaving
	// cancels the context.
	st, err := sn.s.Search(r.Context(), q, query.Options{Time: p.tr, Order: p.order, Log: p.log}, rs.hit)
	slot.finish() // the rest is sending
	warnUnknownLog(sn, p.log, st)
	if err == nil {
		err = rs.flushPending()
	}
	s.metrics.observeSearch("raw", st, time.Since(start))
	if err == nil && !rs.stream {
		err = rs.sendBuffered(st)
	}
	if err != nil {
		if rs.headed {
			s.log.Warn().Err(err).Str("rid", requestID(r.Context())).Int64("sent", rs.sent).Msg("raw stream cut short")
			panic(http.ErrAbortHandler)
		}
		if r.Context().Err() != nil {
			return
		}
		s.log.Error().Err(err).Str("rid", requestID(r.Context())).Msg("raw search failed")
		writeError(w, http.StatusInternalServerError, "search failed")
		return
	}
	if st != nil && (len(st.Warnings)+len(st.Unreadable) > 0 || rs.dropped > 0 || rs.binary > 0) {
		s.log.Info().Str("rid", requestID(r.Context())).Strs("warnings", st.Warnings).Int("unreadable", len(st.Unreadable)).Int("dropped", rs.dropped).
			Int("binary", rs.binary).Msg("raw search answered with warnings")
	}
}

func (rs *rawStream) close() {
	for _, f := range rs.open {
		f.f.Close()
	}
}

// hit extends the pending range or starts a new one.
func (rs *rawStream) hit(h *query.Hit) error {
	if h.Binary {
		// As grep: a binary file's lines (from its first NUL on) are not
		// printed. Counted with the warnings.
		rs.binary++
		return nil
	}
	if h.File != rs.curFile {
		if err := rs.flushPending(); err != nil {
			return err
		}
		// A file still open is used again (a time order goes from file to
		// file and back: one descriptor a file, not one a visit).
		rs.curFile, rs.cur = h.File, rs.open[h.File]
		if rs.cur == nil {
			rs.cur = rs.openFile(h)
		}
		if rs.stream {
			// Streaming: the other files are done with (sent), unless a
			// time order comes back to them (opened again then).
			for qf, f := range rs.open {
				if f != rs.cur {
					f.f.Close()
					delete(rs.open, qf)
				}
			}
		}
	}
	if rs.cur == nil || h.Offset >= rs.cur.size {
		rs.dropped++
		return nil
	}
	// The line and its '\n'. A final line without one gets it from us, as
	// grep prints it: else it would run into the next file's first line.
	end, nl := h.Offset+h.Length+1, false
	if end > rs.cur.size {
		end, nl = h.Offset+h.Length, true
	}
	if p := &rs.pending; p.n > 0 && !p.nl && p.file == rs.cur && p.off+p.n == h.Offset {
		p.n, p.nl = end-p.off, nl
		if rs.stream && p.n >= rawStreamFlush {
			// A long run of matching lines: send it while searching on.
			return rs.flushPending()
		}
		return nil
	}
	if err := rs.flushPending(); err != nil {
		return err
	}
	rs.pending = rawRange{file: rs.cur, off: h.Offset, n: end - h.Offset, nl: nl}
	return nil
}

// openFile opens the file of h as the search checked and read it, not
// whatever its path names now: a rotation in between must not send
// another file's bytes at these offsets. nil: it cannot be (logged).
func (rs *rawStream) openFile(h *query.Hit) *rawFile {
	if rs.s.hookRawFile != nil {
		rs.s.hookRawFile(h.File)
	}
	var rf *rawFile
	if h.File.Record().Compression != "" {
		if dec, f, size, _, err := rs.sn.s.ReadCompressed(h.File); err == nil {
			rf = &rawFile{f: f, size: size, dec: dec}
		} else {
			rs.s.log.Warn().Err(err).Str("path", h.File.Path).Msg("raw search: cannot read a matched compressed file")
		}
	} else if f, size, err := rs.sn.s.Reopen(h); err == nil {
		rf = &rawFile{f: f, size: size}
	} else {
		rs.s.log.Warn().Err(err).Str("path", h.File.Path).Msg("raw search: cannot reopen a matched file")
	}
	if rf != nil {
		if rs.open == nil {
			rs.open = map[*query.File]*rawFile{}
		}
		rs.open[h.File] = rf
	}
	return rf
}

// flushPending hands the pending range on: collected while buffering,
// sent when streaming.
func (rs *rawStream) flushPending() error {
	p := rs.pending
	if p.n == 0 {
		return nil
	}
	rs.pending = rawRange{}
	if rs.stream {
		return rs.send(p)
	}
	rs.ranges = append(rs.ranges, p)
	lim := rs.s.rawBuffer
	if len(rs.ranges) >= lim.ranges || len(rs.open) > lim.files || time.Since(rs.start) > lim.wait {
		return rs.startStream()
	}
	return nil
}

// startStream commits the header without a length and sends what was
// collected.
func (rs *rawStream) startStream() error {
	h := rs.w.Header()
	rawHeaders(h)
	h.Set("Transfer-Encoding", "identity") // not chunked: keeps sendfile; the connection closes at the end
	rs.w.WriteHeader(http.StatusOK)
	rs.stream, rs.headed = true, true
	if rs.s.hookRawSend != nil {
		rs.s.hookRawSend()
	}
	for _, rg := range rs.ranges {
		if err := rs.send(rg); err != nil {
			return err
		}
	}
	rs.ranges = nil
	return nil
}

// sendBuffered sends the whole answer with its Content-Length.
func (rs *rawStream) sendBuffered(st *query.Stats) error {
	var total int64
	for _, rg := range rs.ranges {
		total += rg.n
		if rg.nl {
			total++
		}
	}
	h := rs.w.Header()
	rawHeaders(h)
	h.Set("Content-Length", strconv.FormatInt(total, 10))
	if n := rs.dropped + rs.binary; st != nil && len(st.Warnings)+len(st.Unreadable)+n > 0 {
		h.Set("X-Logdex-Warnings", strconv.Itoa(len(st.Warnings)+len(st.Unreadable)+n))
	}
	rs.w.WriteHeader(http.StatusOK)
	rs.headed = true
	if rs.s.hookRawSend != nil {
		rs.s.hookRawSend()
	}
	for _, rg := range rs.ranges {
		if err := rs.send(rg); err != nil {
			return err
		}
	}
	return nil
}

// send writes one range with sendfile: a seek, then a LimitedReader around
// the *os.File, which respWriter.ReadFrom hands to net/http in chunks.
func (rs *rawStream) send(rg rawRange) error {
	if rs.head {
		return nil
	}
	var src io.Reader = &io.LimitedReader{R: rg.file.f, N: rg.n}
	if rg.file.dec != nil {
		src = io.NewSectionReader(rg.file.dec, rg.off, rg.n)
	} else if _, err := rg.file.f.Seek(rg.off, io.SeekStart); err != nil {
		return err
	}
	n, err := io.Copy(rs.w, src)
	rs.sent += n
	if err != nil {
		return err
	}
	if n < rg.n {
		return fmt.Errorf("%w: %d of %d bytes at offset %d", errShrunk, n, rg.n, rg.off)
	}
	if rg.nl {
		_, err = io.WriteString(rs.w, "\n")
		rs.sent++
	}
	return err
}

func rawHeaders(h http.Header) {
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
}
