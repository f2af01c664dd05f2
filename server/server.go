// Package server owns logdex's HTTP service: the JSON search API, raw
// streaming of matched lines and of whole log files (by sendfile), the file
// table, status, health and Prometheus metrics, and the web UI's static
// files. It serves one index snapshot at a time and swaps to a new one
// atomically after a re-index; building the index is the caller's job (a
// Reindex func), so this package depends on query and mmapstore only.
package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/live"
	"github.com/rs/zerolog"
)

// ReindexResult is what a Reindex func reports.
type ReindexResult struct {
	Changed  bool   // a new manifest was published
	Summary  string // one line for the status page and the log
	MergeDue bool   // segments may wait for Options.Merge
}

// Options configure a Server. Zero values take the defaults noted.
type Options struct {
	IndexDir string   // index directory to open (required)
	Display  []string // spelling of each root in paths (nil: as indexed)

	// Reindex brings the index directory up to date; run every
	// ReindexEvery (0: never on a timer) and on TriggerReindex, with the
	// index the server has open (nil: none), held open for the call.
	// After it the server re-opens the directory if its manifest changed.
	// nil: the server only re-opens (someone else indexes).
	Reindex      func(ctx context.Context, open *mmapstore.Index) (ReindexResult, error)
	ReindexEvery time.Duration
	// Merge, when set, merges segments in the background: run in its own
	// goroutine, one at a time, after a Reindex run that reports
	// MergeDue, so that re-index runs never wait for a merge; the server
	// re-opens the index when it reports Changed. Cancelled on Shutdown.
	Merge func(ctx context.Context) (ReindexResult, error)
	// LiveDelay, when > 0, re-indexes that long after the inotify watch
	// reports a change beneath the roots (live indexing); 0 leaves it to
	// ReindexEvery and TriggerReindex.
	LiveDelay time.Duration

	// AuthToken, when set, is required as "Authorization: Bearer <token>"
	// on /api/... and /metrics.
	AuthToken string

	MaxSearches   int           // searches running at once (2×GOMAXPROCS)
	MaxQueued     int           // searches waiting for a slot (128×GOMAXPROCS); more get 503 at once
	QueueWait     time.Duration // longest wait for a slot before 503 (1s)
	SearchTimeout time.Duration // per /api/search request (30s)
	CacheTTL      time.Duration // /api/search response cache; 0 disables, <0 default (1s)

	ReadHeaderTimeout time.Duration // 10s
	ReadTimeout       time.Duration // 30s (requests have no bodies)
	// WriteTimeout bounds each write, not the response: streaming writers
	// push the deadline forward as they make progress (30s).
	WriteTimeout   time.Duration
	IdleTimeout    time.Duration // keep-alive (120s)
	MaxHeaderBytes int           // 16 KiB

	// UI holds index.html and assets/...; nil serves a placeholder page.
	UI fs.FS
	// Warmup configures the warm-up of every snapshot opened (nil: none).
	// Staged runs in the background, yielding to searches in flight;
	// eager warms a snapshot before it is served.
	Warmup *mmapstore.WarmOptions

	Logger zerolog.Logger

	// SendfileChunk is the first and smallest amount one sendfile call is
	// asked to move; the write deadline is pushed forward between calls,
	// and chunks grow up to 64 MiB for clients that keep up (4 MiB).
	SendfileChunk int64
	// SocketSendBuffer, when > 0, sets SO_SNDBUF on accepted connections.
	SocketSendBuffer int
	// DebugCopyBuffer > 0 replaces sendfile by a read/write loop with a
	// buffer of this size (for measuring what sendfile saves).
	DebugCopyBuffer int
	// TotalBudget bounds the log bytes one page of /api/search reads only
	// to count the hits after it (DefaultTotalBudget when 0); past it,
	// "total" is a lower bound until asked for with total=exact.
	TotalBudget int64
	// MaxStreams bounds the raw searches and downloads sending at once
	// (64), MaxStreamsPerClient those of one client address (8); more get
	// 503 and 429. A slow reader holds one of these, not a search slot.
	MaxStreams          int
	MaxStreamsPerClient int
	// MaxTails bounds the /api/tail streams open at once (64); more get 503.
	MaxTails int
	// TailHeartbeat is how often an idle /api/tail stream gets a comment,
	// which keeps proxies and the write deadline from closing it (15s).
	TailHeartbeat time.Duration
	// NoWatch turns off the inotify watch of the log directories; every
	// search then stats every indexed file.
	NoWatch bool
	// SearchWorkers is the goroutines one search uses (GOMAXPROCS when
	// 0): serve raises GOMAXPROCS above the CPUs while its background
	// threads (live runs, merges) run, which searches should not count.
	SearchWorkers int
}

