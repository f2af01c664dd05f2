package query

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/logdex/logdex/query/live"
)

// LineRange is the line numbers [From, To) of a file.
type LineRange struct{ From, To int64 }

// Delta is what one index snapshot adds to the one before it, for a live
// tail.
type Delta struct {
	Lines map[uint64]LineRange // per file id, its new lines
	// Copies maps a file to the file it is a copy of (copytruncate's),
	// found by this delta: it holds that file's lines under the same
	// numbers.
	Copies map[uint64]uint64
	// CopiesBefore are the copies earlier deltas found that this snapshot
	// still has, whose source this snapshot or the one before has (same
	// map; nil when none): a reader that resumes after the delta that found
	// one still learns of it before the source's lines can go unread.
	CopiesBefore map[uint64]uint64
	// Gone are the records of prev's files this snapshot no longer has
	// (truncated, replaced, deleted).
	Gone []mmapstore.FileRecord
	// Renumbered: the index was built anew since prev (a damaged manifest,
	// a new time zone) and its file ids name other files. Lines are then
	// new against prev's record of the same file (device and inode); the
	// earlier deltas, Gone and Copies mean nothing here (they are empty).
	Renumbered bool
}

// History is what a live tail's earlier deltas leave for the next one
// (Add each delta to it): the files they dropped, as copytruncate's copy
// may be indexed a run after its source was found truncated, and the
// copies they found, as a copy may be indexed while it is being written
// and grow by its source's lines later. The zero History is empty.
type History struct {
	gone   []mmapstore.FileRecord
	copies map[uint64]uint64 // copy id -> source id
}

// maxGone bounds the records a History keeps.
const maxGone = 1024

// Add records d: its gone files (the most recent maxGone) and its copies.
func (h *History) Add(d Delta) {
	h.gone = append(h.gone, d.Gone...)
	if n := len(h.gone); n > maxGone {
		h.gone = append(h.gone[:0], h.gone[n-maxGone:]...)
	}
	for _, rec := range d.Gone {
		delete(h.copies, rec.ID) // a copy no longer indexed grows no more
	}
	for c, src := range d.Copies {
		if h.copies == nil {
			h.copies = map[uint64]uint64{}
		}
		h.copies[c] = src
	}
}

// goneRecord is the last record of a dropped file.
func (h *History) goneRecord(id uint64) (mmapstore.FileRecord, bool) {
	for i := len(h.gone) - 1; i >= 0; i-- {
		if h.gone[i].ID == id {
			return h.gone[i], true
		}
	}
	return mmapstore.FileRecord{}, false
}

