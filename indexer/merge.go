package indexer

// Merging segments. Every run that finds appended lines writes a small
// segment, so a live log would leave thousands; and segments keep the
// lines of files since deleted or replaced (retired spans) until all their
// files are gone. A run therefore ends by merging, size-tiered (as
// Lucene's TieredMergePolicy): segments fall into tiers by the log bytes
// they cover (×mergeFactor per tier), and a tier holding mergeFactor
// segments is rewritten as fewer, larger ones; a segment mostly of retired
// lines is rewritten with its tier's next merge, or alone. A merge reads
// the live spans of its segments from the log files again and builds new
// segments of them (the lines, their offsets and times come out the same;
// retired spans are simply not read), and the new manifest names them in
// the old ones' place, in the same atomic publish as the rest of the run.
// Searches never wait: they keep the snapshot they opened. A run with
// Options.MergeLater (serve's live runs) leaves the merges to Merge
// (bgmerge.go), which does them beside later runs.

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"

	"github.com/logdex/logdex/mmapstore"
)

const (
	mergeFactor   = 8       // segments per tier before they merge; each tier ×8 the last (Options.MergeFactor)
	mergeMinBytes = 1 << 20 // the smallest tier's size
	retiredRatio  = 0.5     // a segment with this share of retired lines is rewritten
)

// mergeFactor is Options.MergeFactor or its default.
func (u *update) mergeFactor() int {
	if u.opt.MergeFactor >= 2 {
		return u.opt.MergeFactor
	}
	return mergeFactor
}

// mergeSeg is a live segment considered for merging.
type mergeSeg struct {
	ref     mmapstore.SegmentRef
	live    int64 // log bytes of its live spans
	retired bool  // mostly retired lines
	tier    int
}

// merge picks merges among u.segments and rewrites them; a merge that
// cannot be done (a file changed under it) leaves its segments as they are.
// The pooled read buffer is taken only when a merge is due: a fresh 4 MiB
// is zeroed page by page, 1,000 page faults (11 ms on a VM where one costs
// 11 µs) in every update that merges nothing, a `logdex search`'s included.
func (u *update) merge(ctx context.Context) error {
	if u.opt.NoMerge {
		return nil
	}
	sets, live := u.mergeSets()
	if len(sets) == 0 {
		return nil
	}
	bp := getReadBuf()
	defer putReadBuf(bp)
	buf := *bp
	for _, set := range sets {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		refs, _, err := u.rewrite(ctx, set, live, buf)
		if err != nil {
			if ctx.Err() == nil { // (stopped: not a merge that failed)
				u.log.Warn().Err(err).Int("segments", len(set)).Msg("merge skipped")
			}
			continue
		}
		gone := map[string]bool{}
		for _, ms := range set {
			gone[ms.ref.Name] = true
		}
		u.segments = slices.DeleteFunc(u.segments, func(r mmapstore.SegmentRef) bool { return gone[r.Name] })
		for _, r := range refs {
			u.segments = append(u.segments, *r)
			u.newSegs = append(u.newSegs, r.Name)
		}
		u.res.Merged += len(set)
		u.changed = true
	}
	return nil
}

// mergeSets picks the merges due among u.segments; live maps the ids of
// u.next.Files to their index there (a span of another file is retired).
func (u *update) mergeSets() (sets [][]mergeSeg, live map[uint64]int) {
	if len(u.segments) <= u.mergeFactor() {
		return nil, nil // nothing due: no map of every file either
	}
	live = make(map[uint64]int, len(u.next.Files))
	for i, f := range u.next.Files {
		live[f.ID] = i
	}
	var cands []mergeSeg
	for _, ref := range u.segments {
		if ms, ok := u.mergeable(ref, live); ok {
			cands = append(cands, ms)
		}
	}
	return pickMerges(cands, u.opt.SegmentBytes, u.mergeFactor()), live
}

