package grepsyntax

import "unicode/utf8"

// grep checks a pattern with two readers that mostly agree. Where they
// do not, what grep accepts and how it matches was established by
// experiment, and the parser keeps the result as two tiers of errors:
// an error of the first reader is reported at once (the first one in the
// pattern wins), an error only the second reader reports ("late", with
// grep's lower-case wording) is reported only when the whole pattern has
// no first-tier error. Matching follows the second reader, except in a
// pattern with a [.x.] or [=x=] bracket, which grep matches with the
// first; the constructs the two read differently are then refused
// (divergentAt).

// maxDepth bounds group nesting; regexp/syntax refuses deeper trees.
const maxDepth = 500

// dupMax is grep's largest repetition count (RE_DUP_MAX).
const dupMax = 32767

type parser struct {
	src  string
	syn  Syntax
	fold bool
	pos  int

	warnings []Warning
	late     *Error // first error of the second tier
	refused  *Error // first refusal; any grep error wins over it

	groups  int    // groups opened so far
	visible uint16 // bit n: group n (1..9) may be named by a back-reference here
	depth   int

	collating bool   // some bracket holds [.x.] or [=x=]
	divergent *Error // first construct the two readers read differently
}

func (p *parser) parse() (*node, error) {
	n, _, err := p.alternation()
	if err != nil {
		return nil, err
	}
	switch {
	case p.late != nil:
		return nil, p.late
	case p.refused != nil:
		return nil, p.refused
	case p.collating && p.divergent != nil:
		return nil, p.divergent
	case p.collating && repeatsTest(n):
		// There grep fails to match some repetitions of groups holding
		// anchors, as "(^_*|-){0,3}" (found by experiment).
		return nil, &Error{Msg: msgDisagree + divRepeatTest + " differently; refused"}
	}
	return n, nil
}

// repeatsTest reports a repetition of a tree holding a zero-width test.
func repeatsTest(n *node) bool {
	if n.op == opRepeat && hasTest(n.subs[0]) {
		return true
	}
	for _, s := range n.subs {
		if repeatsTest(s) {
			return true
		}
	}
	return false
}

func hasTest(n *node) bool {
	if n.op.zeroWidth() {
		return true
	}
	for _, s := range n.subs {
		if hasTest(s) {
			return true
		}
	}
	return false
}

func (p *parser) setLate(msg string, pos int) {
	if p.late == nil {
		p.late = &Error{Msg: msg, Pos: pos}
	}
}

func (p *parser) refuse(msg string, pos int) {
	if p.refused == nil {
		p.refused = &Error{Msg: msg, Pos: pos}
	}
}

// diverge notes a construct that grep reads differently in a pattern with
// a [.x.] or [=x=] bracket; what is read there is described by what.
func (p *parser) diverge(pos int, what string) {
	if p.divergent == nil {
		p.divergent = &Error{Msg: msgDisagree + what + " differently; refused", Pos: pos}
	}
}

const (
	divRepeatTest = "a repetition of an anchor or word test"
	divStartBrace = "a '{' with nothing (or only an anchor) before it"
	divDollar     = "a '$' before ')' or '|'"
	divFoldRange  = "a range whose ends differ in case under -i"
	divFoldEscape = "an escaped lower-case letter under -i"
)

func (p *parser) warn(msg string, pos int) {
	p.warnings = append(p.warnings, Warning{Msg: msg, Pos: pos})
}

func (p *parser) has(s string) bool {
	return len(p.src)-p.pos >= len(s) && p.src[p.pos:p.pos+len(s)] == s
}

// atBar reports an alternation operator at p.pos.
func (p *parser) atBar() bool {
	if p.syn == ERE {
		return p.has("|")
	}
	return p.has(`\|`)
}

// alternation reads branches up to the end of the pattern or of the
// enclosing group. bare reports that the last branch ends in a
// repetition of nothing or of an anchor (see group).
func (p *parser) alternation() (n *node, bare bool, err error) {
	snap := p.visible
	var alts []*node
	for {
		var b *node
		if p.syn == ERE {
			b, bare, err = p.branchERE()
		} else {
			b, err = p.branchBRE()
		}
		if err != nil {
			return nil, false, err
		}
		alts = append(alts, b)
		if !p.atBar() {
			return alt(alts...), bare, nil
		}
		p.pos += 1 + int(p.syn) // "|" or `\|`
		// A back-reference cannot name a group of another alternative.
		p.visible = snap
	}
}

