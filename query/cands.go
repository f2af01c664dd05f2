package query

import (
	"bytes"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query/internal/relit"
	"github.com/logdex/logdex/query/lang"
)

const (
	// maxExpand bounds how many dictionary terms one partial-word atom may
	// expand to; beyond it the atom does not narrow (the lines are still
	// verified, so answers stay exact, only slower).
	maxExpand = 4096
	// enough: once an AND has narrowed a segment to this many candidate
	// lines, costlier atoms (dictionary scans) are skipped: reading and
	// checking that many lines costs less than the scan.
	enough = 64
)

// cset is a candidate set of one segment. Lines listed as unindexed in the
// segment are members of every cset (their words are not in the
// dictionary), and are always verified.
type cset struct {
	all   bool            // no narrowing: every line
	bm    *roaring.Bitmap // members when !all
	exact bool            // membership is exact (outside unindexed lines)
}

// segEval evaluates a query tree against one segment's dictionary.
type segEval struct {
	q      *Query
	seg    *mmapstore.Segment
	un     *roaring.Bitmap
	terms  int // dictionary terms examined, for stats
	blocks int // dictionary blocks read for substring atoms
	// within, when set, are the only lines wanted (a time range's, a
	// plan window's): words' lists are decoded inside them only, and the
	// plan keeps no others.
	within []mmapstore.LineRange
	// looked keeps the dictionary lookups of words: byDocFreq looks each
	// up for its count, then term or termAnd for its list (two FST walks a
	// word per segment, 7% of a phrase's page), and a segment's later
	// windows again.
	looked  [8]lookedTerm
	nLooked int
	// lookups is called before a dictionary lookup (the search's first
	// asks for every segment's term-block index, when cold).
	lookups func()
	// ahead, when set, hears of lookups found cold here, to ask for them
	// in the other segments too (lookAhead).
	ahead *lookAhead
	// candBlocks keeps the last substring atom's candidate blocks: the
	// atom's cost is judged by them, then it is resolved by them.
	candNeedle []byte
	candSuffix bool
	candBlocks []uint32
}

// blockCandidates is Segment.BlockCandidates, the last answer kept.
func (e *segEval) blockCandidates(needle []byte, suffix bool) ([]uint32, error) {
	if e.candBlocks != nil && suffix == e.candSuffix && bytes.Equal(needle, e.candNeedle) {
		return e.candBlocks, nil
	}
	bs, err := e.seg.BlockCandidates(needle, false, suffix)
	if err != nil {
		return nil, err
	}
	e.candNeedle, e.candSuffix, e.candBlocks = append(e.candNeedle[:0], needle...), suffix, bs
	if bs == nil {
		e.candBlocks = []uint32{}
	}
	return bs, nil
}

// postings decodes a list reference, inside e.within when set.
func (e *segEval) postings(ref uint64) (*roaring.Bitmap, error) {
	if e.within != nil {
		return e.seg.PostingsIn(ref, e.within)
	}
	return e.seg.Postings(ref)
}

func (e *segEval) withUn(bm *roaring.Bitmap) *roaring.Bitmap {
	if e.un != nil {
		bm.Or(e.un)
	}
	return bm
}

func (e *segEval) empty() cset { return cset{bm: e.withUn(roaring.New()), exact: true} }