// Delta is the lines this searcher's index holds that prev (an earlier
// snapshot of the same index) did not: per file id, the range of its new
// lines, what a live tail shows. nil prev: nothing is new. h is what the
// earlier deltas left (nil: none).
//
// A file known to prev continues where it was, under a new name too (a
// log renamed by its rotation). A file new since is new from its first
// line, except a log's past: a compressed file (a rotation compressed;
// its lines were new when the live file had them) or copytruncate's copy
// of a file that prev knew or h holds (same log, same start), which
// continues where that file is (or was, when it is gone or replaced
// since). A copy goes on continuing its source while it grows (a copy in
// progress when a run saw it), and a file that had no lines in prev may
// still turn out to be one.
func (s *Searcher) Delta(prev *mmapstore.Index, h *History) Delta {
	d := map[uint64]LineRange{}
	dl := Delta{Lines: d, Copies: map[uint64]uint64{}}
	if prev == nil {
		return dl
	}
	if h == nil {
		h = &History{}
	}
	type logKey struct {
		root int
		log  string
	}
	keyOf := func(rec *mmapstore.FileRecord) logKey {
		log, _, _ := splitRotation(s.rotationPath(rec))
		if rec.Path == "" {
			return logKey{-1, log} // (files given one by one: their roots differ)
		}
		return logKey{rec.Root, log}
	}
	olds := prev.Files() // a copy: taken once
	// prevOf is prev's record of the file rec describes: by id, or by
	// device and inode when ids were renumbered.
	prevOf := func(rec *mmapstore.FileRecord) (mmapstore.FileRecord, bool) { return prev.File(rec.ID) }
	if renumbered(s.files, s.ix, prev) {
		dl.Renumbered, h = true, &History{}
		type ident struct {
			root     int
			dev, ino uint64
		}
		byIdent := make(map[ident]mmapstore.FileRecord, len(olds))
		for _, old := range olds {
			byIdent[ident{old.Root, old.Dev, old.Ino}] = old
		}
		prevOf = func(rec *mmapstore.FileRecord) (mmapstore.FileRecord, bool) {
			old, ok := byIdent[ident{rec.Root, rec.Dev, rec.Ino}]
			if !ok || old.FPLen == rec.FPLen && old.FP != rec.FP || rec.Lines < old.Lines {
				return old, false // (or truncated and rewritten meanwhile)
			}
			return old, true
		}
		olds = nil // (no copies are looked for, no file is gone: ids differ)
	}
	// shown is how many of a file's lines a tail has had: all that prev or,
	// once it is dropped, its last record held.
	shown := func(id uint64) int64 {
		if old, ok := prev.File(id); ok {
			return old.Lines
		}
		if old, ok := h.goneRecord(id); ok {
			return old.Lines
		}
		return 0
	}
	// prev's files, by log, as prev had them: a new file that is a copy of
	// one (copytruncate's) continues after the lines prev had of it; the
	// lines the source got since are the copy's to show (the source is
	// about to be truncated), up to the copy's end.
	var sources map[logKey][]mmapstore.FileRecord
	copied := map[uint64]int64{} // source id -> lines its copy holds
	for _, f := range s.files {
		rec := f.Record()
		from := int64(1)
		old, known := prevOf(&rec)
		if known {
			from = old.Lines + 1
		}
		switch src, isCopy := h.copies[rec.ID]; {
		case isCopy:
			from = max(from, shown(src)+1)
			copied[src] = max(copied[src], rec.Lines)
			_, inPrev := prev.File(src)
			if _, inNow := s.FileByID(src); inPrev || inNow {
				if dl.CopiesBefore == nil {
					dl.CopiesBefore = map[uint64]uint64{}
				}
				dl.CopiesBefore[rec.ID] = src
			}
		case !known && rec.Compression != "":
			continue
		case known && old.Lines > 0, rec.Compression != "":
		default: // new, or nothing of it shown yet: a copy?
			if sources == nil {
				sources = map[logKey][]mmapstore.FileRecord{}
				// (gone holds files no later snapshot has: file ids are
				// never reused, so none is also in prev.)
				for _, recs := range [][]mmapstore.FileRecord{olds, h.gone} {
					for _, old := range recs {
						if old.FPLen > 0 && old.Compression == "" {
							sources[keyOf(&old)] = append(sources[keyOf(&old)], old)
						}
					}
				}
			}
			k := keyOf(&rec)
			if i := s.copyOf(f, sources[k]); i >= 0 {
				src := sources[k][i]
				from = max(from, src.Lines+1)
				copied[src.ID] = max(copied[src.ID], rec.Lines)
				dl.Copies[rec.ID] = src.ID
				sources[k] = slices.Delete(sources[k], i, i+1)
			}
		}
		if rec.Lines >= from {
			d[rec.ID] = LineRange{From: from, To: rec.Lines + 1}
		}
	}
	for _, old := range olds {
		if _, ok := s.FileByID(old.ID); !ok {
			dl.Gone = append(dl.Gone, old)
		}
	}
	for id, n := range copied {
		if r, ok := d[id]; ok {
			if r.From = max(r.From, n+1); r.From < r.To {
				d[id] = r
			} else {
				delete(d, id)
			}
		}
	}
	return dl
}

// renumbered reports whether an id of files names another file (device
// and inode) in prev: the index was built anew. (A file keeps its id while
// it is the same file, renamed too; a replaced file gets a new one.)
func renumbered(files []*File, now, prev *mmapstore.Index) bool {
	// File ids and generations only grow, but in an index built anew
	// (its generation counts from 1 again; a new time zone keeps it but
	// numbers the files from 1).
	if now.Generation() < prev.Generation() || now.NextFileID() < prev.NextFileID() {
		return true
	}
	for _, f := range files {
		if old, ok := prev.File(f.ID); ok {
			if rec := f.Record(); old.Dev != rec.Dev || old.Ino != rec.Ino {
				return true
			}
		}
	}
	return false
}

