package grepsyntax

import "regexp/syntax"

// goMaxRepeat is the largest count regexp/syntax accepts in x{n,m}.
const goMaxRepeat = 1000

// maxExpanded bounds the size of a tree with its counted repetitions
// written out, which is what Go's compiled program holds: every single
// count grep accepts (up to 32767) of a group of two characters fits.
// Compiling costs about 2 µs and 0.3 KB a node: at 2^21 nodes,
// "a{2000}{1000}" took 3.5 s and 590 MB in one search (a server request
// included); at this bound, at most about 0.3 s and 50 MB. grep accepts
// larger nestings, and can take minutes over them.
const maxExpanded = 1 << 17

func expandedSize(n *node) int {
	s := 1
	for _, c := range n.subs {
		s += expandedSize(c)
	}
	if n.op == opRepeat {
		k := n.max
		if k < 0 {
			k = max(n.min, 1)
		}
		s = 1 + k*(s-1)
	}
	return min(s, maxExpanded+1)
}

// emit writes the tree as a Go regexp and parses it back.
func emit(n *node) (string, *syntax.Regexp, error) {
	n, err := removeWordEdges(n)
	if err != nil {
		return "", nil, err
	}
	n = simplify(n)
	if expandedSize(n) > maxExpanded {
		return "", nil, &Error{Msg: msgTooBig}
	}
	expr := toSyntax(n).String()
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", nil, goError(err)
	}
	return expr, re, nil
}

func toSyntax(n *node) *syntax.Regexp {
	switch n.op {
	case opNoMatch:
		return &syntax.Regexp{Op: syntax.OpNoMatch}
	case opEmpty:
		return &syntax.Regexp{Op: syntax.OpEmptyMatch}
	case opSet:
		switch {
		case n.set.equal(anySet()):
			return &syntax.Regexp{Op: syntax.OpAnyChar}
		case len(n.set) == 2 && n.set[0] == n.set[1]:
			return &syntax.Regexp{Op: syntax.OpLiteral, Rune: []rune{n.set[0]}}
		}
		return &syntax.Regexp{Op: syntax.OpCharClass, Rune: append([]rune(nil), n.set...)}
	case opConcat, opAlt:
		o := syntax.OpConcat
		if n.op == opAlt {
			o = syntax.OpAlternate
		}
		subs := make([]*syntax.Regexp, len(n.subs))
		for i, s := range n.subs {
			subs[i] = toSyntax(s)
		}
		return &syntax.Regexp{Op: o, Sub: subs}
	case opRepeat:
		return repeatSyntax(toSyntax(n.subs[0]), n.min, n.max)
	case opBOL:
		return &syntax.Regexp{Op: syntax.OpBeginText}
	case opEOL:
		return &syntax.Regexp{Op: syntax.OpEndText}
	case opWordB:
		return &syntax.Regexp{Op: syntax.OpWordBoundary}
	case opNotWordB:
		return &syntax.Regexp{Op: syntax.OpNoWordBoundary}
	case opBegWord:
		return &syntax.Regexp{Op: syntax.OpBeginLine} // (only in TranslateEdges: emit removes them)
	case opEndWord:
		return &syntax.Regexp{Op: syntax.OpEndLine}
	}
	panic("grepsyntax: unexpected node in emit")
}

// repeatSyntax writes sub{min,max} (max -1: unbounded). Go's parser
// refuses a count above 1000, and nested counts whose product is above
// 1000, so larger repetitions are written as a concatenation of smaller
// ones: x{2500} as x{1000}x{1000}x{500}, x{0,2500} as
// x{0,1000}x{0,1000}x{0,500} (the same counts are reachable).
func repeatSyntax(sub *syntax.Regexp, lo, hi int) *syntax.Regexp {
	mk := func(o syntax.Op, min, max int) *syntax.Regexp {
		return &syntax.Regexp{Op: o, Sub: []*syntax.Regexp{sub}, Min: min, Max: max}
	}
	switch {
	case lo == 0 && hi == -1:
		return mk(syntax.OpStar, 0, 0)
	case lo == 1 && hi == -1:
		return mk(syntax.OpPlus, 0, 0)
	case lo == 0 && hi == 1:
		return mk(syntax.OpQuest, 0, 0)
	}
	budget := goMaxRepeat / nestedCount(sub)
	if hi <= budget && (hi >= 0 || lo <= budget) {
		return mk(syntax.OpRepeat, lo, hi)
	}
	var parts []*syntax.Regexp
	chunk := func(min, max int) {
		switch {
		case min == 1 && max == 1:
			parts = append(parts, sub)
		case lo == 0 && hi == 1:
			parts = append(parts, mk(syntax.OpQuest, 0, 0))
		default:
			parts = append(parts, mk(syntax.OpRepeat, min, max))
		}
	}
	budget = max(budget, 1)
	for left := lo; left > 0; left -= budget {
		n := min(left, budget)
		chunk(n, n)
	}
	if hi < 0 {
		parts = append(parts, mk(syntax.OpStar, 0, 0))
	}
	for left := hi - lo; left > 0; left -= budget {
		chunk(0, min(left, budget))
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Sub: parts}
}

// nestedCount is the largest product of x{n,m} counts along a path in re,
// as regexp/syntax limits it (its repeatIsValid).
func nestedCount(re *syntax.Regexp) int {
	inner := 1
	for _, s := range re.Sub {
		inner = max(inner, nestedCount(s))
	}
	if re.Op == syntax.OpRepeat {
		m := re.Max
		if m < 0 {
			m = re.Min
		}
		return max(m, 1) * inner
	}
	return inner
}