func (e *segEval) eval(n lang.Node) (cset, error) {
	switch n := n.(type) {
	case *lang.Term:
		bm, err := e.term([]byte(n.Text))
		return cset{bm: bm, exact: true}, err
	case *lang.Prefix:
		bm, ok, err := e.prefix([]byte(n.Text), maxExpand)
		if !ok {
			return cset{all: true}, err
		}
		return cset{bm: bm, exact: true}, err
	case *lang.Phrase:
		c, err := e.eval(&lang.And{Kids: phraseKids(nil, n)})
		c.exact = false // adjacency is checked on the line
		return c, err
	case *lang.Literal:
		return e.literal(n.Text, false)
	case *lang.Regex:
		c, err := e.req(e.q.reqs[n])
		c.exact = false
		return c, err
	case *lang.All:
		return cset{all: true, exact: true}, nil
	case *lang.Not:
		k, err := e.eval(n.Kid)
		if err != nil || !k.exact || k.all {
			if k.all && k.exact {
				return e.empty(), err
			}
			return cset{all: true}, err
		}
		bm := roaring.Flip(k.bm, 0, uint64(e.seg.NumLines()))
		return cset{bm: e.withUn(bm), exact: true}, nil
	case *lang.Or:
		var bms []*roaring.Bitmap
		exact := true
		for _, kid := range n.Kids {
			k, err := e.eval(kid)
			if err != nil {
				return cset{}, err
			}
			if k.all {
				return cset{all: true, exact: k.exact && exact}, nil
			}
			exact = exact && k.exact
			bms = append(bms, k.bm)
		}
		return cset{bm: roaring.FastOr(bms...), exact: exact}, nil
	case *lang.And:
		acc := cset{all: true, exact: true}
		kids, phrased := phraseWords(n.Kids)
		for _, kid := range e.byDocFreq(kids) {
			if t, ok := kid.(*lang.Term); ok && !acc.all {
				bm, err := e.termAnd([]byte(t.Text), acc.bm)
				if err != nil {
					return cset{}, err
				}
				acc.bm = bm
				if bm.IsEmpty() {
					break
				}
				continue
			}
			k, err := e.eval(kid)
			if err != nil {
				return cset{}, err
			}
			acc = e.and(acc, k)
			if !acc.all && acc.bm.IsEmpty() {
				break
			}
		}
		acc.exact = acc.exact && !phrased
		return acc, nil
	}
	panic("query: unknown node")
}

// phraseWords is an AND's children with each phrase's words among them
// (true when there was a phrase): the lines holding a phrase are among
// those holding its words, and the AND's rarest word, of a phrase or not,
// is then the one the others are intersected against. (error "upstream
// timed out" decoded error's whole list, then intersected it with the
// phrase's.)
func phraseWords(kids []lang.Node) ([]lang.Node, bool) {
	if !slices.ContainsFunc(kids, func(k lang.Node) bool { _, ok := k.(*lang.Phrase); return ok }) {
		return kids, false
	}
	out := make([]lang.Node, 0, len(kids)+4)
	for _, k := range kids {
		p, ok := k.(*lang.Phrase)
		if !ok {
			out = append(out, k)
			continue
		}
		out = phraseKids(out, p)
	}
	return out, true
}

// phraseKids appends a phrase's words to dst as an AND's children (its
// last a prefix when the phrase's is).
func phraseKids(dst []lang.Node, p *lang.Phrase) []lang.Node {
	for i, t := range p.Terms {
		if p.LastPrefix && i == len(p.Terms)-1 {
			dst = append(dst, &lang.Prefix{Text: t})
		} else {
			dst = append(dst, &lang.Term{Text: t})
		}
	}
	return dst
}

// rarestDF is how many lines of the segment may hold a match of n, judged
// by words alone: the rarest word of an AND (or phrase), the sum of an
// OR's (false: n requires no word, or one not known without reading lists,
// such as a substring's).
func (e *segEval) rarestDF(n lang.Node) (int, bool) {
	switch n := n.(type) {
	case *lang.Term:
		return e.df([]byte(n.Text)), true
	case *lang.Phrase: // (a prefix is not judged: the AND passes over it)
		return e.rarestDF(&lang.And{Kids: phraseKids(nil, n)})
	case *lang.And:
		best, known := 0, false
		for _, k := range n.Kids {
			if df, ok := e.rarestDF(k); ok && (!known || df < best) {
				best, known = df, true
			}
		}
		return best, known
	case *lang.Or:
		sum := 0
		for _, k := range n.Kids {
			df, ok := e.rarestDF(k)
			if !ok {
				return 0, false
			}
			sum += df
		}
		return sum, len(n.Kids) > 0
	}
	return 0, false
}