// copyOf returns the index of the record in olds that f is a copy of, or
// -1: f starts as that file did and is at least as long. A rotated name
// may also be a copy of the live file in progress (logrotate copies in
// chunks): shorter than it, it starts as that file did, or, shorter than
// the start the live file's record fingerprints, it is the start of that
// file as it is now (the source not truncated yet).
func (s *Searcher) copyOf(f *File, olds []mmapstore.FileRecord) int {
	if len(olds) == 0 {
		return -1
	}
	h := s.asIndexed(f) // wherever it is now (rotations go on renaming)
	if h == nil {
		return -1
	}
	defer h.Close()
	rec := f.Record()
	for i := range olds {
		old := &olds[i]
		if old.ID == rec.ID {
			continue
		}
		// A copy in progress is shorter than its source: a rotated name
		// may be one of the live file.
		inProgress := isRotation(s.rotationPath(&rec)) && !isRotation(s.rotationPath(old))
		switch {
		case rec.Indexed < old.Indexed && !inProgress:
		case h.Size() >= old.FPLen: // (the copy now: it may have grown since the run)
			if ok, _ := logfile.SameStart(h.File(), old.FPLen, old.FP); ok {
				return i
			}
		case inProgress && rec.FPLen > 0:
			if s.startsWith(old.ID, rec.FPLen, rec.FP) {
				return i
			}
		}
	}
	return -1
}

// rotationPath is the path a record's log and rotation are read from: its
// path under its root, or, for a file given by itself (no path under its
// root), the file's own absolute path. (A copy in progress has a rotated
// name, and a new live file that merely starts as the old one did, a
// start-up banner, is not taken for a copy.)
func (s *Searcher) rotationPath(rec *mmapstore.FileRecord) string {
	if rec.Path == "" && rec.Root >= 0 && rec.Root < len(s.roots) {
		return s.roots[rec.Root].Abs
	}
	return rec.Path
}

// startsWith reports whether the indexed file id, as it is now, starts
// with the n bytes fingerprinted fp.
func (s *Searcher) startsWith(id uint64, n int64, fp uint64) bool {
	f, ok := s.FileByID(id)
	if !ok {
		return false
	}
	h := s.asIndexed(f)
	if h == nil {
		return false
	}
	defer h.Close()
	ok, _ = logfile.SameStart(h.File(), n, fp)
	return ok
}

// asIndexed opens f to read, wherever it is now, when it still holds
// what was indexed of it (nil otherwise); the caller closes the handle.
func (s *Searcher) asIndexed(f *File) *live.Handle {
	h, err := s.logs.Stat(f.lf, true)
	if err != nil || h.File() == nil || h.Stale() != nil {
		return nil
	}
	return h
}

// TailPos is a position in the hits of one delta, which are ordered by
// file id, then line: the hits after it have a greater (File, Line).
type TailPos struct {
	File uint64
	Line int64
}

// TailID is the id of a live-tail hit: the index generation whose delta
// held it and its position there ("generation:file:line").
type TailID struct {
	Gen uint64
	TailPos
}

// TailDone is the TailPos past every hit of a delta.
var TailDone = TailPos{File: math.MaxUint64}

// String renders the id; a whole generation done is its number alone.
func (id TailID) String() string {
	if id.TailPos == TailDone {
		return strconv.FormatUint(id.Gen, 10)
	}
	return fmt.Sprintf("%d:%d:%d", id.Gen, id.File, id.Line)
}

