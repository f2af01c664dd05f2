// Package indexer owns the write side of logdex's index: it walks log
// directories, decides what is new since the last run (new files, appended
// bytes, rotated, truncated and deleted files), builds immutable segments in
// parallel and publishes them with a new manifest atomically. The format is
// specified in FORMAT.md; mmapstore reads it.
package indexer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/rs/zerolog"
	"golang.org/x/sys/unix"
)

// DefaultSegmentBytes is the raw log bytes a segment covers at most. It
// bounds the builder's memory (about 2-3x this per worker) and keeps the
// number of mapped segments low.
const DefaultSegmentBytes = 128 << 20

// Options configure an indexing run.
type Options struct {
	Dir          string   // index directory; created if missing
	Roots        []string // PATH arguments, as given
	SegmentBytes int64    // 0: DefaultSegmentBytes
	Workers      int      // 0: GOMAXPROCS
	Logger       zerolog.Logger
	// Progress, when set, is called about every 200 ms with bytes read so
	// far and bytes planned.
	Progress func(done, total int64)
	// Postings forces one list encoding ("varint" or "roaring") instead of
	// the smaller of both per list; for measuring the choice.
	Postings string
	// Verify checks every checksum of every live segment (reading them
	// whole) instead of only their headers; damaged ones are rebuilt.
	Verify bool
}

// Result summarizes a run.
type Result struct {
	Files      int // live files after the run
	New        int
	Appended   int
	Renamed    int
	Reindexed  int // truncated or replaced files indexed again from the start
	Deleted    int
	Skipped    int
	Lines      int64 // lines indexed by this run
	Bytes      int64 // bytes read by this run
	Duration   time.Duration
	Segments   int   // live segments after the run
	NewSegs    int   // segments written by this run
	IndexBytes int64 // total size of the live segments and manifest
	RawBytes   int64 // total log bytes covered by the index
	Changed    bool  // whether a new manifest was published
}

// DefaultDir is where the index for roots lives when --index is not given:
// the user cache directory, keyed by the roots' absolute paths, so that read-
// only log directories stay untouched.
func DefaultDir(roots []string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the index (set --index): %w", err)
	}
	key, err := RootsKey(roots)
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "logdex", key), nil
}

// RootsKey names a set of roots independently of their order and spelling.
func RootsKey(roots []string) (string, error) {
	abs := make([]string, len(roots))
	for i, r := range roots {
		a, err := filepath.Abs(r)
		if err != nil {
			return "", err
		}
		abs[i] = a
	}
	slices.Sort(abs)
	abs = slices.Compact(abs)
	return fmt.Sprintf("%016x", xxhash.Sum64String(strings.Join(abs, "\x00"))), nil
}

// lock takes the index directory's exclusive lock for the whole run: two
// indexers must not publish over each other. Readers take no lock.
func lock(dir string, log zerolog.Logger) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, "LOCK"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		log.Info().Str("dir", dir).Msg("waiting for another indexer to finish")
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
			f.Close()
			return nil, err
		}
	}
	return func() { f.Close() }, nil
}

// workItem is a byte range of one file to index.
type workItem struct {
	rec         int // index into the new file records
	start, end  int64
	startLineNo int64
}

type part struct {
	workItem
	lines    int64
	complete int64
}

type job struct {
	id    uint64
	parts []*part
}

