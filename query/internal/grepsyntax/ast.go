package grepsyntax

import (
	"fmt"
	"strings"
)

// op is the kind of a node of the semantic tree the parser builds and
// emit writes out. Captures do not exist here: line selection never needs
// them, and back-references are refused before any tree is used.
type op uint8

const (
	opNoMatch  op = iota // matches nothing
	opEmpty              // matches the empty string
	opSet                // one character of set
	opConcat             // subs in sequence
	opAlt                // any of subs
	opRepeat             // subs[0] between min and max (-1: unbounded) times
	opBOL                // ^ (and \`): start of the line
	opEOL                // $ (and \'): end of the line
	opWordB              // \b
	opNotWordB           // \B
	opBegWord            // \<
	opEndWord            // \>
)

type node struct {
	op       op
	set      runeSet
	subs     []*node
	min, max int
}

var (
	emptyNode   = &node{op: opEmpty}
	noMatchNode = &node{op: opNoMatch}
)

func setNode(s runeSet) *node { return &node{op: opSet, set: s} }

func concat(subs ...*node) *node { return &node{op: opConcat, subs: subs} }

func alt(subs ...*node) *node { return &node{op: opAlt, subs: subs} }

func repeat(sub *node, min, max int) *node {
	return &node{op: opRepeat, subs: []*node{sub}, min: min, max: max}
}

func assertion(o op) *node { return &node{op: o} }

func (o op) zeroWidth() bool { return o >= opBOL && o <= opEndWord }

// any reports whether pred holds for n or a node below it.
func (n *node) any(pred func(*node) bool) bool {
	if pred(n) {
		return true
	}
	for _, s := range n.subs {
		if s.any(pred) {
			return true
		}
	}
	return false
}

// simplify returns an equivalent tree in a canonical shape: nested
// concatenations and alternations flattened, empty strings dropped from
// concatenations, trivial repetitions removed, so that emit and the
// rewriting of word edges see one shape for one meaning.
func simplify(n *node) *node {
	switch n.op {
	case opConcat:
		var subs []*node
		for _, s := range n.subs {
			s = simplify(s)
			switch s.op {
			case opNoMatch:
				return noMatchNode
			case opEmpty:
			case opConcat:
				subs = append(subs, s.subs...)
			default:
				subs = append(subs, s)
			}
		}
		switch len(subs) {
		case 0:
			return emptyNode
		case 1:
			return subs[0]
		}
		return concat(subs...)
	case opAlt:
		var subs []*node
		for _, s := range n.subs {
			s = simplify(s)
			switch s.op {
			case opNoMatch:
			case opAlt:
				subs = append(subs, s.subs...)
			default:
				subs = append(subs, s)
			}
		}
		switch len(subs) {
		case 0:
			return noMatchNode
		case 1:
			return subs[0]
		}
		return alt(subs...)
	case opRepeat:
		sub := simplify(n.subs[0])
		switch {
		case n.max == 0:
			return emptyNode
		case sub.op == opEmpty:
			return emptyNode
		case sub.op == opNoMatch || sub.op.zeroWidth():
			// Repeating a zero-width test at one place tests it once.
			if n.min == 0 {
				return emptyNode
			}
			return sub
		case n.min == 1 && n.max == 1:
			return sub
		}
		return repeat(sub, n.min, n.max)
	case opSet:
		if len(n.set) == 0 {
			return noMatchNode
		}
	}
	return n
}

// String renders a tree for tests and debugging.
func (n *node) String() string {
	var b strings.Builder
	n.write(&b)
	return b.String()
}

func (n *node) write(b *strings.Builder) {
	switch n.op {
	case opNoMatch:
		b.WriteString("∅")
	case opEmpty:
		b.WriteString("ε")
	case opSet:
		fmt.Fprintf(b, "%q", []rune(n.set))
	case opConcat, opAlt:
		b.WriteString([]string{opConcat: "cat(", opAlt: "alt("}[n.op])
		for i, s := range n.subs {
			if i > 0 {
				b.WriteByte(' ')
			}
			s.write(b)
		}
		b.WriteByte(')')
	case opRepeat:
		b.WriteString("rep(")
		n.subs[0].write(b)
		fmt.Fprintf(b, " %d %d)", n.min, n.max)
	default:
		b.WriteString([]string{opBOL: "^", opEOL: "$", opWordB: `\b`, opNotWordB: `\B`,
			opBegWord: `\<`, opEndWord: `\>`}[n.op])
	}
}