// ParseTailID parses what TailID.String makes.
func ParseTailID(s string) (TailID, error) {
	var id TailID
	parts := strings.Split(s, ":")
	if len(parts) == 1 {
		var err error
		if id.Gen, err = strconv.ParseUint(s, 10, 64); err != nil {
			return id, errors.New("invalid tail id: want generation or generation:file:line")
		}
		id.TailPos = TailDone
		return id, nil
	}
	if len(parts) != 3 {
		return id, errors.New("invalid tail id: want generation or generation:file:line")
	}
	var err [3]error
	id.Gen, err[0] = strconv.ParseUint(parts[0], 10, 64)
	id.File, err[1] = strconv.ParseUint(parts[1], 10, 64)
	id.Line, err[2] = strconv.ParseInt(parts[2], 10, 64)
	if errors.Join(err[:]...) != nil || id.Line < 0 {
		return id, errors.New("invalid tail id: want generation or generation:file:line")
	}
	return id, nil
}

// tailBatch bounds the hits one search of SearchDelta holds.
const tailBatch = 512

// SearchDelta calls fn, in order of file id then line, for each line of
// lines after pos that matches q, with its text. Only indexed lines are
// looked at, so every line is in exactly one delta. It returns the ranges
// it could not read: of files replaced or deleted since they were indexed
// (copytruncate's truncation), whose lines may be in a copy that a later
// delta holds (Follower carries them there).
func (s *Searcher) SearchDelta(ctx context.Context, q *Query, lines map[uint64]LineRange, after TailPos, fn func(*Hit) error) (unread map[uint64]LineRange, err error) {
	s.logs.Sync() // what the files hold now, not what the watch last saw
	var batch []Hit
	var text []byte
	ids := make([]uint64, 0, len(lines))
	for id := range lines {
		if id >= after.File {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		r := lines[id]
		if id == after.File {
			r.From = max(r.From, after.Line+1)
		}
		f, _ := s.FileByID(id)
		if f == nil && r.From < r.To {
			// Dropped since the delta (truncated, replaced, deleted): its
			// lines may be in a copy a Follower knows of.
			if unread == nil {
				unread = map[uint64]LineRange{}
			}
			unread[id] = r
			continue
		}
		for r.From < r.To {
			// A batch is passed on only once its file is seen to still
			// hold the lines read (copytruncate may empty it meanwhile).
			batch = batch[:0]
			text = text[:0]
			st, err := s.Search(ctx, q, Options{Text: true, Times: true, Limit: tailBatch, Only: map[uint64]LineRange{id: r}}, func(h *Hit) error {
				text = append(text, h.Text...)
				batch = append(batch, *h)
				return nil
			})
			if err != nil {
				return unread, err
			}
			if len(st.Replaced) > 0 || !s.logs.Holds(f.lf) {
				if unread == nil {
					unread = map[uint64]LineRange{}
				}
				unread[id] = r
				break
			}
			off := 0
			for i := range batch {
				h := &batch[i]
				h.Text, off = text[off:off+len(h.Text)], off+len(h.Text)
				if err := fn(h); err != nil {
					return unread, err
				}
			}
			if len(batch) < tailBatch {
				break
			}
			r.From = batch[len(batch)-1].Line + 1
		}
	}
	return unread, nil
}

// Follower reads successive deltas for one reader of a live tail. Lines
// it could not read (their file was truncated after indexing, as
// copytruncate does right after copying, or renamed twice) are looked for
// again with the next deltas, for a while: in the file if it is still
// indexed, in the copy a later delta brings.
type Follower struct {
	pending map[uint64]pendingLines
	// copies: source id -> the id of its copy, from every delta read (a
	// source's lines may go unread a generation after its copy was
	// found, while the copy was being written), while the copy is indexed
	copies map[uint64]uint64
	// snapGen is the index generation of the last snapshot read with: one
	// below it is an index built anew, whose file ids mean other files.
	snapGen uint64
	// the lines of the generation last read (read again when resumed
	// within it)
	gen   uint64
	lines map[uint64]LineRange
}

// Waiting reports whether lines wait to be read from a later generation
// (a reader need not read a delta with no new lines otherwise).
func (fl *Follower) Waiting() bool { return len(fl.pending) > 0 }

type pendingLines struct {
	LineRange
	gen uint64 // the index generation of the snapshot that could not read them
}

// followKeep is how many index generations unread lines wait for their
// copy: generations of the snapshots read with, not of the deltas read (a
// reader far behind reads many deltas with one snapshot, whose copy does
// not grow meanwhile).
const followKeep = 64

// Read calls fn for each matching line of d (generation gen) after pos,
// as SearchDelta, adding to the copies d holds the lines of their
// sources that earlier reads missed.
func (fl *Follower) Read(ctx context.Context, s *Searcher, q *Query, gen uint64, d Delta, after TailPos, fn func(*Hit) error) error {
	if fl.lines != nil && fl.gen == gen {
		return fl.search(ctx, s, q, fl.lines, after, fn)
	}
	lines, cloned := d.Lines, false
	add := func(id uint64, p LineRange) {
		if !cloned {
			lines, cloned = maps.Clone(d.Lines), true
		}
		r, has := lines[id]
		if !has {
			r = p
		}
		r.From, r.To = min(r.From, p.From), max(r.To, p.To)
		lines[id] = r
	}
	// A file holds only its indexed lines: the rest of the pending lines of
	// key waits for a later generation (a copy found while being written).
	var later map[uint64]pendingLines
	addHeld := func(key, id uint64, f *File, p pendingLines) {
		if end := f.Record().Lines + 1; p.To > end {
			if later == nil {
				later = map[uint64]pendingLines{}
			}
			later[key] = pendingLines{LineRange{max(p.From, end), p.To}, p.gen}
			p.To = end
		}
		if p.From < p.To {
			add(id, p.LineRange)
		}
	}
	fl.learnCopies(s, d)
	for id, p := range fl.pending {
		if n, ok := fl.copies[id]; ok {
			delete(fl.pending, id)
			f, _ := s.FileByID(n)
			addHeld(id, n, f, p) // in the copy, under the same numbers
		} else if f, ok := s.FileByID(id); ok {
			delete(fl.pending, id)
			addHeld(id, id, f, p) // still indexed: read again (renamed meanwhile?)
		}
	}
	for id, p := range later {
		if fl.pending == nil {
			fl.pending = map[uint64]pendingLines{}
		}
		fl.pending[id] = p
	}
	fl.gen, fl.lines = gen, lines
	if len(lines) == 0 {
		return nil // nothing new nor pending to read here (no sync, no search)
	}
	return fl.search(ctx, s, q, lines, after, fn)
}

// learnCopies records the copies d names, as s has them, and forgets the
// copies s no longer has; with s from an index built anew (a lower
// generation), whose file ids mean other files, it forgets everything
// first.
func (fl *Follower) learnCopies(s *Searcher, d Delta) {
	now := s.Index().Generation()
	if now < fl.snapGen {
		fl.pending, fl.copies = nil, nil
	}
	fl.snapGen = now
	for _, copies := range []map[uint64]uint64{d.CopiesBefore, d.Copies} {
		for n, src := range copies {
			if fl.copies == nil {
				fl.copies = map[uint64]uint64{}
			}
			// Two copies of one source (a dated copy and another): the
			// one holding more of its lines.
			if n0, ok := fl.copies[src]; ok && n0 != n {
				if f0, ok := s.FileByID(n0); ok {
					if f, ok := s.FileByID(n); !ok || f0.Record().Lines >= f.Record().Lines {
						continue
					}
				}
			}
			fl.copies[src] = n
		}
	}
	for src, n := range fl.copies {
		if _, ok := s.FileByID(n); !ok {
			delete(fl.copies, src) // the copy is gone too
		}
	}
}

func (fl *Follower) search(ctx context.Context, s *Searcher, q *Query, lines map[uint64]LineRange, after TailPos, fn func(*Hit) error) error {
	unread, err := s.SearchDelta(ctx, q, lines, after, fn)
	now := s.Index().Generation()
	for id, r := range unread {
		if fl.pending == nil {
			fl.pending = map[uint64]pendingLines{}
		}
		g := now
		if p, ok := fl.pending[id]; ok {
			r.From, r.To, g = min(r.From, p.From), max(r.To, p.To), min(g, p.gen)
		}
		fl.pending[id] = pendingLines{r, g}
	}
	for id, p := range fl.pending {
		if now < p.gen || now > p.gen+followKeep { // (below: an index built anew)
			delete(fl.pending, id)
		}
	}
	return err
}
