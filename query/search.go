package query

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/logdex/logdex/query/live"
)

// Cursor is a position in the ordered hit stream: hits after it are those
// with a greater (path, line), or in a time order a later (or, newest
// first, earlier) time, then path and line. It stays valid across index
// updates.
type Cursor struct {
	Path  string `json:"p"`
	Line  int64  `json:"l"`
	Time  int64  `json:"t,omitempty"`
	Timed bool   `json:"tt,omitempty"`
	// Indexed is the path the hit's file was indexed under when it was
	// shown under another (renamed since: rotated), and AtPath says the
	// hit came from the file a path holds now in place of its indexed one
	// (which comes before that one). Path order walks indexed paths: a
	// page's cursor must name its place among them, not the path shown
	// (a rotated app.log shown as app.log.1 sorts where app.log does, and
	// the next page went on from app.log.1, losing the rest of its lines).
	Indexed string `json:"i,omitempty"`
	AtPath  bool   `json:"a,omitempty"`
	// PathB64 holds Path's bytes when they are not valid UTF-8 (a JSON
	// string would replace them, and paging would compare another path).
	PathB64    []byte `json:"b,omitempty"`
	IndexedB64 []byte `json:"ib,omitempty"`
	// Dev and Ino identify the hit's file (0: not known, or a path's new
	// content): a rotation that is indexed between two pages gives it
	// another path, and the next page finds it by them, going on after
	// the cursor's line there (the file now at the cursor's path is
	// another, none of whose lines were shown).
	Dev uint64 `json:"d,omitempty"`
	Ino uint64 `json:"n,omitempty"`
	// FPLen and FP fingerprint the start of the hit's file as indexed:
	// copytruncate copies a log's lines to a new file (another inode) and
	// empties the old one, which then holds new lines; the next page goes
	// on in the copy, which starts as the cursor's file did.
	FPLen int64  `json:"fl,omitempty"`
	FP    uint64 `json:"fp,omitempty"`
	// Now says the line was of the file's content as it was when shown,
	// the file having been replaced since it was indexed (rewritten in
	// place, copytruncate's): a later page that finds the file replaced
	// goes on after that line; one made on its indexed content does not
	// (none of what it holds now was shown).
	Now bool `json:"w,omitempty"`

	// fileID is the file the cursor's lines are in now, when resolved
	// (resolveCursor) and found.
	fileID   uint64
	resolved bool
}

// sameFile reports, when the cursor knows its file's identity (known),
// whether f is that file, whatever its path now.
func (c *Cursor) sameFile(f *File) (same, known bool) {
	if c.Ino == 0 || f.atPathNow || f.lf == nil {
		return false, false
	}
	if c.resolved {
		return c.fileID != 0 && f.ID == c.fileID, true
	}
	rec := f.Record()
	return rec.Dev == c.Dev && rec.Ino == c.Ino, true
}

// resolveCursor returns c with the file its lines are in now: the file of
// its inode, unless that one no longer starts as the cursor's did (emptied
// and written again: copytruncate), then the one other file that starts so
// (the copy), if any.
func (s *Searcher) resolveCursor(c *Cursor) *Cursor {
	if c == nil || c.Ino == 0 || c.resolved {
		return c
	}
	r := *c
	r.resolved = true
	if i, ok := s.indexedInodes()[[2]uint64{c.Dev, c.Ino}]; ok {
		if f := s.files[i]; c.FPLen == 0 || s.startsAs(f, c, true) {
			r.fileID = f.ID
			return &r
		}
	}
	if c.FPLen == 0 {
		return &r
	}
	copies := 0
	dir := filepath.Dir(c.orderPath())
	for _, f := range s.files {
		// (A copy's start is read only beside the cursor's file, where
		// rotations put copies.)
		if rec := f.Record(); (rec.Dev != c.Dev || rec.Ino != c.Ino) && s.startsAs(f, c, filepath.Dir(f.Path) == dir) {
			r.fileID = f.ID
			copies++
		}
	}
	if copies > 1 {
		r.fileID = 0 // (several start alike, a banner: none is taken for it)
	}
	return &r
}

