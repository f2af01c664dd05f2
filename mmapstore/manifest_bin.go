package mmapstore

// The manifest's large tables (segments and files) in binary: a JSON file
// table of 100,000 small files is ~25 MB and takes half a second to
// decode, more than a search over those files takes with grep. Layout in
// FORMAT.md (MANIFEST).

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/logdex/logdex/mmapstore/logfile"
)

// manifestHead is the JSON part of a version 4 payload: everything but the
// segment and file tables.
type manifestHead struct {
	Generation    uint64        `json:"generation"`
	TZ            string        `json:"tz,omitempty"`
	Roots         []rootWire    `json:"roots"`
	Skipped       []skippedWire `json:"skipped,omitempty"`
	NextFileID    uint64        `json:"next_file_id"`
	NextSegmentID uint64        `json:"next_segment_id"`
}

// maxPathLen bounds a file's path in the manifest, far above what any
// system takes (Linux's PATH_MAX is 4096).
const maxPathLen = 1 << 16

// File record flags.
const (
	fileTimed = 1 << iota
	fileCompressed
	fileDamaged
	fileTimeFormat
	fileLastTime
	fileNUL
	fileTail
)

// appendTables appends the binary segment and file tables of m.
func appendTables(b []byte, m *Manifest) []byte {
	b = binary.AppendUvarint(b, uint64(len(m.Segments)))
	for _, s := range m.Segments {
		b = appendString(b, s.Name)
		b = binary.AppendUvarint(b, uint64(s.Lines))
		b = binary.AppendVarint(b, s.RawBytes)
		b = binary.AppendVarint(b, s.Size)
		b = binary.AppendUvarint(b, uint64(len(s.FileIDs)))
		prev := uint64(0)
		for _, id := range s.FileIDs {
			b = binary.AppendVarint(b, int64(id-prev)) // ids mostly ascend
			prev = id
		}
	}
	b = binary.AppendUvarint(b, uint64(len(m.Files)))
	prevPath := ""
	for i := range m.Files {
		f := &m.Files[i]
		var flags uint64
		for _, c := range []struct {
			on   bool
			flag uint64
		}{{f.Timed, fileTimed}, {f.Compression != "", fileCompressed}, {f.Damage != "", fileDamaged},
			{f.TimeFormat != "", fileTimeFormat}, {f.LastTime != 0, fileLastTime}, {f.NULAt != 0, fileNUL}, {f.TailLen != 0, fileTail}} {
			if c.on {
				flags |= c.flag
			}
		}
		b = binary.AppendUvarint(b, flags)
		b = binary.AppendUvarint(b, f.ID)
		b = binary.AppendVarint(b, int64(f.Root))
		// Paths are sorted: each shares a prefix with the one before.
		shared := commonPrefix(prevPath, f.Path)
		b = binary.AppendUvarint(b, uint64(shared))
		b = appendString(b, f.Path[shared:])
		prevPath = f.Path
		b = binary.AppendUvarint(b, f.Dev)
		b = binary.AppendUvarint(b, f.Ino)
		b = binary.AppendVarint(b, f.FPLen)
		b = binary.LittleEndian.AppendUint64(b, f.FP)
		b = binary.AppendVarint(b, f.Size)
		b = binary.AppendVarint(b, f.MTime)
		b = binary.AppendVarint(b, f.Indexed)
		b = binary.AppendVarint(b, f.Lines)
		if flags&fileCompressed != 0 {
			b = appendString(b, f.Compression)
		}
		if flags&fileDamaged != 0 {
			b = appendString(b, f.Damage)
		}
		if flags&fileTimeFormat != 0 {
			b = appendString(b, f.TimeFormat)
		}
		if flags&fileLastTime != 0 {
			b = binary.AppendVarint(b, f.LastTime)
		}
		if flags&fileNUL != 0 {
			b = binary.AppendVarint(b, f.NULAt)
		}
		if flags&fileTail != 0 {
			b = binary.AppendVarint(b, f.TailLen)
			b = binary.LittleEndian.AppendUint64(b, f.TailFP)
		}
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// commonPrefix is the length of the bytes a and b start with alike.
func commonPrefix[T ~string | ~[]byte](a, b T) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// tableReader reads the binary tables, remembering the first error.
type tableReader struct {
	b   []byte
	off int
	err error
	// interned short strings (compression and time format names), so that
	// 100,000 records do not allocate 100,000 copies of "rfc3339".
	names map[string]string
}

var errTableEnd = errors.New("truncated")

func (r *tableReader) fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("byte %d: %w", r.off, err)
	}
}

func (r *tableReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b[r.off:])
	if n <= 0 {
		r.fail(errors.New("bad varint"))
		return 0
	}
	r.off += n
	return v
}

func (r *tableReader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b[r.off:])
	if n <= 0 {
		r.fail(errors.New("bad varint"))
		return 0
	}
	r.off += n
	return v
}

