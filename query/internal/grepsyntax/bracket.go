package grepsyntax

import (
	"strings"
	"unicode/utf8"
)

// Bracket expressions, POSIX style: "[abc]", "[^abc]", ranges "a-z",
// classes "[:alpha:]", collating symbols "[.x.]" and equivalence classes
// "[=x=]" (in the C locale both hold exactly one character and mean it).
// A backslash is an ordinary character inside brackets.

type elemKind uint8

const (
	elemChar  elemKind = iota // a character, possibly written [.x.]
	elemEquiv                 // [=x=]
	elemClass                 // [:name:]
)

type bracketElem struct {
	kind  elemKind
	r     rune
	class runeSet
	plain bool // written as itself, not [.x.]
	badAt int  // >0: an invalid [.x.] here, reported once grep looks past it
}

// bracket reads the bracket expression at p.pos ('[').
func (p *parser) bracket() (*node, error) {
	s, open := p.src, p.pos
	i := open + 1
	neg := i < len(s) && s[i] == '^'
	if neg {
		i++
	}
	if i >= len(s) {
		return nil, &Error{Msg: msgBadRegexp, Pos: open}
	}
	// Under -i grep's two readers see a range differently (see below);
	// upper is the set as the first reads it, which is what grep matches
	// for a bracket holding [.x.] or [=x=].
	var set, upper runeSet
	foldDiff := -1
	collBefore := p.collating
	p.collating = false
	// grep's second reader rejects "[:alpha:]" written without the outer
	// brackets: plain characters only, ':' first and last, not all ':'.
	colonForm, nonColon, count := true, false, 0
	var last rune
	for first := true; ; first = false {
		if i >= len(s) {
			return nil, &Error{Msg: msgBracket, Pos: open}
		}
		if s[i] == ']' && !first {
			i++
			break
		}
		elemStart := i
		e, next, err := p.bracketElem(i, open, false)
		if err != nil {
			return nil, err
		}
		i = next
		if e.badAt > 0 {
			return nil, p.badCollating(e.badAt, i, open)
		}
		count++
		if !e.plain || (count == 1 && e.r != ':') {
			colonForm = false
		}
		nonColon = nonColon || e.r != ':'
		last = e.r
		dashNext := i < len(s) && s[i] == '-' && (i+1 >= len(s) || s[i+1] != ']')
		if dashNext && e.kind != elemChar {
			return nil, &Error{Msg: msgBadRange, Pos: i}
		}
		if !dashNext || i+1 >= len(s) {
			if e.kind == elemClass {
				set, upper = set.union(e.class), upper.union(e.class)
			} else {
				set, upper = set.add(e.r, e.r), upper.add(e.r, e.r)
			}
			continue
		}
		// A range.
		dash := i
		colonForm = false
		end, next, err := p.bracketElem(dash+1, open, true)
		if err != nil {
			return nil, err
		}
		if end.kind != elemChar {
			return nil, &Error{Msg: msgBadRange, Pos: dash}
		}
		i = next
		lo, hi := e.r, end.r
		if p.fold {
			// grep -i checks the order of the ends in upper case; it
			// matches the range between the ends as written, except in a
			// bracket holding [.x.] or [=x=], where it matches the range
			// between the upper-case ends.
			if upperASCII(lo) > upperASCII(hi) {
				return nil, &Error{Msg: msgBadRange, Pos: elemStart}
			}
			asWritten := runeSet{}.add(lo, hi).foldASCII()
			if !asWritten.equal(runeSet{}.add(upperASCII(lo), upperASCII(hi)).foldASCII()) && foldDiff < 0 {
				foldDiff = elemStart
			}
		} else if lo > hi {
			return nil, &Error{Msg: msgBadRange, Pos: elemStart}
		}
		set, upper = set.add(lo, hi), upper.add(upperASCII(lo), upperASCII(hi))
		// After a range, '-' can only be the bracket's last character.
		if i < len(s) && s[i] == '-' && (i+1 >= len(s) || s[i+1] != ']') {
			return nil, &Error{Msg: msgBadRange, Pos: i}
		}
	}
	if colonForm && count >= 2 && last == ':' && nonColon {
		p.setLate(msgColonSyntax, open)
	}
	p.pos = i
	hasColl := p.collating
	p.collating = collBefore || hasColl
	switch {
	case hasColl && p.fold:
		set = upper
	case foldDiff >= 0:
		p.diverge(foldDiff, divFoldRange)
	}
	if p.fold {
		set = set.foldASCII()
	}
	if neg {
		set = set.negate()
	}
	return setNode(set), nil
}

