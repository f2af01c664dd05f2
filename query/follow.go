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
)

// LineRange is the line numbers [From, To) of a file.
type LineRange struct{ From, To int64 }

// Delta is what one index snapshot adds to the one before it, for a live
// tail.
type Delta struct {
	Lines map[uint64]LineRange // per file id, its new lines
	// Copies maps a new file to the file it is a copy of (copytruncate's):
	// it holds that file's lines under the same numbers.
	Copies map[uint64]uint64
	// Gone are the records of prev's files this snapshot no longer has
	// (truncated, replaced, deleted): pass the last few generations' to
	// Delta (see KeepGone), as a copy made of one may be indexed only a
	// run later.
	Gone []mmapstore.FileRecord
}

// maxGone bounds the records KeepGone keeps.
const maxGone = 1024

// KeepGone returns gone with d.Gone added, the most recent maxGone of
// them: what to pass to the next Delta.
func (d Delta) KeepGone(gone []mmapstore.FileRecord) []mmapstore.FileRecord {
	gone = append(gone, d.Gone...)
	if n := len(gone); n > maxGone {
		gone = append(gone[:0], gone[n-maxGone:]...)
	}
	return gone
}

// Delta is the lines this searcher's index holds that prev (an earlier
// snapshot of the same index) did not: per file id, the range of its new
// lines, what a live tail shows. nil prev: nothing is new.
//
// A file known to prev continues where it was, under a new name too (a
// log renamed by its rotation). A file new since is new from its first
// line, except a log's past: a compressed file (a rotation compressed;
// its lines were new when the live file had them) or copytruncate's copy
// of a file that prev knew (same log, same start), which continues where
// that file is (or was, when it is gone or replaced since). gone are
// files earlier snapshots dropped (earlier Deltas' Gone): copytruncate's
// copy may be indexed a run after its source was found truncated.
func (s *Searcher) Delta(prev *mmapstore.Index, gone ...mmapstore.FileRecord) Delta {
	d := map[uint64]LineRange{}
	dl := Delta{Lines: d, Copies: map[uint64]uint64{}}
	if prev == nil {
		return dl
	}
	type logKey struct {
		root int
		log  string
	}
	keyOf := func(rec *mmapstore.FileRecord) logKey {
		log, _, _ := splitRotation(rec.Path)
		return logKey{rec.Root, log}
	}
	// prev's files, by log, as prev had them: a new file that is a copy of
	// one (copytruncate's) continues after the lines prev had of it; the
	// lines the source got since are the copy's to show (the source is
	// about to be truncated), up to the copy's end.
	var sources map[logKey][]mmapstore.FileRecord
	olds := prev.Files()         // a copy: taken once
	copied := map[uint64]int64{} // source id -> lines its copy holds
	for _, f := range s.files {
		rec := f.Record()
		from := int64(1)
		if old, ok := prev.File(rec.ID); ok {
			from = old.Lines + 1
		} else if rec.Compression != "" {
			continue
		} else {
			if sources == nil {
				sources = map[logKey][]mmapstore.FileRecord{}
				// (gone holds files no later snapshot has: file ids are
				// never reused, so none is also in prev.)
				for _, recs := range [][]mmapstore.FileRecord{olds, gone} {
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
				from = src.Lines + 1
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

// copyOf returns the index of the record in olds that f is a copy of (it
// starts as that file did, and is at least as long), or -1.
func (s *Searcher) copyOf(f *File, olds []mmapstore.FileRecord) int {
	if len(olds) == 0 {
		return -1
	}
	// The indexed file, wherever it is now (rotations go on renaming).
	h, err := s.logs.Stat(f.lf, true)
	if err != nil || h.File() == nil || h.Stale() != nil {
		return -1
	}
	defer h.Close()
	for i := range olds {
		if f.Record().Indexed >= olds[i].Indexed {
			if ok, _ := logfile.SameStart(h.File(), olds[i].FPLen, olds[i].FP); ok {
				return i
			}
		}
	}
	return -1
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
		for r.From < r.To && f != nil {
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
	// the lines of the generation last read (read again when resumed
	// within it)
	gen   uint64
	lines map[uint64]LineRange
}

type pendingLines struct {
	LineRange
	gen uint64
}

// followKeep is how many generations unread lines wait for their copy.
const followKeep = 64

// Read calls fn for each matching line of d (generation gen) after pos,
// as SearchDelta, adding to the copies d holds the lines of their
// sources that earlier reads missed.
func (fl *Follower) Read(ctx context.Context, s *Searcher, q *Query, gen uint64, d Delta, after TailPos, fn func(*Hit) error) error {
	if fl.lines != nil && fl.gen == gen {
		return fl.search(ctx, s, q, gen, fl.lines, after, fn)
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
	for n, src := range d.Copies {
		if p, ok := fl.pending[src]; ok {
			add(n, p.LineRange) // in the copy, under the same numbers
			delete(fl.pending, src)
		}
	}
	for id, p := range fl.pending {
		if _, ok := s.FileByID(id); ok {
			add(id, p.LineRange) // still indexed: read again (renamed meanwhile?)
			delete(fl.pending, id)
		}
	}
	fl.gen, fl.lines = gen, lines
	return fl.search(ctx, s, q, gen, lines, after, fn)
}

func (fl *Follower) search(ctx context.Context, s *Searcher, q *Query, gen uint64, lines map[uint64]LineRange, after TailPos, fn func(*Hit) error) error {
	unread, err := s.SearchDelta(ctx, q, lines, after, fn)
	for id, r := range unread {
		if fl.pending == nil {
			fl.pending = map[uint64]pendingLines{}
		}
		if p, ok := fl.pending[id]; ok {
			r.From, r.To = min(r.From, p.From), max(r.To, p.To)
		}
		fl.pending[id] = pendingLines{r, gen}
	}
	for id, p := range fl.pending {
		if gen-p.gen > followKeep {
			delete(fl.pending, id)
		}
	}
	return err
}
