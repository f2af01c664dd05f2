package main

import (
	"strings"

	"github.com/logdex/logdex/query"
)

// pathFilter is grep's --include, --exclude and --exclude-dir: which of
// the files under the PATHs a search reads. As in grep 3.8, a file found
// below a PATH is tested by its base name, a PATH itself by every suffix
// of it as typed that starts after a '/' (and by the whole); of the
// --include and --exclude globs matching a file, the last given decides,
// and a file none matches is read unless the first of them is an
// --include. --exclude-dir skips a PATH or a directory below one, and
// --include never applies to directories.
type pathFilter struct {
	files []fileGlob
	dirs  []string
}

type fileGlob struct {
	glob    string
	include bool
}

func (f *pathFilter) active() bool { return len(f.files)+len(f.dirs) > 0 }

// keepFile reports whether the file named name is read; operand: name is
// a PATH as typed.
func (f *pathFilter) keepFile(name string, operand bool) bool {
	if len(f.files) == 0 {
		return true
	}
	for i := len(f.files) - 1; i >= 0; i-- {
		if globMatches(f.files[i].glob, name, operand) {
			return f.files[i].include
		}
	}
	return !f.files[0].include
}

// skipDir reports whether the directory named name is skipped.
func (f *pathFilter) skipDir(name string, operand bool) bool {
	for _, g := range f.dirs {
		if globMatches(g, name, operand) {
			return true
		}
	}
	return false
}

// keep is the filter of one scope (query.Scope.Keep): nil when it keeps
// every file.
func (f *pathFilter) keep(sc query.Scope) func(rel string) bool {
	if f == nil || !f.active() {
		return nil
	}
	if sc.IsFile {
		ok := f.keepFile(sc.Display, true)
		return func(string) bool { return ok }
	}
	// (No PATH: grep searches "." without testing it.)
	if sc.Display != "" && f.skipDir(sc.Display, true) {
		return func(string) bool { return false }
	}
	return func(rel string) bool {
		i := strings.LastIndexByte(rel, '/')
		if !f.keepFile(rel[i+1:], false) {
			return false
		}
		if i < 0 {
			return true
		}
		for dir := range strings.SplitSeq(rel[:i], "/") {
			if f.skipDir(dir, false) {
				return false
			}
		}
		return true
	}
}

// globMatches matches name (operand: any of its suffixes that is the whole
// or starts after a '/' with a byte other than '/') against a glob.
func globMatches(glob, name string, operand bool) bool {
	if fnmatch(glob, name) {
		return true
	}
	if !operand {
		return false
	}
	for i := 0; i+1 < len(name); i++ {
		if name[i] == '/' && name[i+1] != '/' && fnmatch(glob, name[i+1:]) {
			return true
		}
	}
	return false
}

// fnmatch is fnmatch(3) without flags, in the C locale (byte by byte): '*'
// matches any bytes, '/' and a leading '.' too; '?' one byte; a bracket
// expression one byte of its set ('!' or '^' negates; ranges; the classes
// [:alpha:] and the like); '\' takes the next byte literally. A bracket
// that does not close is a literal '['.
func fnmatch(glob, name string) bool {
	// One byte of the name per element of the glob, so a mismatch after a
	// '*' only ever resumes at the last '*', one byte further: at most
	// len(glob)*len(name) steps (retrying every '*' from every place took
	// exponential time: "*a*a*a*a*a*a*a*b" against a long name of a's).
	g, n := 0, 0
	star, from := -1, 0 // the elements after the last '*', and where they are tried
	for {
		if g < len(glob) && glob[g] == '*' {
			for g < len(glob) && glob[g] == '*' {
				g++
			}
			star, from = g, n
			continue
		}
		if g == len(glob) && n == len(name) {
			return true
		}
		if g < len(glob) && n < len(name) {
			if w, ok := matchByte(glob[g:], name[n]); ok {
				g, n = g+w, n+1
				continue
			}
		}
		if star < 0 || from >= len(name) {
			return false
		}
		from++
		g, n = star, from
	}
}

// matchByte matches b against the element at the start of glob (not a
// '*'), and returns the element's length.
func matchByte(glob string, b byte) (width int, ok bool) {
	switch c := glob[0]; c {
	case '?':
		return 1, true
	case '[':
		if ok, n := bracket(glob, b); n > 0 {
			return n, ok
		}
		return 1, b == '[' // not a bracket expression: a literal '['
	case '\\':
		if len(glob) > 1 {
			return 2, b == glob[1]
		}
	}
	return 1, b == glob[0]
}

// bracket matches b against the bracket expression at the start of glob;
// n is its length, 0 when it does not close.
func bracket(glob string, b byte) (ok bool, n int) {
	i := 1
	negate := i < len(glob) && (glob[i] == '!' || glob[i] == '^')
	if negate {
		i++
	}
	for first := true; i < len(glob); first = false {
		c := glob[i]
		switch {
		case c == ']' && !first:
			return ok != negate, i + 1
		case c == '[' && i+1 < len(glob) && glob[i+1] == ':':
			end := strings.Index(glob[i+2:], ":]")
			if end < 0 {
				return false, 0
			}
			if classHas(glob[i+2:i+2+end], b) {
				ok = true
			}
			i += 2 + end + 2
			continue
		case c == '\\' && i+1 < len(glob):
			i++
			c = glob[i]
		}
		lo, hi := c, c
		if i+2 < len(glob) && glob[i+1] == '-' && glob[i+2] != ']' {
			hi = glob[i+2]
			if hi == '\\' && i+3 < len(glob) {
				hi = glob[i+3]
				i++
			}
			i += 2
		}
		if lo <= b && b <= hi {
			ok = true
		}
		i++
	}
	return false, 0
}

// classHas reports whether b is in the C locale's character class name.
func classHas(name string, b byte) bool {
	lower, upper, digit := 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9'
	switch name {
	case "alpha":
		return lower || upper
	case "digit":
		return digit
	case "alnum":
		return lower || upper || digit
	case "lower":
		return lower
	case "upper":
		return upper
	case "space":
		return b == ' ' || '\t' <= b && b <= '\r'
	case "blank":
		return b == ' ' || b == '\t'
	case "punct":
		return b > ' ' && b < 0x7f && !lower && !upper && !digit
	case "xdigit":
		return digit || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
	case "print":
		return b >= ' ' && b < 0x7f
	case "graph":
		return b > ' ' && b < 0x7f
	case "cntrl":
		return b < ' ' || b == 0x7f
	}
	return false
}

// globFlag appends --include (include) or --exclude globs to a filter, in
// the order given on the command line.
type globFlag struct {
	f       *pathFilter
	include bool
}

func (g globFlag) String() string { return "" }

func (g globFlag) Set(v string) error {
	g.f.files = append(g.f.files, fileGlob{glob: v, include: g.include})
	return nil
}

// dirGlobFlag appends --exclude-dir globs.
type dirGlobFlag struct{ f *pathFilter }

func (g dirGlobFlag) String() string { return "" }

func (g dirGlobFlag) Set(v string) error {
	for len(v) > 1 && v[len(v)-1] == '/' {
		v = v[:len(v)-1] // (grep strips them: --exclude-dir=logs/ is logs)
	}
	g.f.dirs = append(g.f.dirs, v)
	return nil
}