// mergeable weighs a segment's live spans (opening its small sections
// when some of its files are retired); a segment holding a compressed
// file's lines is never merged (its spans are read back only as a stream
// from the file's start).
func (u *update) mergeable(ref mmapstore.SegmentRef, live map[uint64]int) (mergeSeg, bool) {
	allLive := true
	for _, id := range ref.FileIDs {
		i, ok := live[id]
		if ok && u.next.Files[i].Compression != "" {
			return mergeSeg{}, false
		}
		allLive = allLive && ok
	}
	ms := mergeSeg{ref: ref}
	if allLive {
		// Every span is live: their bytes are the segment's raw bytes,
		// which the manifest has. (Opening each segment to weigh it
		// cost a server's live runs, each of which looks for merges
		// once the index has more segments than a tier holds, the
		// parsing of every segment several times a second.)
		ms.live = ref.RawBytes
	} else {
		s, err := mmapstore.OpenSegment(filepath.Join(u.opt.Dir, ref.Name))
		if err != nil {
			return mergeSeg{}, false
		}
		defer s.Close()
		var all int64
		for _, sp := range s.Spans() {
			n := sp.EndOffset - sp.StartOffset
			all += n
			if _, ok := live[s.Files()[sp.File].ID]; ok {
				ms.live += n
			}
		}
		ms.retired = all > 0 && float64(all-ms.live) >= retiredRatio*float64(all)
	}
	for size, f := int64(mergeMinBytes), int64(u.mergeFactor()); ms.live >= size*f; size *= f {
		ms.tier++
	}
	return ms, true
}

// pickMerges chooses the merges: every tier holding mergeFactor segments or
// more is merged, in sets of at most maxBytes of live logs; segments
// mostly retired join their tier's merge, or are rewritten alone. A
// segment holding half of maxBytes or more is as large as a merge would
// make it: it is left alone unless mostly retired (rewriting it would
// only copy it, on every run).
func pickMerges(cands []mergeSeg, maxBytes int64, factor int) [][]mergeSeg {
	tiers := map[int][]mergeSeg{}
	for _, c := range cands {
		if c.retired || c.live*2 < maxBytes {
			tiers[c.tier] = append(tiers[c.tier], c)
		}
	}
	var sets [][]mergeSeg
	flush := func(cur []mergeSeg) {
		if len(cur) > 1 || len(cur) == 1 && cur[0].retired {
			sets = append(sets, cur)
		}
	}
	for _, tier := range slices.Sorted(maps.Keys(tiers)) {
		segs := tiers[tier]
		sort.Slice(segs, func(i, j int) bool { return segs[i].ref.Name < segs[j].ref.Name })
		if len(segs) < factor {
			for _, s := range segs {
				flush([]mergeSeg{s})
			}
			continue
		}
		var cur []mergeSeg
		var bytes int64
		for _, s := range segs {
			if len(cur) > 0 && bytes+s.live > maxBytes {
				flush(cur)
				cur, bytes = nil, 0
			}
			cur = append(cur, s)
			bytes += s.live
		}
		flush(cur)
	}
	return sets
}

// outputName names a merge's next output segment: a run merging under the
// index lock numbers it as any segment; a background merge (Merge) names
// it for the directory's merge temporaries, numbered when it publishes.
func (u *update) outputName() string {
	if u.background {
		return fmt.Sprintf("%s%016x.ldx", mergeTempPrefix, u.segID.Add(1)-1)
	}
	return fmt.Sprintf("seg-%016x.ldx", u.segID.Add(1)-1)
}

// mergeSpan is a live span to read again.
type mergeSpan struct {
	rec         int // index into u.next.Files
	start, end  int64
	startLineNo int64
	lines       int64
	timed       bool
	firstTime   int64 // the span's first line's time, as indexed
}

