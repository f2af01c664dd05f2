package indexer

// Merging in the background of live indexing. A live run (Options.
// MergeLater) only indexes and publishes, so appended lines never wait for
// a merge; Merge rewrites segments beside it and holds the index lock only
// to publish:
//
//  1. Holding MERGE.LOCK (one merge at a time, and the merge temporaries
//     are its own), read the published manifest and pick the merge sets
//     as a run would.
//  2. Without the index lock, rewrite each set into merge temporaries
//     (mergeTempPrefix), which no run's temp cleanup or collect touches.
//  3. Take the index lock, read the manifest again and check that every
//     input segment is still listed: segments are immutable and their
//     names never reused, so a listed name is the segment that was read.
//     The output then covers exactly the inputs' spans of the files live
//     in step 1. A file a live run retired since (deleted, truncated,
//     replaced: it left the manifest, and file ids are never reused) has
//     its spans retired in the output as they were in the inputs; appended
//     lines went to new segments and leave those spans alone. A file
//     found changed (shorter, or another file) before it was read again is
//     left out of the outputs, and the set published only once a run
//     retired it; one changing while it is read abandons the set (rewrite
//     checks its lines come out as indexed). An input no longer listed (a
//     live run dropped it: damaged, or all its files retired; or a time
//     zone change rebuilt the index) abandons the set too.
//  4. Rename the outputs to fresh segment numbers, publish the manifest
//     naming them in the inputs' place, and collect the inputs.
//
// A crash before step 4's publish leaves temporaries, removed by the next
// run or merge that can take MERGE.LOCK, or unlisted segments, collected
// by the next publish; the published index stays whole either way.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"golang.org/x/sys/unix"
)

const (
	// mergeTempPrefix names a background merge's outputs until it
	// publishes them under segment names.
	mergeTempPrefix = "merge-"
	// mergeLockName is held by a background merge while it runs: its
	// temporaries are stale only when nobody holds it.
	mergeLockName = "MERGE.LOCK"
)

// mergeHook is called once a background merge picked its sets
// ("chosen"), and between each set's rewrite and its publish
// ("rewritten"): tests change the logs and the index there.
var mergeHook = func(phase string) {}

// Merge merges the segments of the index in opt.Dir that are due for it
// (as Update does at the end of a run without MergeLater), without holding
// the index lock but to publish each merge. It returns at once, merging
// nothing, when another merge runs on the directory. opt.Roots is unused:
// the files are found under the roots the manifest names. Cancelling ctx
// abandons the merge in progress and removes its outputs.
func Merge(ctx context.Context, opt Options) (*Result, error) {
	t0 := time.Now()
	if opt.SegmentBytes <= 0 {
		opt.SegmentBytes = DefaultSegmentBytes
	}
	res := &Result{}
	release, ok, err := tryLock(filepath.Join(opt.Dir, mergeLockName))
	if err != nil || !ok {
		return res, err
	}
	defer release()
	removeMergeTemps(opt.Dir)

	m, err := mmapstore.ReadManifest(opt.Dir)
	if err != nil {
		if errors.Is(err, mmapstore.ErrNoIndex) {
			return res, nil
		}
		return nil, err
	}
	// The lines' times are read again as the index has them: in its zone.
	if opt.Location, err = time.LoadLocation(cmp.Or(m.TZ, zoneName(nil))); err != nil {
		return nil, fmt.Errorf("index time zone: %w", err)
	}
	roots := make([]*root, len(m.Roots))
	for i, mr := range m.Roots {
		r, err := resolveRoot(mr.Abs)
		if err != nil {
			return res, nil // a root gone: the next run retires its files
		}
		defer r.dir.Close()
		r.Root = mr
		roots[i] = r
	}
	u := &update{opt: opt, log: opt.Logger, old: m, roots: roots, res: res, next: *m, segments: m.Segments, background: true}
	sets, live := u.mergeSets()
	if len(sets) > 0 {
		mergeHook("chosen")
	}
	bp := getReadBuf()
	defer putReadBuf(bp)
	buf := *bp
	for _, set := range sets {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		refs, dropped, err := u.rewrite(ctx, set, live, buf)
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			u.log.Info().Err(err).Int("segments", len(set)).Msg("merge abandoned")
			continue
		}
		mergeHook("rewritten")
		if err := ctx.Err(); err != nil {
			for _, r := range refs {
				removeSegment(u.opt.Dir, r.Name)
			}
			return res, err
		}
		published, err := u.commitMerge(ctx, set, refs, dropped)
		if err != nil {
			return res, err
		}
		if published {
			res.Merged += len(set)
			res.NewSegs += len(refs)
			res.Changed = true
		}
	}
	res.Duration = time.Since(t0)
	return res, nil
}

