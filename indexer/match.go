package indexer

// Matching the files a walk found with the old manifest's records, by path
// and by inode: sorted lists rather than maps, which over 100,000 small
// files cost more to build than the rest of a run that finds nothing new.

import (
	"cmp"
	"slices"
	"strings"

	"github.com/logdex/logdex/mmapstore"
)

// inodeKey names a file by root, device and inode.
type inodeKey struct {
	root     int
	dev, ino uint64
}

func compareInodes(a, b inodeKey) int {
	return cmp.Or(cmp.Compare(a.root, b.root), cmp.Compare(a.dev, b.dev), cmp.Compare(a.ino, b.ino))
}

// inodeSet is the inodes of the files a walk found, sorted: over 100,000
// files cheaper to build and to ask than a map.
type inodeSet []inodeKey

func newInodeSet(files []found) inodeSet {
	s := make(inodeSet, len(files))
	for i, f := range files {
		s[i] = inodeKey{f.root, f.dev, f.ino}
	}
	slices.SortFunc(s, compareInodes)
	return s
}

// hasDup reports whether an inode was found under more than one name.
func (s inodeSet) hasDup() bool {
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			return true
		}
	}
	return false
}

// count is how many of the files are k.
func (s inodeSet) count(k inodeKey) int {
	i, found := slices.BinarySearchFunc(s, k, compareInodes)
	if !found {
		return 0
	}
	n := 0
	for ; i < len(s) && s[i] == k; i++ {
		n++
	}
	return n
}

// joinByPath returns, for each file found (sorted by root and path), the
// index of the old record at the same root and path (-1 when none):
// a merge of two sorted lists, where a map keyed by path would hash
// 100,000 paths twice. Only records matchable returns true for take part,
// under the root number it returns; of equal paths, the last record wins.
func joinByPath(files []found, old *mmapstore.Manifest, matchable func(*mmapstore.FileRecord) (int, bool)) []int {
	type oldKey struct {
		root int
		path string
		i    int
	}
	olds := make([]oldKey, 0, len(old.Files))
	for i := range old.Files {
		if nr, ok := matchable(&old.Files[i]); ok {
			olds = append(olds, oldKey{nr, old.Files[i].Path, i})
		}
	}
	byKey := func(a, b oldKey) int {
		return cmp.Or(cmp.Compare(a.root, b.root), strings.Compare(a.path, b.path), cmp.Compare(a.i, b.i))
	}
	if !slices.IsSortedFunc(olds, byKey) { // (a manifest's records are, unless roots were renumbered)
		slices.SortFunc(olds, byKey)
	}
	out := make([]int, len(files))
	j := 0
	for i, f := range files {
		out[i] = -1
		for j < len(olds) && cmp.Or(cmp.Compare(olds[j].root, f.root), strings.Compare(olds[j].path, f.rel)) < 0 {
			j++
		}
		for k := j; k < len(olds) && olds[k].root == f.root && olds[k].path == f.rel; k++ {
			out[i] = olds[k].i // the last of equal paths, as a map would keep
		}
	}
	return out
}