// Update brings the index in opt.Dir up to date with opt.Roots.
func Update(ctx context.Context, opt Options) (*Result, error) {
	t0 := time.Now()
	log := opt.Logger
	if opt.SegmentBytes <= 0 {
		opt.SegmentBytes = DefaultSegmentBytes
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if len(opt.Roots) == 0 {
		return nil, errors.New("no paths to index")
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("index directory: %w", err)
	}
	unlock, err := lock(opt.Dir, log)
	if err != nil {
		return nil, fmt.Errorf("lock index: %w", err)
	}
	defer unlock()
	removeTemps(opt.Dir)

	old, err := mmapstore.ReadManifest(opt.Dir)
	if errors.Is(err, mmapstore.ErrNoIndex) {
		old = &mmapstore.Manifest{NextFileID: 1, NextSegmentID: 1}
	} else if err != nil {
		// A corrupt manifest loses only the index, never logs: rebuild.
		log.Warn().Err(err).Msg("index manifest unreadable; rebuilding the index")
		old = &mmapstore.Manifest{NextFileID: 1, NextSegmentID: 1}
	}

	roots := make([]*root, len(opt.Roots))
	for i, g := range opt.Roots {
		r, err := resolveRoot(g)
		if err != nil {
			return nil, err
		}
		defer r.dir.Close()
		roots[i] = r
	}

	u := &update{opt: opt, log: log, old: old, roots: roots, res: &Result{}}
	u.dropDamagedSegments()
	if err := u.diff(); err != nil {
		return nil, err
	}
	if err := u.build(ctx); err != nil {
		return nil, err
	}
	if err := u.publish(); err != nil {
		return nil, err
	}
	u.res.Duration = time.Since(t0)
	return u.res, nil
}

type update struct {
	opt   Options
	log   zerolog.Logger
	old   *mmapstore.Manifest
	roots []*root
	res   *Result

	next     mmapstore.Manifest
	items    []workItem
	reset    map[uint64]bool // file ids whose lines were in a damaged segment
	segments []mmapstore.SegmentRef
	changed  bool
	newSegs  []string
}

func removeTemps(dir string) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// dropDamagedSegments opens every live segment's header and small sections;
// a damaged one is dropped and its files are indexed again from scratch.
func (u *update) dropDamagedSegments() {
	u.reset = map[uint64]bool{}
	for _, ref := range u.old.Segments {
		s, err := mmapstore.OpenSegment(filepath.Join(u.opt.Dir, ref.Name))
		if err == nil && u.opt.Verify {
			if err = s.Verify(); err != nil {
				s.Close()
			}
		}
		if err == nil {
			s.Close()
			u.segments = append(u.segments, ref)
			continue
		}
		u.log.Warn().Err(err).Str("segment", ref.Name).Msg("dropping damaged segment; its files will be indexed again")
		for _, id := range ref.FileIDs {
			u.reset[id] = true
		}
		u.changed = true
	}
}

// diff compares the walk with the old manifest and plans work items.
func (u *update) diff() error {
	old := u.old
	u.next = mmapstore.Manifest{
		Generation:    old.Generation + 1,
		NextFileID:    max(old.NextFileID, 1),
		NextSegmentID: max(old.NextSegmentID, 1),
	}
	// Map old root indexes to new ones by absolute path.
	rootOf := map[int]int{}
	for i, r := range u.roots {
		u.next.Roots = append(u.next.Roots, r.Root)
		for j, or := range old.Roots {
			if or.Abs == r.Abs {
				rootOf[j] = i
			}
		}
	}
	if len(old.Roots) != len(u.roots) || len(rootOf) != len(u.roots) {
		u.changed = true
	}
	type key struct {
		root int
		path string
	}
	type ikey struct {
		root     int
		dev, ino uint64
	}
	byPath := map[key]int{}
	byIno := map[ikey]int{}
	used := make([]bool, len(old.Files))
	for i, f := range old.Files {
		nr, ok := rootOf[f.Root]
		if !ok || u.reset[f.ID] {
			continue
		}
		byPath[key{nr, f.Path}] = i
		byIno[ikey{nr, f.Dev, f.Ino}] = i
	}
	skippedBefore := map[key]mmapstore.Skipped{}
	for _, s := range old.Skipped {
		if nr, ok := rootOf[s.Root]; ok {
			skippedBefore[key{nr, s.Path}] = s
		}
	}

	var files []found
	for i, r := range u.roots {
		err := walk(i, r, u.opt.Dir, func(rel, why string) {
			u.log.Warn().Str("path", mmapstore.DisplayPath(r.Root, rel)).Str("reason", why).Msg("skipping")
			u.next.Skipped = append(u.next.Skipped, mmapstore.Skipped{Root: i, Path: rel, Reason: why})
		}, func(f found) { files = append(files, f) })
		if err != nil {
			return fmt.Errorf("walk %s: %w", r.Given, err)
		}
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].root != files[j].root {
			return files[i].root < files[j].root
		}
		return files[i].rel < files[j].rel
	})

	// same reports whether f is the file rec describes, possibly grown.
	same := func(f found, rec *mmapstore.FileRecord) bool {
		if rec.Dev != f.dev || rec.Ino != f.ino || f.size < rec.Indexed {
			return false
		}
		if rec.FPLen == 0 {
			return true
		}
		fh, err := u.roots[f.root].open(f.rel)
		if err != nil {
			return false
		}
		defer fh.Close()
		ok, err := logfile.SameStart(fh, rec.FPLen, rec.FP)
		return err == nil && ok
	}

	matched := make([]int, len(files)) // old record index or -1
	for i, f := range files {
		matched[i] = -1
		if oi, ok := byPath[key{f.root, f.rel}]; ok && same(f, &old.Files[oi]) {
			matched[i] = oi
			used[oi] = true
		}
	}
	// Second pass: a file found under a new name with a known inode and
	// fingerprint was renamed (logrotate's app.log -> app.log.1).
	for i, f := range files {
		if matched[i] >= 0 {
			continue
		}
		if oi, ok := byIno[ikey{f.root, f.dev, f.ino}]; ok && !used[oi] && same(f, &old.Files[oi]) {
			matched[i] = oi
			used[oi] = true
			u.res.Renamed++
			u.changed = true
			u.log.Info().Str("from", old.Files[oi].Path).Str("to", f.rel).Msg("file renamed")
		}
	}

	for i, f := range files {
		r := u.roots[f.root]
		display := mmapstore.DisplayPath(r.Root, f.rel)
		var rec mmapstore.FileRecord
		if oi := matched[i]; oi >= 0 {
			rec = old.Files[oi]
			rec.Root, rec.Path = f.root, f.rel
		} else {
			if s, ok := skippedBefore[key{f.root, f.rel}]; ok && s.Dev == f.dev && s.Ino == f.ino && s.Size == f.size && s.MTime == f.mtime {
				u.next.Skipped = append(u.next.Skipped, s)
				continue
			}
			fh, err := r.open(f.rel)
			if err != nil {
				u.skip(f, display, err.Error())
				continue
			}
			bin, err := logfile.IsBinary(fh)
			if err == nil && bin {
				fh.Close()
				u.skip(f, display, "binary file (NUL byte in the first 8 KiB)")
				continue
			}
			fpLen := min(f.size, logfile.FingerprintLen)
			fp, ferr := logfile.Fingerprint(fh, fpLen)
			fh.Close()
			if err != nil || ferr != nil {
				u.skip(f, display, errors.Join(err, ferr).Error())
				continue
			}
			if oi, ok := byPath[key{f.root, f.rel}]; ok && !used[oi] {
				u.res.Reindexed++
				u.log.Info().Str("path", display).Msg("file truncated or replaced; indexing it again")
			} else {
				u.res.New++
			}
			rec = mmapstore.FileRecord{ID: u.next.NextFileID, Root: f.root, Path: f.rel, Dev: f.dev, Ino: f.ino, FPLen: fpLen, FP: fp}
			u.next.NextFileID++
			u.changed = true
		}
		// Bytes past the indexed prefix are read when the file grew since
		// the last run (a known unterminated last line is not re-read).
		if f.size > rec.Indexed && (matched[i] < 0 || f.size != rec.Size) {
			if rec.Indexed > 0 {
				u.res.Appended++
			}
			u.items = append(u.items, workItem{rec: len(u.next.Files), start: rec.Indexed, end: f.size, startLineNo: rec.Lines + 1})
		}
		if rec.Size != f.size || rec.MTime != f.mtime {
			u.changed = true
		}
		rec.Size, rec.MTime = f.size, f.mtime
		u.next.Files = append(u.next.Files, rec)
	}
	for i, f := range old.Files {
		if !used[i] {
			if _, ok := rootOf[f.Root]; ok && !u.reset[f.ID] {
				u.res.Deleted++
			}
			u.changed = true
		}
	}
	u.res.Deleted -= u.res.Reindexed
	return nil
}

