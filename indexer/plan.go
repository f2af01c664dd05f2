package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
)

// Turning the byte ranges to index into segment jobs and running them
// in parallel.

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
	// times found in the part: its first and last, and the format
	timed       bool
	first, last int64
	format      string
	nulAt       int64 // offset of the first NUL read, -1 when none
	// tailLen and tailFP fingerprint the bytes before complete (tailLen 0:
	// the part added no line, the record's stay)
	tailLen int64
	tailFP  uint64
}

// errChangedUnder: a file was renamed, rewritten or deleted while it was
// read. The run starts over (a new walk sees the file as it is now).
var errChangedUnder = errors.New("renamed or rewritten while being indexed")

// readErr is err reading planned file rec, with its path; errChangedUnder
// too when the file is gone (logrotate's rotate N deleted it, a cleanup
// did): one file's going is no reason to fail the run and drop its work.
func readErr(rec *mmapstore.FileRecord, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("%w (%w)", errChangedUnder, err)
	}
	return fmt.Errorf("read %s: %w", rec.Path, err)
}

// sameFile reports whether f (open by rec's path) is rec's inode and
// still holds its fingerprinted bytes.
func sameFile(f *os.File, rec *mmapstore.FileRecord) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	if dev, ino := logfile.StatIDs(fi); dev != rec.Dev || ino != rec.Ino {
		return false
	}
	ok, err := rec.SameContent(f)
	return err == nil && ok
}

type job struct {
	id    uint64
	parts []*part
	// stream is set for a compressed file (an index into the new file
	// records), read whole as one stream into as many segments as it
	// takes.
	stream int
}

