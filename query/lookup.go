package query

// Dictionary lookups of one segment's evaluation, each done once.

// lookedTerm is one dictionary lookup's result.
type lookedTerm struct {
	t   string
	ref uint64
	ok  bool
	err error
}

// lookup is seg.Lookup, answered from looked for a word df looked up.
func (e *segEval) lookup(t []byte) (uint64, bool, error) {
	if l, ok := e.recall(t); ok {
		return l.ref, l.ok, l.err
	}
	e.lookups()
	return e.seg.Lookup(t)
}

// recall finds t's lookup in looked.
func (e *segEval) recall(t []byte) (lookedTerm, bool) {
	for _, l := range e.looked[:e.nLooked] {
		if l.t == string(t) {
			return l, true
		}
	}
	return lookedTerm{}, false
}

// df is the number of lines holding t (0 when it is not in the dictionary
// or its lookup fails: term and termAnd then report the error), its
// lookup kept for them.
func (e *segEval) df(t []byte) int {
	l, known := e.recall(t)
	if !known {
		l = lookedTerm{t: string(t)}
		e.lookups()
		l.ref, l.ok, l.err = e.seg.Lookup(t)
		if e.nLooked < len(e.looked) {
			e.looked[e.nLooked] = l
			e.nLooked++
		}
	}
	ref, ok, err := l.ref, l.ok, l.err
	if err != nil || !ok {
		return 0
	}
	n, _ := e.seg.DocFreq(ref)
	return n
}