func (u *update) skip(f found, display, why string) {
	u.log.Info().Str("path", display).Str("reason", why).Msg("skipping file")
	u.next.Skipped = append(u.next.Skipped, mmapstore.Skipped{Root: f.root, Path: f.rel, Reason: why, Dev: f.dev, Ino: f.ino, Size: f.size, MTime: f.mtime})
	u.res.Skipped++
	u.changed = true
}

// build cuts the work items into segment jobs and builds them in parallel.
func (u *update) build(ctx context.Context) error {
	if len(u.items) == 0 {
		return nil
	}
	u.changed = true
	var total int64
	for _, it := range u.items {
		total += it.end - it.start
	}
	var done atomic.Int64
	stopProgress := make(chan struct{})
	var progressWG sync.WaitGroup
	if u.opt.Progress != nil {
		progressWG.Add(1)
		go func() {
			defer progressWG.Done()
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-t.C:
					u.opt.Progress(done.Load(), total)
				case <-stopProgress:
					u.opt.Progress(done.Load(), total)
					return
				}
			}
		}()
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *job)
	var (
		mu       sync.Mutex
		firstErr error
		allParts []*part
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	for w := 0; w < u.opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, readBlock)
			for j := range jobs {
				if ctx.Err() != nil {
					continue
				}
				ref, err := u.buildSegment(ctx, j, buf, func(n int64) { done.Add(n) })
				if err != nil {
					fail(err)
					continue
				}
				mu.Lock()
				if ref != nil {
					u.segments = append(u.segments, *ref)
					u.newSegs = append(u.newSegs, ref.Name)
					u.res.NewSegs++
				}
				mu.Unlock()
			}
		}()
	}
	err := u.plan(ctx, func(j *job) {
		mu.Lock()
		allParts = append(allParts, j.parts...)
		mu.Unlock()
		select {
		case jobs <- j:
		case <-ctx.Done():
		}
	})
	close(jobs)
	wg.Wait()
	close(stopProgress)
	progressWG.Wait()
	if err == nil {
		err = firstErr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		for _, name := range u.newSegs {
			os.Remove(filepath.Join(u.opt.Dir, name))
		}
		return err
	}
	u.res.Bytes = done.Load()
	u.account(allParts)
	return nil
}

