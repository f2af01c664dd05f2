package mmapstore

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// MismatchError says why a segment does not belong with the manifest that
// lists it: a reader that paired a manifest with segments of another run
// (or another index) would answer with other files' lines. It matches
// ErrCorrupt: the segment is damaged for this manifest, and an indexing run
// rebuilds what it held.
type MismatchError struct {
	Segment string
	Msg     string
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("segment %s does not match the manifest: %s", e.Segment, e.Msg)
}

func (e *MismatchError) Is(target error) bool { return target == ErrCorrupt }

// CheckSegments compares segments with the manifest m that lists them:
// segs[i] is m.Segments[i] opened (nil when it could not be). It returns
// errs[i] non-nil for each segment that does not match:
//
//   - its line count, raw bytes and file size against the SegmentRef;
//   - its file table's ids against the SegmentRef's file ids;
//   - for each file still in the manifest: the fingerprint (length and
//     hash of the first bytes, which identify the file across renames)
//     against the FileRecord, and its lines in the segment against the
//     spans' and the record's line count and indexed bytes;
//   - across segments, that each live file's spans tile its indexed lines
//     and bytes exactly (a mismatch there damages every segment holding
//     the file, as which one is wrong cannot be told).
//
// Paths and roots are not compared: a rotated file keeps its id under a
// new path, and re-ordered roots renumber the manifest's, while segments
// are never rewritten. Device, inode and mtime are not compared either:
// they describe the file when indexed, not the index.
func CheckSegments(m *Manifest, segs []*Segment) []error {
	errs := make([]error, len(m.Segments))
	recOf := recordsByID(m)
	type piece struct {
		id               uint64
		seg              int
		lineNo, lines    int64
		startOff, endOff int64
	}
	// One slice sorted by file, not a map of slices: a manifest may list
	// 100,000 small files.
	nspans := 0
	for _, s := range segs {
		if s != nil {
			nspans += len(s.Spans())
		}
	}
	pieces := make([]piece, 0, nspans)
	incomplete := map[uint64]bool{} // files with lines in a segment that did not open
	for i, ref := range m.Segments {
		s := segs[i]
		if s == nil {
			for _, id := range ref.FileIDs {
				incomplete[id] = true
			}
			continue
		}
		bad := func(format string, args ...any) {
			if errs[i] == nil {
				errs[i] = &MismatchError{Segment: ref.Name, Msg: fmt.Sprintf(format, args...)}
			}
		}
		if s.NumLines() != ref.Lines || s.RawBytes() != ref.RawBytes || s.Size() != ref.Size {
			bad("%d lines, %d raw bytes, %d bytes; the manifest says %d, %d, %d",
				s.NumLines(), s.RawBytes(), s.Size(), ref.Lines, ref.RawBytes, ref.Size)
		}
		ids := make([]uint64, 0, len(s.Files()))
		for _, f := range s.Files() {
			ids = append(ids, f.ID)
		}
		ids = sortedSet(ids)
		want := sortedSet(slices.Clone(ref.FileIDs))
		if !slices.Equal(ids, want) {
			bad("files %v; the manifest says %v", ids, want)
		}
		inSpans := make([]int64, len(s.Files()))
		for _, sp := range s.Spans() {
			inSpans[sp.File] += int64(sp.NumLines)
			f := s.Files()[sp.File]
			if recOf(f.ID) != nil {
				pieces = append(pieces, piece{f.ID, i, sp.StartLineNo, int64(sp.NumLines), sp.StartOffset, sp.EndOffset})
			}
		}
		for fi, f := range s.Files() {
			if inSpans[fi] != int64(f.Lines) {
				bad("file %d: %d lines in its spans, %d in the file table", f.ID, inSpans[fi], f.Lines)
			}
			rec := recOf(f.ID)
			if rec == nil {
				continue // retired: its lines are not used
			}
			// A fingerprint grows with its file up to FingerprintLen: a
			// segment written before holds a shorter one.
			if f.FPLen > rec.FPLen || f.FPLen == rec.FPLen && f.FP != rec.FP {
				bad("file %d (%q) has another fingerprint than the manifest's %q", f.ID, f.Path, rec.Path)
			}
			if int64(f.Lines) > rec.Lines {
				bad("file %d (%q): %d lines here, %d in the manifest", f.ID, rec.Path, f.Lines, rec.Lines)
			}
		}
	}
	byFileLine := func(a, b piece) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.lineNo, b.lineNo)) }
	if !slices.IsSortedFunc(pieces, byFileLine) { // (one segment's files usually are)
		slices.SortFunc(pieces, byFileLine)
	}
	for len(pieces) > 0 {
		id, n := pieces[0].id, 1
		for n < len(pieces) && pieces[n].id == id {
			n++
		}
		ps := pieces[:n]
		pieces = pieces[n:]
		if incomplete[id] {
			continue // already missing lines: the damaged segment says so
		}
		rec := recOf(id)
		nextLine, nextOff := int64(1), int64(0)
		ok := true
		for _, p := range ps {
			if p.lineNo != nextLine || p.startOff != nextOff {
				ok = false
				break
			}
			nextLine, nextOff = p.lineNo+p.lines, p.endOff
		}
		if ok && (nextLine != rec.Lines+1 || nextOff != rec.Indexed) {
			ok = false
		}
		if !ok {
			for _, p := range ps {
				if errs[p.seg] == nil {
					errs[p.seg] = &MismatchError{Segment: m.Segments[p.seg].Name,
						Msg: fmt.Sprintf("the lines of file %d (%q) do not add up to the manifest's %d lines and %d bytes", id, rec.Path, rec.Lines, rec.Indexed)}
				}
			}
		}
	}
	return errs
}

// sortedSet sorts ids (unless they are already) and drops repeats.
func sortedSet(ids []uint64) []uint64 {
	if !slices.IsSorted(ids) {
		slices.Sort(ids)
	}
	return slices.Compact(ids)
}

// recordsByID returns a lookup of m's file records by id.
func recordsByID(m *Manifest) func(id uint64) *FileRecord {
	ids := NewIDIndex(len(m.Files), func(i int) uint64 { return m.Files[i].ID })
	return func(id uint64) *FileRecord {
		if i, ok := ids.Find(id); ok {
			return &m.Files[i]
		}
		return nil
	}
}

// IDIndex finds the position of an id among n: a table indexed by id when
// the ids are dense (file ids are handed out in sequence), which over
// 100,000 files is much cheaper to build and to ask than a map; a map
// otherwise. The last of equal ids wins.
type IDIndex struct {
	dense  []int32 // position+1 by id; 0: none
	sparse map[uint64]int
}

// NewIDIndex indexes the n ids id(0), ..., id(n-1).
func NewIDIndex(n int, id func(i int) uint64) IDIndex {
	var maxID uint64
	for i := range n {
		maxID = max(maxID, id(i))
	}
	if n < math.MaxInt32 && maxID <= 4*uint64(n)+1024 {
		dense := make([]int32, maxID+1)
		for i := range n {
			dense[id(i)] = int32(i + 1)
		}
		return IDIndex{dense: dense}
	}
	sparse := make(map[uint64]int, n)
	for i := range n {
		sparse[id(i)] = i
	}
	return IDIndex{sparse: sparse}
}

// Find returns the position of id; ok false when it is not among them.
func (x IDIndex) Find(id uint64) (int, bool) {
	if x.sparse != nil {
		i, ok := x.sparse[id]
		return i, ok
	}
	if id < uint64(len(x.dense)) && x.dense[id] > 0 {
		return int(x.dense[id]) - 1, true
	}
	return 0, false
}