// byDocFreq orders an AND's children so that the rarest word comes first
// and the other words are intersected against it; other atoms keep their
// order, after it.
func (e *segEval) byDocFreq(kids []lang.Node) []lang.Node {
	type kd struct {
		n  lang.Node
		df int
	}
	var terms []kd
	var rest []lang.Node
	var texts [][]byte
	for _, k := range kids {
		if t, ok := k.(*lang.Term); ok {
			texts = append(texts, []byte(t.Text))
		}
	}
	e.prefetchTexts(texts)
	for _, k := range kids {
		if t, ok := k.(*lang.Term); ok {
			terms = append(terms, kd{k, e.df([]byte(t.Text))})
		} else {
			rest = append(rest, k)
		}
	}
	if len(terms) == 0 {
		return kids
	}
	slices.SortStableFunc(terms, func(a, b kd) int { return a.df - b.df })
	out := []lang.Node{terms[0].n}
	out = append(out, rest...)
	for _, t := range terms[1:] {
		out = append(out, t.n)
	}
	return out
}

func (e *segEval) and(a, b cset) cset {
	switch {
	case a.all:
		b.exact = a.exact && b.exact
		return b
	case b.all:
		a.exact = a.exact && b.exact
		return a
	}
	return cset{bm: roaring.And(a.bm, b.bm), exact: a.exact && b.exact}
}

// termAnd returns the lines of acc holding term (plus those of acc that
// are unindexed), decoding the term's list against acc.
func (e *segEval) termAnd(t []byte, acc *roaring.Bitmap) (*roaring.Bitmap, error) {
	e.terms++
	ref, ok, err := e.lookup(t)
	if err != nil {
		return nil, err
	}
	var bm *roaring.Bitmap
	if ok {
		if bm, err = e.seg.PostingsAnd(ref, acc); err != nil {
			return nil, err
		}
	} else {
		bm = roaring.New()
	}
	if e.un != nil {
		bm.Or(roaring.And(acc, e.un))
	}
	return bm, nil
}

// term returns the lines holding term, plus the unindexed lines.
func (e *segEval) term(t []byte) (*roaring.Bitmap, error) {
	e.terms++
	ref, ok, err := e.lookup(t)
	if err != nil {
		return nil, err
	}
	if !ok {
		return e.withUn(roaring.New()), nil
	}
	bm, err := e.postings(ref)
	if err != nil {
		return nil, err
	}
	if e.un != nil {
		bm = roaring.Or(bm, e.un)
	}
	return bm, nil
}

// prefix unions the lines of every term starting with p; false when more
// than budget terms do.
func (e *segEval) prefix(p []byte, budget int) (*roaring.Bitmap, bool, error) {
	e.lookups()
	if budget < maxExpand && e.seg.EstimatePrefixTerms(p) > 2*budget {
		return nil, false, nil // clearly over budget: do not walk it
	}
	var refs []uint64
	over := false
	words := bytes.IndexByte(p, '.') < 0
	err := e.seg.PrefixTerms(p, func(t []byte, ref uint64) bool {
		if words && bytes.IndexByte(t, '.') >= 0 {
			return true // a dotted number, not a word (a word prefix is exact)
		}
		if len(refs) == budget {
			over = true
			return false
		}
		refs = append(refs, ref)
		return true
	})
	e.terms += len(refs)
	if err != nil || over {
		return nil, false, err
	}
	bm, err := e.union(refs)
	return bm, err == nil, err
}

