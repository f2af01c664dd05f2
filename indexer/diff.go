package indexer

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"sort"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/compressed"
	"github.com/logdex/logdex/mmapstore/logfile"
)

// Comparing what the walk found with the previous manifest: which files
// are new, grown, renamed by rotation, truncated, replaced or deleted.

// dropDamagedSegments opens every live segment's header and small sections
// and checks them against the manifest; a damaged one is dropped and its
// files are indexed again from scratch.
func (u *update) dropDamagedSegments() {
	u.reset = map[uint64]bool{}
	// Segments a reader found damaged after opening them (a chunk whose
	// checksum did not match).
	quarantined := map[string]bool{}
	for _, name := range mmapstore.ReadQuarantine(u.opt.Dir) {
		quarantined[name] = true
	}
	segs := make([]*mmapstore.Segment, len(u.old.Segments))
	errs := make([]error, len(u.old.Segments))
	held := map[string]*mmapstore.Segment{} // Options.Open's, by name
	if u.opt.Open != nil {
		for _, s := range u.opt.Open.Segments() {
			held[filepath.Base(s.Name())] = s
		}
	}
	u.borrowed = map[*mmapstore.Segment]bool{}
	for i, ref := range u.old.Segments {
		s, err := held[ref.Name], error(nil)
		if s != nil {
			u.borrowed[s] = true
			if err = s.Damage(); err != nil {
				s = nil
			}
		} else {
			s, err = mmapstore.OpenSegment(filepath.Join(u.opt.Dir, ref.Name))
		}
		if err == nil && quarantined[ref.Name] {
			u.closeSegment(s)
			err = fmt.Errorf("%s: found damaged while in use", ref.Name)
		} else if err == nil && u.opt.Verify {
			if err = s.Verify(); err == nil {
				// A damaged seekable copy is rebuilt with its file,
				// whose segment (a compressed file's own) is dropped.
				err = s.VerifyShadows(u.opt.Dir)
			}
			if err != nil {
				u.closeSegment(s)
			}
		}
		if err == nil {
			segs[i] = s
		}
		errs[i] = err
	}
	for i, err := range mmapstore.CheckSegments(u.old, segs) {
		if errs[i] == nil {
			errs[i] = err
		}
	}
	u.oldSegs = segs // kept for Result.Index, if the run changes nothing
	if !u.opt.OpenIndex {
		u.closeOldSegments()
	}
	for i, ref := range u.old.Segments {
		if errs[i] == nil {
			u.segments = append(u.segments, ref)
			continue
		}
		u.log.Warn().Err(errs[i]).Str("segment", ref.Name).Msg("dropping damaged segment; its files will be indexed again")
		for _, id := range ref.FileIDs {
			u.reset[id] = true
		}
		u.changed = true
	}
}

// closeOldSegments closes the segments dropDamagedSegments kept open.
func (u *update) closeOldSegments() {
	if u == nil {
		return
	}
	for _, s := range u.oldSegs {
		if s != nil {
			u.closeSegment(s)
		}
	}
	u.oldSegs = nil
}

// closeSegment closes s unless it is Options.Open's.
func (u *update) closeSegment(s *mmapstore.Segment) {
	if !u.borrowed[s] {
		s.Close()
	}
}

