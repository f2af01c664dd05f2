package query

// Rotation history: a log and its rotations (app.log, app.log.1,
// app.log.2.gz, app.log-20261129, app.log-20261129.gz, app.log.2026-11-29)
// are one log. A file's log is its path without a compression suffix and
// without a rotation suffix (a number, or a date); its rotation is 0 for
// the live file and counts up into the past: numbered rotations by their
// number (one more for every number when the log has a .0, logrotate's
// `start 0` and savelog's naming), dated ones newest first after them.

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
// A date (%Y%m%d or %Y-%m-%d) with an optional time of day or epoch
// seconds after it (logrotate's dateformat -%Y%m%d-%s, to rotate more than
// once a day), or a month (-%Y%m).
var datedSuffix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`[-_.]((?:[0-9]{4}-?[0-9]{2}-?[0-9]{2})(?:[-_.]?[0-9]{2,6}|[-_.][0-9]{9,11})?|(?:19|20)[0-9]{2}-?(?:0[1-9]|1[0-2]))$`)
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

// numberedSuffix returns the rotation number ending base (".0" to
// ".9999") and where its dot is; ok false when there is none. A name
// whose part before the number ends in a digit too (10.0.0.1, v1.2) is
// numbered itself, not a rotation: per-host files would be one log.
func numberedSuffix(base string) (n, dot int, ok bool) {
	dot = strings.LastIndexByte(base, '.')
	digits := base[dot+1:]
	if dot < 1 || len(digits) < 1 || len(digits) > 4 || strings.Trim(digits, "0123456789") != "" {
		return 0, 0, false
	}
	if c := base[dot-1]; '0' <= c && c <= '9' {
		return 0, 0, false
	}
	n, _ = strconv.Atoi(digits)
	return n, dot, true
}

// splitRotation returns the log a path belongs to, its rotation number
// (-1 for the live file or a dated rotation; a name ending in .0 is
// numbered 0) and, for a dated rotation, the date as written, digits only
// (empty otherwise). A year (app.log.2025) is a date, not a number: the
// older year is the older rotation.
func splitRotation(path string) (log string, n int, date string) {
	base := path
	if i := strings.LastIndexByte(path, '.'); i >= 0 && compressedExt(path[i:]) {
		base = path[:i]
	}
	if base == "" || base[len(base)-1] < '0' || base[len(base)-1] > '9' {
		return base, -1, "" // both rotation suffixes end in a digit (most paths do not: no regexp)
	}
	if n, dot, ok := numberedSuffix(base); ok {
		if len(base)-dot == 5 && n >= 1900 && n < 2200 {
			return base[:dot], -1, base[dot+1:]
		}
		return base[:dot], n, ""
	}
	if m := datedSuffix().FindStringSubmatchIndex(base); m != nil && m[0] > strings.LastIndexByte(base, '/')+1 {
		return base[:m[0]], -1, strings.Map(func(r rune) rune {
			if '0' <= r && r <= '9' {
				return r
			}
			return -1
		}, base[m[2]:])
	}
	return base, -1, ""
}

// isRotation reports whether a path names a rotation of its log (name.1,
// name.0, name-20261129), not its live file.
func isRotation(path string) bool {
	_, n, date := splitRotation(path)
	return n >= 0 || date != ""
}

// assignRotations sets every file's log and rotation.
func assignRotations(files []*File) {
	type dated struct {
		f    *File
		date string
	}
	byLog := map[string][]dated{}
	maxN := map[string]int{}
	var zero map[string]bool // logs with a .0: every number one more
	for _, f := range files {
		log, n, date := splitRotation(f.Path)
		f.log, f.rotation = log, n // (-1 until below: not numbered)
		if date != "" {
			byLog[log] = append(byLog[log], dated{f, date})
		}
		if n == 0 {
			if zero == nil {
				zero = map[string]bool{}
			}
			zero[log] = true
		}
	}
	for _, f := range files {
		switch {
		case f.rotation < 0:
			f.rotation = 0 // the live file (a dated rotation: numbered below)
		case zero[f.log]:
			f.rotation++
		}
		if f.rotation > 0 { // (a missing entry reads 0: most files are not rotations)
			maxN[f.log] = max(maxN[f.log], f.rotation)
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
			s.inodes[[2]uint64{rec.Dev, rec.Ino}] = i
		}
	})
	return s.inodes
}
