package relit

import (
	"regexp/syntax"
	"unicode"
)

const (
	// maxExact bounds exact sets (and so cross products): `foo(a|b)bar`
	// stays exact as {fooabar, foobbar}, bigger sets become prefixes and
	// suffixes.
	maxExact = 16
	// maxSet bounds prefix and suffix sets and the junction products
	// built from them.
	maxSet = 16
	// maxClass is the largest character class expanded into an exact set.
	maxClass = 4
	// maxRepeat bounds how many copies of x are joined for x{n,m}.
	maxRepeat = 16
)

// info summarises what a sub-expression can match. Either exact is true
// and set holds every string it can match (an empty set: it matches
// nothing), or every string it matches starts with one of pre, ends with
// one of suf, and satisfies match. Fold entries stand for all their case
// variants, so the sets may over-approximate, never under.
type info struct {
	exact    bool
	set      []lit
	pre, suf []lit
	match    *Req
}

var emptyLits = []lit{{}}

func exactInfo(set []lit) info { return info{exact: true, set: set, match: reqAll} }

// anyInfo knows nothing about the match: what `.`, large classes and x*
// give.
func anyInfo() info { return info{pre: emptyLits, suf: emptyLits, match: reqAll} }

// Analyze returns a condition every line matched by re satisfies. re is
// as returned by syntax.Parse (any flags); it need not be simplified,
// and it is not modified.
func Analyze(re *syntax.Regexp) *Req {
	if re == nil {
		return &Req{Op: OpAll}
	}
	return clone(analyze(re).req())
}

// req turns a summary into the condition it implies on the whole line.
func (x info) req() *Req {
	if x.exact {
		return orLits(x.set)
	}
	return and(orLits(x.pre), x.match, orLits(x.suf)) // in line order
}

// prefixes and suffixes view any summary in prefix/suffix form: an exact
// string is its own prefix and suffix.
func (x info) prefixes() []lit {
	if x.exact {
		return trim(x.set, maxSet, false)
	}
	return x.pre
}

func (x info) suffixes() []lit {
	if x.exact {
		return trim(x.set, maxSet, true)
	}
	return x.suf
}

func analyze(re *syntax.Regexp) info {
	switch re.Op {
	case syntax.OpNoMatch:
		return exactInfo(nil)
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		// Zero-width: joining the literals around them is still sound,
		// as the matched text is their concatenation.
		return exactInfo(emptyLits)
	case syntax.OpLiteral:
		return literal(re.Rune, re.Flags&syntax.FoldCase != 0)
	case syntax.OpCharClass:
		return class(re.Rune)
	case syntax.OpCapture:
		return analyze(re.Sub[0])
	case syntax.OpStar:
		return anyInfo()
	case syntax.OpQuest:
		return alternate(analyze(re.Sub[0]), exactInfo(emptyLits))
	case syntax.OpPlus:
		return plus(analyze(re.Sub[0]))
	case syntax.OpRepeat:
		return repeat(re.Sub[0], re.Min, re.Max)
	case syntax.OpConcat:
		x := exactInfo(emptyLits)
		for _, sub := range re.Sub {
			x = concat(x, analyze(sub))
		}
		return x
	case syntax.OpAlternate:
		x := exactInfo(nil)
		for _, sub := range re.Sub {
			x = alternate(x, analyze(sub))
		}
		return x
	}
	// OpAnyChar, OpAnyCharNotNL and anything unknown: no constraint.
	return anyInfo()
}

// literal summarises a run of literal runes. Unusable runes (U+FFFD,
// which also matches invalid bytes) split it like `.` would.
func literal(runes []rune, fold bool) info {
	if fold && len(runes) == 1 && usable(runes[0]) && hasFold(runes[0]) {
		// A lone (?i) rune is what the parser makes of [Ee]: expand its
		// orbit, as for other small classes, keeping literals exact.
		r := runes[0]
		set := []lit{{s: string(r)}}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			set = append(set, lit{s: string(f)})
		}
		return exactInfo(normalize(set))
	}
	x := exactInfo(emptyLits)
	start := 0
	flush := func(end int) {
		if end > start {
			x = concat(x, exactInfo([]lit{newLit(string(runes[start:end]), fold)}))
		}
	}
	for i, r := range runes {
		if !usable(r) {
			flush(i)
			x = concat(x, anyInfo())
			start = i + 1
		}
	}
	flush(len(runes))
	return x
}

