package scan

import (
	"encoding/binary"
	"regexp/syntax"
	"slices"
	"sort"
	"unicode"
	"unicode/utf8"
)

// The lazy DFA (RE2-style). This file is one algorithm (state sets, the
// transition cache and the byte loop that walks it are tuned together),
// hence its length.
//
// A state is the set of instruction PCs that are
// alive between two characters of a line, plus what the empty-width
// assertions there need to know about the past: whether this is the line
// start and whether the previous character is a word character. Assertions
// that depend on the next character ($, \z, \b, \B) stay in the set as
// EmptyWidth PCs and are resolved when that character (or the end of the
// line) is seen. Transitions are computed on first use and cached in a flat
// table: row = state, column = byte class.
//
// The program matches runes, the table is walked byte by byte. Rune classes
// partition all runes so that no instruction (nor \b) can tell two runes of
// a class apart; an ASCII byte's column is its rune class. Bytes >= 0x80 get
// columns of their own that split them by UTF-8 role (continuation ranges,
// lead kinds) and around every rune-class boundary, so that the columns of a
// complete sequence determine its rune class. A state may carry a partial
// sequence (the columns of its bytes so far): the rune's transition is taken
// when its last byte arrives, and when a byte breaks the sequence every byte
// so far counts as U+FFFD of width 1, exactly as Go's regexp decodes invalid
// UTF-8. So the hot loop never leaves the table for non-ASCII text.

// state is a transition value. Real states are row offsets (state index *
// stride); everything the hot loop must stop for is >= minSpecial.
type state uint32

const (
	tUnknown    state = ^state(0) - iota // not computed yet
	tMatch                               // a match ends here: the line matches
	tDead                                // no thread left: the line cannot match
	tEOLUnknown                          // end of line, assertions not evaluated yet
	tEOLMatch                            // end of line, the line matches
	tEOLNoMatch                          // end of line, no match
	tFallback                            // the cache thrashes: use Go's regexp for the rest
	minSpecial  = tFallback
)

// State flags, stored in the first byte of a state key.
const (
	fStart = 1 << iota // at the line start
	fWord              // previous character is a word character
)

const (
	beginOps  = syntax.EmptyBeginLine | syntax.EmptyBeginText
	allOps    = syntax.EmptyBeginLine | syntax.EmptyEndLine | syntax.EmptyBeginText | syntax.EmptyEndText | syntax.EmptyWordBoundary | syntax.EmptyNoWordBoundary
	wordOps   = syntax.EmptyWordBoundary | syntax.EmptyNoWordBoundary
	maxStates = 10000
	maxMemory = 32 << 20 // bytes of transitions and keys per cache
)

// UTF-8 roles of bytes >= 0x80 (a high column never mixes two roles).
const (
	kCont80  = iota // continuation 80-8F
	kCont90         // continuation 90-9F
	kContA0         // continuation A0-BF
	kInvalid        // C0, C1, F5-FF: never valid
	kLead2          // C2-DF
	kLeadE0         // E0: next A0-BF
	kLead3          // E1-EC, EE-EF
	kLeadED         // ED: next 80-9F (no surrogates)
	kLeadF0         // F0: next 90-BF
	kLead4          // F1-F3
	kLeadF4         // F4: next 80-8F (<= U+10FFFF)
)

func utf8Role(b byte) int {
	switch {
	case b < 0x90:
		return kCont80
	case b < 0xA0:
		return kCont90
	case b < 0xC0:
		return kContA0
	case b < 0xC2:
		return kInvalid
	case b < 0xE0:
		return kLead2
	case b == 0xE0:
		return kLeadE0
	case b == 0xED:
		return kLeadED
	case b < 0xF0:
		return kLead3
	case b == 0xF0:
		return kLeadF0
	case b < 0xF4:
		return kLead4
	case b == 0xF4:
		return kLeadF4
	}
	return kInvalid
}

// seqLen is the length of a sequence led by a byte of role k.
func seqLen(k int) int {
	switch k {
	case kLead2:
		return 2
	case kLeadE0, kLead3, kLeadED:
		return 3
	}
	return 4
}

// contOK reports whether a continuation byte of role c may follow the
// lead of role lead at position pos (1 = right after the lead).
func contOK(lead, pos, c int) bool {
	if c > kContA0 {
		return false
	}
	if pos > 1 {
		return true
	}
	switch lead {
	case kLeadE0:
		return c == kContA0
	case kLeadED:
		return c != kContA0
	case kLeadF0:
		return c != kCont80
	case kLeadF4:
		return c == kCont80
	}
	return true
}