// orderPath is the indexed path the cursor's file sorts at in path order.
func (c *Cursor) orderPath() string {
	if c.Indexed != "" {
		return c.Indexed
	}
	return c.Path
}

// startsAs reports whether indexed file f starts as the cursor's file did:
// by its fingerprint when of as many bytes; of more bytes (the file grew
// past the cursor's since its page), by reading its start, when read.
func (s *Searcher) startsAs(f *File, c *Cursor, read bool) bool {
	rec := f.Record()
	return rec.FPLen == c.FPLen && rec.FP == c.FP || read && rec.FPLen > c.FPLen && s.startsWith(f.ID, c.FPLen, c.FP)
}

// Cursor is the position of the hit, for Options.After.
func (h *Hit) Cursor() Cursor {
	c := Cursor{Path: h.File.Path, Line: h.Line, Time: h.Time, Timed: h.Timed, Indexed: h.File.indexedPath, AtPath: h.File.atPathNow}
	if !h.File.atPathNow && h.File.lf != nil {
		rec := h.File.Record()
		c.Dev, c.Ino, c.FPLen, c.FP = rec.Dev, rec.Ino, rec.FPLen, rec.FP
		c.Now = h.src != nil && h.src.Stale() != nil
	}
	return c
}

// Encode renders the cursor as an opaque token.
func (c Cursor) Encode() string {
	c.PathB64, c.IndexedB64 = nil, nil
	if !utf8.ValidString(c.Path) {
		c.PathB64 = []byte(c.Path)
	}
	if !utf8.ValidString(c.Indexed) {
		c.IndexedB64 = []byte(c.Indexed)
	}
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor parses a token made by Encode.
func DecodeCursor(s string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	var c Cursor
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Line < 0 {
		return nil, errors.New("invalid cursor")
	}
	if c.PathB64 != nil {
		c.Path, c.PathB64 = string(c.PathB64), nil
	}
	if c.IndexedB64 != nil {
		c.Indexed, c.IndexedB64 = string(c.IndexedB64), nil
	}
	return &c, nil
}

// Options control one search.
type Options struct {
	Limit    int     // stop delivering after this many hits (0: all)
	After    *Cursor // deliver only hits after this position
	Text     bool    // read each hit's text
	CountAll bool    // keep counting after Limit, for an exact Total
	// TotalBudget, with CountAll, bounds the bytes of log read only to
	// count hits past the page (lines verified, bytes scanned); counts
	// the index gives without reading are always exact. When it runs
	// out, Stats.TotalAtLeast says Total is a lower bound. 0: no bound.
	TotalBudget int64
	// MaxPerFile, when positive, delivers each file's first MaxPerFile
	// hits only, and stops reading a file once they are found (grep -m,
	// and -l's first match); Total, PerFile's counts and a Histogram then
	// count those only (with no fn too). Not with Limit.
	MaxPerFile int64
	// PerFile, when set, is called once for every file in order with its
	// number of hits (zero included), as grep -c prints them.
	PerFile func(f *File, n int64) error
	// Time keeps only the lines in a time range (nil: every line).
	Time *TimeRange
	// Times gives every hit its time (Hit.Time).
	Times bool
	// Histogram, when set, counts every matching line in its time bucket
	// (pass a nil fn to only count).
	Histogram *Histogram
	// Order is the order hits are delivered in (OrderPath: grep's).
	Order Order
	// Log, when set, keeps only the files of that log (File.Log): a log
	// and its rotations, compressed ones included.
	Log string
	// Only, when not nil, keeps only these lines: per file id, the line
	// numbers [From, To) (live tail: the lines a run indexed).
	Only map[uint64]LineRange
	// Synced says the caller synced with the file watch after the search
	// was asked for (StartSyncFiles, then its wait): the search does not
	// sync again.
	Synced bool
}

// Hit is one matching line.
type Hit struct {
	File   *File
	Line   int64 // 1-based line number
	Offset int64 // byte offset of the line in the file
	Length int64 // length of the line's text (without '\n')
	Text   []byte
	Time   int64 // unix ns, with Options.Times (or a time order or filter)
	Timed  bool  // whether the line has a time (its file has timestamps)
	// Binary: the line lies where grep, finding the file binary, prints
	// "binary file matches" instead of lines (and still counts them): the
	// whole file when a NUL byte comes within grep's first read, else from
	// the first NUL on (logfile.BinaryFrom). NULs end lines, so Text has
	// none.
	Binary bool
	src    *live.Handle // the open file the line was read from
}

// Reopen returns a descriptor of its own on the file h was found in (the
// very file the search checked and read, even if its path names another
// file by now) and that file's size when it was checked. Call it during
// the hit's callback; the caller closes the file.
func (s *Searcher) Reopen(h *Hit) (*os.File, int64, error) {
	f, err := s.logs.Reopen(h.File.lf, h.src)
	if err != nil {
		return nil, 0, err
	}
	return f, h.src.Size(), nil
}

// Stats describe how a search was answered.
type Stats struct {
	Total     int64 // hits counted: all of them unless stopped at Limit without CountAll
	Truncated bool  // stopped at Limit
	// TotalAtLeast: counting stopped at Options.TotalBudget, so there
	// may be more hits than Total (the hits delivered are exact).
	TotalAtLeast bool
	Candidates   int64 // lines the index proposed
	Verified     int64 // lines read and checked
	Scanned      int64 // bytes scanned where the index could not narrow
	Segments     int
	Planned      int      // segments the query was evaluated on (a bounded page stops early)
	Terms        int      // dictionary terms looked up
	Blocks       int      // dictionary blocks read for substring atoms
	Warnings     []string // files answered from their current content, or skipped
	// Damaged lists index damage met by this search (segments whose lines
	// were read from the log files instead): the answer is still exact,
	// and the index should be rebuilt.
	Damaged []string
	// Unreadable lists the files that could not be read now (not among
	// Warnings): grep would say so and exit with status 2.
	Unreadable []Unreadable
	// Replaced lists the files found replaced or deleted since indexing
	// (answered from what they hold now, if anything).
	Replaced []uint64
}

// closedDone marks tasks that have nothing to run.
var closedDone = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Search runs q and calls fn for each hit in (path, line) order. fn's Hit
// and its Text are valid only during the call. Returning an error from fn
// stops the search with that error.
func (s *Searcher) Search(ctx context.Context, q *Query, opt Options, fn func(*Hit) error) (st *Stats, err error) {
	// A search its caller stopped is no answer, though the pipeline takes
	// a stop for the end of a page (and a server would cache it).
	defer func(caller context.Context) {
		if err == nil && caller.Err() != nil {
			err = caller.Err()
		}
	}(ctx)
	opt.After = s.resolveCursor(opt.After)
	if opt.Order != OrderPath && opt.PerFile == nil {
		return s.searchOrdered(ctx, q, opt, fn)
	}
	if err := s.ix.Acquire(); err != nil {
		return nil, err
	}
	defer s.ix.Release()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := s.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if opt.MaxPerFile > 0 && opt.Limit > 0 {
		return nil, errors.New("query: Options.MaxPerFile does not combine with Limit")
	}
	if opt.MaxPerFile > 0 && fn == nil {
		// Hits are found to be counted up to the cap, not counted whole.
		fn = func(*Hit) error { return nil }
	}
	st = &Stats{Segments: len(s.segs)}

	var plans *planSet
	if boundedPage(opt) {
		plans = s.lazyPlans(q, opt.Time, opt.CountAll)
		defer plans.release()
		defer plans.stats(st)
		defer plans.ahead.wait()
	} else {
		var err error
		if plans, err = s.plan(ctx, q, opt.Time, workers, st); err != nil {
			return nil, err
		}
	}

	var delivered atomic.Int64
	countOnly := func() bool {
		return fn == nil || (opt.Limit > 0 && delivered.Load() >= int64(opt.Limit))
	}
	var inline bool
	if plans.s != nil { // lazy: no plan to judge by yet
		inline = !plans.scans(&opt)
		plans.deferSpans = inline && !s.noInline
		plans.windows = plans.windows && plans.deferSpans // (workers cannot make windows)
	} else {
		inline = fewCandidates(plans.plans, exactRead(opt)) || fn == nil && countsByRank(plans.plans, opt)
	}
	if inline && !s.noInline {
		return st, s.searchInline(ctx, q, opt, plans, st, fn)
	}
	tasks := make(chan *task, 2*workers)
	order := make(chan *task, 4*workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ls lineState
			for t := range tasks {
				if ctx.Err() == nil {
					// Past the limit (or with no one to deliver to), hits
					// need only be counted; tasks drop lines up to the
					// paging cursor themselves.
					co := countOnly() || t.beyond
					s.run(ctx, q, t, opt.Text && !co, co, t.need, &ls)
				}
				close(t.done)
			}
		}()
	}
	prodErr := make(chan error, 1)
	var cut bool
	go func() {
		defer close(order)
		defer close(tasks)
		var err error
		cut, err = s.produce(ctx, q, opt, plans, fn == nil, func(t *task) bool {
			if !t.kind.runs() {
				t.done = closedDone
			} else {
				t.done = make(chan struct{})
				select {
				case tasks <- t:
				case <-ctx.Done():
					return false
				}
			}
			select {
			case order <- t:
				return true
			case <-ctx.Done():
				return false
			}
		})
		prodErr <- err
	}()

	err = s.consume(ctx, opt, order, st, &delivered, fn)
	cancel()
	for t := range order { // drain so the producer and workers finish
		<-t.done
		t.h.Close()
	}
	wg.Wait()
	if perr := <-prodErr; err == nil && perr != nil && !errors.Is(perr, context.Canceled) {
		err = perr
	}
	if err != nil {
		return st, err
	}
	if cut {
		// Hits may follow where counting stopped: the page has a next one.
		st.TotalAtLeast, st.Truncated = true, st.Truncated || fn != nil
	}
	return st, nil
}

