package grepsyntax

// Go's regexp has \b and \B but neither \< (start of word) nor \>
// (end of word). Both are \b plus a one-character look: \< is \b where the
// next character is a word character (or, equally, where the previous one
// is not, or the line starts); \> is \b where the previous character is a
// word character (or the next one is not, or the line ends). This file
// removes them by moving that look into the neighbouring part of the
// pattern: "\<x" becomes "\b" followed by x's matches that start with a
// word character, "x\>" becomes x's matches ending with one, then "\b".
// When the neighbour can match the empty string the look passes through it
// to the next part, duplicating what follows. At the top of the pattern
// there is no neighbour left to pass to, and the line's own text takes its
// place: a one-character class (or the line's edge) is matched there,
// which does not change which lines match. Nested inside an alternative or
// a repetition, a look that would leave it makes the alternation be
// distributed over its surroundings, or the repetition be unrolled; the
// few patterns where that is not enough (or too large) are refused.

const (
	maxWordNodes  = 5000 // bound on the tree the rewriting may build
	maxUnroll     = 8    // largest bounded repetition unrolled
	maxWordRounds = 1000
)

type wordElim struct {
	err    error
	rounds int
	calls  int // restrict calls, bounded: shared subtrees can make the trees grow fast
}

const maxRestrictCalls = 200000

// tooBig reports that n, counted as a tree (subtrees may be shared), has
// more than maxWordNodes nodes; it stops counting there.
func tooBig(n *node) bool {
	budget := maxWordNodes
	var walk func(n *node) bool
	walk = func(n *node) bool {
		if budget--; budget < 0 {
			return false
		}
		for _, c := range n.subs {
			if !walk(c) {
				return false
			}
		}
		return true
	}
	return !walk(n)
}

// removeWordEdges returns n without opBegWord and opEndWord.
func removeWordEdges(n *node) (*node, error) {
	if !hasWordEdge(n) {
		return n, nil
	}
	w := &wordElim{}
	r, ok := w.resolve(n, true)
	if w.err == nil && (!ok || tooBig(r)) {
		w.err = &Error{Msg: msgWordComplex}
	}
	if w.err != nil {
		return nil, w.err
	}
	return simplify(r), nil
}

func hasWordEdge(n *node) bool {
	return n.any(func(m *node) bool { return m.op == opBegWord || m.op == opEndWord })
}

func size(n *node) int {
	if tooBig(n) {
		return maxWordNodes + 1
	}
	s := 1
	for _, c := range n.subs {
		s += size(c)
	}
	return s
}

func seqOf(n *node) []*node {
	n = simplify(n)
	if n.op == opConcat {
		return append([]*node(nil), n.subs...)
	}
	return []*node{n}
}

// emptyPart is what n matches without consuming: a tree of zero-width
// tests, opEmpty, or opNoMatch when n cannot match the empty string.
func emptyPart(n *node) *node {
	switch n.op {
	case opEmpty, opBOL, opEOL, opWordB, opNotWordB, opBegWord, opEndWord:
		return n
	case opConcat:
		subs := make([]*node, len(n.subs))
		for i, s := range n.subs {
			subs[i] = emptyPart(s)
		}
		return simplify(concat(subs...))
	case opAlt:
		subs := make([]*node, len(n.subs))
		for i, s := range n.subs {
			subs[i] = emptyPart(s)
		}
		return simplify(alt(subs...))
	case opRepeat:
		if n.min == 0 {
			return emptyNode
		}
		return emptyPart(n.subs[0])
	}
	return noMatchNode
}

// join puts first at the end the restriction works from: the front of
// rest, or its back when rev.
func join(rev bool, first *node, rest []*node) *node {
	subs := make([]*node, 0, len(rest)+1)
	if rev {
		subs = append(append(subs, rest...), first)
	} else {
		subs = append(append(subs, first), rest...)
	}
	return concat(subs...)
}

// edgeMode says what restrict does when the whole sequence matches empty.
type edgeMode uint8

const (
	edgeEscape  edgeMode = iota // the look leaves the sequence: fail
	edgeContext                 // top of the pattern: consume from the line
	edgeNone                    // only non-empty matches are wanted
)

// restrict returns seq limited to matches whose first character (last when
// rev) is in s; when seq matches empty, mode decides. allowEdge accepts the
// line's edge in place of a character of s.
func (w *wordElim) restrict(seq []*node, s runeSet, rev bool, mode edgeMode, allowEdge bool) (*node, bool) {
	if w.calls++; w.calls > maxRestrictCalls {
		w.err = &Error{Msg: msgWordComplex}
	}
	if w.err != nil {
		return noMatchNode, true
	}
	if len(seq) == 0 {
		switch mode {
		case edgeEscape:
			return nil, false
		case edgeNone:
			return noMatchNode, true
		}
		r := setNode(s)
		if allowEdge {
			edge := opEOL
			if rev {
				edge = opBOL
			}
			r = alt(r, assertion(edge))
		}
		return r, true
	}
	x, rest := seq[0], seq[1:]
	if rev {
		x, rest = seq[len(seq)-1], seq[:len(seq)-1]
	}
	a := join(rev, w.restrictNonEmpty(x, s, rev), rest)
	ep := emptyPart(x)
	if ep.op == opNoMatch {
		return a, true
	}
	b, ok := w.restrict(rest, s, rev, mode, allowEdge)
	if !ok {
		return nil, false
	}
	return alt(a, join(rev, ep, []*node{b})), true
}