// dfa is the immutable, shareable part: the program and its classes.
type dfa struct {
	inst      []syntax.Inst
	start     uint32
	nascii    int // rune classes that ASCII bytes have, numbered first; also the end-of-line column
	stride    int // nascii + 1 + number of high columns
	byteCol   [256]uint16
	highRole  []uint8  // UTF-8 role of each high column
	highRep   []byte   // a byte of each high column
	rep       []rune   // a representative rune of each class
	hiStarts  []rune   // class intervals from 0x80 up: start rune ...
	hiClass   []uint16 // ... and class
	fffdClass int      // class of U+FFFD, what invalid bytes decode to
	hasWord   bool     // \b or \B occur: track fWord
	always    bool     // the empty string matches at the line start: every line matches
	maxStates int
}

func isWordRune(r rune) bool {
	return r < utf8.RuneSelf && syntax.IsWordChar(r)
}

func isConsuming(op syntax.InstOp) bool {
	switch op {
	case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	}
	return false
}

func newDFA(prog *syntax.Prog) *dfa {
	d := &dfa{inst: prog.Inst, start: uint32(prog.Start)}
	for i := range d.inst {
		if in := &d.inst[i]; in.Op == syntax.InstEmptyWidth && syntax.EmptyOp(in.Arg)&wordOps != 0 {
			d.hasWord = true
		}
	}
	d.buildClasses()
	d.maxStates = min(maxStates, max(16, maxMemory/(d.stride*4+64)))
	c := newCache(d)
	d.always = c.start == tMatch
	return d
}

// buildClasses splits the runes into intervals at every boundary of every
// instruction's rune set (and of the word characters when \b is used),
// merges intervals that every instruction treats alike into classes, and
// derives the byte columns.
func (d *dfa) buildClasses() {
	points := []rune{0, utf8.RuneSelf, unicode.MaxRune + 1}
	addRange := func(lo, hi rune) { points = append(points, lo, hi+1) }
	type instKey struct {
		op   syntax.InstOp
		p    *rune
		n    int
		fold bool
	}
	seen := map[instKey]bool{}
	var matchers []*syntax.Inst // consuming instructions with distinct rune sets
	for i := range d.inst {
		in := &d.inst[i]
		if !isConsuming(in.Op) || len(in.Rune) == 0 {
			continue
		}
		fold := in.Op == syntax.InstRune && syntax.Flags(in.Arg)&syntax.FoldCase != 0
		k := instKey{in.Op, &in.Rune[0], len(in.Rune), fold}
		if seen[k] {
			continue
		}
		seen[k] = true
		matchers = append(matchers, in)
		switch {
		case len(in.Rune) == 1:
			r := in.Rune[0]
			addRange(r, r)
			if fold {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					addRange(f, f)
				}
			}
		default:
			for j := 0; j+1 < len(in.Rune); j += 2 {
				addRange(in.Rune[j], in.Rune[j+1])
			}
		}
	}
	if d.hasWord {
		addRange('0', '9')
		addRange('A', 'Z')
		addRange('_', '_')
		addRange('a', 'z')
	}
	slices.Sort(points)
	points = slices.Compact(points)
	for len(points) > 0 && points[len(points)-1] > unicode.MaxRune+1 {
		points = points[:len(points)-1]
	}
	// points[i] starts interval i; the last point only closes the last one.
	nint := len(points) - 1
	cls := make([]int, nint)
	ncls := 1
	remap := make([]int, 0, 2*nint)
	refine := func(pred func(r rune) bool) {
		remap = remap[:0]
		for range 2 * ncls {
			remap = append(remap, -1)
		}
		next := 0
		for i := range cls {
			k := 2 * cls[i]
			if pred(points[i]) {
				k++
			}
			if remap[k] < 0 {
				remap[k] = next
				next++
			}
			cls[i] = remap[k]
		}
		ncls = next
	}
	for _, in := range matchers {
		refine(in.MatchRune)
	}
	if d.hasWord {
		refine(isWordRune)
	}
	// Renumber: classes of ASCII runes first, so rows need columns for
	// those only.
	order := make([]int, ncls)
	for i := range order {
		order[i] = -1
	}
	next := 0
	for i := range nint {
		if points[i] < utf8.RuneSelf && order[cls[i]] < 0 {
			order[cls[i]] = next
			next++
		}
	}
	d.nascii = next
	for i := range nint {
		if order[cls[i]] < 0 {
			order[cls[i]] = next
			next++
		}
		cls[i] = order[cls[i]]
	}
	d.rep = make([]rune, ncls)
	for i := nint - 1; i >= 0; i-- {
		d.rep[cls[i]] = points[i]
	}
	for i := 0; i < nint; i++ {
		if points[i] >= utf8.RuneSelf {
			d.hiStarts = append(d.hiStarts, points[i])
			d.hiClass = append(d.hiClass, uint16(cls[i]))
		}
	}
	d.fffdClass = d.runeClass(utf8.RuneError)

	// High columns: contiguous byte ranges of one UTF-8 role, with every
	// byte of the encoding of a class-changing boundary rune alone in its
	// column. Then two complete sequences whose bytes share columns are in
	// the same class: were a boundary p between them, their first byte that
	// differs from p's encoding would have to lie on both sides of p's
	// byte, or equal it (a single-byte column), which forces equality.
	var single [256]bool
	for i := 1; i < len(d.hiStarts); i++ {
		if d.hiClass[i] == d.hiClass[i-1] {
			continue
		}
		p := d.hiStarts[i]
		if 0xD800 <= p && p < 0xE000 {
			p = 0xE000 // surrogates never decode; split at the next rune
		}
		for _, b := range utf8.AppendRune(nil, p) {
			single[b] = true
		}
	}
	for b := 0; b < utf8.RuneSelf; b++ {
		if b == '\n' {
			d.byteCol[b] = uint16(d.nascii)
			continue
		}
		i := sort.Search(nint, func(i int) bool { return points[i] > rune(b) }) - 1
		d.byteCol[b] = uint16(cls[i])
	}
	for b := utf8.RuneSelf; b < 256; b++ {
		newCol := b == utf8.RuneSelf || single[b] || single[b-1] || utf8Role(byte(b)) != utf8Role(byte(b-1))
		if newCol {
			d.highRole = append(d.highRole, uint8(utf8Role(byte(b))))
			d.highRep = append(d.highRep, byte(b))
		}
		d.byteCol[b] = uint16(d.nascii + len(d.highRole)) // nascii+1+index
	}
	d.stride = d.nascii + 1 + len(d.highRole)
}