// diff compares the walk with the old manifest and plans work items.
func (u *update) diff() error {
	old := u.old
	u.next = mmapstore.Manifest{
		TZ:            zoneName(u.opt.Location),
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
	type key = skipKey
	// Old records that can match a file found (its root still indexed,
	// not reset), by (new root, path) and, built on first need, by inode.
	matchable := func(f *mmapstore.FileRecord) (int, bool) {
		nr, ok := rootOf[f.Root]
		return nr, ok && !u.reset[f.ID]
	}
	var byIno map[inodeKey]int
	byInode := func() map[inodeKey]int {
		if byIno == nil {
			byIno = make(map[inodeKey]int, len(old.Files))
			for i := range old.Files {
				if nr, ok := matchable(&old.Files[i]); ok {
					byIno[inodeKey{nr, old.Files[i].Dev, old.Files[i].Ino}] = i
				}
			}
		}
		return byIno
	}
	used := make([]bool, len(old.Files))
	skippedBefore := map[key]mmapstore.Skipped{}
	for _, s := range old.Skipped {
		if nr, ok := rootOf[s.Root]; ok {
			skippedBefore[key{nr, s.Path}] = s
		}
	}
	u.unreadableBefore = map[key]string{}
	for k, s := range skippedBefore {
		if s.Unreadable {
			u.unreadableBefore[k] = s.Reason
		}
	}

	files := make([]found, 0, len(old.Files)+len(old.Files)/8) // (about as many as last time)
	for i, r := range u.roots {
		err := walk(i, r, u.opt.Dir, func(rel string, err error) {
			u.unreadable(found{root: i, rel: rel}, err)
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

	files = u.dropRenamedDuringWalk(files)
	// atPath[i]: the old record at files[i]'s path, -1 when none.
	atPath := joinByPath(files, old, matchable)
	var added bool
	if files, added = u.findMissedDuringWalk(files, old, rootOf, atPath); added {
		atPath = joinByPath(files, old, matchable)
	}

	// same reports whether f is the file rec describes, possibly grown.
	same := func(f found, rec *mmapstore.FileRecord) bool {
		if rec.Dev != f.dev || rec.Ino != f.ino || rec.Compression == "" && f.size < rec.Indexed {
			return false
		}
		if rec.Compression != "" && f.size != rec.Size {
			return false // a compressed file is indexed whole: any change is a new file
		}
		if rec.FPLen == 0 || f.size == rec.Size && f.mtime == rec.MTime {
			// Untouched since the last run (as searches judge files too):
			// not opened, which over many small files is most of a run.
			return true
		}
		fh, err := u.roots[f.root].openFound(f)
		if err != nil {
			return false
		}
		defer fh.Close()
		ok, err := rec.SameContent(fh)
		return err == nil && ok
	}

	matched := make([]int, len(files)) // old record index or -1
	if u.opt.ReportSeen {
		u.res.Seen = make([]logfile.Seen, 0, len(files))
	}
	unmatched := false
	for i, f := range files {
		matched[i] = -1
		if oi := atPath[i]; oi >= 0 && same(f, &old.Files[oi]) {
			matched[i] = oi
			used[oi] = true
		}
		unmatched = unmatched || matched[i] < 0
	}
	// Second pass: a file found under a new name with a known inode and
	// fingerprint was renamed (logrotate's app.log -> app.log.1).
	for i, f := range files {
		if !unmatched || matched[i] >= 0 {
			continue
		}
		if oi, ok := byInode()[inodeKey{f.root, f.dev, f.ino}]; ok && !used[oi] && same(f, &old.Files[oi]) {
			matched[i] = oi
			used[oi] = true
			u.res.Renamed++
			u.changed = true
			u.log.Info().Str("from", old.Files[oi].Path).Str("to", f.rel).Msg("file renamed")
		}
	}

	// next.Files is old.Files itself while every record so far is the old
	// one at the same place (shared: how many): a run that changes
	// nothing, as the CLI's default search makes first, copies no record.
	shared, copied := 0, false
	nextLen := func() int {
		if copied {
			return len(u.next.Files)
		}
		return shared
	}
	for i, f := range files {
		r := u.roots[f.root]
		var rec mmapstore.FileRecord
		if oi := matched[i]; oi >= 0 {
			rec = old.Files[oi]
			rec.Root, rec.Path = f.root, f.rel
			if rec.Compression == "" && rec.FPLen < logfile.FingerprintLen && f.size > rec.FPLen {
				// A file first seen short (or empty) has a short
				// fingerprint, which a rewrite after copytruncate would
				// pass: it grows with the file.
				u.extendFingerprint(r, f, &rec)
			}
		} else {
			// Only a sparse file's skip is remembered: an unreadable one is
			// tried again every run (its permissions may have been fixed),
			// and a binary file that an older index left out is indexed now.
			if s, ok := skippedBefore[key{f.root, f.rel}]; ok && (s.Reason == reasonSparse || s.Reason == reasonLargeBinary) && s.Dev == f.dev && s.Ino == f.ino && s.Size == f.size && s.MTime == f.mtime {
				u.next.Skipped = append(u.next.Skipped, s)
				continue
			}
			fh, err := r.openFound(f)
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted since the walk saw it
			}
			if err != nil {
				u.unreadable(f, err)
				continue
			}
			var head [compressed.SniffLen]byte
			n, _ := fh.ReadAt(head[:], 0)
			kind := compressed.Sniff(head[:n])
			if kind == compressed.None && logfile.HasHoles(fh, f.size) {
				fh.Close()
				u.skip(f, mmapstore.DisplayPath(r.Root, f.rel), reasonSparse)
				continue
			}
			if kind == compressed.None && f.size > binaryIndexLimit {
				if bin, _ := logfile.BinaryFromStart(fh); bin {
					fh.Close()
					u.skip(f, mmapstore.DisplayPath(r.Root, f.rel), reasonLargeBinary)
					continue
				}
			}
			fpLen := min(f.size, logfile.FingerprintLen)
			fp, ferr := logfile.Fingerprint(fh, fpLen)
			fh.Close()
			if ferr != nil {
				u.unreadable(f, ferr)
				continue
			}
			if oi := atPath[i]; oi >= 0 && !used[oi] {
				u.res.Reindexed++
				u.log.Info().Str("path", mmapstore.DisplayPath(r.Root, f.rel)).Msg("file truncated or replaced; indexing it again")
			} else {
				u.res.New++
			}
			rec = mmapstore.FileRecord{ID: u.next.NextFileID, Root: f.root, Path: f.rel, Dev: f.dev, Ino: f.ino, FPLen: fpLen, FP: fp}
			if kind != compressed.None {
				rec.Compression = kind.String()
			}
			u.next.NextFileID++
			u.changed = true
		}
		// A compressed file is read whole, once, as a stream; for other
		// files the bytes past the indexed prefix are read when the file
		// grew since the last run (a known unterminated last line is not
		// re-read).
		if rec.Compression != "" {
			if matched[i] < 0 {
				u.streams = append(u.streams, nextLen())
			}
		} else if f.size > rec.Indexed && (matched[i] < 0 || f.size != rec.Size) {
			if rec.Indexed > 0 {
				u.res.Appended++
			}
			u.items = append(u.items, workItem{rec: nextLen(), start: rec.Indexed, end: f.size, startLineNo: rec.Lines + 1})
		}
		if rec.Size != f.size || rec.MTime != f.mtime {
			u.changed = true
		}
		rec.Size, rec.MTime = f.size, f.mtime
		switch {
		case !copied && matched[i] == shared && rec == old.Files[shared]:
			shared++
		case !copied:
			u.next.Files = make([]mmapstore.FileRecord, shared, len(files))
			copy(u.next.Files, old.Files[:shared])
			copied = true
			fallthrough
		default:
			u.next.Files = append(u.next.Files, rec)
		}
		if u.opt.ReportSeen {
			u.res.Seen = append(u.res.Seen, logfile.Seen{ID: rec.ID, Root: f.root, Path: f.rel,
				Stat: logfile.Stat{Regular: true, Dev: f.dev, Ino: f.ino, Size: f.size, MTime: f.mtime}})
		}
	}
	if !copied {
		u.next.Files = slices.Clip(old.Files[:shared]) // (appending to it copies)
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
	if u.res.Unreadable != len(u.unreadableBefore) {
		u.changed = true // one became readable or went away
	}
	return nil
}

// MsgUnreadable is the message of the warning logged for each file or
// directory that cannot be read (a search leaves it to its own report).
const MsgUnreadable = "cannot read; left out of the index and tried again next run"

// unreadable records a file (or directory) that could not be read: a
// warning, a search reports it as grep does (and exits 2), and the next run
// tries it again. The manifest changes only when the set of unreadable
// files or their reasons do.
func (u *update) unreadable(f found, err error) {
	why := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		why = pe.Err.Error() // the path is said apart
	}
	display := mmapstore.DisplayPath(u.roots[f.root].Root, f.rel)
	u.log.Warn().Str("path", display).Str("reason", why).Msg(MsgUnreadable)
	u.next.Skipped = append(u.next.Skipped, mmapstore.Skipped{Root: f.root, Path: f.rel, Reason: why, Unreadable: true})
	u.res.Unreadable++
	if before, ok := u.unreadableBefore[skipKey{f.root, f.rel}]; !ok || before != why {
		u.changed = true
	}
}

// dropRenamedDuringWalk removes the names a file was seen under that it no
// longer has: a file renamed while the walk listed its directory
// (logrotate's app.log -> app.log.1) can be met under both names, and
// would be indexed twice. Names that still hold the file are all kept (hard
// links: grep -r reads each).
func (u *update) dropRenamedDuringWalk(files []found) []found {
	met := newInodeSet(files)
	if !met.hasDup() {
		return files
	}
	kept := files[:0]
	for _, f := range files {
		if met.count(inodeKey{f.root, f.dev, f.ino}) > 1 && f.rel != "" {
			fi, err := u.roots[f.root].dir.Lstat(filepath.FromSlash(f.rel))
			if err != nil {
				continue // gone since: renamed away
			}
			if dev, ino := logfile.StatIDs(fi); dev != f.dev || ino != f.ino {
				continue // the name holds another file now
			}
		}
		kept = append(kept, f)
	}
	return kept
}

// findMissedDuringWalk adds the indexed files the walk did not meet that
// are still there under another name: a file renamed while the walk read
// its directory can be missed under both names, and would be taken for
// deleted (its lines dropped, then indexed again as a new file).
// atPath is joinByPath's for files; added says whether any were added.
func (u *update) findMissedDuringWalk(files []found, old *mmapstore.Manifest, rootOf map[int]int, atPath []int) ([]found, bool) {
	// Most records are met at their own path (no search needed).
	atOwnPath := make([]bool, len(old.Files))
	for i, oi := range atPath {
		if oi >= 0 && files[i].dev == old.Files[oi].Dev && files[i].ino == old.Files[oi].Ino {
			atOwnPath[oi] = true
		}
	}
	var met inodeSet               // built on first need
	var metSince map[inodeKey]bool // added below
	// One listing a directory: after deleting thousands of a directory's
	// files, looking for each by listing its directory cost listings times
	// entries system calls.
	type dirKey struct {
		root int
		dir  string
	}
	listings := map[dirKey]map[[2]uint64]string{}
	added := false
	for oi, rec := range old.Files {
		nr, ok := rootOf[rec.Root]
		if !ok || atOwnPath[oi] || u.roots[nr].IsFile || rec.Compression != "" {
			continue
		}
		if met == nil {
			met = newInodeSet(files)
		}
		k := inodeKey{nr, rec.Dev, rec.Ino}
		if met.count(k) > 0 || metSince[k] {
			continue
		}
		dk := dirKey{nr, path.Dir(rec.Path)}
		l, ok := listings[dk]
		if !ok {
			l, _ = logfile.DirInodes(u.roots[nr].dir, filepath.FromSlash(dk.dir)) // (unreadable: none found)
			listings[dk] = l
		}
		name, ok := l[[2]uint64{rec.Dev, rec.Ino}]
		if !ok {
			continue // deleted (or moved out of its directory)
		}
		fh, fi, err := logfile.OpenAs(u.roots[nr].dir, filepath.FromSlash(name), rec.Dev, rec.Ino)
		if err != nil {
			continue // renamed again since the listing
		}
		fh.Close()
		files = append(files, found{root: nr, rel: name, dev: rec.Dev, ino: rec.Ino, size: fi.Size(), mtime: fi.ModTime().UnixNano()})
		if metSince == nil {
			metSince = map[inodeKey]bool{}
		}
		metSince[k] = true
		added = true
	}
	if added {
		sort.Slice(files, func(i, j int) bool {
			if files[i].root != files[j].root {
				return files[i].root < files[j].root
			}
			return files[i].rel < files[j].rel
		})
	}
	return files, added
}

// extendFingerprint sets rec's fingerprint to the first min(size,
// FingerprintLen) bytes of f (a failure keeps the shorter one).
func (u *update) extendFingerprint(r *root, f found, rec *mmapstore.FileRecord) {
	fh, err := r.openFound(f)
	if err != nil {
		return
	}
	defer fh.Close()
	n := min(f.size, logfile.FingerprintLen)
	if fp, err := logfile.Fingerprint(fh, n); err == nil {
		rec.FPLen, rec.FP = n, fp
	}
}

// skipKey names a file by root and relative path.
type skipKey struct {
	root int
	path string
}

// Files left out of the index, for the reasons below, are reported by
// every search whose scope holds them; their skip is remembered while
// their dev, ino, size and mtime stay the same. grep finds both kinds
// binary and prints none of their lines, only whether they match.
const (
	// A sparse file's holes read as NUL bytes, each of which ends a line:
	// a sparse lastlog is terabytes of them (logfile.HasHoles).
	reasonSparse = "sparse file (its holes would read as NUL bytes, each ending a line)"
	// A binary file costs up to 40 times what a log of its size costs to
	// index (a NUL ends a line: wtmp's padding is a line a byte), for
	// answers that are only "binary file matches" and counts.
	reasonLargeBinary = "binary file over 8 MiB (a NUL byte in its first 96 KiB)"
)

// binaryIndexLimit is the size past which a file binary from its start
// is left out: an 8 MiB file of NUL bytes takes about 3 s to index.
const binaryIndexLimit = 8 << 20

func (u *update) skip(f found, display, why string) {
	u.log.Info().Str("path", display).Str("reason", why).Msg("skipping file")
	u.next.Skipped = append(u.next.Skipped, mmapstore.Skipped{Root: f.root, Path: f.rel, Reason: why, Dev: f.dev, Ino: f.ino, Size: f.size, MTime: f.mtime})
	u.res.Skipped++
	u.changed = true
}
