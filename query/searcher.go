// Package query owns answering searches over an open index: it compiles a
// parsed query (package lang) into line matchers and dictionary lookups,
// narrows candidates per segment with the term dictionary and postings,
// verifies candidates by reading their lines (one positioned read each,
// through the offset index), scans what the index cannot narrow, and
// delivers hits in grep's order (path, then line). Log files are read as
// they are now through package live.
package query

import (
	"errors"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/logdex/logdex/query/live"
)

// File is an indexed log file as the searcher presents it.
type File struct {
	ID   uint64
	Path string // display path, as grep -r prints it
	s    *Searcher
	lf   *live.File
	ci   compressedInfo // for a compressed file
	// log and rotation: the log this file is part of (its rotations share
	// it) and its place in that log's history.
	log      string
	rotation int
	spans    []spanRef // this file's line ranges, in file offset order
	// atPathNow marks a copy standing for the file its path holds now,
	// which is not the indexed one (that one was renamed away).
	atPathNow bool
	// indexedPath is the path the file was indexed under, for a copy
	// showing it under the name it was renamed to (else empty).
	indexedPath string
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
	ix       *mmapstore.Index
	segs     []*mmapstore.Segment
	roots    []mmapstore.Root
	files    []*File           // sorted by Path
	byID     mmapstore.IDIndex // file id -> index into files
	logs     *live.Set
	workers  int
	noInline bool   // tests: always use the worker pipeline
	window   uint32 // tests: lines of a segment's first plan window (0: firstWindow)
	// tests: a time order's slabs (0: slabShare, slabCapMin)
	slabShare, slabCapMin int
	// mapReads: hits are read from mappings of the log files (SetMappedReads).
	mapReads bool
	// damagedFiles have lines in segments that could not be opened: they
	// are read whole.
	damagedFiles map[uint64]bool
	loc          *time.Location // of timestamps without a zone, as indexed
	// unreadable: files in scope the indexer could not read.
	unreadable []Unreadable
	// leftOut: files in scope the indexer left out (sparse files, large
	// binary files), with the reason.
	leftOut []Unreadable
	// inodes maps indexed inodes to files (built on first need).
	inodes     map[[2]uint64]int
	inodesOnce sync.Once
	sh         shadows // seekable copies of compressed files, opened on need
}

// Unreadable is a file (or directory) the indexer could not read, and why:
// grep would report it ("Permission denied") and exit with status 2.
type Unreadable struct {
	Path   string // display path
	Reason string
}