// runeClass returns the class of r >= 0x80.
func (d *dfa) runeClass(r rune) int {
	h := d.hiStarts
	lo, hi := 0, len(h) // h[0] = 0x80 <= r; find the last start <= r
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if h[mid] <= r {
			lo = mid
		} else {
			hi = mid
		}
	}
	return int(d.hiClass[lo])
}

// sparseSet is a set of PCs with O(1) clear and insertion order.
type sparseSet struct {
	sparse []uint32
	dense  []uint32
}

func newSparseSet(n int) sparseSet {
	return sparseSet{sparse: make([]uint32, n), dense: make([]uint32, 0, n)}
}

func (s *sparseSet) has(x uint32) bool {
	i := s.sparse[x]
	return int(i) < len(s.dense) && s.dense[i] == x
}

func (s *sparseSet) add(x uint32) {
	s.sparse[x] = uint32(len(s.dense))
	s.dense = append(s.dense, x)
}

// A state key is: flags byte, number of pending high columns n (0-3), n
// column indexes (uint16 LE), then the sorted PCs (uint32 LE).
func keyPending(key string) int    { return int(key[1]) }
func keyPCs(key string) string     { return key[2+2*keyPending(key):] }
func keyCol(key string, j int) int { return int(key[2+2*j]) | int(key[3+2*j])<<8 }

// coreKey drops the pending sequence of key.
func coreKey(key string) string {
	if keyPending(key) == 0 {
		return key
	}
	return key[:1] + "\x00" + keyPCs(key)
}

func pcAt(pcs string, k int) uint32 {
	return uint32(pcs[k]) | uint32(pcs[k+1])<<8 | uint32(pcs[k+2])<<16 | uint32(pcs[k+3])<<24
}

// cache is the mutable, per-goroutine part of a DFA.
type cache struct {
	d      *dfa
	trans  []state
	keys   []string
	index  map[string]state
	start  state // the line-start state (or tMatch when every line matches)
	memory int

	gen       int // incremented by every reset
	resets    int // in the current scan
	progress  int // bytes the current scan has got through (approximately)
	resetPos  int // progress at the last reset
	set, next sparseSet
	stack     []uint32
	key       []byte
	pcs       []uint32
}

func newCache(d *dfa) *cache {
	c := &cache{
		d:    d,
		set:  newSparseSet(len(d.inst)),
		next: newSparseSet(len(d.inst)),
	}
	c.reset()
	return c
}