func (r *tableReader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	if len(r.b)-r.off < 8 {
		r.fail(errTableEnd)
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

// bytes returns the next length-prefixed bytes (aliasing the input).
func (r *tableReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.fail(errTableEnd)
		return nil
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *tableReader) name() string {
	b := r.bytes()
	if s, ok := r.names[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(r.names) < 64 {
		r.names[s] = s
	}
	return s
}

// count reads a table's length, which cannot exceed the bytes left (every
// entry takes at least minSize bytes): a damaged count must not allocate
// gigabytes.
func (r *tableReader) count(minSize int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64((len(r.b)-r.off)/minSize) {
		r.fail(fmt.Errorf("count %d exceeds the bytes left", n))
		return 0
	}
	return int(n)
}

// readTables decodes the binary segment and file tables into m.
func readTables(b []byte, m *Manifest) error {
	r := &tableReader{b: b, names: map[string]string{}}
	m.Segments = makeOrNil[SegmentRef](r.count(5))
	for i := range m.Segments {
		s := &m.Segments[i]
		s.Name = string(r.bytes())
		lines := r.uvarint()
		if lines > math.MaxUint32 {
			r.fail(fmt.Errorf("segment %d: %d lines", i, lines))
		}
		s.Lines = uint32(lines)
		s.RawBytes, s.Size = r.varint(), r.varint()
		s.FileIDs = makeOrNil[uint64](r.count(1))
		prev := uint64(0)
		for j := range s.FileIDs {
			prev += uint64(r.varint())
			s.FileIDs[j] = prev
		}
	}
	// Paths go into one buffer, made one string at the end: one allocation
	// instead of one per file.
	nfiles := r.count(19)
	m.Files = makeOrNil[FileRecord](nfiles)
	pathEnds := make([]int, nfiles)
	// The paths, whole, take about as many bytes as the rest of the
	// table, prefix-compressed (a guess: it saves growing from nothing).
	paths := make([]byte, 0, len(b)-r.off)
	prevStart := 0
	for i := range m.Files {
		f := &m.Files[i]
		flags := r.uvarint()
		f.ID = r.uvarint()
		root := r.varint()
		if root < 0 || root > math.MaxInt32 {
			r.fail(fmt.Errorf("file %d: root %d", i, root))
		}
		f.Root = int(root)
		shared := r.uvarint()
		if prevLen := len(paths) - prevStart; r.err == nil && shared > uint64(prevLen) {
			r.fail(fmt.Errorf("file %d: shares %d bytes of a %d-byte path", i, shared, prevLen))
		}
		if r.err != nil {
			break
		}
		start := len(paths)
		rest := r.bytes()
		// Shared prefixes expand: bound what they may grow to (a path of
		// more than maxPathLen bytes, or paths of 256 times the table's
		// bytes, are no index's), so that bad bytes cannot make a reader
		// allocate gigabytes.
		if r.err == nil && (int(shared)+len(rest) > maxPathLen || len(paths)+int(shared)+len(rest) > 256*len(b)) {
			r.fail(fmt.Errorf("file %d: path of %d bytes", i, int(shared)+len(rest)))
			break
		}
		paths = append(paths, paths[prevStart:prevStart+int(shared)]...)
		paths = append(paths, rest...)
		prevStart, pathEnds[i] = start, len(paths)
		f.Dev, f.Ino = r.uvarint(), r.uvarint()
		f.FPLen, f.FP = r.varint(), r.u64()
		f.Size, f.MTime, f.Indexed, f.Lines = r.varint(), r.varint(), r.varint(), r.varint()
		f.Timed = flags&fileTimed != 0
		if flags&fileCompressed != 0 {
			f.Compression = r.name()
		}
		if flags&fileDamaged != 0 {
			f.Damage = string(r.bytes())
		}
		if flags&fileTimeFormat != 0 {
			f.TimeFormat = r.name()
		}
		if flags&fileLastTime != 0 {
			f.LastTime = r.varint()
		}
		if flags&fileNUL != 0 {
			f.NULAt = r.varint()
		}
		if flags&fileTail != 0 {
			f.TailLen, f.TailFP = r.varint(), r.u64()
		}
		if r.err == nil && (f.FPLen < 0 || f.FPLen > logfile.FingerprintLen || f.TailLen < 0 || f.TailLen > min(logfile.TailLen, f.Indexed)) {
			r.fail(fmt.Errorf("file %d: fingerprint lengths %d and %d out of range", f.ID, f.FPLen, f.TailLen))
		}
	}
	if r.err == nil && r.off != len(b) {
		r.fail(fmt.Errorf("%d bytes after the tables", len(b)-r.off))
	}
	if r.err != nil {
		return r.err
	}
	all := string(paths)
	start := 0
	for i := range m.Files {
		// A path's own bytes end at pathEnds[i]; it starts where the
		// previous one ended.
		m.Files[i].Path = all[start:pathEnds[i]]
		start = pathEnds[i]
	}
	return nil
}

// makeOrNil is nil for an empty table, as the JSON manifest decoded it.
func makeOrNil[T any](n int) []T {
	if n == 0 {
		return nil
	}
	return make([]T, n)
}