// commitMerge publishes one background merge's outputs in its inputs'
// place, under the index lock, if the inputs are all still listed and the
// files left out of the outputs (dropped) retired (step 3 above); else it
// removes the outputs and reports false.
func (u *update) commitMerge(ctx context.Context, set []mergeSeg, refs []*mmapstore.SegmentRef, dropped []uint64) (bool, error) {
	dir := u.opt.Dir
	discard := func() {
		for _, r := range refs {
			removeSegment(dir, r.Name)
		}
	}
	unlock, err := lock(ctx, dir, u.log)
	if err != nil {
		discard()
		return false, fmt.Errorf("lock index: %w", err)
	}
	defer unlock()
	cur, err := mmapstore.ReadManifest(dir)
	if err != nil {
		discard()
		return false, err
	}
	listed := map[string]bool{}
	for _, s := range cur.Segments {
		listed[s.Name] = true
	}
	// An index built anew meanwhile (a damaged manifest) numbers its files
	// from 1 again and may reuse a segment's name: generations and file
	// ids only grow otherwise.
	rebuilt := cur.Generation < u.old.Generation || cur.NextFileID < u.old.NextFileID
	for _, ms := range set {
		if !listed[ms.ref.Name] || cur.TZ != u.old.TZ || rebuilt {
			u.log.Info().Str("segment", ms.ref.Name).Msg("merge abandoned: its segments changed meanwhile")
			discard()
			return false, nil
		}
	}
	for _, f := range cur.Files {
		if slices.Contains(dropped, f.ID) {
			u.log.Info().Str("path", f.Path).Msg("merge abandoned: a file changed before it was read, and no run retired it yet")
			discard()
			return false, nil
		}
	}
	next := *cur
	next.Generation++
	gone := map[string]bool{}
	for _, ms := range set {
		gone[ms.ref.Name] = true
	}
	next.Segments = slices.DeleteFunc(slices.Clone(cur.Segments), func(r mmapstore.SegmentRef) bool { return gone[r.Name] })
	for _, r := range refs {
		name := fmt.Sprintf("seg-%016x.ldx", next.NextSegmentID)
		next.NextSegmentID++
		if err := os.Rename(filepath.Join(dir, r.Name), filepath.Join(dir, name)); err != nil {
			discard() // under their names so far: renamed or not
			return false, fmt.Errorf("publish merge: %w", err)
		}
		r.Name = name
		next.Segments = append(next.Segments, *r)
	}
	sort.Slice(next.Segments, func(i, j int) bool { return next.Segments[i].Name < next.Segments[j].Name })
	if u.opt.MergesWritten != nil {
		u.opt.MergesWritten(len(set))
	}
	if err := mmapstore.PublishManifest(dir, &next); err != nil {
		if errors.Is(err, mmapstore.ErrNotPublished) {
			discard() // (under their new names)
		}
		// Else the outputs stay: the manifest was renamed into place
		// (only the directory's fsync failed).
		return false, err
	}
	// u.next stays the manifest the sets were picked from: their spans
	// index its files.
	collect(dir, &next)
	return true, nil
}

// tryLock takes the flock on path if nobody holds it.
func tryLock(path string) (release func(), ok bool, err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, err
	}
	return func() { f.Close() }, true, nil
}

// removeStaleMerges removes the temporaries of background merges that
// died (a crash, a kill), unless a merge is running.
func removeStaleMerges(dir string) {
	release, ok, err := tryLock(filepath.Join(dir, mergeLockName))
	if err != nil || !ok {
		return
	}
	defer release()
	removeMergeTemps(dir)
}

// removeMergeTemps removes merge temporaries; the caller holds MERGE.LOCK.
func removeMergeTemps(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), mergeTempPrefix) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}