func (c *cache) reset() {
	c.gen++
	c.trans = c.trans[:0]
	c.keys = c.keys[:0]
	c.index = make(map[string]state)
	c.memory = 0
	c.set.dense = c.set.dense[:0]
	if c.closure(&c.set, c.d.start, beginOps, beginOps) {
		c.start = tMatch
		return
	}
	key, _ := c.setKey(&c.set, beginOps, beginOps, fStart)
	c.start = c.add(key)
}

// closure adds pc and every PC reachable from it without consuming input to
// set. known are the empty-width conditions decided at this position and
// holds those of them that are true; EmptyWidth PCs that need undecided
// conditions stay in the set unexpanded. It reports whether Match is reached.
func (c *cache) closure(set *sparseSet, pc uint32, known, holds syntax.EmptyOp) bool {
	stk := append(c.stack[:0], pc)
	matched := false
	for len(stk) > 0 && !matched {
		pc := stk[len(stk)-1]
		stk = stk[:len(stk)-1]
		if set.has(pc) {
			continue
		}
		set.add(pc)
		in := &c.d.inst[pc]
		switch in.Op {
		case syntax.InstMatch:
			matched = true
		case syntax.InstAlt, syntax.InstAltMatch:
			stk = append(stk, in.Arg, in.Out)
		case syntax.InstNop, syntax.InstCapture:
			stk = append(stk, in.Out)
		case syntax.InstEmptyWidth:
			need := syntax.EmptyOp(in.Arg)
			if need&known&^holds == 0 && need&^known == 0 {
				stk = append(stk, in.Out)
			}
		}
	}
	c.stack = stk[:0]
	return matched
}

// setKey returns the key of the PCs of set that matter after a closure with
// the given known and holding conditions: consuming instructions and
// undecided EmptyWidth ones. ok is false for an empty (dead) set.
func (c *cache) setKey(set *sparseSet, known, holds syntax.EmptyOp, flags byte) (key string, ok bool) {
	pcs := c.pcs[:0]
	for _, pc := range set.dense {
		in := &c.d.inst[pc]
		if isConsuming(in.Op) {
			pcs = append(pcs, pc)
		} else if in.Op == syntax.InstEmptyWidth {
			need := syntax.EmptyOp(in.Arg)
			if need&^known != 0 && need&known&^holds == 0 {
				pcs = append(pcs, pc)
			}
		}
	}
	c.pcs = pcs
	if len(pcs) == 0 {
		return "", false
	}
	slices.Sort(pcs)
	b := append(c.key[:0], flags, 0)
	for _, pc := range pcs {
		b = binary.LittleEndian.AppendUint32(b, pc)
	}
	c.key = b
	return string(b), true
}

func (c *cache) full() bool {
	return len(c.keys) >= c.d.maxStates || c.memory >= maxMemory
}

// add returns the state of key, creating it if needed. A full cache is
// reset first (invalidating every state the caller holds), unless the DFA
// builds states faster than it consumes input: then, like RE2, it gives up
// with tFallback.
func (c *cache) add(key string) state {
	if s, ok := c.index[key]; ok {
		return s
	}
	if c.full() {
		if c.resets++; c.resets > 2 && c.progress-c.resetPos < 10*len(c.keys) {
			return tFallback
		}
		c.resetPos = c.progress
		c.reset()
		if s, ok := c.index[key]; ok {
			return s
		}
	}
	d := c.d
	s := state(len(c.trans))
	c.index[key] = s
	c.keys = append(c.keys, key)
	c.memory += d.stride*4 + len(key) + 48
	for range d.nascii {
		c.trans = append(c.trans, tUnknown)
	}
	c.trans = append(c.trans, tEOLUnknown)
	for range len(d.highRole) {
		c.trans = append(c.trans, tUnknown)
	}
	return s
}