// rewrite reads the live spans of a merge set from their files into new
// segments of at most SegmentBytes each. The lines must come out as they
// were indexed (same count, same end): else a file changed under the index
// and the merge is abandoned. A background merge leaves out the files
// that changed before it read them instead (dropped, by id): a live run
// retires them, and commitMerge publishes only once one has.
func (u *update) rewrite(ctx context.Context, set []mergeSeg, live map[uint64]int, buf []byte) (refs []*mmapstore.SegmentRef, dropped []uint64, err error) {
	var spans []mergeSpan
	for _, ms := range set {
		s, err := mmapstore.OpenSegment(filepath.Join(u.opt.Dir, ms.ref.Name))
		if err != nil {
			return nil, nil, err
		}
		for _, sp := range s.Spans() {
			ri, ok := live[s.Files()[sp.File].ID]
			if !ok {
				continue // retired: dropped
			}
			m := mergeSpan{rec: ri, start: sp.StartOffset, end: sp.EndOffset, startLineNo: sp.StartLineNo, lines: int64(sp.NumLines), timed: sp.Timed}
			if sp.Timed {
				if m.firstTime, _, err = s.LineTime(sp.FirstLine); err != nil {
					s.Close()
					return nil, nil, err
				}
			}
			spans = append(spans, m)
		}
		s.Close()
	}
	// In file order, so that a file's spans share one file-table entry.
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].rec != spans[j].rec {
			return spans[i].rec < spans[j].rec
		}
		return spans[i].start < spans[j].start
	})
	var b *builder
	var terms *termTable // the first output's, reused by the next ones
	var ids []uint64
	flush := func() error {
		if b == nil || b.lines.NumLines() == 0 {
			return nil
		}
		name := u.outputName()
		st, err := b.write(filepath.Join(u.opt.Dir, name))
		if err != nil {
			return fmt.Errorf("write segment %s: %w", name, err)
		}
		refs = append(refs, &mmapstore.SegmentRef{Name: name, Lines: st.Lines, RawBytes: st.RawBytes, Size: st.Size, FileIDs: ids})
		b, ids = nil, nil
		return nil
	}
	abandon := func(err error) ([]*mmapstore.SegmentRef, []uint64, error) {
		for _, r := range refs {
			removeSegment(u.opt.Dir, r.Name)
		}
		return nil, nil, err
	}
	skip := -1 // a file (index into u.next.Files) left out
	for i, sp := range spans {
		if ctx.Err() != nil {
			return abandon(ctx.Err())
		}
		if sp.rec == skip {
			continue
		}
		if u.background && (i == 0 || spans[i-1].rec != sp.rec) && !u.unchanged(spans[i:]) {
			skip = sp.rec
			dropped = append(dropped, u.next.Files[sp.rec].ID)
			continue
		}
		if b != nil && b.lines.RawBytes()+(sp.end-sp.start) > u.opt.SegmentBytes {
			if err := flush(); err != nil {
				return abandon(err)
			}
		}
		if b == nil {
			b = newBuilder(terms)
			b.postings = u.opt.Postings
			terms = b.terms
		}
		rec := &u.next.Files[sp.rec]
		f, err := u.roots[rec.Root].openIdentity(rec)
		if err != nil {
			return abandon(err)
		}
		sf := mmapstore.SegFile{ID: rec.ID, Root: rec.Root, Path: rec.Path, Size: rec.Size, MTime: rec.MTime, Dev: rec.Dev, Ino: rec.Ino, FPLen: rec.FPLen, FP: rec.FP}
		// Seeded with the span's first time as indexed: its lines get the
		// times they had (a first line without a timestamp carried it).
		timer := newLineTimer(b.lines, u.opt.Location, rec.MTime, sp.firstTime, sp.timed)
		complete, lines, _, err := b.readPart(f, sf, sp.start, sp.end, sp.startLineNo, timer, buf, func(int64) {}, 0)
		if err == nil && !sameFile(f, rec) {
			err = fmt.Errorf("%s: %w", rec.Path, errChangedUnder)
		}
		f.Close()
		if err != nil {
			return abandon(err)
		}
		if complete != sp.end || lines != sp.lines {
			return abandon(fmt.Errorf("%s changed under the index (%d lines to %d, not %d to %d)", rec.Path, lines, complete, sp.lines, sp.end))
		}
		if len(ids) == 0 || ids[len(ids)-1] != rec.ID {
			ids = append(ids, rec.ID)
		}
	}
	if err := flush(); err != nil {
		return abandon(err)
	}
	return refs, dropped, nil
}

// unchanged tells whether the file of spans[0] still holds the bytes of
// its spans (the first ones in spans): the same file, not shorter.
func (u *update) unchanged(spans []mergeSpan) bool {
	rec := &u.next.Files[spans[0].rec]
	var end int64
	for _, sp := range spans {
		if sp.rec != spans[0].rec {
			break
		}
		end = max(end, sp.end)
	}
	f, err := u.roots[rec.Root].openIdentity(rec)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	return err == nil && fi.Size() >= end && sameFile(f, rec)
}
