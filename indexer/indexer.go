// Package indexer decides what goes into logdex's index: it walks log
// directories, compares what it finds with the last run (new files,
// appended bytes, rotated, truncated and deleted files), reads and
// tokenizes the new lines into segments in parallel, and publishes them
// with a new manifest. The on-disk format, both ways, belongs to mmapstore
// (mmapstore/FORMAT.md); this package only calls its writer.
package indexer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/rs/zerolog"
)

// DefaultSegmentBytes is the raw log bytes a segment covers at most. It
// bounds the builder's memory (about 2-3x this per worker) and keeps the
// number of mapped segments low.
const DefaultSegmentBytes = 128 << 20

// MaxSegmentBytes bounds SegmentBytes: positions inside a segment's
// sections are 32-bit (FORMAT.md), so a segment must stay well under 4 GiB.
const MaxSegmentBytes = 4<<30 - 1<<20

// Options configure an indexing run.
type Options struct {
	Dir          string   // index directory; created if missing
	Roots        []string // PATH arguments, as given
	SegmentBytes int64    // 0: DefaultSegmentBytes
	Workers      int      // 0: GOMAXPROCS
	// WorkerStart, when set, runs first on each worker goroutine that
	// reads and tokenizes log files (serve locks it to a thread of lower
	// priority, so that live runs yield the CPU to searches).
	WorkerStart func()
	Logger      zerolog.Logger
	// Progress, when set, is called about every 200 ms with bytes read so
	// far and bytes planned.
	Progress func(done, total int64)
	// Postings forces one list encoding ("varint" or "roaring") instead of
	// the smaller of both per list; for measuring the choice.
	Postings string
	// Verify checks every checksum of every live segment (reading them
	// whole) instead of only their headers; damaged ones are rebuilt.
	Verify bool
	// NoMerge leaves small segments unmerged (tests and measurements).
	NoMerge bool
	// MergeFactor is how many segments of a tier merge, and the size
	// ratio of tiers (below 2: 8). Crash tests lower it so that runs
	// merge often.
	MergeFactor int
	// MergeLater leaves merging to Merge (serve's background merger), so
	// that a live run publishes its new lines at once; Result.MergeDue
	// says when enough segments wait for it.
	MergeLater bool
	// MergesWritten, when set, is called once a run's merges are written
	// and before the manifest naming them is published, with the number
	// of segments merged: the moment a crash leaves the most behind, where
	// serve's SIGKILL test makes the server pause. Merge calls it with
	// the index lock held, after its outputs took their segment names.
	MergesWritten func(merged int)
	// Location is the zone of timestamps that do not write one (nil: the
	// index's, UTC for a new one). Changing it rebuilds the index: the
	// times in it depend on it.
	Location *time.Location
	// ReportSeen fills Result.Seen (the CLI's search-after-update).
	ReportSeen bool
	// OpenIndex fills Result.Index when the run changes nothing.
	OpenIndex bool
	// Open, when set, is an index of Dir the caller holds open for the
	// run (a server's snapshot): the segments of it the manifest still
	// lists are checked as it has them, not mapped and parsed again, and
	// left open. (At a server's start its first run re-opened every
	// segment the server had just opened.) Not with OpenIndex.
	Open *mmapstore.Index
}