func (o *Options) defaults() {
	procs := runtime.GOMAXPROCS(0)
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if o.MaxSearches <= 0 {
		o.MaxSearches = 2 * procs
	}
	if o.MaxQueued < 0 {
		o.MaxQueued = 0
	} else if o.MaxQueued == 0 {
		o.MaxQueued = 128 * procs
	}
	if o.TotalBudget <= 0 {
		o.TotalBudget = DefaultTotalBudget
	}
	if o.MaxStreams <= 0 {
		o.MaxStreams = 64
	}
	if o.MaxStreamsPerClient <= 0 {
		o.MaxStreamsPerClient = 8
	}
	if o.MaxTails <= 0 {
		o.MaxTails = 64
	}
	set(&o.TailHeartbeat, 15*time.Second)
	set(&o.QueueWait, time.Second)
	set(&o.SearchTimeout, 30*time.Second)
	if o.CacheTTL < 0 {
		o.CacheTTL = time.Second
	}
	set(&o.ReadHeaderTimeout, 10*time.Second)
	set(&o.ReadTimeout, 30*time.Second)
	set(&o.WriteTimeout, 30*time.Second)
	set(&o.IdleTimeout, 120*time.Second)
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 16 << 10
	}
	if o.SendfileChunk <= 0 {
		o.SendfileChunk = 4 << 20
	}
}

// Server is the HTTP service over the current index snapshot.
type Server struct {
	opt       Options
	log       zerolog.Logger
	tokenHash []byte // sha256 of AuthToken; nil: no auth
	handler   http.Handler
	metrics   *metrics
	limiter   *limiter
	streams   *streamBound
	cache     *cache
	started   time.Time
	build     Build

	cur      atomic.Pointer[snapshot]
	seq      atomic.Uint64
	reloadMu sync.Mutex
	closed   bool // under reloadMu: no more snapshots
	// tailHistory: what earlier snapshots' deltas leave for the next
	// (copytruncate's copies, found late or early), under reloadMu.
	tailHistory query.History
	watch       *live.Watch                // under reloadMu
	watchKey    string                     // the roots watched
	watching    atomic.Pointer[live.Watch] // s.watch, for status readers
	// covered is the watch sequence (live.Watch.Seq) read before the walk
	// of the last run that worked: the snapshot served has every file
	// created up to it (awaitCreated).
	covered atomic.Uint64
	reindex reindexState

	httpSrv  *http.Server
	loopStop context.CancelFunc
	loopDone chan struct{}
	trigger  chan struct{}
	mergeDue chan struct{}
	// watchSet wakes the re-index loop when the watch starts or is
	// replaced, so that it waits on the new one's changes.
	watchSet chan struct{}

	rawBuffer rawBufferLimits

	tailFeed *tailFeed
	tails    tailClients
	tailStop chan struct{} // closed at Shutdown: tails end
	stopOnce sync.Once

	// hookSearch, for tests, runs while a search holds its slot.
	hookSearch func()
	// hookRawSend, for tests, runs before the raw endpoint sends its ranges.
	hookRawSend func()
	// hookRawFile, for tests, runs when the raw endpoint meets the first
	// hit of a file, before it opens the file.
	hookRawFile func(*query.File)
}

