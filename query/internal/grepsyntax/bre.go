package grepsyntax

// The basic syntax (grep -G): groups, alternation, intervals, \+ and \?
// are written with a backslash; '*' is literal at the start of a branch,
// '^' and '$' are anchors only at its ends.

// branchBRE reads one alternative of a basic expression.
func (p *parser) branchBRE() (*node, error) {
	var items []*node
	atStart := true   // nothing at all read yet: '^' is an anchor
	starLit := true   // only zero-width tests so far: *, \+, \?, \{ are literal
	lastZero := false // the last item is a zero-width test
	// Right after a zero-width test grep's first reader takes "\{" as a
	// literal, the second as an interval.
	braceLit := false
	push := func(n *node, zero bool) {
		items = append(items, n)
		atStart, lastZero, braceLit = false, zero, zero
		if !zero {
			starLit = false
		}
	}
	apply := func(at int, r repetition) {
		if lastZero {
			p.diverge(at, divRepeatTest)
		}
		items[len(items)-1] = repeat(items[len(items)-1], r.min, r.max)
		braceLit = false
	}
	for p.pos < len(p.src) {
		start := p.pos
		if p.has(`\|`) {
			break
		}
		if p.has(`\)`) {
			if p.depth == 0 {
				return nil, &Error{Msg: msgCloseParen, Pos: start}
			}
			break
		}
		c := p.src[p.pos]
		switch {
		case c == '*' && !starLit:
			p.pos++
			apply(start, repetition{0, -1})
		case c == '^' && atStart:
			p.pos++
			push(assertion(opBOL), true)
		case c == '$' && p.dollarAnchors():
			p.pos++
			push(assertion(opEOL), true)
		case c == '.':
			p.pos++
			push(setNode(anySet()), false)
		case c == '[':
			n, err := p.bracket()
			if err != nil {
				return nil, err
			}
			push(n, false)
		case c != '\\':
			push(p.nextLiteral(), false)
		case start+1 >= len(p.src):
			return nil, &Error{Msg: msgTrailingBackslash, Pos: start}
		default:
			n, zero, rep, err := p.escapeBRE(starLit, braceLit)
			if err != nil {
				return nil, err
			}
			if rep != nil {
				apply(start, *rep)
				break
			}
			push(n, zero)
		}
	}
	return concat(items...), nil
}

// escapeBRE reads a backslash sequence of a basic expression. rep is set
// when it is a repetition to apply to the last item.
func (p *parser) escapeBRE(starLit, braceLit bool) (n *node, zero bool, rep *repetition, err error) {
	start := p.pos
	c := p.src[start+1]
	switch c {
	case '(':
		n, err = p.group()
		return n, false, nil, err
	case '{':
		switch {
		case starLit:
			p.pos += 2
			return p.literal('{'), false, nil, nil
		case braceLit:
			// The first reader takes "\{" as a literal here, the second as
			// an interval repeating the test.
			r, end, ok := p.lenientInterval(start)
			if !ok {
				p.setLate(msgBadBraceLow, start)
				p.pos += 2
				return p.literal('{'), false, nil, nil
			}
			if r.min > dupMax || r.max > dupMax {
				p.setLate(msgTooBigLow, start)
			}
			p.pos = end
			return nil, false, &r, nil
		}
		r, _, err := p.strictInterval()
		return nil, false, &r, err
	case '}':
		p.pos += 2
		return p.literal('}'), false, nil, nil
	case '+', '?':
		p.pos += 2
		if starLit {
			return p.literal(rune(c)), false, nil, nil
		}
		r := simpleOps[c]
		return nil, false, &r, nil
	}
	n, zero, err = p.escape()
	return n, zero, nil, err
}

// dollarAnchors reports whether the '$' at p.pos of a basic expression
// is an anchor: at the end of the pattern or before \) or \|, and, as grep
// reads it, before ')' or '|' that are not the pattern's last character.
func (p *parser) dollarAnchors() bool {
	rest := p.src[p.pos+1:]
	switch {
	case rest == "", len(rest) >= 2 && rest[0] == '\\' && (rest[1] == ')' || rest[1] == '|'):
		return true
	case len(rest) >= 2 && (rest[0] == ')' || rest[0] == '|'):
		p.diverge(p.pos, divDollar)
		return true
	}
	return false
}