// reason is why a file could not be read, as grep words it: the system's
// error alone ("permission denied"), without the call and path Go adds.
func reason(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// NewSearcher prepares ix for searching. display, when not nil, gives the
// spelling of each root to print (the PATH arguments of this invocation).
func NewSearcher(ix *mmapstore.Index, display []string) *Searcher {
	roots := ix.Roots()
	scopes := make([]Scope, len(roots))
	for i, r := range roots {
		scopes[i] = Scope{Root: i, Display: r.Given, IsFile: r.IsFile}
		if i < len(display) {
			scopes[i].Display = display[i]
		}
	}
	return NewScopedSearcher(ix, scopes)
}

// Scope is one PATH operand of a search that lies inside an indexed root:
// the searcher sees only the files beneath it, and prints their paths as
// grep -r prints them for that operand.
type Scope struct {
	Root    int    // the root (index into the index's roots) it lies in
	Rel     string // its path relative to that root, slash-separated; "" for the root itself
	Display string // the operand as typed
	IsFile  bool   // the operand names a file (the one at Rel)
	// Keep, when set, says whether the file at rel (its path below the
	// operand, slash-separated; "" for an operand that is a file) is
	// searched: grep's --include, --exclude and --exclude-dir.
	Keep func(rel string) bool
}

// path returns the display path of rec if it lies in the scope.
func (sc Scope) path(rec mmapstore.FileRecord) (string, bool) {
	b, ok := sc.appendPath(nil, rec.Root, rec.Path)
	return string(b), ok
}

// appendPath appends to b the display path of the file at path p beneath
// root if it lies in the scope.
func (sc Scope) appendPath(b []byte, root int, p string) ([]byte, bool) {
	if root != sc.Root {
		return b, false
	}
	rel := p
	switch {
	case sc.IsFile:
		if p != sc.Rel || sc.Keep != nil && !sc.Keep("") {
			return b, false
		}
		return append(b, sc.Display...), true
	case sc.Rel == "":
	case len(p) > len(sc.Rel) && p[len(sc.Rel)] == '/' && strings.HasPrefix(p, sc.Rel):
		rel = p[len(sc.Rel)+1:]
	default:
		return b, false
	}
	if sc.Keep != nil && !sc.Keep(rel) {
		return b, false
	}
	return mmapstore.AppendDisplayPath(b, mmapstore.Root{Given: sc.Display}, rel), true
}

// NewScopedSearcher prepares ix for searching the files beneath the
// scopes only. A file in several scopes is seen once, under the first.
//
// An index may list 100,000 small files, and a search over them is timed
// against grep -r: the files, their live views, their display paths and
// their span lists are each one allocation for all files, not one per
// file.
func NewScopedSearcher(ix *mmapstore.Index, scopes []Scope) *Searcher {
	s := &Searcher{ix: ix, segs: ix.Segments(), roots: ix.Roots(), damagedFiles: ix.DamagedFiles(), loc: time.UTC}
	s.logs = live.NewSet(s.roots)
	if loc, err := time.LoadLocation(ix.TZ()); err == nil {
		s.loc = loc
	}
	recs := ix.FileRecords()
	lfs := s.logs.TrackAll(recs)
	longest := 0
	for _, sc := range scopes {
		longest = max(longest, len(sc.Display))
	}
	pathBytes := 0
	for i := range recs {
		pathBytes += len(recs[i].Path) + longest + 1
	}
	paths := make([]byte, 0, pathBytes)
	ends := make([]int, 0, len(recs))
	store := make([]File, 0, len(recs))
	for i := range recs {
		rec := &recs[i]
		for _, sc := range scopes {
			var ok bool
			if paths, ok = sc.appendPath(paths, rec.Root, rec.Path); ok {
				store = append(store, File{ID: rec.ID, s: s, lf: &lfs[i]})
				ends = append(ends, len(paths))
				break
			}
		}
	}
	all := string(paths)
	s.files = make([]*File, len(store))
	for i := range store {
		from := 0
		if i > 0 {
			from = ends[i-1]
		}
		store[i].Path = all[from:ends[i]]
		s.files[i] = &store[i]
	}
	for _, sk := range ix.Skipped() {
		for _, sc := range scopes {
			path, ok := sc.path(mmapstore.FileRecord{Root: sk.Root, Path: sk.Path})
			if !ok && !sc.IsFile && sk.Root == sc.Root && sk.Path == sc.Rel {
				path, ok = sc.Display, true // the operand itself
			}
			if ok {
				list := &s.leftOut
				if sk.Unreadable {
					list = &s.unreadable
				}
				*list = append(*list, Unreadable{Path: path, Reason: sk.Reason})
				break
			}
		}
	}
	for _, l := range [][]Unreadable{s.unreadable, s.leftOut} {
		sort.Slice(l, func(i, j int) bool { return l[i].Path < l[j].Path })
	}
	byPath := func(a, b *File) int { return strings.Compare(a.Path, b.Path) }
	if !slices.IsSortedFunc(s.files, byPath) { // the manifest's order usually is
		slices.SortStableFunc(s.files, byPath)
	}
	s.byID = mmapstore.NewIDIndex(len(s.files), func(i int) uint64 { return s.files[i].ID })
	s.spansOfFiles()
	assignRotations(s.files)
	return s
}

// spansOfFiles gives each file its spans, in file offset order, all in
// one slice.
func (s *Searcher) spansOfFiles() {
	// Two passes: count each file's spans, then place them.
	counts := make([]int32, len(s.files)+1)
	total := 0
	for _, seg := range s.segs {
		files := seg.Files()
		for _, sp := range seg.Spans() {
			if i, ok := s.byID.Find(files[sp.File].ID); ok {
				counts[i+1]++
				total++
			}
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1] // now: where file i's spans start
	}
	refs := make([]spanRef, total)
	for si, seg := range s.segs {
		files := seg.Files()
		for spi, sp := range seg.Spans() {
			if i, ok := s.byID.Find(files[sp.File].ID); ok {
				f := s.files[i]
				if f.spans == nil {
					f.spans = refs[counts[i]:counts[i]:counts[i+1]]
				}
				f.spans = append(f.spans, spanRef{si, spi})
			}
		}
	}
	for _, f := range s.files {
		if len(f.spans) > 1 { // (most small files have one)
			sort.Slice(f.spans, func(i, j int) bool {
				a, b := f.spans[i], f.spans[j]
				return s.segs[a.seg].Spans()[a.span].StartOffset < s.segs[b.seg].Spans()[b.span].StartOffset
			})
		}
	}
}

// AssumeSeen takes what the indexing run that just ended found at the
// files' paths as their state (live.Set.AssumeSeen): a search right after
// an update does not look at every file again. Call before searching.
func (s *Searcher) AssumeSeen(seen []logfile.Seen) { s.logs.AssumeSeen(seen) }

// SetWorkers sets the number of goroutines verifying and scanning for one
// search (default GOMAXPROCS). Call before searching.
func (s *Searcher) SetWorkers(n int) { s.workers = n }

// SetMappedReads makes searches read the lines the index locates from
// memory mappings of the log files (files of mapMin bytes or more)
// instead of one pread each. The mappings are kept with the files kept
// open, so this pays off for a searcher that answers many searches (a
// server); a one-off search would pay for mapping and page faults
// instead. Call before searching.
func (s *Searcher) SetMappedReads(on bool) { s.mapReads = on }

// mapMin is the smallest file mapped for reading hits: a small file is
// read by a pread or two, cheaper than a mapping of its own.
var mapMin int64 = 1 << 20

// SetWatch makes the searcher trust earlier looks at files that w reports
// unchanged. Call before searching.
func (s *Searcher) SetWatch(w *live.Watch) { s.logs.SetWatch(w) }

// ChangeSeq tells whether the logs changed: an answer computed when it
// returned the same seq is still the answer (a cache key). It syncs the
// watch first, unless synced (the caller just did). ok is false without a
// watch to vouch for that.
func (s *Searcher) ChangeSeq(synced bool) (seq uint64, ok bool) { return s.logs.ChangeSeq(synced) }

// Location is the zone the index's times were computed in (for rendering
// them as written).
func (s *Searcher) Location() *time.Location { return s.loc }

// Index is the snapshot searched.
func (s *Searcher) Index() *mmapstore.Index { return s.ix }

// Unreadable lists the files and directories in the searcher's scope that
// the indexer could not read, in display order: their lines are missing
// from every answer.
func (s *Searcher) Unreadable() []Unreadable { return s.unreadable }

// LeftOut lists the files in the searcher's scope that the indexer left
// out by choice (sparse files, large binary files), with the reason, in
// display order: grep would say at most "binary file matches" of them.
func (s *Searcher) LeftOut() []Unreadable { return s.leftOut }

// Files lists the indexed files in display order.
func (s *Searcher) Files() []*File { return s.files }

// FileByID finds a file by its index id.
func (s *Searcher) FileByID(id uint64) (*File, bool) {
	i, ok := s.byID.Find(id)
	if !ok {
		return nil, false
	}
	return s.files[i], true
}

// StartSyncFiles starts a sync with the file watch (one inotify round
// trip, shared by the calls at once); once wait returns, a search run with
// Options.Synced finds every line written before the call. A server starts
// it before queueing a search for a slot and waits in the slot: the round
// trip, which needs no CPU but takes milliseconds when the CPUs are busy,
// then overlaps the queueing instead of holding a slot that a search
// could run in.
func (s *Searcher) StartSyncFiles() (wait func()) { return s.logs.StartSync() }

// OpenFile opens f beneath its root. The returned file may differ from the
// indexed one (rotated, replaced).
func (s *Searcher) OpenFile(f *File) (*os.File, error) { return s.logs.Open(f.lf) }

// Close releases the opened root directories and log files (not the index).
func (s *Searcher) Close() error {
	s.closeShadows()
	return s.logs.Close()
}
