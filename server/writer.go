package server

import (
	"io"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// respWriter is the one wrapper every response goes through: it records
// status and bytes for the access log and metrics, and it keeps sendfile.
// net/http sends a file with sendfile only when its own ReadFrom is reached
// with an *os.File (or an io.LimitedReader around one); a wrapper without
// ReadFrom turns every download into a read/write copy loop
// (docs/mechanics.md).
// So ReadFrom forwards to the inner writer, in chunks of SendfileChunk
// bytes, pushing the write deadline forward before each chunk: the
// server's WriteTimeout then bounds a stalled client, not a long download.
type respWriter struct {
	w    http.ResponseWriter
	srv  *Server
	slot *searchSlot // the search slot, let go during each write (limits.go)

	status      int
	wroteHeader bool
	flushed     bool  // header sent to the connection
	bytes       int64 // body bytes, all paths
	fileBytes   int64 // of which sent from files through ReadFrom
	deadlineAt  time.Time
}

func (w *respWriter) Header() http.Header { return w.w.Header() }

func (w *respWriter) WriteHeader(code int) {
	if !w.wroteHeader && code >= 200 {
		w.status, w.wroteHeader = code, true
	}
	w.w.WriteHeader(code)
}

func (w *respWriter) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	w.extendDeadline()
	w.slot.pause()
	n, err := w.w.Write(p)
	w.bytes += int64(n)
	if rerr := w.slot.resume(); err == nil {
		err = rerr
	}
	return n, err
}

func (w *respWriter) Flush() {
	if !w.wroteHeader {
		w.status, w.wroteHeader = http.StatusOK, true
	}
	w.flushed = true
	if f, ok := w.w.(http.Flusher); ok {
		w.slot.pause()
		f.Flush()
		w.slot.resume() // an error (client gone) is met again at the next write
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *respWriter) Unwrap() http.ResponseWriter { return w.w }

// extendDeadline moves the write deadline to now+WriteTimeout, at most
// every quarter of it (a deadline is a timer update, not free).
func (w *respWriter) extendDeadline() {
	d := w.srv.opt.WriteTimeout
	if d <= 0 {
		return
	}
	now := time.Now()
	if now.Add(d - d/4).Before(w.deadlineAt) {
		return
	}
	w.deadlineAt = now.Add(d)
	http.NewResponseController(w.w).SetWriteDeadline(w.deadlineAt)
}

// fileSource is what net's sendfile accepts: a reader with a file
// descriptor (*os.File, or os's fileWithoutWriteTo around one).
type fileSource interface {
	io.Reader
	syscall.Conn
}

// ReadFrom sends src. File sources go to the inner ReadFrom (sendfile) in
// chunks; other sources are copied with deadline extension.
func (w *respWriter) ReadFrom(src io.Reader) (int64, error) {
	remaining := int64(-1) // unlimited: to EOF
	lr, _ := src.(*io.LimitedReader)
	inner := src
	if lr != nil {
		remaining, inner = lr.N, lr.R
	}
	f, isFile := inner.(fileSource)
	rf, canRF := w.w.(io.ReaderFrom)
	if !isFile || !canRF {
		return w.copyLoop(src, 32<<10)
	}
	if !w.flushed {
		// Send the header now: otherwise net/http copies the first 512
		// bytes through a buffer to sniff a Content-Type.
		w.Flush()
	}
	if n := w.srv.opt.DebugCopyBuffer; n > 0 {
		return w.copyLoop(src, n)
	}
	var total int64
	size := w.srv.opt.SendfileChunk
	for remaining != 0 {
		chunk := size
		if remaining > 0 && remaining < chunk {
			chunk = remaining
		}
		w.extendDeadline()
		start := time.Now()
		w.slot.pause()
		n, err := rf.ReadFrom(&io.LimitedReader{R: f, N: chunk})
		if rerr := w.slot.resume(); err == nil {
			err = rerr
		}
		size = nextChunk(size, n, time.Since(start), w.srv.opt.SendfileChunk, w.srv.opt.WriteTimeout)
		total += n
		w.bytes += n
		w.fileBytes += n
		w.srv.metrics.sendfileBytes.Add(uint64(max(n, 0)))
		w.srv.metrics.sendfileCalls.Inc()
		if remaining > 0 {
			remaining -= n
			lr.N = remaining
		}
		if err != nil {
			return total, err
		}
		if n < chunk { // end of file (it may have shrunk): nothing more to send
			break
		}
	}
	return total, nil
}

// maxSendfileChunk caps the adaptive chunk: a client measured fast must
// still move 64 MiB per write timeout (2.2 MB/s at 30 s) not to be cut.
const maxSendfileChunk = 64 << 20

// nextChunk sizes the next sendfile chunk from the rate the last one went
// at: what the client moves in an eighth of the write timeout, between
// minChunk and maxSendfileChunk, and at most twice the last chunk (the
// first chunks only fill socket buffers and say little of the client's
// pace). Each chunk costs a deadline update and a pass through net/http's
// ReadFrom (2 ms of user CPU per GiB at 4 MiB); a fast client gets few,
// large chunks, and one that slows down by up to 8x still finishes a
// chunk before its deadline.
func nextChunk(cur, sent int64, took time.Duration, minChunk int64, timeout time.Duration) int64 {
	upper := max(minChunk, maxSendfileChunk)
	if timeout <= 0 {
		return upper
	}
	if took <= 0 || sent < cur {
		return cur
	}
	next := int64(float64(sent) / took.Seconds() * (timeout / 8).Seconds())
	return min(max(next, minChunk), upper, 2*cur)
}

var copyBufs sync.Map // size -> *sync.Pool

// copyLoop is the plain read/write path: for non-file sources (multipart
// ranges come through a pipe) and the DebugCopyBuffer comparison.
func (w *respWriter) copyLoop(src io.Reader, size int) (int64, error) {
	p, _ := copyBufs.LoadOrStore(size, &sync.Pool{New: func() any { b := make([]byte, size); return &b }})
	pool := p.(*sync.Pool)
	bp := pool.Get().(*[]byte)
	defer pool.Put(bp)
	buf := *bp
	var total int64
	for {
		n, rerr := src.Read(buf)
		if n > 0 {
			m, werr := w.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if rerr == io.EOF {
			return total, nil
		}
		if rerr != nil {
			return total, rerr
		}
	}
}
