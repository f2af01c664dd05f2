package grepsyntax

// The extended syntax (grep -E): every operator is a bare character, and
// a repetition operator with nothing before it in its branch is ignored.

// startWarning is grep's warning for a repetition operator that has
// nothing (or only anchors) before it in its branch.
func startWarning(op byte) string {
	if op == '{' {
		return "{...} at start of expression"
	}
	return string(op) + " at start of expression"
}

// branchERE reads one alternative of an extended expression.
func (p *parser) branchERE() (n *node, bare bool, err error) {
	var items []*node
	lastZero := false // the last item is a zero-width test
	// '{' after nothing or after a zero-width test is read as a literal
	// by grep's first reader (so it checks nothing there) and as a
	// repetition by the second.
	braceLiteral := true
	warnStart := true // repetitions here draw "at start of expression"
	// bareRun: since the last item (or the branch start), only *, + and ?
	// followed, applied to nothing or to a zero-width test.
	bareRun, braceInRun := false, false
	apply := func(at int, r repetition) {
		switch {
		case len(items) == 0:
			// Repeating nothing: ignored.
		case lastZero:
			p.diverge(at, divRepeatTest)
			items[len(items)-1] = repeat(items[len(items)-1], r.min, r.max)
		default:
			items[len(items)-1] = repeat(items[len(items)-1], r.min, r.max)
		}
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '|' || (c == ')' && p.depth > 0) {
			break
		}
		start := p.pos
		if r, ok := simpleOps[c]; ok {
			p.pos++
			if warnStart {
				p.warn(startWarning(c), start)
			}
			apply(start, r)
			bareRun = (len(items) == 0 || lastZero) && !braceInRun
			continue
		}
		if c == '{' {
			r, ok, err := p.braceERE(braceLiteral)
			if err != nil {
				return nil, false, err
			}
			if ok {
				if warnStart {
					p.warn(startWarning('{'), start)
				}
				apply(start, r)
				warnStart, bareRun, braceLiteral, braceInRun = false, false, false, true
				continue
			}
			// Not an interval: a literal '{'. Where the first reader took
			// it as a literal, it still does so for a '{' right after it.
			p.pos++
			items = append(items, p.literal('{'))
			lastZero, warnStart, bareRun, braceInRun = false, false, false, false
			continue
		}
		var atom *node
		zero := false
		switch c {
		case '(':
			atom, err = p.group()
		case '^':
			p.pos++
			atom, zero = assertion(opBOL), true
		case '$':
			p.pos++
			atom, zero = assertion(opEOL), true
		case '.':
			p.pos++
			atom = setNode(anySet())
		case '[':
			atom, err = p.bracket()
		case '\\':
			atom, zero, err = p.escape()
		default:
			atom = p.nextLiteral()
		}
		if err != nil {
			return nil, false, err
		}
		items = append(items, atom)
		lastZero, braceLiteral, bareRun, braceInRun = zero, zero, false, false
		if !zero {
			warnStart = false
		}
	}
	return concat(items...), bareRun, nil
}

// braceERE reads an interval at p.pos ('{') if there is one. When
// literal (the first reader takes '{' as a character here), only the
// second reader's checks apply: anything but a well-formed interval is a
// literal '{', and only a too-large count is an error.
func (p *parser) braceERE(literal bool) (repetition, bool, error) {
	if literal {
		p.diverge(p.pos, divStartBrace)
		r, end, ok := p.lenientInterval(p.pos)
		if !ok {
			return r, false, nil
		}
		if r.min > dupMax || r.max > dupMax {
			p.setLate(msgTooBigLow, p.pos)
		}
		p.pos = end
		return r, true, nil
	}
	return p.strictInterval()
}
