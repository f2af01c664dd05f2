package relit

import (
	"slices"
	"strings"
)

const (
	// maxLeaves caps the literal leaves of any Req built here, so that the
	// planner's work and the analysis itself stay bounded. An alternation
	// of 200 request ids (`id1|id2|...`, what grep -E users write, and
	// what fits in the API's 4 KiB query) stays within it: at 64 it read
	// all of 1 GiB (0.8 s) where its ids as 200 patterns took 0.1 s.
	maxLeaves = 256
	// impliesBudget bounds the work spent proving one child redundant;
	// giving up only keeps a redundant child, which is still sound.
	impliesBudget = 512
)

var (
	reqAll  = &Req{Op: OpAll}
	reqNone = &Req{Op: OpNone}
)

// litReq returns the condition "line contains l"; the empty string is no
// constraint.
func litReq(l lit) *Req {
	if l.s == "" {
		return reqAll
	}
	return &Req{Op: OpLit, Lit: l.s, Fold: l.fold}
}

// orLits is the condition that the line contains one of set.
func orLits(set []lit) *Req {
	subs := make([]*Req, 0, len(set))
	for _, l := range set {
		subs = append(subs, litReq(l))
	}
	return or(subs...)
}

// and builds the simplified conjunction of subs: nested ANDs are
// flattened, ALL dropped, NONE absorbs, and a child implied by a sibling
// (e.g. "err" next to "error") is dropped.
func and(subs ...*Req) *Req {
	var out []*Req
	for _, s := range subs {
		switch s.Op {
		case OpAll:
		case OpNone:
			return reqNone
		case OpAnd:
			out = append(out, s.Sub...)
		default:
			out = append(out, s)
		}
	}
	out = dropRedundant(out, func(keep, drop *Req, budget *int) bool { return implies(keep, drop, budget) })
	switch len(out) {
	case 0:
		return reqAll
	case 1:
		return out[0]
	}
	return limit(&Req{Op: OpAnd, Sub: out}, maxLeaves)
}

// or builds the simplified disjunction of subs: nested ORs are flattened,
// NONE dropped, ALL absorbs, and a child implying a sibling (e.g. "error"
// next to "err") is dropped.
func or(subs ...*Req) *Req {
	var out []*Req
	for _, s := range subs {
		switch s.Op {
		case OpNone:
		case OpAll:
			return reqAll
		case OpOr:
			out = append(out, s.Sub...)
		default:
			out = append(out, s)
		}
	}
	out = dropRedundant(out, func(keep, drop *Req, budget *int) bool { return implies(drop, keep, budget) })
	switch len(out) {
	case 0:
		return reqNone
	case 1:
		return out[0]
	}
	return limit(&Req{Op: OpOr, Sub: out}, maxLeaves)
}

// dropRedundant removes each element for which redundant(other, elem)
// holds for some other element still kept. Going in order makes equal
// elements drop all but the last copy.
func dropRedundant(rs []*Req, redundant func(keep, drop *Req, budget *int) bool) []*Req {
	if len(rs) < 2 {
		return rs
	}
	dropped := make([]bool, len(rs))
	n := len(rs)
	for i, r := range rs {
		budget := impliesBudget
		for j, o := range rs {
			if j != i && !dropped[j] && redundant(o, r, &budget) {
				dropped[i] = true
				n--
				break
			}
		}
	}
	if n == len(rs) {
		return rs
	}
	out := make([]*Req, 0, n)
	for i, r := range rs {
		if !dropped[i] {
			out = append(out, r)
		}
	}
	return out
}

// implies reports whether a being true guarantees b is true. It is sound
// but incomplete; it gives up (false) when the budget runs out.
func implies(a, b *Req, budget *int) bool {
	if *budget--; *budget < 0 {
		return false
	}
	if b.Op == OpAll || a.Op == OpNone {
		return true
	}
	if a.Op == OpAll || b.Op == OpNone {
		return false
	}
	if b.Op == OpAnd {
		for _, s := range b.Sub {
			if !implies(a, s, budget) {
				return false
			}
		}
		return true
	}
	if a.Op == OpOr {
		for _, s := range a.Sub {
			if !implies(s, b, budget) {
				return false
			}
		}
		return true
	}
	if a.Op == OpAnd {
		for _, s := range a.Sub {
			if implies(s, b, budget) {
				return true
			}
		}
	}
	if b.Op == OpOr {
		for _, s := range b.Sub {
			if implies(a, s, budget) {
				return true
			}
		}
	}
	if a.Op == OpLit && b.Op == OpLit {
		return litImplies(a.Lit, a.Fold, b.Lit, b.Fold)
	}
	return false
}

// litImplies reports whether containing a guarantees containing b. An
// exact literal also satisfies the fold of itself; a fold literal only
// guarantees an exact one that is caseless.
func litImplies(a string, afold bool, b string, bfold bool) bool {
	switch {
	case bfold && !afold:
		a, _ = canonString(a)
	case !bfold && afold:
		if _, cased := canonString(b); cased {
			return false
		}
	}
	return strings.Contains(a, b)
}

func leaves(r *Req) int {
	switch r.Op {
	case OpLit:
		return 1
	case OpAnd, OpOr:
		n := 0
		for _, s := range r.Sub {
			n += leaves(s)
		}
		return n
	}
	return 0
}

// limit weakens r soundly until it has at most budget literal leaves: an OR
// that is too big becomes ALL, an AND keeps the children that fit,
// preferring small children with long literals.
func limit(r *Req, budget int) *Req {
	n := leaves(r)
	if n <= budget {
		return r
	}
	if r.Op != OpAnd {
		return reqAll
	}
	type cand struct {
		i, n, long int
	}
	cs := make([]cand, len(r.Sub))
	for i, s := range r.Sub {
		cs[i] = cand{i, leaves(s), shortestLit(s)}
	}
	slices.SortStableFunc(cs, func(x, y cand) int {
		if x.n != y.n {
			return x.n - y.n
		}
		return y.long - x.long
	})
	kept := make([]*Req, len(r.Sub))
	left := budget
	for _, c := range cs {
		s := limit(r.Sub[c.i], left)
		if s.Op != OpAll {
			kept[c.i] = s
			left -= leaves(s)
		}
	}
	var out []*Req
	for _, s := range kept {
		if s != nil {
			out = append(out, s)
		}
	}
	switch len(out) {
	case 0:
		return reqAll
	case 1:
		return out[0]
	}
	return &Req{Op: OpAnd, Sub: out}
}

// shortestLit estimates how selective r is: the length of the shortest
// literal some satisfying line might be required to contain.
func shortestLit(r *Req) int {
	switch r.Op {
	case OpLit:
		return len(r.Lit)
	case OpAnd:
		m := 0
		for _, s := range r.Sub {
			m = max(m, shortestLit(s))
		}
		return m
	case OpOr:
		m := -1
		for _, s := range r.Sub {
			if l := shortestLit(s); m < 0 || l < m {
				m = l
			}
		}
		return max(m, 0)
	}
	return 0
}

// clone returns a deep copy, so that callers own a tree sharing nothing
// with the analysis (which reuses subtrees, e.g. for repetitions).
func clone(r *Req) *Req {
	c := *r
	if r.Sub != nil {
		c.Sub = make([]*Req, len(r.Sub))
		for i, s := range r.Sub {
			c.Sub[i] = clone(s)
		}
	}
	return &c
}