// badCollating is the error for an invalid collating symbol at bad that
// starts a bracket element, the element ending at i: grep first checks
// that the bracket goes on, and a range from it.
func (p *parser) badCollating(bad, i, open int) error {
	s := p.src
	switch {
	case i >= len(s) || (s[i] == '-' && i+1 >= len(s)):
		return &Error{Msg: msgBracket, Pos: open}
	case s[i] == '-' && s[i+1] != ']':
		end, _, err := p.bracketElem(i+1, open, true)
		if err != nil {
			return err
		}
		if end.kind != elemChar {
			return &Error{Msg: msgBadRange, Pos: i}
		}
	}
	return &Error{Msg: msgBadCollate, Pos: bad}
}

func upperASCII(r rune) rune {
	if r >= 'a' && r <= 'z' {
		return r - 'a' + 'A'
	}
	return r
}

// bracketNameMax is glibc's BRACKET_NAME_BUF_SIZE: a [.x.], [=x=] or
// [:x:] name of as many bytes or more is an unmatched bracket to grep.
const bracketNameMax = 32

// bracketElem reads one element of a bracket at i; open is the bracket's
// '[' for errors. grep checks the parts of "[:name:]", "[=x=]" and
// "[.x.]" in an order found by experiment: the terminator first; a class
// or equivalence class ending a range is then an invalid range whatever
// it holds; a collating symbol starting an element is checked only once
// the bracket is known to go on (badAt, see badCollating).
func (p *parser) bracketElem(i, open int, rangeEnd bool) (bracketElem, int, error) {
	s := p.src
	if s[i] != '[' || i+1 >= len(s) || strings.IndexByte(".=:", s[i+1]) < 0 {
		r, n := utf8.DecodeRuneInString(s[i:])
		return bracketElem{kind: elemChar, r: r, plain: true}, i + n, nil
	}
	delim := s[i+1]
	end := strings.Index(s[i+2:], string(delim)+"]")
	if end < 0 {
		return bracketElem{}, 0, &Error{Msg: msgBracket, Pos: open}
	}
	name := s[i+2 : i+2+end]
	if len(name) >= bracketNameMax {
		// glibc reads the name into a buffer of 32 bytes and takes a
		// longer one for an unterminated bracket.
		return bracketElem{}, 0, &Error{Msg: msgBracket, Pos: open}
	}
	next := i + 2 + end + 2
	if rangeEnd && delim != '.' {
		return bracketElem{kind: elemClass}, next, nil
	}
	if delim == ':' {
		cls, ok := posixClasses[name]
		if !ok {
			return bracketElem{}, 0, &Error{Msg: msgBadClass, Pos: i}
		}
		return bracketElem{kind: elemClass, class: cls, r: -1}, next, nil
	}
	p.collating = true
	if len(name) != 1 {
		if delim == '.' && !rangeEnd {
			return bracketElem{badAt: i}, next, nil
		}
		return bracketElem{}, 0, &Error{Msg: msgBadCollate, Pos: i}
	}
	kind := elemChar
	if delim == '=' {
		kind = elemEquiv
	}
	return bracketElem{kind: kind, r: rune(name[0])}, next, nil
}