// restrictNonEmpty returns x's non-empty matches whose first (last when
// rev) character is in s.
func (w *wordElim) restrictNonEmpty(x *node, s runeSet, rev bool) *node {
	if w.calls++; w.calls > maxRestrictCalls {
		w.err = &Error{Msg: msgWordComplex}
	}
	if w.err != nil {
		return noMatchNode
	}
	switch x.op {
	case opSet:
		return setNode(x.set.intersect(s))
	case opConcat:
		r, _ := w.restrict(x.subs, s, rev, edgeNone, false)
		return r
	case opAlt:
		subs := make([]*node, len(x.subs))
		for i, b := range x.subs {
			subs[i] = w.restrictNonEmpty(b, s, rev)
		}
		return alt(subs...)
	case opRepeat:
		// The first non-empty iteration comes after j empty ones. j = 0
		// leaves min-1 to max-1 iterations to follow; any j > 0 puts the
		// body's empty part E (zero-width tests, the same each time) first
		// and leaves 0 to max-2 (or unboundedly many).
		body := x.subs[0]
		dec := func(n, by int) int {
			if n < 0 {
				return n
			}
			return n - by
		}
		ne := w.restrictNonEmpty(body, s, rev)
		first := join(rev, ne, []*node{repeat(body, max(x.min-1, 0), dec(x.max, 1))})
		e := emptyPart(body)
		if e.op == opNoMatch || e.op == opEmpty || (x.max >= 0 && x.max < 2) {
			// Not nullable, or empty iterations add nothing: j = 0 covers all.
			return first
		}
		later := join(rev, e, []*node{join(rev, ne, []*node{repeat(body, 0, dec(x.max, 2))})})
		return alt(first, later)
	}
	return noMatchNode
}

// resolve removes the word edges of n. top says n is the whole pattern (or
// one whole alternative of it). ok is false when a look leaves n.
func (w *wordElim) resolve(n *node, top bool) (*node, bool) {
	seq := seqOf(n)
	for {
		if w.rounds++; w.err != nil || w.rounds > maxWordRounds || tooBig(concat(seq...)) {
			if w.err == nil {
				w.err = &Error{Msg: msgWordComplex}
			}
			return emptyNode, true
		}
		restart := false
		for i := 0; i < len(seq) && !restart; i++ {
			x := seq[i]
			if !hasWordEdge(x) {
				continue
			}
			switch x.op {
			case opAlt:
				subs := make([]*node, len(x.subs))
				local := true
				for j, b := range x.subs {
					var ok bool
					if subs[j], ok = w.resolve(b, false); !ok {
						local = false
						break
					}
				}
				if local {
					seq[i] = alt(subs...)
					continue
				}
				// Distribute the alternation over its surroundings.
				out := make([]*node, len(x.subs))
				for j, b := range x.subs {
					var ok bool
					whole := concat(append(append(append([]*node(nil), seq[:i]...), b), seq[i+1:]...)...)
					if out[j], ok = w.resolve(whole, top); !ok {
						return nil, false
					}
				}
				return alt(out...), true
			case opRepeat:
				body, ok := w.resolve(x.subs[0], false)
				if ok {
					seq[i] = repeat(body, x.min, x.max)
					continue
				}
				var parts []*node
				switch {
				case x.max >= 0 && x.max <= maxUnroll:
					parts = unroll(x.subs[0], x.min, x.max)
				case x.max < 0 && x.min <= maxUnroll:
					// Empty iterations of a star only add tests: drop them.
					star, ok := w.resolve(w.restrictNonEmpty(x.subs[0], anySet(), false), false)
					if !ok {
						return nil, false
					}
					parts = append(unroll(x.subs[0], x.min, x.min), repeat(star, 0, -1))
				default:
					return nil, false
				}
				seq = append(append(append([]*node(nil), seq[:i]...), parts...), seq[i+1:]...)
				seq = seqOf(concat(seq...))
				restart = true
			case opBegWord, opEndWord:
				r, ok := w.look(seq, i, top)
				if !ok {
					return nil, false
				}
				seq = seqOf(r)
				restart = true
			}
		}
		if !restart {
			return concat(seq...), true
		}
	}
}

// look replaces the word edge at seq[i] by \b and a restriction of one of
// its neighbours, whichever works and gives the smaller tree.
func (w *wordElim) look(seq []*node, i int, top bool) (*node, bool) {
	mode := edgeEscape
	if top {
		mode = edgeContext
	}
	pre, post := seq[:i], seq[i+1:]
	b := assertion(opWordB)
	begin := seq[i].op == opBegWord
	var best *node
	// Look ahead: \< needs a word character next, \> a non-word one or the end.
	next := wordSet
	if !begin {
		next = wordSet.negate()
	}
	if r, ok := w.restrict(post, next, false, mode, !begin); ok && !tooBig(r) {
		best = concat(append(append([]*node(nil), pre...), b, r)...)
	}
	// Look behind: \< needs a non-word character or the start, \> a word one.
	prev := wordSet.negate()
	if !begin {
		prev = wordSet
	}
	if r, ok := w.restrict(pre, prev, true, mode, begin); ok && !tooBig(r) {
		alt := concat(append([]*node{r, b}, post...)...)
		if best == nil || size(alt) < size(best) {
			best = alt
		}
	}
	return best, best != nil
}

// unroll writes x{min,max} (max bounded) as copies: x x (x (x)?)?.
func unroll(x *node, min, max int) []*node {
	parts := make([]*node, 0, max)
	for i := 0; i < min; i++ {
		parts = append(parts, x)
	}
	var opt *node
	for i := min; i < max; i++ {
		inner := []*node{x}
		if opt != nil {
			inner = append(inner, opt)
		}
		opt = alt(concat(inner...), emptyNode)
	}
	if opt != nil {
		parts = append(parts, opt)
	}
	return parts
}
