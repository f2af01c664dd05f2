package scan

import "bytes"

// Running the DFA over a buffer. Each line starts in the line-start state
// and ends at its '\n' (the end-of-line column). A DFA walk is one chain of
// dependent loads, so its speed is bound by load latency, not by the CPU's
// width: runDual walks two halves of a window in lockstep, which keeps two
// independent chains in flight and nearly doubles throughput.

// Variables only so that tests can shrink them.
var (
	dualMin = 4 << 10   // buffers shorter than this run in one lane
	window  = 256 << 10 // lane length; bounds the lines lane B holds back
)

// lane is one walk over the whole lines of buf[ls:end].
type lane struct {
	i   int // next byte
	ls  int // start of the current line
	end int // end of the lane (after a '\n', or the end of the buffer)
	s   state
	// mark is where the lane was at its last special transition; the
	// bytes since then count as progress for the cache's thrash detection.
	mark int
}

// sink receives matching lines: fn, or counting when fn is nil.
type sink struct {
	fn       func(start, end int) bool
	count    int
	pend     []int // lane B's matching lines, held until lane A is done
	fallback bool  // the DFA gave up: Go's regexp handles the rest
}

func (k *sink) emit(start, end int) bool {
	if k.fn == nil {
		k.count++
		return true
	}
	return k.fn(start, end)
}

// hold records a line of lane B (counted at once when nobody needs order).
func (k *sink) hold(start, end int) {
	if k.fn == nil {
		k.count++
		return
	}
	k.pend = append(k.pend, start, end)
}

func (k *sink) release() bool {
	for j := 0; j < len(k.pend); j += 2 {
		if !k.fn(k.pend[j], k.pend[j+1]) {
			return false
		}
	}
	k.pend = k.pend[:0]
	return true
}

// run reports the matching lines of buf[from:to], which holds whole lines
// (to is len(buf) or follows a '\n'); with single it is exactly one line,
// possibly empty. It returns false when the sink's fn asked to stop.
func (m *reMatcher) run(c *cache, buf []byte, from, to int, single bool, k *sink) bool {
	if single || to-from < dualMin {
		l := lane{i: from, ls: from, end: to, s: c.start, mark: from}
		return m.runLane(c, buf, &l, single, k)
	}
	for pos := from; pos < to; {
		if k.fallback {
			return m.fallback(buf, pos, to, k)
		}
		wEnd := to
		if to-pos > 2*window {
			if wEnd = lineEndIn(buf, pos+2*window, to); wEnd < to {
				wEnd++
			}
		}
		mid := lineEndIn(buf, pos+(wEnd-pos)/2, wEnd) + 1
		a := lane{i: pos, ls: pos, end: mid, s: c.start, mark: pos}
		if mid >= wEnd {
			a.end = wEnd
			if !m.runLane(c, buf, &a, false, k) {
				return false
			}
		} else {
			b := lane{i: mid, ls: mid, end: wEnd, s: c.start, mark: mid}
			if !m.runDual(c, buf, &a, &b, k) {
				return false
			}
		}
		pos = wEnd
	}
	return true
}

// lineEndIn returns the index of the first '\n' in buf[i:end], or end.
func lineEndIn(buf []byte, i, end int) int {
	if j := bytes.IndexByte(buf[i:end], '\n'); j >= 0 {
		return i + j
	}
	return end
}

// runLane walks lane l to its end alone.
func (m *reMatcher) runLane(c *cache, buf []byte, l *lane, single bool, k *sink) bool {
	for {
		advance(c.trans, &m.d.byteCol, buf, l, c.start)
		if l.i >= l.end {
			break
		}
		switch ev, s, e := m.special(c, buf, l); ev {
		case evMatch:
			if !k.emit(s, e) {
				return false
			}
		case evFallback:
			return m.fallback(buf, l.ls, l.end, k)
		}
	}
	if m.finish(c, l, single) {
		return k.emit(l.ls, l.end)
	}
	return true
}

