package grepsyntax

import "regexp/syntax"

// TranslateEdges reads pattern as Translate does (which it must have
// accepted) and returns its tree with \< and \> kept, written as the
// assertions no translated pattern holds: \< as OpBeginLine ((?m)^) and
// \> as OpEndLine ((?m)$). Translate rewrites them into \b and a look at
// the character next to them, which may take a character of the line
// beside the match: the lines it selects are right, the extent of its
// matches not. A matcher that gives these two assertions their grep
// meaning (the start and the end of a word) finds the extents grep -o
// prints and --color marks.
func TranslateEdges(pattern string, syn Syntax, foldASCII bool) (*syntax.Regexp, error) {
	tree, err := parseAccepted(pattern, syn, foldASCII)
	if err != nil {
		return nil, err
	}
	tree = simplify(tree)
	if expandedSize(tree) > maxExpanded {
		return nil, &Error{Msg: msgTooBig}
	}
	return toSyntax(tree), nil
}

// parseAccepted is the tree of a pattern Translate accepts (its error
// otherwise), \< and \> still in it.
func parseAccepted(pattern string, syn Syntax, foldASCII bool) (*node, error) {
	if r, _ := translate(pattern, syn, foldASCII, false); r.Err != nil {
		return nil, r.Err
	}
	p := &parser{src: pattern, syn: syn, fold: foldASCII}
	return p.parse()
}

// TranslateWhole is Translate of the pattern restricted to whole lines
// (grep -x) or, with words, to matches with no word character on either
// side (grep -w), the restriction written into the tree before \< and \>
// are removed: a look of theirs that leaves the pattern then lands on the
// restriction's own character or line edge, where wrapping the translated
// expression would have put a second character beside the one the look
// took. The expression matches a line exactly when grep -x or -w selects
// it.
func TranslateWhole(pattern string, syn Syntax, foldASCII, words bool) (string, *syntax.Regexp, error) {
	tree, err := parseAccepted(pattern, syn, foldASCII)
	if err != nil {
		return "", nil, err
	}
	if words {
		nonWord := setNode(wordSet.negate())
		tree = concat(alt(assertion(opBOL), nonWord), tree, alt(nonWord, assertion(opEOL)))
	} else {
		tree = concat(assertion(opBOL), tree, assertion(opEOL))
	}
	return emit(tree)
}
