package relit

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// lit is one string of a set: an exact string, or (fold) a canonical
// case-folded one standing for all its case variants.
type lit struct {
	s    string
	fold bool
}

// newLit builds a lit, canonicalising fold strings and dropping the fold
// flag when case folding cannot change what s matches.
func newLit(s string, fold bool) lit {
	if fold {
		s, fold = canonString(s)
	}
	return lit{s, fold}
}

// concatLit concatenates two lits. Mixing exact and folded parts gives a
// folded result, which matches a superset and so stays sound.
func concatLit(a, b lit) lit {
	switch {
	case a.fold == b.fold:
		return lit{a.s + b.s, a.fold}
	case a.fold:
		bs, _ := canonString(b.s)
		return lit{a.s + bs, true}
	default:
		as, _ := canonString(a.s)
		return lit{as + b.s, true}
	}
}

func cmpLit(a, b lit) int {
	if c := strings.Compare(a.s, b.s); c != 0 {
		return c
	}
	if a.fold == b.fold {
		return 0
	}
	if a.fold {
		return 1
	}
	return -1
}

// normalize sorts and deduplicates set, and drops exact strings whose
// folded form is also present (the fold already covers them).
func normalize(set []lit) []lit {
	slices.SortFunc(set, cmpLit)
	set = slices.Compact(set)
	hasFold := false
	for _, l := range set {
		hasFold = hasFold || l.fold
	}
	if !hasFold {
		return set
	}
	folds := make(map[string]bool)
	for _, l := range set {
		if l.fold {
			folds[l.s] = true
		}
	}
	return slices.DeleteFunc(set, func(l lit) bool {
		if l.fold {
			return false
		}
		c, _ := canonString(l.s)
		return folds[c]
	})
}

func union(a, b []lit) []lit {
	out := make([]lit, 0, len(a)+len(b))
	out = append(out, a...)
	out = append(out, b...)
	return normalize(out)
}

func cross(a, b []lit) []lit {
	out := make([]lit, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, concatLit(x, y))
		}
	}
	return normalize(out)
}

// covers reports whether every string starting (atEnd: ending) with l
// also starts (ends) with p, so that p alone is an equally valid
// prefix (suffix) alternative.
func covers(p, l lit, atEnd bool) bool {
	s := l.s
	switch {
	case p.fold && !l.fold:
		s, _ = canonString(s)
	case !p.fold && l.fold:
		// Case variants of l only contain p if p is caseless.
		if _, cased := canonString(p.s); cased {
			return false
		}
	}
	if atEnd {
		return strings.HasSuffix(s, p.s)
	}
	return strings.HasPrefix(s, p.s)
}

// minimize drops from a prefix (atEnd: suffix) set every string covered
// by a shorter alternative: "every match starts with foo or foobar" is
// the same as "every match starts with foo".
func minimize(set []lit, atEnd bool) []lit {
	if len(set) < 2 {
		return set
	}
	out := set[:0:0]
	for i, l := range set {
		covered := false
		for j, p := range set {
			if i != j && covers(p, l, atEnd) && (p != l || j < i) {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, l)
		}
	}
	return out
}

// trim minimizes a prefix (atEnd: suffix) set and, while it has more than
// size strings, shortens all of them by cutting runes from the far end;
// a shorter prefix of every match is still a prefix of it.
func trim(set []lit, size int, atEnd bool) []lit {
	size = max(size, 1) // {""} always fits
	set = minimize(set, atEnd)
	for len(set) > size {
		n := 0
		for _, l := range set {
			n = max(n, utf8.RuneCountInString(l.s))
		}
		n--
		cut := make([]lit, len(set))
		for i, l := range set {
			cut[i] = newLit(keepRunes(l.s, n, atEnd), l.fold)
		}
		set = minimize(normalize(cut), atEnd)
	}
	return set
}

// keepRunes returns the first (atEnd: last) n runes of s.
func keepRunes(s string, n int, atEnd bool) string {
	c := utf8.RuneCountInString(s)
	switch {
	case n <= 0:
		return ""
	case c <= n:
		return s
	}
	skip := n
	if atEnd {
		skip = c - n
	}
	i := 0
	for j := range s {
		if i == skip {
			if atEnd {
				return s[j:]
			}
			return s[:j]
		}
		i++
	}
	return s
}