// account moves each file's indexed prefix forward by the parts built.
func (u *update) account(parts []*part) {
	byRec := map[int][]*part{}
	for _, p := range parts {
		byRec[p.rec] = append(byRec[p.rec], p)
	}
	drop := map[int]bool{}
	for ri, ps := range byRec {
		sort.Slice(ps, func(i, j int) bool { return ps[i].start < ps[j].start })
		rec := &u.next.Files[ri]
		for i, p := range ps {
			u.res.Lines += p.lines
			if i < len(ps)-1 && p.complete < ps[i+1].start {
				// The file shrank while being read: what follows is unsure.
				u.log.Warn().Str("path", rec.Path).Msg("file shrank while indexing; it will be indexed again")
				drop[ri] = true
				break
			}
			rec.Indexed = p.complete
			rec.Lines += p.lines
		}
	}
	if len(drop) > 0 {
		kept := u.next.Files[:0]
		for i, f := range u.next.Files {
			if !drop[i] {
				kept = append(kept, f)
			}
		}
		u.next.Files = kept
	}
}

// plan groups work items into jobs of about SegmentBytes, splitting large
// items at line boundaries. Splitting needs the line number where the
// second half starts, so the first half's newlines are counted (a fast
// sequential pass that also warms the page cache for the builders).
func (u *update) plan(ctx context.Context, emit func(*job)) error {
	target := u.opt.SegmentBytes
	var cur *job
	var curBytes int64
	flush := func() {
		if cur != nil && len(cur.parts) > 0 {
			emit(cur)
		}
		cur, curBytes = nil, 0
	}
	for _, it := range u.items {
		for it.start < it.end {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if cur == nil {
				cur = &job{id: u.next.NextSegmentID}
				u.next.NextSegmentID++
			}
			room := target - curBytes
			if it.end-it.start <= room {
				cur.parts = append(cur.parts, &part{workItem: it})
				curBytes += it.end - it.start
				break
			}
			if room < target/8 && len(cur.parts) > 0 {
				flush()
				continue
			}
			rec := &u.next.Files[it.rec]
			cut, lines, err := u.cut(rec, it.start, it.start+room, it.end)
			if err != nil {
				return err
			}
			first := it
			first.end = cut
			cur.parts = append(cur.parts, &part{workItem: first})
			flush()
			it.start, it.startLineNo = cut, it.startLineNo+lines
		}
	}
	flush()
	return nil
}

