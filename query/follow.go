package query

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
)

// LineRange is the line numbers [From, To) of a file.
type LineRange struct{ From, To int64 }

// Delta is the lines this searcher's index holds that prev (an earlier
// snapshot of the same index) did not: per file id, the range of its new
// lines, what a live tail shows. nil prev: nothing is new.
//
// A file known to prev continues where it was, under a new name too (a
// log renamed by its rotation). A file new since is new from its first
// line, except a log's past: a compressed file (a rotation compressed;
// its lines were new when the live file had them) or copytruncate's copy
// of a file that prev knew and that is gone or replaced since (same log,
// same start), which continues where that file was.
func (s *Searcher) Delta(prev *mmapstore.Index) map[uint64]LineRange {
	d := map[uint64]LineRange{}
	if prev == nil {
		return d
	}
	type logKey struct {
		root int
		log  string
	}
	keyOf := func(rec *mmapstore.FileRecord) logKey {
		log, _, _ := splitRotation(rec.Path)
		return logKey{rec.Root, log}
	}
	var gone map[logKey][]mmapstore.FileRecord // prev's files this index no longer has
	for _, f := range s.files {
		rec := f.Record()
		from := int64(1)
		if old, ok := prev.File(rec.ID); ok {
			from = old.Lines + 1
		} else if rec.Compression != "" {
			continue
		} else {
			if gone == nil {
				gone = map[logKey][]mmapstore.FileRecord{}
				for _, old := range prev.Files() {
					if _, ok := s.ix.File(old.ID); !ok && old.FPLen > 0 && old.Compression == "" {
						gone[keyOf(&old)] = append(gone[keyOf(&old)], old)
					}
				}
			}
			k := keyOf(&rec)
			if i := s.copyOf(f, gone[k]); i >= 0 {
				from = gone[k][i].Lines + 1
				gone[k] = slices.Delete(gone[k], i, i+1)
			}
		}
		if rec.Lines >= from {
			d[rec.ID] = LineRange{From: from, To: rec.Lines + 1}
		}
	}
	return d
}

// copyOf returns the index of the record in olds that f is a copy of (it
// starts as that file did, and is at least as long), or -1.
func (s *Searcher) copyOf(f *File, olds []mmapstore.FileRecord) int {
	if len(olds) == 0 {
		return -1
	}
	fh, err := s.logs.Open(f.lf)
	if err != nil {
		return -1
	}
	defer fh.Close()
	for i := range olds {
		if f.Record().Indexed >= olds[i].Indexed {
			if ok, _ := logfile.SameStart(fh, olds[i].FPLen, olds[i].FP); ok {
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
// delta after pos that matches q, with its text. Only indexed lines are
// looked at (a file replaced since is left to the next delta, which has
// it under a new id), so every line is in exactly one delta.
func (s *Searcher) SearchDelta(ctx context.Context, q *Query, delta map[uint64]LineRange, after TailPos, fn func(*Hit) error) error {
	ids := make([]uint64, 0, len(delta))
	for id := range delta {
		if id >= after.File {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		r := delta[id]
		if id == after.File {
			r.From = max(r.From, after.Line+1)
		}
		for r.From < r.To {
			n, last := 0, int64(0)
			_, err := s.Search(ctx, q, Options{Text: true, Times: true, Limit: tailBatch, Only: map[uint64]LineRange{id: r}}, func(h *Hit) error {
				n, last = n+1, h.Line
				return fn(h)
			})
			if err != nil {
				return err
			}
			if n < tailBatch {
				break
			}
			r.From = last + 1
		}
	}
	return nil
}
