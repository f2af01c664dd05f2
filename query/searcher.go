// Package query owns answering searches over an open index: it compiles a
// parsed query (package lang) into line matchers and dictionary lookups,
// narrows candidates per segment with the term dictionary and postings,
// verifies candidates by reading their lines (one positioned read each,
// through the offset index), scans what the index cannot narrow, and
// delivers hits in grep's order (path, then line). Log files are read as
// they are now through package live.
package query

import (
	"math"
	"os"
	"sort"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query/live"
)

// File is an indexed log file as the searcher presents it.
type File struct {
	ID    uint64
	Path  string // display path, as grep -r prints it
	s     *Searcher
	lf    *live.File
	spans []spanRef // this file's line ranges, in file offset order
}

// Record is the file's index record (a copy).
func (f *File) Record() mmapstore.FileRecord { return f.lf.Record() }

// TimeRange is the range of the times of the file's indexed lines (ok
// false when it has none).
func (f *File) TimeRange() (lo, hi int64, ok bool) {
	lo, hi = math.MaxInt64, math.MinInt64
	for _, sr := range f.spans {
		if sp := f.s.segs[sr.seg].Spans()[sr.span]; sp.Timed {
			lo, hi, ok = min(lo, sp.MinTime), max(hi, sp.MaxTime), true
		}
	}
	return lo, hi, ok
}

type spanRef struct {
	seg  int
	span int
}

// Searcher answers queries over one index snapshot. It reads log files only
// through the index's file table, opening them beneath their root without
// following symlinks out of it. Safe for concurrent use.
type Searcher struct {
	ix    *mmapstore.Index
	segs  []*mmapstore.Segment
	files []*File // sorted by Path
	byID  map[uint64]*File
	logs  *live.Set
	// damagedFiles have lines in segments that could not be opened: they
	// are read whole.
	damagedFiles map[uint64]bool
	loc          *time.Location // of timestamps without a zone, as indexed
	workers      int
	noInline     bool // tests: always use the worker pipeline
}

// NewSearcher prepares ix for searching. display, when not nil, gives the
// spelling of each root to print (the PATH arguments of this invocation).
func NewSearcher(ix *mmapstore.Index, display []string) *Searcher {
	roots := ix.Roots()
	for i := range roots {
		if i < len(display) {
			roots[i].Given = display[i]
		}
	}
	s := &Searcher{ix: ix, segs: ix.Segments(), byID: map[uint64]*File{}, logs: live.NewSet(ix.Roots()), damagedFiles: ix.DamagedFiles(), loc: time.UTC}
	if loc, err := time.LoadLocation(ix.TZ()); err == nil {
		s.loc = loc
	}
	for _, rec := range ix.Files() {
		f := &File{ID: rec.ID, Path: mmapstore.DisplayPath(roots[rec.Root], rec.Path), s: s, lf: s.logs.Track(rec)}
		s.files = append(s.files, f)
		s.byID[f.ID] = f
	}
	for si, seg := range s.segs {
		files := seg.Files()
		for spi, sp := range seg.Spans() {
			if f, ok := s.byID[files[sp.File].ID]; ok {
				f.spans = append(f.spans, spanRef{si, spi})
			}
		}
	}
	for _, f := range s.files {
		sort.Slice(f.spans, func(i, j int) bool {
			a, b := f.spans[i], f.spans[j]
			return s.segs[a.seg].Spans()[a.span].StartOffset < s.segs[b.seg].Spans()[b.span].StartOffset
		})
	}
	sort.SliceStable(s.files, func(i, j int) bool { return s.files[i].Path < s.files[j].Path })
	return s
}

// SetWorkers sets the number of goroutines verifying and scanning for one
// search (default GOMAXPROCS). Call before searching.
func (s *Searcher) SetWorkers(n int) { s.workers = n }

// SetWatch makes the searcher trust earlier looks at files that w reports
// unchanged. Call before searching.
func (s *Searcher) SetWatch(w *live.Watch) { s.logs.SetWatch(w) }

// Location is the zone the index's times were computed in (for rendering
// them as written).
func (s *Searcher) Location() *time.Location { return s.loc }

// Index is the snapshot searched.
func (s *Searcher) Index() *mmapstore.Index { return s.ix }

// Files lists the indexed files in display order.
func (s *Searcher) Files() []*File { return s.files }

// FileByID finds a file by its index id.
func (s *Searcher) FileByID(id uint64) (*File, bool) {
	f, ok := s.byID[id]
	return f, ok
}

// OpenFile opens f beneath its root. The returned file may differ from the
// indexed one (rotated, replaced).
func (s *Searcher) OpenFile(f *File) (*os.File, error) { return s.logs.Open(f.lf) }

// Close releases the opened root directories and log files (not the index).
func (s *Searcher) Close() error { return s.logs.Close() }