// cut finds the first line boundary at or after want (within [start, end])
// and counts the lines before it.
func (u *update) cut(rec *mmapstore.FileRecord, start, want, end int64) (int64, int64, error) {
	f, err := u.roots[rec.Root].open(rec.Path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	var lines int64
	for pos := start; pos < end; {
		n := int(min(int64(len(buf)), end-pos))
		m, err := f.ReadAt(buf[:n], pos)
		if m == 0 {
			if err == nil || errors.Is(err, io.EOF) {
				return pos, lines, nil
			}
			return 0, 0, err
		}
		data := buf[:m]
		if pos+int64(m) > want {
			// Count up to want, then look for the boundary.
			k := max(want-pos, 0)
			lines += int64(countNL(data[:k]))
			if j := indexNL(data[k:]); j >= 0 {
				return pos + k + int64(j) + 1, lines + 1, nil
			}
			lines += int64(countNL(data[k:]))
			pos += int64(m)
			want = pos
			continue
		}
		lines += int64(countNL(data))
		pos += int64(m)
	}
	return end, lines, nil
}

// buildSegment builds and writes one segment; it returns nil when the job
// yielded no complete line.
func (u *update) buildSegment(ctx context.Context, j *job, buf []byte, progress func(int64)) (*mmapstore.SegmentRef, error) {
	t0 := time.Now()
	b := newBuilder()
	b.postings = u.opt.Postings
	var ids []uint64
	for _, p := range j.parts {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rec := &u.next.Files[p.rec]
		f, err := u.roots[rec.Root].open(rec.Path)
		if err != nil {
			return nil, err
		}
		sf := mmapstore.SegFile{ID: rec.ID, Root: rec.Root, Path: rec.Path, Size: rec.Size, MTime: rec.MTime, Dev: rec.Dev, Ino: rec.Ino, FPLen: rec.FPLen, FP: rec.FP}
		complete, lines, err := b.readPart(f, sf, p.start, p.end, p.startLineNo, buf, progress)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", rec.Path, err)
		}
		p.complete, p.lines = complete, lines
		if lines > 0 && (len(ids) == 0 || ids[len(ids)-1] != rec.ID) {
			ids = append(ids, rec.ID)
		}
	}
	if b.lines.NumLines() == 0 {
		return nil, nil
	}
	tRead := time.Since(t0)
	name := fmt.Sprintf("seg-%016x.ldx", j.id)
	st, err := b.write(filepath.Join(u.opt.Dir, name))
	if err != nil {
		return nil, fmt.Errorf("write segment %s: %w", name, err)
	}
	u.log.Debug().Str("segment", name).Uint32("lines", st.Lines).Int("terms", st.Terms).Int64("raw_bytes", st.RawBytes).
		Int64("size", st.Size).Dur("read", tRead).Dur("write", time.Since(t0)-tRead).Msg("segment written")
	return &mmapstore.SegmentRef{Name: name, Lines: st.Lines, RawBytes: st.RawBytes, Size: st.Size, FileIDs: ids}, nil
}

// publish writes the new manifest atomically and removes segment files no
// longer referenced. A crash before the manifest's rename leaves the old
// index intact; leftovers are collected by the next run.
func (u *update) publish() error {
	live := map[uint64]bool{}
	for _, f := range u.next.Files {
		live[f.ID] = true
	}
	for _, s := range u.segments {
		keep := false
		for _, id := range s.FileIDs {
			if live[id] {
				keep = true
				break
			}
		}
		if keep {
			u.next.Segments = append(u.next.Segments, s)
		} else {
			u.changed = true
		}
	}
	sort.Slice(u.next.Segments, func(i, j int) bool { return u.next.Segments[i].Name < u.next.Segments[j].Name })
	if u.changed {
		if err := mmapstore.PublishManifest(u.opt.Dir, &u.next); err != nil {
			return err
		}
		u.collect()
	} else {
		u.next = *u.old
	}
	u.res.Changed = u.changed
	u.res.Files = len(u.next.Files)
	u.res.Segments = len(u.next.Segments)
	for _, s := range u.next.Segments {
		u.res.IndexBytes += s.Size
	}
	if st, err := os.Stat(filepath.Join(u.opt.Dir, mmapstore.ManifestName)); err == nil {
		u.res.IndexBytes += st.Size()
	}
	for _, f := range u.next.Files {
		u.res.RawBytes += f.Indexed
	}
	return nil
}

// collect deletes segment files the new manifest does not list.
func (u *update) collect() {
	keep := map[string]bool{}
	for _, s := range u.next.Segments {
		keep[s.Name] = true
	}
	ents, _ := os.ReadDir(u.opt.Dir)
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "seg-") && strings.HasSuffix(n, ".ldx") && !keep[n] {
			os.Remove(filepath.Join(u.opt.Dir, n))
		}
	}
}
