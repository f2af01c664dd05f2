package mmapstore

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// A compressed file whose own restart points lie far apart (a zstd file
// of one frame, an xz file of one block) gets a seekable copy of its
// decompressed bytes in the index directory, named by its file id and the
// copy's xxhash64 (so a file indexed again never overwrites the copy an
// older index still reads); its checkpoint table (section 16) holds the
// copy's table. Format in FORMAT.md, "Seekable copies".

// ShadowName is the file name of file id's seekable copy whose xxhash64
// is sum.
func ShadowName(id, sum uint64) string {
	return fmt.Sprintf("shadow-%d-%016x.zst", id, sum)
}

// ParseShadowName returns the file id a seekable copy's name holds, and
// false for any other name.
func ParseShadowName(name string) (uint64, bool) {
	rest, ok := strings.CutPrefix(name, "shadow-")
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutSuffix(rest, ".zst")
	if !ok {
		return 0, false
	}
	ids, sum, ok := strings.Cut(rest, "-")
	if !ok || len(sum) != 16 {
		return 0, false
	}
	if _, err := strconv.ParseUint(sum, 16, 64); err != nil {
		return 0, false
	}
	id, err := strconv.ParseUint(ids, 10, 64)
	if err != nil || strconv.FormatUint(id, 10) != ids {
		return 0, false
	}
	return id, true
}

// ShadowBytes is the size of the seekable copies in dir of m's files.
func ShadowBytes(dir string, m *Manifest) (n int64) {
	files := NewIDIndex(len(m.Files), func(i int) uint64 { return m.Files[i].ID })
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if id, ok := ParseShadowName(e.Name()); ok {
			if _, live := files.Find(id); live {
				if fi, err := e.Info(); err == nil {
					n += fi.Size()
				}
			}
		}
	}
	return n
}
