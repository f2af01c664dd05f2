package server

import (
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
	slot *searchSlot  // the search slot, let go during each write (limits.go)
	conn syscall.Conn // the connection, when served by Serve: sendfile chunks fit its free space
	// gone is the request's context's Done: closed when the client hangs
	// up (net/http reads ahead for it), which ends a wait for send room.
	gone <-chan struct{}
	room int64 // free send buffer at the last look, less what was sent since

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
	pos := int64(-1) // f's offset, once asked
	for remaining != 0 {
		chunk := size
		if remaining > 0 && remaining < chunk {
			chunk = remaining
		}
		w.extendDeadline()
		if chunk > w.room {
			// Measured again only when past what was free at the last
			// look: small ranges (raw searches) do not pay a syscall each.
			// Waiting for the client is not searching: the slot goes
			// meanwhile, as around a write.
			w.slot.pause()
			room, err := w.sendRoom()
			if rerr := w.slot.resume(); err == nil {
				err = rerr
			}
			if err != nil {
				return total, err
			}
			w.room = room
			chunk = min(chunk, room)
		}
		var held int64
		var err error
		if pos, held, err = fileExtent(f, pos, pos); err != nil {
			return total, err
		}
		chunk = min(chunk, held)
		if chunk == 0 { // the file shrank (or has a hole here): stop short
			break
		}
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
		w.room -= n
		w.srv.metrics.sendfileBytes.Add(uint64(max(n, 0)))
		w.srv.metrics.sendfileCalls.Inc()
		if remaining > 0 {
			remaining -= n
			lr.N = remaining
		}
		if err != nil {
			return total, err
		}
		if chunk > spliceAtOnce {
			// sendfile read this chunk in rounds, waiting on the client
			// between them: a truncation meanwhile may have let zeros
			// through. End here, so the response is cut short and the
			// connection closed.
			if _, after, err := fileExtent(f, pos, pos+n); err != nil || after < n {
				return total, errShrunk
			}
		}
		pos += n
		if n < chunk { // end of file (it may have shrunk): nothing more to send
			break
		}
	}
	return total, nil
}

// spliceAtOnce: a sendfile call bigger than this (a pipe's 16 pages) is
// checked again afterwards, for a truncation while it went on.
const spliceAtOnce = 64 << 10

// sendRoom waits until the connection's send buffer has room and returns
// how much. A sendfile call no bigger than that does not block, so it
// reads the file right after fileExtent looked at it: when a client reads
// slowly, one call blocked on a full buffer would otherwise go on reading
// for as long as the client takes, past a truncation that happens
// meanwhile (and send the zeros of the hole left behind). The wait polls:
// the poller's writability is edge-triggered and no edge comes for a
// buffer nothing was written to while full. Without the connection (a
// test's handler) there is no bound. A client that hangs up ends the
// wait at once (its stream and slot are not held until the deadline).
func (w *respWriter) sendRoom() (int64, error) {
	if w.conn == nil {
		return math.MaxInt64, nil
	}
	rc, err := w.conn.SyscallConn()
	if err != nil {
		return math.MaxInt64, nil
	}
	for wait := 100 * time.Microsecond; ; wait = min(2*wait, 20*time.Millisecond) {
		room, enough := int64(math.MaxInt64), true
		rc.Control(func(fd uintptr) {
			size, err1 := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
			queued, err2 := unix.IoctlGetInt(int(fd), unix.SIOCOUTQ)
			if err1 != nil || err2 != nil {
				return // unknown: no bound
			}
			// The kernel doubles SO_SNDBUF for its bookkeeping: half of
			// it is payload. Wait while less than an eighth is free.
			room = int64(size/2 - queued)
			enough = room >= int64(size/8)
		})
		if enough {
			return max(room, 1), nil
		}
		if !w.deadlineAt.IsZero() && time.Now().After(w.deadlineAt) {
			return 0, os.ErrDeadlineExceeded
		}
		select {
		case <-w.gone:
			return 0, net.ErrClosed
		case <-time.After(wait):
		}
	}
}

// fileExtent returns how many bytes from offset from the file holds: up
// to its end or its next hole, which SEEK_HOLE finds (the end counts as
// one); f's offset is left at at. A log has no hole unless it was
// truncated and then written past its new end (copytruncate with a writer
// that keeps its offset); a hole reads as NULs the log never held, and
// sendfile would send them. Where SEEK_HOLE is not supported it answers
// with the file's size. A negative from asks f's offset first (and at is
// then that offset); it is returned.
func fileExtent(f fileSource, from, at int64) (_, held int64, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return from, 0, err
	}
	cerr := rc.Control(func(fd uintptr) {
		if from < 0 {
			if from, err = unix.Seek(int(fd), 0, io.SeekCurrent); err != nil {
				return
			}
			at = from
		}
		hole, herr := unix.Seek(int(fd), from, unix.SEEK_HOLE)
		switch {
		case herr == unix.ENXIO: // at or past the end
			hole = from
		case herr != nil:
			err = herr
			return
		}
		if _, err = unix.Seek(int(fd), at, io.SeekStart); err == nil {
			held = max(hole-from, 0)
		}
	})
	if err == nil {
		err = cerr
	}
	return from, held, err
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
