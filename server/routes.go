package server

import (
	"embed"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
)

// routes builds the router. No middleware here may wrap the
// ResponseWriter except observe's respWriter (see writer.go), and nothing
// compresses: both would turn sendfile into a copy loop.
func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(s.observe, s.auth, getHead)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) { writeError(w, http.StatusNotFound, "not found") })
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET, HEAD") // (every route: the API only reads)
		writeError(w, http.StatusMethodNotAllowed, "method not allowed")
	})

	r.Get("/healthz", s.handleHealthz)
	r.Get("/readyz", s.handleReadyz)
	r.Method(http.MethodGet, "/metrics", s.metrics.handler())

	r.Route("/api", func(r chi.Router) {
		r.Use(wellFormedQuery)
		r.With(knownParams(pageParams...)).Get("/search", s.handleSearch)
		r.With(knownParams(searchParamNames...)).Get("/search/raw", s.handleRaw)
		r.With(knownParams(slices.Concat(searchParamNames, []string{"buckets"})...)).Get("/histogram", s.handleHistogram)
		r.With(knownParams(slices.Concat(searchParamNames, []string{"last_event_id"})...)).Get("/tail", s.handleTail) // (it says which of them it refuses)
		r.With(knownParams()).Get("/files", s.handleFiles)
		r.With(knownParams("line", "before", "after")).Get("/files/{id}/content", s.handleContent)
		r.With(knownParams()).Get("/status", s.handleStatus)
	})

	ui := s.opt.UI
	if ui == nil {
		ui = placeholderUI
	}
	uf := newUIFiles(ui)
	index := func(w http.ResponseWriter, r *http.Request) { uf.serve(w, r, "index.html") }
	r.Get("/", index)
	// Client-side routes of the UI: the page reads its state from the URL.
	r.Get("/files", index)
	r.Get("/assets/*", func(w http.ResponseWriter, r *http.Request) {
		uf.serve(w, r, "assets/"+chi.URLParam(r, "*"))
	})
	return r
}

// wellFormedQuery refuses a query string net/http cannot read whole (a
// bad %-escape, a ';'): URL.Query drops such a pair without a word, and a
// search would run without the parameter (a time range, a log) that was
// asked for.
func wellFormedQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery != "" {
			if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
				writeError(w, http.StatusBadRequest, "malformed query string: "+err.Error())
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// searchParamNames are the parameters that choose what a search matches
// (parseSearch); pageParams add those of a page of hits.
var (
	searchParamNames = []string{"q", "mode", "case", "from", "to", "untimed", "order", "log"}
	pageParams       = slices.Concat(searchParamNames, []string{"limit", "context", "total", "cursor"})
)

// knownParams refuses a parameter the route does not read. Ignored, a
// misspelt or guessed name would answer a question that was not asked
// without a word: since=1h (the CLI's flag; the API's is from) would
// search all of time.
func knownParams(names ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var unknown []string
			for name := range r.URL.Query() {
				if !slices.Contains(names, name) {
					unknown = append(unknown, name)
				}
			}
			if len(unknown) > 0 {
				slices.Sort(unknown)
				writeError(w, http.StatusBadRequest, unknownParams(unknown, names))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// unknownParams says which parameters are unknown (sorted) and which the
// endpoint takes.
func unknownParams(unknown, known []string) string {
	quoted := make([]string, len(unknown))
	for i, u := range unknown {
		quoted[i] = strconv.Quote(u)
	}
	word := "parameter"
	if len(unknown) > 1 {
		word = "parameters"
	}
	msg := "unknown " + word + " " + strings.Join(quoted, ", ")
	if len(known) == 0 {
		return msg + ": this endpoint takes none"
	}
	if slices.Contains(known, "from") && (slices.Contains(unknown, "since") || slices.Contains(unknown, "until")) {
		msg += " (a time range is from and to)"
	}
	return msg + "; known: " + strings.Join(known, ", ")
}

// getHead routes HEAD requests as GET (net/http then sends no body), as
// chi's middleware.GetHead does for a router without HEAD routes. That
// package is not imported: it links net/http/pprof and expvar, whose
// initialisation every logdex process would pay.
func getHead(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			chi.RouteContext(r.Context()).RouteMethod = http.MethodGet
		}
		next.ServeHTTP(w, r)
	})
}

// placeholderUI stands in until the web package provides the real UI.
//
//go:embed placeholder/index.html
var placeholderFiles embed.FS

var placeholderUI, _ = fs.Sub(placeholderFiles, "placeholder")