func (e *segEval) union(refs []uint64) (*roaring.Bitmap, error) {
	bms := make([]*roaring.Bitmap, 0, len(refs)+1)
	var inline []uint32
	e.seg.PrefetchLists(refs)
	for _, ref := range refs {
		if ref&mmapstore.PostingsInline != 0 {
			inline = append(inline, uint32(ref>>1))
			continue
		}
		bm, err := e.postings(ref)
		if err != nil {
			return nil, err
		}
		bms = append(bms, bm)
	}
	if len(inline) > 0 {
		for _, id := range inline {
			if id >= e.seg.NumLines() {
				_, err := e.seg.Postings(uint64(id)<<1 | mmapstore.PostingsInline)
				return nil, err
			}
		}
		bms = append(bms, roaring.BitmapOf(inline...))
	}
	if e.un != nil {
		bms = append(bms, e.un)
	}
	if len(bms) == 0 {
		return roaring.New(), nil
	}
	return roaring.FastOr(bms...), nil
}

// maxBlocks bounds the dictionary blocks one substring atom may visit.
const maxBlocks = 2048

// scanTerms finds the dictionary terms containing needle (as a suffix when
// suffix is set): the trigram filters name candidate blocks, whose terms
// are then decoded and checked. false when the atom is too short
// or too common to narrow.
func (e *segEval) scanTerms(needle []byte, suffix bool, budget int) (*roaring.Bitmap, bool, error) {
	n := len(needle)
	if suffix {
		n++
	}
	if n < 3 {
		return nil, false, nil
	}
	blocks, err := e.blockCandidates(needle, suffix)
	if err != nil {
		return nil, false, err
	}
	if len(blocks) > min(maxBlocks, budget) {
		return nil, false, nil
	}
	e.blocks += len(blocks)
	e.seg.PrefetchBlocks(blocks)
	var refs []uint64
	over := false
	words := bytes.IndexByte(needle, '.') < 0
	for _, b := range blocks {
		err := e.seg.BlockTerms(int(b), func(t []byte, ref uint64) bool {
			if words && bytes.IndexByte(t, '.') >= 0 {
				return true // dotted numbers answer only dotted needles
			}
			if suffix && bytes.HasSuffix(t, needle) || !suffix && bytes.Contains(t, needle) {
				if len(refs) == budget {
					over = true
					return false
				}
				refs = append(refs, ref)
			}
			return true
		})
		if err != nil {
			return nil, false, err
		}
		if over {
			return nil, false, nil
		}
	}
	e.terms += len(refs)
	bm, err := e.union(refs)
	return bm, err == nil, err
}

// atomSet resolves one literal atom, expanding partial words to at most
// budget dictionary terms; ok is false when it does not narrow.
func (e *segEval) atomSet(a atom, budget int) (*roaring.Bitmap, bool, error) {
	switch a.kind {
	case atomExact:
		bm, err := e.term(a.text)
		return bm, err == nil, err
	case atomPrefix:
		return e.prefix(a.text, budget)
	case atomSuffix:
		return e.scanTerms(a.text, true, budget)
	default:
		return e.scanTerms(a.text, false, budget)
	}
}

// prefetchLookups asks, on a cold index, for what looking up the exact
// atoms will read (see mmapstore.Segment.PrefetchLookups).
func (e *segEval) prefetchLookups(atoms []atom) {
	var texts [][]byte
	for _, a := range atoms {
		if a.kind == atomExact {
			texts = append(texts, a.text)
		}
	}
	e.prefetchTexts(texts)
}

// prefetchTexts asks for the lookups of texts here (PrefetchLookups) and,
// found cold, in the other segments (lookAhead).
func (e *segEval) prefetchTexts(texts [][]byte) {
	if e.seg.PrefetchLookups(texts) && e.ahead != nil {
		e.ahead.cold(e.seg, texts)
	}
}