// group reads a parenthesized group at p.pos.
func (p *parser) group() (*node, error) {
	open := p.pos
	p.pos += 1 + int(p.syn) // "(" or `\(`
	if p.depth >= maxDepth {
		return nil, &Error{Msg: msgTooDeep, Pos: open}
	}
	p.groups++
	first := p.groups
	snap := p.visible
	p.depth++
	inner, bare, err := p.alternation()
	p.depth--
	if err != nil {
		return nil, err
	}
	closer := ")"
	if p.syn == BRE {
		closer = `\)`
	}
	// grep -E rejects a group whose last branch ends in *, + or ? applied
	// to nothing or to an anchor, as in "(a|*)" or "(^*)".
	if !p.has(closer) || bare {
		return nil, &Error{Msg: msgParen, Pos: open}
	}
	p.pos += len(closer)
	// After the group, it and every group inside it may be named.
	p.visible = snap
	for g := first; g <= min(p.groups, 9); g++ {
		p.visible |= 1 << g
	}
	return inner, nil
}

// literal is the node matching rune r (both cases under -i).
func (p *parser) literal(r rune) *node { return p.set(single(r)) }

func (p *parser) set(s runeSet) *node {
	if p.fold {
		s = s.foldASCII()
	}
	return setNode(s)
}

// next reads the rune at p.pos as a literal.
func (p *parser) nextLiteral() *node {
	r, n := utf8.DecodeRuneInString(p.src[p.pos:])
	p.pos += n
	return p.literal(r)
}

// escape reads the backslash escapes both syntaxes share, at p.pos. zero
// reports a zero-width test.
func (p *parser) escape() (n *node, zero bool, err error) {
	start := p.pos
	if start+1 >= len(p.src) {
		return nil, false, &Error{Msg: msgTrailingBackslash, Pos: start}
	}
	c := p.src[start+1]
	p.pos += 2
	switch c {
	case 'w':
		return p.set(wordSet), false, nil
	case 'W':
		return p.set(wordSet.negate()), false, nil
	case 's':
		return p.set(posixClasses["space"]), false, nil
	case 'S':
		return p.set(posixClasses["space"].negate()), false, nil
	case 'b':
		return assertion(opWordB), true, nil
	case 'B':
		return assertion(opNotWordB), true, nil
	case '<':
		return assertion(opBegWord), true, nil
	case '>':
		return assertion(opEndWord), true, nil
	case '`':
		return assertion(opBOL), true, nil
	case '\'':
		return assertion(opEOL), true, nil
	}
	if c >= '1' && c <= '9' {
		if p.visible&(1<<(c-'0')) == 0 {
			return nil, false, &Error{Msg: msgBadBackref, Pos: start}
		}
		p.refuse(msgBackref, start)
		return noMatchNode, false, nil
	}
	// Any other escaped character stands for itself.
	if p.fold && c >= 'a' && c <= 'z' {
		p.diverge(start, divFoldEscape)
	}
	p.pos = start + 1
	return p.nextLiteral(), false, nil
}

// repetition is a quantifier's counts; max -1 is unbounded.
type repetition struct{ min, max int }

var simpleOps = map[byte]repetition{'*': {0, -1}, '+': {1, -1}, '?': {0, 1}}

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

// branchBRE reads one alternative of a basic expression.
func (p *parser) branchBRE() (*node, error) {
	var items []*node
	atStart := true   // nothing at all read yet: '^' is an anchor
	starLit := true   // only zero-width tests so far: *, \+, \?, \{ are literal
	lastZero := false // the last item is a zero-width test
	push := func(n *node, zero bool) {
		items = append(items, n)
		atStart, lastZero = false, zero
		if !zero {
			starLit = false
		}
	}
	apply := func(at int, r repetition) {
		if lastZero {
			p.diverge(at, divRepeatTest)
		}
		items[len(items)-1] = repeat(items[len(items)-1], r.min, r.max)
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
			n, zero, rep, err := p.escapeBRE(starLit, lastZero)
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
func (p *parser) escapeBRE(starLit, lastZero bool) (n *node, zero bool, rep *repetition, err error) {
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
		case lastZero:
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
