package query

// Rotation history: a log and its rotations (app.log, app.log.1,
// app.log.2.gz, app.log-20261129, app.log-20261129.gz, app.log.2026-11-29)
// are one log. A file's log is its path without a compression suffix and
// without a rotation suffix (a number, or a date); its rotation is 0 for
// the live file and counts up into the past: numbered rotations by their
// number, dated ones newest first after them.

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/logdex/logdex/query/live"
)

// datedSuffix is compiled on first use: every search process would pay
// for it at start-up, and only names ending in a digit that is not a
// rotation number need it.
var datedSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[-_.]([0-9]{4}-?[0-9]{2}-?[0-9]{2})(?:[-_.]?[0-9]{2,6})?$`)
})

// compressedExt reports whether ext (from the last dot on) is a
// compression suffix.
func compressedExt(ext string) bool {
	switch ext {
	case ".gz", ".zst", ".bz2", ".xz":
		return true
	}
	return false
}

// numberedSuffix returns the rotation number ending base (".1" to
// ".9999") and where its dot is; ok false when there is none.
func numberedSuffix(base string) (n, dot int, ok bool) {
	dot = strings.LastIndexByte(base, '.')
	digits := base[dot+1:]
	if dot < 0 || len(digits) < 1 || len(digits) > 4 || strings.Trim(digits, "0123456789") != "" {
		return 0, 0, false
	}
	n, _ = strconv.Atoi(digits)
	return n, dot, true
}

// splitRotation returns the log a path belongs to, its rotation number (0
// for the live file or a dated rotation) and, for a dated rotation, the
// date as written (empty otherwise).
func splitRotation(path string) (log string, n int, date string) {
	base := path
	if i := strings.LastIndexByte(path, '.'); i >= 0 && compressedExt(path[i:]) {
		base = path[:i]
	}
	if base == "" || base[len(base)-1] < '0' || base[len(base)-1] > '9' {
		return base, 0, "" // both rotation suffixes end in a digit (most paths do not: no regexp)
	}
	if n, dot, ok := numberedSuffix(base); ok {
		return base[:dot], n, ""
	}
	if m := datedSuffix().FindStringSubmatchIndex(base); m != nil && m[0] > strings.LastIndexByte(base, '/')+1 {
		return base[:m[0]], 0, strings.ReplaceAll(base[m[2]:], "-", "")
	}
	return base, 0, ""
}

// assignRotations sets every file's log and rotation.
func assignRotations(files []*File) {
	type dated struct {
		f    *File
		date string
	}
	byLog := map[string][]dated{}
	maxN := map[string]int{}
	for _, f := range files {
		log, n, date := splitRotation(f.Path)
		f.log, f.rotation = log, n
		if date != "" {
			byLog[log] = append(byLog[log], dated{f, date})
		}
		if n > 0 { // (a missing entry reads 0: most files are not rotations)
			maxN[log] = max(maxN[log], n)
		}
	}
	for log, ds := range byLog {
		slices.SortStableFunc(ds, func(a, b dated) int { return strings.Compare(b.date, a.date) }) // newest first
		for i, d := range ds {
			d.f.rotation = maxN[log] + 1 + i
		}
	}
}

// Log is the log the file belongs to: its path without rotation and
// compression suffixes.
func (f *File) Log() string { return f.log }

// Rotation is 0 for a log's live file, and counts up into its past.
func (f *File) Rotation() int { return f.rotation }

// inodeOnce keeps a search from reading one file twice when logs are
// rotated while it runs: a file renamed from one indexed name to another
// (logrotate shifting app.log.1 to app.log.2) can be met under both, as
// the indexed file under its old name and as the new content of the
// other. Each inode is read once: as its own index entry when met there
// first, else as the current content of the name it was met under.
type inodeOnce struct {
	s     *Searcher
	own   []bool             // file index -> answered as indexed (its own inode)
	other map[[2]uint64]bool // inodes read as another name's current content
	byIno map[[2]uint64]int  // indexed inode -> file index
}

func (o *inodeOnce) take(fi int, f *File, h *live.Handle) bool {
	if o.own == nil {
		o.own = make([]bool, len(o.s.files))
	}
	if h.Stale() == nil {
		rec := f.Record()
		if o.other[[2]uint64{rec.Dev, rec.Ino}] {
			return false
		}
		o.own[fi] = true
		return true
	}
	dev, ino, ok := h.Identity()
	if !ok {
		return true // gone or unreadable: nothing is read
	}
	k := [2]uint64{dev, ino}
	if o.other[k] {
		return false
	}
	if o.byIno == nil {
		o.byIno = o.s.indexedInodes()
	}
	if j, ok := o.byIno[k]; ok && j != fi && o.own[j] {
		return false
	}
	if o.other == nil {
		o.other = map[[2]uint64]bool{}
	}
	o.other[k] = true
	return true
}

// indexedInodes maps each indexed file's inode to its index in s.files.
func (s *Searcher) indexedInodes() map[[2]uint64]int {
	s.inodesOnce.Do(func() {
		s.inodes = make(map[[2]uint64]int, len(s.files))
		for i, f := range s.files {
			rec := f.Record()
			if rec.Compression == "" {
				s.inodes[[2]uint64{rec.Dev, rec.Ino}] = i
			}
		}
	})
	return s.inodes
}
