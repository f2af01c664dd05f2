package grepsyntax

import "unicode/utf8"

// Seen from outside, grep reads a pattern twice, with two readers that
// mostly agree (their messages differ in wording, and each accepts some
// patterns the other rejects). Where they disagree, what grep accepts and
// how it matches was established by experiment. The parser keeps the
// result as two tiers of errors:
// an error of the first reader is reported at once (the first one in the
// pattern wins), an error only the second reader reports ("late", with
// grep's lower-case wording) is reported only when the whole pattern has
// no first-tier error. Matching follows the second reader, except in a
// pattern with a [.x.] or [=x=] bracket, which grep matches with the
// first as well (a line must satisfy both readings); the constructs the
// two read differently are then refused (see diverge). Such a bracket in
// one pattern of a list puts every pattern of the list in that case.

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
	listColl  bool   // a bracket of another pattern of the list does
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
	case (p.collating || p.listColl) && p.divergent != nil:
		return nil, p.divergent
	case (p.collating || p.listColl) && repeatsTest(n):
		// There grep fails to match some repetitions of groups holding
		// anchors, as "(^_*|-){0,3}" (found by experiment).
		return nil, &Error{Msg: msgDisagree + divRepeatTest + " differently; refused"}
	}
	return n, nil
}

// repeatsTest reports a repetition of a tree holding a zero-width test.
func repeatsTest(n *node) bool {
	return n.any(func(m *node) bool {
		return m.op == opRepeat && m.subs[0].any(func(t *node) bool { return t.op.zeroWidth() })
	})
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
	divBraceComma = `an interval written with "\,"`
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

// GNU's escapes, ASCII-based as in the C locale.
var (
	escapeSets = map[byte]runeSet{
		'w': wordSet, 'W': wordSet.negate(),
		's': posixClasses["space"], 'S': posixClasses["space"].negate(),
	}
	escapeTests = map[byte]op{
		'b': opWordB, 'B': opNotWordB, '<': opBegWord, '>': opEndWord,
		'`': opBOL, '\'': opEOL,
	}
)

// escape reads the backslash escapes both syntaxes share, at p.pos. zero
// reports a zero-width test.
func (p *parser) escape() (n *node, zero bool, err error) {
	start := p.pos
	if start+1 >= len(p.src) {
		return nil, false, &Error{Msg: msgTrailingBackslash, Pos: start}
	}
	c := p.src[start+1]
	p.pos += 2
	if s, ok := escapeSets[c]; ok {
		return p.set(s), false, nil
	}
	if o, ok := escapeTests[c]; ok {
		return assertion(o), true, nil
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