// boundedPage reports whether a search is a page whose count past it is
// bounded (Options.TotalBudget, or none at all): it plans segments as it
// reaches them (lazyPlans).
func boundedPage(opt Options) bool {
	return opt.Limit > 0 && opt.PerFile == nil && opt.Histogram == nil && (!opt.CountAll || opt.TotalBudget > 0)
}

// inlineMax is the most candidate lines a search runs without its worker
// pipeline. Below it the pipeline's parallel reads gain nothing: mallory
// (304 candidates) is answered as fast inline, alone (322 against 309 µs)
// and at 64 connections (5,951 against 5,898 QPS, interleaved medians),
// with four fewer goroutines per search.
const inlineMax = 1024

// fewCandidates reports whether the index narrowed every segment to a
// handful of lines to read (no scans planned). Candidates that need no
// verification count only up to exactCap each: past the page they are
// counted, not read (a common word's 5,000 lines are a page of reads).
func fewCandidates(plans []*segPlan, exactCap uint64) bool {
	var n uint64
	for _, p := range plans {
		switch p.mode {
		case planNone:
		case planIDs:
			k := p.cands.GetCardinality()
			if p.verify != nil {
				v := p.verify.GetCardinality()
				k = v + min(k-v, exactCap)
			}
			if n += k; n > inlineMax {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// countsByRank reports whether counting q's hits reads no line: every
// segment's candidates are exact (nothing to verify), and without a time
// range or histogram a span's hits are counted by rank; with a time range,
// a span whose groups are in time order times only its two edge groups
// (any other, its candidates one by one: a bounded number of them). Such
// a count runs inline: worker goroutines would cost more than they save.
func countsByRank(plans []*segPlan, opt Options) bool {
	if opt.Histogram != nil || opt.Times {
		return false
	}
	for _, p := range plans {
		switch {
		case p.mode == planNone:
		case p.mode != planIDs || p.verify == nil || !p.verify.IsEmpty():
			return false
		case opt.Time != nil && p.cands.GetCardinality() > 1<<16:
			return false
		}
	}
	return true
}

// exactRead is how many of a segment's exact candidates a search may read
// at most: a page's worth when the hits past it are only counted (no time
// filter, histogram or per-file counts, which look at every one).
func exactRead(opt Options) uint64 {
	if opt.Limit > 0 && opt.Time == nil && opt.Histogram == nil && opt.PerFile == nil {
		return uint64(opt.Limit)
	}
	return math.MaxUint64
}

// searchInline is Search for selective queries, in the caller's
// goroutine: tasks run as they are produced (only files grown since
// indexing add scans, of their new bytes), then are delivered in order.
func (s *Searcher) searchInline(ctx context.Context, q *Query, opt Options, plans *planSet, st *Stats, fn func(*Hit) error) error {
	var ts []*task
	var ls lineState
	recorded := 0   // hits the tasks run so far hold for the page: past Limit, tasks only count
	var found int64 // hits the tasks run so far found, recorded or counted
	cut, perr := s.produce(ctx, q, opt, plans, fn == nil, func(t *task) bool {
		if !opt.CountAll && boundedPage(opt) && found > int64(opt.Limit) {
			// Nothing past the page is counted: one hit past it says a
			// next page exists, and the search ends there (the producer
			// closes what it holds, as when cancelled).
			return false
		}
		t.done = closedDone
		if t.kind.runs() {
			co := fn == nil || t.beyond || opt.Limit > 0 && recorded >= opt.Limit
			s.run(ctx, q, t, opt.Text && !co, co, t.need, &ls)
			for i := range t.hits {
				if t.hits[i].line > t.after {
					recorded++
				}
			}
			found += t.count
		}
		ts = append(ts, t)
		return true
	})
	order := make(chan *task, len(ts))
	for _, t := range ts {
		order <- t
	}
	close(order)
	var delivered atomic.Int64
	err := s.consume(ctx, opt, order, st, &delivered, fn)
	for t := range order {
		t.h.Close()
	}
	if err == nil && perr != nil {
		err = perr
	}
	if cut && err == nil {
		st.TotalAtLeast, st.Truncated = true, st.Truncated || fn != nil
	}
	return err
}

// consume delivers task results in order.
func (s *Searcher) consume(ctx context.Context, opt Options, order <-chan *task, st *Stats, delivered *atomic.Int64, fn func(*Hit) error) error {
	var cur *File
	var curCount int64
	var curHandle *live.Handle
	var curNUL int64 // 1 + offset of the current file's first known NUL, 0: none
	flushFile := func() error {
		if cur != nil && opt.PerFile != nil && !(curHandle != nil && curHandle.File() == nil && curHandle.Stale() != nil) {
			if err := opt.PerFile(cur, curCount); err != nil {
				return err
			}
		}
		curHandle.Close()
		curHandle = nil
		return nil
	}
	var hit Hit
	stopped := false
	for t := range order {
		<-t.done
		if t.kind == taskCounted {
			if err := flushFile(); err != nil {
				return err
			}
			cur = nil
			for _, c := range t.counted {
				st.Total += c.n
				st.Candidates += c.cands
				st.Verified += c.verified
				if opt.PerFile != nil {
					if err := opt.PerFile(c.f, c.n); err != nil {
						return err
					}
				}
			}
			continue
		}
		if t.kind == taskFile {
			if err := flushFile(); err != nil {
				return err
			}
			cur, curCount, curHandle, curNUL = t.file, 0, t.h, 0
			if t.h == nil || t.h.Stale() == nil {
				curNUL = t.file.Record().NULAt // else answered from bytes it did not index
			}
			if t.h != nil && t.h.Stale() != nil {
				st.Replaced = append(st.Replaced, t.file.ID)
				how := "; answered from its current content"
				switch stale := t.h.Stale(); {
				case t.h.File() == nil && !errors.Is(stale, live.ErrDeleted) && !errors.Is(stale, live.ErrNotFile):
					st.Unreadable = append(st.Unreadable, Unreadable{Path: t.file.Path, Reason: reason(stale)})
					continue
				case t.h.File() == nil: // gone
					how = ""
				case t.file.Record().Compression != "":
					how = "; its new content is searched after the next index run"
				}
				st.Warnings = append(st.Warnings, fmt.Sprintf("%s: %v%s", t.file.Path, t.h.Stale(), how))
			}
			continue
		}
		if t.err != nil {
			return fmt.Errorf("%s: %w", t.file.Path, t.err)
		}
		if t.shrunk {
			// (Said once for the file, whose every later task comes short.)
			if w := fmt.Sprintf("%s: truncated during the search; lines past its new end are missing", t.file.Path); !slices.Contains(st.Warnings, w) {
				st.Warnings = append(st.Warnings, w)
			}
			st.TotalAtLeast = true // (of the file as it was when the search began)
		}
		if t.damage != nil && !slices.Contains(st.Damaged, t.damage.Error()) {
			st.Damaged = append(st.Damaged, t.damage.Error())
		}
		if t.hist != nil && opt.Histogram != nil {
			opt.Histogram.merge(t.hist)
		}
		st.Candidates += t.candidates
		st.Verified += t.verified
		st.Scanned += t.scanned
		if t.nulAt > 0 && (curNUL == 0 || t.nulAt < curNUL) {
			curNUL = t.nulAt // found in bytes appended since indexing
		}
		if stopped {
			continue
		}
		for i := range t.hits {
			h := &t.hits[i]
			if h.line <= t.after || opt.MaxPerFile > 0 && curCount >= opt.MaxPerFile {
				continue // (before the cursor or Options.Only's range; past MaxPerFile)
			}
			st.Total++
			curCount++
			if fn == nil || (opt.Limit > 0 && delivered.Load() >= int64(opt.Limit)) {
				if opt.Limit > 0 && !opt.CountAll && fn != nil {
					st.Truncated = true
					stopped = true
					break
				}
				if opt.Limit > 0 {
					st.Truncated = true
				}
				continue
			}
			hit = Hit{File: t.file, Line: h.line, Offset: h.off, Length: h.n, Time: h.t, Timed: h.timed, Binary: h.off+h.n >= logfile.BinaryFrom(curNUL), src: t.h}
			if h.tpos >= 0 {
				hit.Text = t.buf[h.tpos : h.tpos+int(h.n)]
			}
			if err := fn(&hit); err != nil {
				return err
			}
			delivered.Add(1)
		}
		if opt.MaxPerFile > 0 {
			t.release() // (its lines past the cap were neither read nor counted)
			continue
		}
		if t.partial && !stopped {
			st.TotalAtLeast = true
			// Hits may follow where it stopped counting: a next page.
			st.Truncated = st.Truncated || opt.Limit > 0 && fn != nil
		}
		if c := t.count - int64(len(t.hits)); c > 0 && !stopped { // counted without records
			st.Total += c
			curCount += c
			if opt.Limit > 0 && fn != nil {
				st.Truncated = true
			}
		}
		t.release() // delivered: fn saw its texts already
		if stopped {
			if err := flushFile(); err != nil {
				return err
			}
			cur = nil
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return flushFile()
}

// plan evaluates the query on every segment's dictionary, in parallel.