// New prepares a server; it opens no index (Reload does) and starts
// nothing (Serve does).
func New(opt Options) (*Server, error) {
	if opt.IndexDir == "" {
		return nil, errors.New("server: no index directory")
	}
	if strings.TrimSpace(opt.AuthToken) != opt.AuthToken {
		// Header values lose their surrounding whitespace: no client could match.
		return nil, errors.New("server: the auth token begins or ends with whitespace (or is only whitespace)")
	}
	opt.defaults()
	s := &Server{
		opt:       opt,
		log:       opt.Logger,
		limiter:   newLimiter(opt.MaxSearches, opt.MaxQueued, opt.QueueWait),
		streams:   &streamBound{max: opt.MaxStreams, perClient: opt.MaxStreamsPerClient},
		cache:     newCache(opt.CacheTTL, 32<<20),
		started:   time.Now(),
		build:     ReadBuild(),
		trigger:   make(chan struct{}, 1),
		mergeDue:  make(chan struct{}, 1),
		watchSet:  make(chan struct{}, 1),
		tailFeed:  newTailFeed(),
		tailStop:  make(chan struct{}),
		rawBuffer: rawBufferLimits{ranges: rawBufferRanges, files: rawBufferFiles, wait: rawBufferTime},
	}
	if opt.AuthToken != "" {
		h := sha256.Sum256([]byte(opt.AuthToken))
		s.tokenHash = h[:]
	}
	s.metrics = newMetrics(s)
	s.handler = s.routes()
	return s, nil
}

// Handler is the server's whole HTTP handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.handler }

// Serve accepts connections on ln until Shutdown, and runs the re-index
// loop meanwhile. It returns http.ErrServerClosed after Shutdown.
func (s *Server) Serve(ln net.Listener) error {
	s.reloadMu.Lock()
	if s.closed || s.httpSrv != nil {
		s.reloadMu.Unlock()
		return errors.New("server: Serve called twice or after Shutdown")
	}
	o := s.opt
	s.httpSrv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		ReadTimeout:       o.ReadTimeout,
		WriteTimeout:      o.WriteTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ErrorLog:          log.New(zerologWriter{s.log}, "", 0),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey, c)
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.loopStop, s.loopDone = cancel, make(chan struct{})
	s.reloadMu.Unlock()
	go func() {
		defer close(s.loopDone)
		merging := make(chan struct{})
		go func() { defer close(merging); s.mergeLoop(ctx) }()
		s.reindexLoop(ctx)
		<-merging
	}()
	if o.SocketSendBuffer > 0 {
		ln = &sndbufListener{Listener: ln, size: o.SocketSendBuffer}
	}
	return s.httpSrv.Serve(ln)
}

// Shutdown stops accepting, lets in-flight requests finish (until ctx
// ends, then closes their connections), stops the re-index loop and
// closes the index once its last reader is done.
func (s *Server) Shutdown(ctx context.Context) error {
	s.reloadMu.Lock()
	srv, stop, done := s.httpSrv, s.loopStop, s.loopDone
	s.reloadMu.Unlock()
	s.stopOnce.Do(func() { close(s.tailStop) }) // tails say why and end; Shutdown waits for them
	var err error
	if srv != nil {
		if err = srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
	}
	if stop != nil {
		stop()
		<-done
	}
	s.reloadMu.Lock()
	s.closed = true
	old := s.cur.Swap(nil)
	s.reloadMu.Unlock()
	if old != nil {
		old.unref()
	}
	s.reloadMu.Lock()
	if s.watch != nil {
		s.watch.Close()
		s.watch = nil
		s.watching.Store(nil)
	}
	s.reloadMu.Unlock()
	return err
}

// Close is Shutdown without waiting for requests.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return s.Shutdown(ctx)
}

// sndbufListener sets SO_SNDBUF on each accepted connection and returns it
// unwrapped: net/http reaches sendfile only through a *net.TCPConn.
type sndbufListener struct {
	net.Listener
	size int
}

func (l *sndbufListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(l.size)
	}
	return c, err
}

// zerologWriter routes net/http's own error log (TLS handshakes, panics in
// its machinery, accept errors) into the structured log.
type zerologWriter struct{ l zerolog.Logger }

func (w zerologWriter) Write(p []byte) (int, error) {
	msg := string(p)
	if n := len(msg); n > 0 && msg[n-1] == '\n' {
		msg = msg[:n-1]
	}
	w.l.Warn().Str("source", "net/http").Msg(msg)
	return len(p), nil
}

func (s *Server) String() string { return fmt.Sprintf("logdex server on %s", s.opt.IndexDir) }
