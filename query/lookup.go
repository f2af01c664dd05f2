package query

// Dictionary lookups of one segment's evaluation, each done once.

// lookedTerm is one dictionary lookup's result.
type lookedTerm struct {
	t   string
	ref uint64
	ok  bool
	err error
}

// lookup is seg.Lookup, done once a word for the evaluation (and for a
// segment's later windows: the evaluator is kept for them).
func (e *segEval) lookup(t []byte) (uint64, bool, error) {
	l := e.look(t)
	return l.ref, l.ok, l.err
}

// look is t's lookup: from looked, or made now and kept there.
func (e *segEval) look(t []byte) lookedTerm {
	for _, l := range e.looked[:e.nLooked] {
		if l.t == string(t) {
			return l
		}
	}
	l := lookedTerm{t: string(t)}
	e.lookups()
	l.ref, l.ok, l.err = e.seg.Lookup(t)
	if e.nLooked < len(e.looked) {
		e.looked[e.nLooked] = l
		e.nLooked++
	}
	return l
}

// df is the number of lines holding t (0 when it is not in the dictionary
// or its lookup fails: term and termAnd then report the error).
func (e *segEval) df(t []byte) int {
	l := e.look(t)
	if l.err != nil || !l.ok {
		return 0
	}
	n, _ := e.seg.DocFreq(l.ref)
	return n
}