// runeStep computes the transition of the state with key (no pending
// sequence) on a rune of class cls. It returns the next key, or a special
// state (tMatch or tDead) with an empty key.
func (c *cache) runeStep(key string, cls int) (string, state) {
	d := c.d
	flags := key[0]
	pcs := keyPCs(key)
	r := d.rep[cls]
	var holds syntax.EmptyOp
	if flags&fStart != 0 {
		holds |= beginOps
	}
	if d.hasWord {
		if isWordRune(r) != (flags&fWord != 0) {
			holds |= syntax.EmptyWordBoundary
		} else {
			holds |= syntax.EmptyNoWordBoundary
		}
	}
	// Before consuming r every assertion here is decided.
	c.set.dense = c.set.dense[:0]
	for k := 0; k < len(pcs); k += 4 {
		if c.closure(&c.set, pcAt(pcs, k), allOps, holds) {
			return "", tMatch
		}
	}
	c.next.dense = c.next.dense[:0]
	for _, pc := range c.set.dense {
		in := &d.inst[pc]
		if isConsuming(in.Op) && in.MatchRune(r) {
			if c.closure(&c.next, in.Out, beginOps, 0) {
				return "", tMatch
			}
		}
	}
	// Unanchored search: a match may also start after r.
	if c.closure(&c.next, d.start, beginOps, 0) {
		return "", tMatch
	}
	var nflags byte
	if d.hasWord && isWordRune(r) {
		nflags = fWord
	}
	next, ok := c.setKey(&c.next, beginOps, 0, nflags)
	if !ok {
		return "", tDead
	}
	return next, tUnknown
}

// flush turns the pending bytes of key into U+FFFD runes (a broken
// sequence) and returns the key without pending bytes, or tMatch/tDead.
func (c *cache) flush(key string) (string, state) {
	n := keyPending(key)
	key = coreKey(key)
	for range n {
		var s state
		if key, s = c.runeStep(key, c.d.fffdClass); s != tUnknown {
			return "", s
		}
	}
	return key, tUnknown
}

// transition computes the transition of the state with key on column col (not
// the end-of-line column).
func (c *cache) transition(key string, col int) state {
	d := c.d
	if col < d.nascii {
		key, s := c.flush(key)
		if s != tUnknown {
			return s
		}
		if key, s = c.runeStep(key, col); s != tUnknown {
			return s
		}
		return c.add(key)
	}
	h := col - d.nascii - 1
	role := int(d.highRole[h])
	if n := keyPending(key); n > 0 {
		lead := int(d.highRole[keyCol(key, 0)])
		if contOK(lead, n, role) {
			if n+1 < seqLen(lead) {
				return c.add(withPending(key, h))
			}
			// The sequence is complete: take the rune's transition.
			seq := make([]byte, 0, 4)
			for j := range n {
				seq = append(seq, d.highRep[keyCol(key, j)])
			}
			r, _ := utf8.DecodeRune(append(seq, d.highRep[h]))
			key, s := c.runeStep(coreKey(key), d.runeClass(r))
			if s != tUnknown {
				return s
			}
			return c.add(key)
		}
		var s state
		if key, s = c.flush(key); s != tUnknown {
			return s
		}
	}
	if role >= kLead2 {
		return c.add(withPending(key, h))
	}
	// A stray continuation byte or an invalid byte: U+FFFD.
	key, s := c.runeStep(key, d.fffdClass)
	if s != tUnknown {
		return s
	}
	return c.add(key)
}

// withPending appends high column h to key's pending sequence.
func withPending(key string, h int) string {
	n := keyPending(key)
	b := make([]byte, 0, len(key)+2)
	b = append(b, key[0], byte(n+1))
	b = append(b, key[2:2+2*n]...)
	b = append(b, byte(h), byte(h>>8))
	return string(append(b, keyPCs(key)...))
}

// step computes and caches the transition of state s on column col. After
// a cache reset (c.gen changes) every row offset the caller holds is stale.
func (c *cache) step(s state, col int) state {
	gen := c.gen
	ns := c.transition(c.keys[int(s)/c.d.stride], col)
	if gen == c.gen && ns != tFallback {
		c.trans[int(s)+col] = ns
	}
	return ns
}

// eol evaluates the end-of-line assertions for state s and caches the
// result in its end-of-line column.
func (c *cache) eol(s state) state {
	d := c.d
	res := tEOLNoMatch
	key, sp := c.flush(c.keys[int(s)/d.stride])
	switch sp {
	case tMatch:
		res = tEOLMatch
	case tUnknown:
		flags := key[0]
		holds := syntax.EmptyEndLine | syntax.EmptyEndText
		if flags&fStart != 0 {
			holds |= beginOps
		}
		if flags&fWord != 0 {
			holds |= syntax.EmptyWordBoundary
		} else {
			holds |= syntax.EmptyNoWordBoundary
		}
		c.set.dense = c.set.dense[:0]
		pcs := keyPCs(key)
		for k := 0; k < len(pcs); k += 4 {
			if c.closure(&c.set, pcAt(pcs, k), allOps, holds) {
				res = tEOLMatch
				break
			}
		}
	}
	c.trans[int(s)+d.nascii] = res
	return res
}
