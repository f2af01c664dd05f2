package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query"
)

// scopeOperands maps each PATH operand of a search to the indexed root it
// lies in. Paths are compared with symlinks resolved: the indexer walks a
// root's real directory without following symlinks inside it, so an
// operand reached through a symlink that leads out of every root holds
// files the index never saw, and is refused like any operand outside the
// roots (searching the index for it would answer for other files).
func scopeOperands(dir string, roots []mmapstore.Root, paths, display []string) ([]query.Scope, error) {
	reals := make([]string, len(roots))
	for i, r := range roots {
		reals[i], _ = filepath.EvalSymlinks(r.Abs) // "" when gone: never matches
	}
	scopes := make([]query.Scope, len(paths))
	for i, p := range paths {
		abs, real, isFile, err := resolveOperand(p, roots, reals)
		if err != nil {
			return nil, err
		}
		best, rel := -1, ""
		for ri, rr := range reals {
			r, ok := relBeneath(rr, real, roots[ri].IsFile)
			switch {
			case !ok:
				continue
			case best < 0, len(r) < len(rel):
				// The deepest root wins: its records are the operand's.
			case len(r) == len(rel) && ri == i && roots[ri].Abs == abs:
				// The same root given twice (grep -r a a): operand i is root i.
			default:
				continue
			}
			best, rel = ri, r
		}
		if best < 0 {
			var rs []string
			for _, r := range roots {
				rs = append(rs, r.Abs)
			}
			return nil, fmt.Errorf("%s is not under the roots of the index %s (%s): search it without --index, or index it with them (logdex index --index %s %s %s)",
				p, dir, strings.Join(rs, ", "), dir, strings.Join(rs, " "), p)
		}
		scopes[i] = query.Scope{Root: best, Rel: rel, Display: display[i], IsFile: isFile}
	}
	return scopes, nil
}

// resolveOperand is indexer.Resolve(p), except that an operand naming a
// root (the common case: "." or the root itself) takes that root's real
// path, resolved a moment ago, instead of an lstat of every directory on
// its path again.
func resolveOperand(p string, roots []mmapstore.Root, reals []string) (abs, real string, isFile bool, err error) {
	if abs, err := filepath.Abs(p); err == nil {
		if i := slices.IndexFunc(roots, func(r mmapstore.Root) bool { return r.Abs == abs }); i >= 0 && reals[i] != "" {
			if st, err := os.Stat(reals[i]); err == nil && (st.Mode().IsRegular() || st.IsDir()) {
				return abs, reals[i], st.Mode().IsRegular(), nil
			}
		}
	}
	return indexer.Resolve(p) // (and its errors)
}

// relBeneath returns real's slash-separated path relative to root ("" for
// the root itself) when it lies beneath it.
func relBeneath(root, real string, rootIsFile bool) (string, bool) {
	switch {
	case root == "":
		return "", false
	case real == root:
		return "", true
	case rootIsFile:
		return "", false
	}
	prefix := root
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	if rest, ok := strings.CutPrefix(real, prefix); ok {
		return filepath.ToSlash(rest), true
	}
	return "", false
}