// class summarises a character class given as rune ranges.
func class(ranges []rune) info {
	n := 0
	for i := 0; i+1 < len(ranges); i += 2 {
		n += int(ranges[i+1]-ranges[i]) + 1
		if n > maxClass*4 {
			return anyInfo()
		}
	}
	if n == 0 {
		return exactInfo(nil)
	}
	var set []lit
	for i := 0; i+1 < len(ranges); i += 2 {
		for r := ranges[i]; r <= ranges[i+1]; r++ {
			if !usable(r) {
				// [^a] and friends match invalid bytes as U+FFFD.
				return anyInfo()
			}
			set = append(set, lit{s: string(r)})
		}
	}
	if n > maxClass {
		// Maybe a few case-folded runes, as (?i)[a-c] gives.
		for i, l := range set {
			set[i] = newLit(l.s, true)
		}
	}
	set = normalize(set)
	if len(set) > maxClass {
		return anyInfo()
	}
	return exactInfo(set)
}

func concat(x, y info) info {
	if x.exact && len(x.set) == 0 || y.exact && len(y.set) == 0 {
		return exactInfo(nil)
	}
	if x.exact && y.exact {
		if len(x.set)*len(y.set) <= maxExact {
			return exactInfo(cross(x.set, y.set))
		}
		return info{pre: trim(x.set, maxSet, false), suf: trim(y.set, maxSet, true), match: reqAll}
	}
	m := and(x.match, y.match)
	var pre, suf []lit
	if x.exact {
		// Every match starts with an x string followed by a y prefix.
		ypre := y.pre
		if len(x.set)*len(ypre) > maxSet {
			m = and(m, orLits(ypre))
			ypre = trim(ypre, maxSet/len(x.set), false)
		}
		pre = minimize(cross(x.set, ypre), false)
	} else {
		pre = x.pre
	}
	if y.exact {
		xsuf := x.suf
		if len(xsuf)*len(y.set) > maxSet {
			m = and(m, orLits(xsuf))
			xsuf = trim(xsuf, maxSet/len(y.set), true)
		}
		suf = minimize(cross(xsuf, y.set), true)
	} else {
		suf = y.suf
	}
	if !x.exact && !y.exact {
		// The text around the junction: an x suffix then a y prefix.
		if len(x.suf)*len(y.pre) <= maxSet {
			m = and(m, orLits(cross(x.suf, y.pre)))
		} else {
			m = and(m, orLits(x.suf), orLits(y.pre))
		}
	}
	return info{pre: pre, suf: suf, match: m}
}

func alternate(x, y info) info {
	if x.exact && y.exact {
		u := union(x.set, y.set)
		if len(u) <= maxExact {
			return exactInfo(u)
		}
		return info{pre: trim(u, maxSet, false), suf: trim(u, maxSet, true), match: orLits(u)}
	}
	// Keep each branch's full condition together, so that foo|bar.*baz
	// gives foo OR (bar AND baz); the unions remain for joining with
	// neighbours.
	return info{
		pre:   trim(union(x.prefixes(), y.prefixes()), maxSet, false),
		suf:   trim(union(x.suffixes(), y.suffixes()), maxSet, true),
		match: or(x.req(), y.req()),
	}
}

// plus summarises x+: a match is x1 x2 ... xn, so it starts with a match
// of x, ends with one and contains one.
func plus(x info) info {
	return info{pre: x.prefixes(), suf: x.suffixes(), match: x.match}
}

func repeat(sub *syntax.Regexp, lo, hi int) info {
	switch {
	case hi == 0:
		return exactInfo(emptyLits)
	case lo == 0 && hi == 1:
		return alternate(analyze(sub), exactInfo(emptyLits))
	case lo == 0:
		return anyInfo()
	}
	x := analyze(sub)
	k := min(lo, maxRepeat)
	y := x
	for i := 1; i < k; i++ {
		y = concat(y, x)
	}
	if lo == hi && lo == k {
		return y
	}
	// A match is j >= k copies of x: both its first k and its last k
	// copies match y = x^k, which plus expresses.
	return plus(y)
}