// literal narrows "line contains p" through its atoms, cheapest first, and
// stops early once few candidates remain. The set is exact when an atom
// that is all of p, and p has no letters, was applied: see caselessNumber.
func (e *segEval) literal(p []byte, unicodeFold bool) (cset, error) {
	atoms := e.q.literalAtoms(p, unicodeFold)
	if len(atoms) == 0 {
		return cset{all: true}, nil
	}
	exact, caseless := false, caselessNumber(p)
	e.prefetchLookups(atoms)
	// Exact terms first (rarest first), then prefixes, then dictionary scans.
	type scored struct {
		a    atom
		cost int
		df   int
	}
	ss := make([]scored, 0, len(atoms))
	for _, a := range atoms {
		s := scored{a: a, cost: int(a.kind)}
		if a.kind == atomInfix || a.kind == atomSuffix {
			s.cost = 2
			// A long substring whose trigrams only a few blocks admit is
			// the most selective atom there is (a fragment of an id, an IP
			// address): resolve it first, and the common words after it
			// are intersected against a handful of lines.
			if len(a.text) >= 6 {
				if bs, err := e.blockCandidates(a.text, a.kind == atomSuffix); err == nil && len(bs) <= 8 {
					s.cost = -1
				}
			}
		}
		if a.kind == atomExact {
			s.df = e.df(a.text)
		}
		ss = append(ss, s)
	}
	slices.SortStableFunc(ss, func(x, y scored) int {
		if x.cost != y.cost {
			return x.cost - y.cost
		}
		if x.df != y.df {
			return x.df - y.df
		}
		return len(y.a.text) - len(x.a.text) // longer partial words are more selective
	})
	acc := cset{all: true}
	for _, s := range ss {
		budget := maxExpand
		if !acc.all {
			// Few candidates left: reading them costs less than any more
			// lookups. A partial word is worth expanding only while that
			// costs less than reading the candidates it could rule out.
			n := int(acc.bm.GetCardinality())
			if n <= enough {
				break
			}
			budget = min(maxExpand, n/4)
		}
		if s.a.kind == atomExact && !acc.all {
			bm, err := e.termAnd(s.a.text, acc.bm)
			if err != nil {
				return cset{}, err
			}
			acc = cset{bm: bm}
			exact = exact || caseless && bytes.Equal(s.a.text, p)
			if bm.IsEmpty() {
				break
			}
			continue
		}
		bm, ok, err := e.atomSet(s.a, budget)
		if err != nil {
			return cset{}, err
		}
		if !ok {
			continue
		}
		acc = e.and(acc, cset{bm: bm})
		exact = exact || caseless && bytes.Equal(s.a.text, p)
		if acc.bm.IsEmpty() {
			break
		}
	}
	acc.exact = exact && !acc.all
	return acc, nil
}

// caselessNumber reports whether p is made of digits, '_' and dots only.
// Then an atom that is the whole of p is sufficient as well as necessary:
// every line holding a term that the atom matches contains p, because
// those bytes have no case, so a folded term holds them exactly as the
// line does (letters do not qualify: the term "error" also comes from
// "ERROR", and a Kelvin sign folds to "k"). The other atoms' sets contain
// every line that contains p, so ANDed with that one the set stays exact.
func caselessNumber(p []byte) bool {
	for _, c := range p {
		if c != '_' && !isDigitOrDot(c) {
			return false
		}
	}
	return len(p) > 0
}

// req narrows by the literals a regex requires.
func (e *segEval) req(r *relit.Req) (cset, error) {
	switch r.Op {
	case relit.OpNone:
		return e.empty(), nil
	case relit.OpLit:
		return e.literal([]byte(r.Lit), r.Fold)
	case relit.OpOr:
		var bms []*roaring.Bitmap
		for _, k := range r.Sub {
			c, err := e.req(k)
			if err != nil {
				return cset{}, err
			}
			if c.all {
				return c, nil
			}
			bms = append(bms, c.bm)
		}
		return cset{bm: roaring.FastOr(bms...)}, nil
	case relit.OpAnd:
		acc := cset{all: true}
		for _, k := range r.Sub {
			if !acc.all && acc.bm.GetCardinality() <= enough {
				break
			}
			c, err := e.req(k)
			if err != nil {
				return cset{}, err
			}
			acc = e.and(acc, c)
			if !acc.all && acc.bm.IsEmpty() {
				break
			}
		}
		return acc, nil
	}
	return cset{all: true}, nil
}
