package mmapstore

import (
	"encoding/binary"
	"math"
	"slices"
)

// LineTable builds a segment's file table, spans and offset index (line
// groups and line lengths) as lines are added in file order. It is the
// writer's half of what Segment.Locate and Segment.WalkLines read.
type LineTable struct {
	files    []SegFile
	spans    []Span
	groups   []byte
	lens     []byte
	times    []int64 // per line, unix ns; meaningful in timed spans only
	lines    uint32
	rawBytes int64
	maxLine  int64
	cur      int   // index of the open span, -1 when none
	curOff   int64 // file offset of the next line of the open span
}

// NewLineTable returns an empty table.
func NewLineTable() *LineTable { return &LineTable{cur: -1} }

// BeginSpan starts a run of lines of file f at byte offset off, whose first
// line is line lineNo (1-based) of the file.
func (t *LineTable) BeginSpan(f SegFile, off, lineNo int64) {
	fi := len(t.files)
	if n := len(t.files); n > 0 && t.files[n-1].ID == f.ID {
		fi = n - 1
	} else {
		f.Lines = 0
		t.files = append(t.files, f)
	}
	t.spans = append(t.spans, Span{File: fi, FirstLine: t.lines, StartOffset: off, EndOffset: off,
		StartLineNo: lineNo, FirstGroup: uint32(len(t.groups) / LineGroupSize)})
	t.cur = len(t.spans) - 1
	t.curOff = off
}

// EndSpan closes the open span, dropping it (and its file, if nothing else
// uses it) when it got no lines.
func (t *LineTable) EndSpan() {
	if t.cur < 0 {
		return
	}
	if sp := t.spans[t.cur]; sp.NumLines == 0 {
		t.spans = t.spans[:t.cur]
		if f := sp.File; f == len(t.files)-1 && !t.fileUsed(f) {
			t.files = t.files[:f]
		}
	} else if sp.Timed {
		ts := t.times[sp.FirstLine : sp.FirstLine+sp.NumLines]
		sp.MinTime, sp.MaxTime, sp.TimeSorted = spanTimes(ts)
		t.spans[t.cur] = sp
	}
	t.cur = -1
}

// spanTimes returns the range of a span's line times ts and whether its
// line groups follow each other in time (every group's max ≤ the next
// group's min), in one pass over the groups.
func spanTimes(ts []int64) (lo, hi int64, sorted bool) {
	lo, hi, sorted = math.MaxInt64, math.MinInt64, true
	for g := 0; g < len(ts); g += GroupSize {
		grp := ts[g:min(g+GroupSize, len(ts))]
		gmin, gmax := slices.Min(grp), slices.Max(grp)
		sorted = sorted && gmin >= hi
		lo, hi = min(lo, gmin), max(hi, gmax)
	}
	return lo, hi, sorted
}

// SetTime gives line id of the open span its time (unix ns) and marks the
// span timed: every line of a timed span must get one (the indexer carries
// times over to lines without a timestamp).
func (t *LineTable) SetTime(id uint32, unixNano int64) {
	t.times[id] = unixNano
	t.spans[t.cur].Timed = true
}

func (t *LineTable) fileUsed(fi int) bool {
	for _, sp := range t.spans {
		if sp.File == fi {
			return true
		}
	}
	return false
}

// AddLine appends a line of length bytes ('\n' included) to the open span
// and returns its line id.
func (t *LineTable) AddLine(length int64) uint32 {
	id := t.lines
	sp := &t.spans[t.cur]
	if (id-sp.FirstLine)%GroupSize == 0 {
		t.groups = binary.LittleEndian.AppendUint64(t.groups, uint64(t.curOff))
		t.groups = binary.LittleEndian.AppendUint32(t.groups, uint32(len(t.lens)))
		t.groups = binary.LittleEndian.AppendUint32(t.groups, 0)
	}
	t.lens = binary.AppendUvarint(t.lens, uint64(length))
	t.times = append(t.times, 0)
	t.curOff += length
	sp.NumLines++
	sp.EndOffset = t.curOff
	t.files[sp.File].Lines++
	t.rawBytes += length
	t.maxLine = max(t.maxLine, length)
	t.lines++
	return id
}

// NumLines is the number of lines added.
func (t *LineTable) NumLines() uint32 { return t.lines }

// Full reports whether no more lines fit: line ids are 32-bit.
func (t *LineTable) Full() bool { return t.lines >= 1<<32-2 }

// Files lists the files with lines in the table, in order of first use.
func (t *LineTable) Files() []SegFile { return t.files }

// RawBytes is the log bytes of the lines added.
func (t *LineTable) RawBytes() int64 { return t.rawBytes }
