package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
)

type ctxKey int

const (
	requestIDKey ctxKey = iota
	connKey             // the net.Conn a request came on (Serve's ConnContext)
)

// requestID returns the id of the request in ctx.
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

var (
	// ridPrefix is made at the first request, not at package
	// initialisation, which every logdex process (a search too) runs.
	ridPrefix = sync.OnceValue(func() string {
		var b [4]byte
		rand.Read(b[:])
		return hex.EncodeToString(b[:])
	})
	ridCounter atomic.Uint64
)

// newRequestID is unique per process run and cheap: a random prefix and a
// counter. A client's X-Request-Id is kept when it looks like an id.
func newRequestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 64 && isToken(id) {
		return id
	}
	return ridPrefix() + "-" + strconv.FormatUint(ridCounter.Add(1), 10)
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// observe wraps every request: request id, the transparent respWriter,
// panic recovery, metrics and one access-log line. It runs inside the chi
// router so the matched route pattern is known afterwards.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w0 http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := newRequestID(r)
		w0.Header().Set("X-Request-Id", id)
		w := &respWriter{w: w0, srv: s, status: http.StatusOK, gone: r.Context().Done()}
		w.conn, _ = r.Context().Value(connKey).(syscall.Conn)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		aborted := false
		defer func() {
			p := recover()
			if p != nil {
				if p == http.ErrAbortHandler {
					aborted = true
				} else {
					// The stack goes to the log only, never to the client.
					s.log.Error().Str("rid", id).Interface("panic", p).Bytes("stack", debug.Stack()).Msg("handler panic")
					if !w.wroteHeader {
						writeError(w, http.StatusInternalServerError, "internal error")
					} else {
						aborted = true
					}
				}
			}
			s.record(w, r, start, aborted)
			if aborted {
				// Abort the connection: a response cut short must not
				// look complete (net/http logs nothing for this value).
				panic(http.ErrAbortHandler)
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// record writes the access log line and request metrics.
func (s *Server) record(w *respWriter, r *http.Request, start time.Time, aborted bool) {
	dur := time.Since(start)
	route := chi.RouteContext(r.Context()).RoutePattern()
	if route == "" {
		route = "unmatched"
	}
	status := w.status
	if !w.wroteHeader {
		status = http.StatusOK
	}
	s.metrics.observeRequest(route, r.Method, status, dur)
	ev := s.log.Info()
	if status >= 500 || aborted {
		ev = s.log.Warn()
	}
	ev.Str("method", r.Method).Str("path", r.URL.Path).Str("route", route).Int("status", status).
		Int64("bytes", w.bytes).Float64("ms", float64(dur.Microseconds())/1000).Str("rid", requestID(r.Context()))
	if w.fileBytes > 0 {
		ev.Int64("sendfile_bytes", w.fileBytes)
	}
	if aborted {
		ev.Bool("aborted", true)
	}
	ev.Msg("request")
}

// public reports whether a path is served without a token: liveness,
// readiness and the UI's static files (which hold no data).
func public(p string) bool {
	return p == "/healthz" || p == "/readyz" || p == "/" || p == "/files" || strings.HasPrefix(p, "/assets/")
}

// auth requires the bearer token on everything but public paths when a
// token is configured. Comparing hashes keeps the comparison constant-time
// even in the token's length.
func (s *Server) auth(next http.Handler) http.Handler {
	if s.tokenHash == nil {
		// Without a token the server is for this machine's own clients
		// (serve refuses other addresses). A web page from elsewhere can
		// still reach it through DNS rebinding (its own name made to
		// resolve to 127.0.0.1), and then read every log: its requests
		// carry that name in Host.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !loopbackHost(r.Host) {
				writeError(w, http.StatusMisdirectedRequest, fmt.Sprintf("Host %q is not this server's: without a token it answers requests for localhost, 127.0.0.1 or [::1] only", r.Host))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if public(r.URL.Path) && (r.URL.RawPath == "" || public(r.URL.RawPath)) {
			next.ServeHTTP(w, r)
			return
		}
		const prefix = "Bearer "
		h := r.Header.Get("Authorization")
		got := sha256.Sum256([]byte(strings.TrimPrefix(h, prefix)))
		if !strings.HasPrefix(h, prefix) || subtle.ConstantTimeCompare(got[:], s.tokenHash) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="logdex"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost reports whether a request's Host names this machine:
// localhost (or a name under it), a loopback address, or none (HTTP/1.0).
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
