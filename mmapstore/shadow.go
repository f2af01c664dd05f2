package mmapstore

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/logdex/logdex/mmapstore/compressed"
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

// ShadowBytes is the size of the seekable copies in dir of m's files. An
// index of no zstd or xz file has none, and its directory is not read
// (publish counts the index's size on every run, a search's included).
func ShadowBytes(dir string, m *Manifest) (n int64) {
	if !slices.ContainsFunc(m.Files, func(f FileRecord) bool { return f.Compression == "zstd" || f.Compression == "xz" }) {
		return 0
	}
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

// ShadowError is a seekable copy found missing or damaged.
type ShadowError struct {
	Name string // the copy's file name in the index directory
	Path string // the compressed file it copies (as indexed)
	Err  error
}

func (e *ShadowError) Error() string {
	return fmt.Sprintf("seekable copy %s of %s: %v", e.Name, e.Path, e.Err)
}

func (e *ShadowError) Unwrap() error { return e.Err }

// VerifyShadows decodes whole, frame by frame, the seekable copies (in
// dir) of the compressed files whose tables this segment holds, and
// returns the first missing or damaged one as a *ShadowError. Readers do
// not need it (they check each frame they use and fall back to the file
// itself); logdex check and index --verify do, to report and rebuild.
func (s *Segment) VerifyShadows(dir string) error {
	for _, f := range s.files {
		b, ok, err := s.Checkpoints(f.ID)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		t, err := compressed.DecodeTable(b)
		if err != nil {
			return s.damaged(s.corrupt("checkpoints", -1, "file %d's table: %v", f.ID, err))
		}
		if t.Shadow == nil {
			continue
		}
		name := ShadowName(f.ID, t.ShadowSum)
		if err := compressed.VerifyShadow(filepath.Join(dir, name), t); err != nil {
			return &ShadowError{Name: name, Path: f.Path, Err: err}
		}
	}
	return nil
}
