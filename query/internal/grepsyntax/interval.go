package grepsyntax

import "strings"

// Intervals: "{m}", "{m,}", "{,n}", "{m,n}" in ERE, the same with "\{"
// and "\}" in BRE. grep's first reader checks them strictly (with the
// rules below, found by experiment); where it takes the '{' as a literal
// character, the second reader still reads an interval leniently.

type ivKind uint8

const (
	ivDigit ivKind = iota
	ivComma
	ivClose
	ivEnd
	ivOther
)

// ivToken classifies the interval text at i. In BRE the closer is "\}",
// and grep's first reader takes "\," as a comma (escComma) where the
// second rejects it.
func (p *parser) ivToken(i int) (k ivKind, next int, escComma bool) {
	s := p.src
	if i >= len(s) {
		return ivEnd, i, false
	}
	c := s[i]
	switch {
	case c >= '0' && c <= '9':
		return ivDigit, i + 1, false
	case c == ',':
		return ivComma, i + 1, false
	case p.syn == ERE && c == '}':
		return ivClose, i + 1, false
	case p.syn == BRE && c == '\\':
		if i+1 >= len(s) {
			return ivEnd, i + 1, false
		}
		switch s[i+1] {
		case '}':
			return ivClose, i + 2, false
		case ',':
			return ivComma, i + 2, true
		}
		return ivOther, i + 2, false
	}
	return ivOther, i + 1, false
}

// ivNumber reads decimal digits at i, saturating above dupMax; -1 when
// there are none.
func (p *parser) ivNumber(i int) (n, next int) {
	n = -1
	for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
		n = min(max(n, 0)*10+int(p.src[i]-'0'), dupMax+1)
		i++
	}
	return n, i
}

func (p *parser) openerLen() int { return 1 + int(p.syn) }

// strictInterval reads the interval at p.pos as grep's first reader
// does. ok is false when an ERE '{' does not start an interval and is a
// literal; a BRE "\{" always starts one, or is an error.
func (p *parser) strictInterval() (r repetition, ok bool, err error) {
	start := p.pos
	bad := &Error{Msg: msgBadBrace, Pos: start}
	lo, i := p.ivNumber(start + p.openerLen())
	hi := lo
	k, next, esc := p.ivToken(i)
	comma := k == ivComma
	if comma {
		if esc {
			p.setLate(msgBadBraceLow, start)
		}
		hi, i = p.ivNumber(next)
		k, next, esc = p.ivToken(i)
		if k == ivComma {
			return r, false, bad // a second comma is always an error
		}
		lo = max(lo, 0)
	}
	if k != ivClose {
		if p.syn == ERE {
			return r, false, nil
		}
		if p.closerAfter(i) {
			return r, false, bad
		}
		return r, false, &Error{Msg: msgBrace, Pos: start}
	}
	switch {
	case lo < 0 && !comma: // "{}"
		return r, false, bad
	case hi >= 0 && lo > hi:
		return r, false, bad
	case lo > dupMax || hi > dupMax:
		return r, false, &Error{Msg: msgTooBig, Pos: start}
	}
	p.pos = next
	return repetition{lo, hi}, true, nil
}

// closerAfter reports a "\}" at or after i in a basic expression.
func (p *parser) closerAfter(i int) bool {
	for i < len(p.src) {
		k, next, _ := p.ivToken(i)
		if k == ivClose {
			return true
		}
		i = next
	}
	return false
}

// lenientInterval reads the interval at start as grep's second reader
// does where the first takes the brace literally: a well-formed
// interval, or none (ok false). end is the offset after it.
func (p *parser) lenientInterval(start int) (r repetition, end int, ok bool) {
	lo, i := p.ivNumber(start + p.openerLen())
	hi := lo
	if i < len(p.src) && p.src[i] == ',' {
		hi, i = p.ivNumber(i + 1)
		lo = max(lo, 0)
	} else if lo < 0 {
		return r, 0, false
	}
	closer := "}"
	if p.syn == BRE {
		closer = `\}`
	}
	if !strings.HasPrefix(p.src[i:], closer) || (hi >= 0 && lo > hi) {
		return r, 0, false
	}
	return repetition{lo, hi}, i + len(closer), true
}
