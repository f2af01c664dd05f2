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

// ivToken classifies the interval text at i. In BRE the closer is "\}".
// grep's first reader takes "\," as a comma (escComma) where the second
// does not: in BRE it rejects the interval, in ERE it reads the brace as
// a literal.
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
	case c == '\\':
		if i+1 >= len(s) {
			return ivEnd, i + 1, false
		}
		switch s[i+1] {
		case '}':
			if p.syn == BRE {
				return ivClose, i + 2, false
			}
		case ',':
			return ivComma, i + 2, true
		}
		return ivOther, i + 2, false
	}
	return ivOther, i + 1, false
}

// ivField reads one count of an interval as grep's first reader does:
// everything up to a comma, the closer or the end. n is the number, -1
// when the field is empty, -2 when it holds anything but digits; stop is
// the token that ended it and next the offset after that token.
func (p *parser) ivField(i int, escComma *bool) (n int, stop ivKind, next int) {
	n = -1
	for {
		k, nx, esc := p.ivToken(i)
		switch k {
		case ivComma:
			if esc {
				*escComma = true
			}
			return n, k, nx
		case ivClose, ivEnd:
			return n, k, nx
		case ivDigit:
			if n != -2 {
				n = min(max(n, 0)*10+int(p.src[i]-'0'), dupMax+1)
			}
		default:
			n = -2
		}
		i = nx
	}
}

func (p *parser) openerLen() int { return 1 + int(p.syn) }

// strictInterval reads the interval at p.pos as grep's first reader
// does. ok is false when an ERE '{' does not start an interval and is a
// literal; a BRE "\{" always starts one, or is an error. In ERE any
// character other than digits and one comma makes the brace a literal;
// in BRE it is an error, "Unmatched" when the pattern ends first.
func (p *parser) strictInterval() (r repetition, ok bool, err error) {
	start := p.pos
	bad := &Error{Msg: msgBadBrace, Pos: start}
	unmatched := &Error{Msg: msgBrace, Pos: start}
	escComma := false
	lo, stop, next := p.ivField(start+p.openerLen(), &escComma)
	hi := lo
	comma := stop == ivComma
	if comma {
		if lo == -2 {
			if p.syn == ERE {
				return r, false, nil
			}
			return r, false, bad
		}
		hi, stop, next = p.ivField(next, &escComma)
		lo = max(lo, 0)
	}
	switch {
	case stop == ivEnd:
		if p.syn == ERE {
			return r, false, nil
		}
		return r, false, unmatched
	case lo == -2 || hi == -2:
		if p.syn == ERE {
			return r, false, nil
		}
		return r, false, bad
	case stop == ivComma: // a second comma
		return r, false, bad
	case lo < 0 && !comma: // "{}"
		return r, false, bad
	case hi >= 0 && lo > hi:
		return r, false, bad
	case lo > dupMax || hi > dupMax:
		return r, false, &Error{Msg: msgTooBig, Pos: start}
	}
	if escComma {
		if p.syn == BRE {
			p.setLate(msgBadBraceLow, start)
		} else {
			p.diverge(start, divBraceComma)
			return r, false, nil
		}
	}
	p.pos = next
	return repetition{lo, hi}, true, nil
}

// lenientInterval reads the interval at start as grep's second reader
// does where the first takes the brace literally: a well-formed
// interval, or none (ok false). end is the offset after it.
func (p *parser) lenientInterval(start int) (r repetition, end int, ok bool) {
	lo, i := p.digits(start + p.openerLen())
	hi := lo
	if i < len(p.src) && p.src[i] == ',' {
		hi, i = p.digits(i + 1)
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

// digits reads decimal digits at i, saturating above dupMax; -1 when
// there are none.
func (p *parser) digits(i int) (n, next int) {
	n = -1
	for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
		n = min(max(n, 0)*10+int(p.src[i]-'0'), dupMax+1)
		i++
	}
	return n, i
}