// Result summarizes a run.
type Result struct {
	Files      int // live files after the run
	New        int
	Appended   int
	Renamed    int
	Reindexed  int // truncated or replaced files indexed again from the start
	Deleted    int
	Skipped    int   // sparse files left out
	Unreadable int   // files and directories that could not be read (tried again next run)
	Lines      int64 // lines indexed by this run
	Bytes      int64 // bytes read by this run
	Duration   time.Duration
	Segments   int   // live segments after the run
	NewSegs    int   // segments written by this run
	IndexBytes int64 // total size of the live segments and manifest
	RawBytes   int64 // total log bytes covered by the index
	Changed    bool  // whether a new manifest was published
	Merged     int   // segments merged into others by this run
	MergeDue   bool  // MergeLater: more segments than a tier holds, Merge may find work
	// Seen is what the walk found at each live file's path, with
	// Options.ReportSeen: a search right after the run need not look again.
	Seen []logfile.Seen
	// Index, with Options.OpenIndex, is the index open as the run found
	// it, when the run changed nothing (nil otherwise): the manifest it
	// read and the segments it opened and checked, which a search right
	// after the run need not read and check again. The caller closes it.
	Index *mmapstore.Index
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
func lock(ctx context.Context, dir string, log zerolog.Logger) (func(), error) {
	// Waited for by polling tryLock, not a blocking flock: a wait ends
	// when ctx does (serve shutting down while a long run of another
	// process holds the lock).
	wait := 5 * time.Millisecond
	for logged := false; ; logged = true {
		release, ok, err := tryLock(filepath.Join(dir, "LOCK"))
		if ok || err != nil {
			return release, err
		}
		if !logged {
			log.Info().Str("dir", dir).Msg("waiting for another indexer to finish")
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// Update brings the index in opt.Dir up to date with opt.Roots.
func Update(ctx context.Context, opt Options) (*Result, error) {
	t0 := time.Now()
	log := opt.Logger
	if opt.SegmentBytes <= 0 {
		opt.SegmentBytes = DefaultSegmentBytes
	}
	if opt.SegmentBytes > MaxSegmentBytes {
		return nil, fmt.Errorf("segment size %d MiB over the limit of %d MiB", opt.SegmentBytes>>20, MaxSegmentBytes>>20)
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
	unlock, err := lock(ctx, opt.Dir, log)
	if err != nil {
		return nil, fmt.Errorf("lock index: %w", err)
	}
	defer unlock()
	if removeTemps(opt.Dir) {
		removeStaleMerges(opt.Dir)
	}

	old, err := readManifest(opt.Dir, log)
	if err != nil {
		return nil, err
	}
	// The zone of timestamps without one sticks to the index: only an
	// explicit change rebuilds it (its times depend on it).
	oldTZ := cmp.Or(old.TZ, zoneName(nil))
	if opt.Location == nil {
		opt.Location = time.UTC
		if loc, err := time.LoadLocation(oldTZ); err == nil {
			opt.Location = loc
		}
	} else if tz := zoneName(opt.Location); tz != oldTZ && len(old.Files) > 0 {
		log.Warn().Str("from", oldTZ).Str("to", tz).Msg("time zone changed: rebuilding the index (its times depend on it)")
		old = &mmapstore.Manifest{Generation: old.Generation, NextFileID: 1, NextSegmentID: max(old.NextSegmentID, nextSegmentID(opt.Dir))}
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

	var u *update
	var nextSeg uint64
	defer func() { u.closeOldSegments() }() // unless handed over
	for attempt := 1; ; attempt++ {
		u.closeOldSegments()
		u = &update{opt: opt, log: log, old: old, roots: roots, res: &Result{}}
		u.dropDamagedSegments()
		if err := u.diff(); err != nil {
			return nil, err
		}
		afterDiff()
		u.segID.Store(max(u.next.NextSegmentID, nextSeg))
		err := u.build(ctx)
		if errors.Is(err, errChangedUnder) && attempt < maxAttempts {
			// A rotation moved a file while it was read: look again.
			log.Debug().Err(err).Int("attempt", attempt).Msg("indexing again")
			nextSeg = u.segID.Load()
			continue
		}
		if err != nil {
			return nil, err
		}
		break
	}
	if opt.MergeLater {
		u.res.MergeDue = len(u.segments) > u.mergeFactor()
	} else if err := u.merge(ctx); err != nil {
		u.removeNew()
		return nil, err
	}
	if opt.MergesWritten != nil && u.res.Merged > 0 {
		opt.MergesWritten(u.res.Merged)
	}
	u.next.NextSegmentID = u.segID.Load()
	if err := u.publish(); err != nil {
		return nil, err
	}
	if opt.OpenIndex && opt.Open == nil && !u.res.Changed && u.old.Generation > 0 {
		// Nothing changed: every segment opened and matched (a damaged
		// one would have been dropped, a change), and the manifest read
		// is the one published (generation 0: there is none).
		u.res.Index = mmapstore.NewIndex(opt.Dir, u.old, u.oldSegs, make([]error, len(u.oldSegs)))
		u.oldSegs = nil
	}
	u.res.Duration = time.Since(t0)
	return u.res, nil
}

// afterDiff is called between a run's look at the files and its reads of
// them (tests change the files there).
var afterDiff = func() {}

// beforeJob is called by a worker before it reads a segment job's files,
// with the first one's path (tests change files there).
var beforeJob = func(path string) {}

// afterPart is called after a worker read a part of a file, with its
// path, before it fingerprints the part's end (tests change files there).
var afterPart = func(path string) {}

// maxAttempts bounds the runs over files that keep changing under the
// reads (a log rotated while it is read); the next run tries again.
const maxAttempts = 3

type update struct {
	opt   Options
	log   zerolog.Logger
	old   *mmapstore.Manifest
	roots []*root
	res   *Result

	next     mmapstore.Manifest
	items    []workItem
	streams  []int           // compressed files to read whole (indexes into next.Files)
	segID    atomic.Uint64   // the next segment number, while building
	reset    map[uint64]bool // file ids whose lines were in a damaged segment
	segments []mmapstore.SegmentRef
	changed  bool
	// oldSegs: old's segments as dropDamagedSegments opened them, with
	// Options.OpenIndex (nil where one could not be).
	oldSegs []*mmapstore.Segment
	// borrowed: the segments of oldSegs that are Options.Open's, not
	// closed here.
	borrowed map[*mmapstore.Segment]bool
	// unreadableBefore: the last run's unreadable files and why.
	unreadableBefore map[skipKey]string
	newSegs          []string
	// background: a Merge without the index lock, writing its outputs
	// as merge temporaries.
	background bool
}

// readManifest reads the last run's manifest. An index of another format
// version, or one whose manifest is damaged, is rebuilt from the logs (it
// loses only the index, never a log line); any other error (EIO, EACCES)
// is the caller's to see, not a reason to throw the index away.
func readManifest(dir string, log zerolog.Logger) (*mmapstore.Manifest, error) {
	m, err := mmapstore.ReadManifest(dir)
	var ve *mmapstore.VersionError
	switch {
	case err == nil:
		return m, nil
	case errors.Is(err, mmapstore.ErrNoIndex):
	case errors.As(err, &ve):
		log.Warn().Str("dir", dir).Uint32("found", ve.Found).Uint32("version", mmapstore.FormatVersion).
			Msgf("index format version %d is not this build's (%d): rebuilding the index from the logs", ve.Found, mmapstore.FormatVersion)
	case errors.Is(err, mmapstore.ErrCorrupt):
		log.Warn().Err(err).Msg("index manifest damaged: rebuilding the index from the logs")
	default:
		return nil, fmt.Errorf("read index manifest: %w", err)
	}
	// Segment names are never reused, even across a rebuild: a reader
	// still holding the old manifest must not find a new segment under a
	// name it expects.
	return &mmapstore.Manifest{NextFileID: 1, NextSegmentID: nextSegmentID(dir)}, nil
}

// nextSegmentID is one past the highest segment number in dir.
func nextSegmentID(dir string) uint64 {
	next := uint64(1)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		var id uint64
		if _, err := fmt.Sscanf(e.Name(), "seg-%016x.ldx", &id); err == nil && id >= next {
			next = id + 1
		}
	}
	return next
}

// zoneName names the zone of timestamps that do not write one.
func zoneName(loc *time.Location) string {
	if loc == nil {
		return "UTC"
	}
	return loc.String()
}