// runDual walks lanes a and b (b's lines follow a's) in lockstep until one
// ends, then finishes each alone. a's matching lines go to the sink at once,
// b's are held until a is done.
func (m *reMatcher) runDual(c *cache, buf []byte, a, b *lane, k *sink) bool {
	col := &m.d.byteCol
	k.pend = k.pend[:0]
	for a.i < a.end && b.i < b.end {
		advance2(c.trans, col, buf, a, b, c.start)
		gen := c.gen
		if a.i < a.end && c.trans[int(a.s)+int(col[buf[a.i]])] >= minSpecial {
			switch ev, s, e := m.special(c, buf, a); ev {
			case evMatch:
				if !k.emit(s, e) {
					return false
				}
			case evFallback:
				return m.fallback(buf, a.ls, a.end, k) && k.release() && m.fallback(buf, b.ls, b.end, k)
			}
			if c.gen != gen {
				// The cache was reset: b's state is gone; redo its line.
				b.i, b.s, b.mark, gen = b.ls, c.start, b.ls, c.gen
			}
		}
		if b.i < b.end && c.trans[int(b.s)+int(col[buf[b.i]])] >= minSpecial {
			switch ev, s, e := m.special(c, buf, b); ev {
			case evMatch:
				k.hold(s, e)
			case evFallback:
				return m.fallback(buf, a.ls, a.end, k) && k.release() && m.fallback(buf, b.ls, b.end, k)
			}
			if c.gen != gen {
				a.i, a.s, a.mark = a.ls, c.start, a.ls
			}
		}
	}
	return m.runLane(c, buf, a, false, k) && k.release() && m.runLane(c, buf, b, false, k)
}

const (
	evNone     = iota
	evMatch    // a line matched
	evFallback // the DFA gave up at this lane's current line
)

// special handles the transition of lane l at l.i that advance stopped at:
// it computes missing transitions and finishes lines. On evMatch it returns
// the matching line.
func (m *reMatcher) special(c *cache, buf []byte, l *lane) (ev, start, end int) {
	i, s := l.i, l.s
	c.progress += i - l.mark
	l.mark = i
	col := int(m.d.byteCol[buf[i]])
	ns := c.trans[int(s)+col]
	if ns == tUnknown {
		ns = c.step(s, col)
	}
	if ns < minSpecial {
		l.s, l.i = ns, i+1
		return evNone, 0, 0
	}
	matched := false
	switch ns {
	case tEOLUnknown:
		matched = c.eol(s) == tEOLMatch
	case tEOLMatch:
		matched = true
	case tMatch:
		matched = true
		i = lineEndIn(buf, i, l.end)
	case tDead:
		i = lineEndIn(buf, i, l.end)
	case tFallback:
		return evFallback, 0, 0
	}
	// i is at the line's '\n' (or the lane's end).
	start, end = l.ls, i
	l.i, l.ls, l.s = i+1, i+1, c.start
	if matched {
		return evMatch, start, end
	}
	return evNone, 0, 0
}

// finish evaluates the last line of a lane that has no '\n'.
func (m *reMatcher) finish(c *cache, l *lane, single bool) bool {
	if l.ls < l.end || single && l.ls == l.end {
		ns := c.trans[int(l.s)+m.d.nascii]
		if ns == tEOLUnknown {
			ns = c.eol(l.s)
		}
		return ns == tEOLMatch
	}
	return false
}

// fallback matches the lines of buf[ls:end] with Go's regexp.
func (m *reMatcher) fallback(buf []byte, ls, end int, k *sink) bool {
	k.fallback = true
	for ls < end {
		e := lineEndIn(buf, ls, end)
		if m.re.Match(buf[ls:e]) && !k.emit(ls, e) {
			return false
		}
		ls = e + 1
	}
	return true
}

// advance is the DFA's hot loop: it follows transitions of lane l until one
// is special or the lane ends. Lines that end without a match are the
// common special case: it handles them itself (they need no report). It
// stays a small leaf function so that everything lives in registers.
//
//go:noinline
func advance(trans []state, col *[256]uint16, buf []byte, l *lane, start state) {
	i, s, ls := l.i, l.s, l.ls
	buf = buf[:l.end]
	for ; i < len(buf); i++ {
		ns := trans[int(s)+int(col[buf[i]])]
		if ns >= minSpecial {
			if ns != tEOLNoMatch {
				break
			}
			ns, ls = start, i+1
		}
		s = ns
	}
	l.i, l.s, l.ls = i, s, ls
}

// advance2 is advance for two lanes in lockstep; it stops as soon as either
// lane meets another special transition or its end.
//
//go:noinline
func advance2(trans []state, col *[256]uint16, buf []byte, a, b *lane, start state) {
	i, ie, si, lsi := a.i, a.end, a.s, a.ls
	j, je, sj, lsj := b.i, b.end, b.s, b.ls
	if ie > len(buf) || je > len(buf) {
		return
	}
	for i < ie && j < je {
		ni := trans[int(si)+int(col[buf[i]])]
		nj := trans[int(sj)+int(col[buf[j]])]
		if ni >= minSpecial {
			if ni != tEOLNoMatch {
				break
			}
			ni, lsi = start, i+1
		}
		if nj >= minSpecial {
			if nj != tEOLNoMatch {
				si = ni // keep a's step: it is done
				i++
				break
			}
			nj, lsj = start, j+1
		}
		si, sj = ni, nj
		i++
		j++
	}
	a.i, a.s, a.ls = i, si, lsi
	b.i, b.s, b.ls = j, sj, lsj
}