// build cuts the work items into segment jobs and builds them in parallel.
func (u *update) build(ctx context.Context) error {
	if len(u.items) == 0 && len(u.streams) == 0 {
		return nil
	}
	u.changed = true
	var total int64
	for _, it := range u.items {
		total += it.end - it.start
	}
	for _, ri := range u.streams {
		total += u.next.Files[ri].Size // progress counts compressed bytes for these
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

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *job)
	var (
		mu       sync.Mutex
		firstErr error
		allParts []*part
		wg       sync.WaitGroup
		// the compressed files' segments, numbered at the end
		streamRefs = map[int][]*mmapstore.SegmentRef{}
		// compressed files still being written: not recorded this run
		deferred = map[int]bool{}
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
			if u.opt.WorkerStart != nil {
				u.opt.WorkerStart()
			}
			// The read buffer and term table are taken at the first job: a
			// run with less to do than workers starts some for nothing.
			var bp *[]byte
			defer func() {
				if bp != nil {
					putReadBuf(bp)
				}
			}()
			var buf []byte
			var terms *termTable // this worker's, reused segment after segment
			for j := range jobs {
				if ctx.Err() != nil {
					continue
				}
				if bp == nil {
					bp = getReadBuf()
					buf, terms = *bp, newTermTable()
				}
				if j.parts == nil {
					refs, parts, err := u.buildStream(ctx, j.stream, buf, terms, func(n int64) { done.Add(n) })
					mu.Lock()
					allParts = append(allParts, parts...)
					streamRefs[j.stream] = refs
					if errors.Is(err, errStillWritten) {
						rec := &u.next.Files[j.stream]
						u.log.Info().Str("path", rec.Path).Msg("compressed file still being written; left for the next run")
						deferred[j.stream], err = true, nil
					}
					mu.Unlock()
					if err != nil {
						fail(err)
					}
					continue
				}
				beforeJob(u.next.Files[j.parts[0].rec].Path)
				ref, err := u.buildSegment(ctx, j, buf, terms, func(n int64) { done.Add(n) })
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
	emit := func(j *job) {
		mu.Lock()
		allParts = append(allParts, j.parts...)
		mu.Unlock()
		select {
		case jobs <- j:
		case <-ctx.Done():
		}
	}
	// Compressed files first: each is one sequential stream, so they
	// overlap best with the parallel parts of the others. Largest first,
	// so that no big file is left running alone at the end while the
	// other workers idle (their segments are still numbered in file order).
	bySize := slices.Clone(u.streams)
	slices.SortStableFunc(bySize, func(a, b int) int { return cmp.Compare(u.next.Files[b].Size, u.next.Files[a].Size) })
	for _, ri := range bySize {
		emit(&job{stream: ri})
	}
	err := u.plan(ctx, emit)
	close(jobs)
	wg.Wait()
	close(stopProgress)
	progressWG.Wait()
	if err == nil || errors.Is(err, context.Canceled) && parent.Err() == nil {
		// (Planning stopped because a worker failed: the worker's error
		// is the run's, errChangedUnder above all, which starts it again.)
		err = cmp.Or(firstErr, err)
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = u.numberStreams(streamRefs)
	}
	if err != nil {
		u.removeNew()
		for _, refs := range streamRefs {
			for _, r := range refs {
				removeSegment(u.opt.Dir, r.Name)
			}
		}
		return err
	}
	u.res.Bytes = done.Load()
	u.account(allParts, deferred)
	return nil
}

// account moves each file's indexed prefix forward by the parts built, and
// drops the records in drop (and those of files that shrank meanwhile).
func (u *update) account(parts []*part, drop map[int]bool) {
	byRec := map[int][]*part{}
	for _, p := range parts {
		byRec[p.rec] = append(byRec[p.rec], p)
	}
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
			if p.nulAt >= 0 && p.nulAt < p.complete && rec.NULAt == 0 {
				rec.NULAt = p.nulAt + 1 // binary from there (in its indexed bytes)
			}
			rec.Indexed = p.complete
			if p.tailLen > 0 {
				rec.TailLen, rec.TailFP = p.tailLen, p.tailFP
			}
			rec.Lines += p.lines
			if p.timed {
				rec.Timed, rec.LastTime, rec.TimeFormat = true, p.last, p.format
			}
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
				cur = &job{id: u.segID.Add(1) - 1}
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
			if cut <= it.start {
				// Shorter than planned since (no line boundary after
				// start): the run starts over rather than cut nothing for
				// ever.
				return readErr(rec, errChangedUnder)
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
// and counts the lines before it, in the file planned (its path may hold
// another since a rotation; a file gone or changed starts the run over).
func (u *update) cut(rec *mmapstore.FileRecord, start, want, end int64) (c, lines int64, err error) {
	f, err := u.roots[rec.Root].openIdentity(rec)
	if err != nil {
		return 0, 0, readErr(rec, err)
	}
	defer func() {
		if err == nil && !sameFile(f, rec) {
			err = readErr(rec, errChangedUnder)
		}
		f.Close()
	}()
	buf := make([]byte, 1<<20)
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
		logfile.EndLinesAtNUL(data) // NULs end lines (as readPart counts them)
		if pos+int64(m) > want {
			// Count up to want, then look for the boundary.
			k := max(want-pos, 0)
			lines += int64(countNL(data[:k]))
			if j := indexNL(data[k:]); j >= 0 {
				c, extra := u.timedCut(f, rec, pos+k+int64(j)+1, end)
				return c, lines + 1 + extra, nil
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

// buildSegment builds and writes one segment with the term table terms;
// it returns nil when the job yielded no complete line.
func (u *update) buildSegment(ctx context.Context, j *job, buf []byte, terms *termTable, progress func(int64)) (*mmapstore.SegmentRef, error) {
	t0 := time.Now()
	b := newBuilder(terms)
	b.postings = u.opt.Postings
	var ids []uint64
	for _, p := range j.parts {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rec := &u.next.Files[p.rec]
		f, err := u.roots[rec.Root].openIdentity(rec)
		if err != nil {
			return nil, readErr(rec, err)
		}
		sf := mmapstore.SegFile{ID: rec.ID, Root: rec.Root, Path: rec.Path, Size: rec.Size, MTime: rec.MTime, Dev: rec.Dev, Ino: rec.Ino, FPLen: rec.FPLen, FP: rec.FP}
		// A part continuing a file already indexed starts from the time of
		// its last indexed line.
		timer := newLineTimer(b.lines, u.opt.Location, rec.MTime, rec.LastTime, rec.Timed && p.start == rec.Indexed && p.start > 0)
		complete, lines, nulAt, err := b.readPart(f, sf, p.start, p.end, p.startLineNo, timer, buf, progress, 0)
		afterPart(rec.Path)
		if err == nil && complete > p.start {
			p.tailLen = min(complete, logfile.TailLen)
			p.tailFP, err = logfile.TailFingerprint(f, complete, p.tailLen)
		}
		if err == nil && !sameFile(f, rec) || errors.Is(err, io.ErrUnexpectedEOF) {
			// The bytes read are the indexed file's only if the path
			// still named it and its start is unchanged after the read
			// (a rotation may rename it, copytruncate rewrite it, at any
			// moment), and it was not cut short under the read: else the
			// run starts over.
			err = errChangedUnder
		}
		f.Close()
		if err != nil {
			return nil, readErr(rec, err)
		}
		p.complete, p.lines, p.nulAt = complete, lines, nulAt
		p.timed, p.first, p.last, p.format = timer.any, timer.first, timer.carry, timer.p.Format()
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
