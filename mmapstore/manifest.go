package mmapstore

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/logdex/logdex/mmapstore/logfile"
)

// Manifest file layout: magic "LOGDEXMF" | version u32 | reserved u32 |
// payload length u64 | xxhash64(payload) u64 | payload: JSON length u64 |
// JSON (manifestHead) | binary segment and file tables (manifest_bin.go).
const (
	ManifestMagic  = "LOGDEXMF"
	ManifestName   = "MANIFEST"
	manifestHeader = 32
)

// ErrNoIndex is returned when a directory holds no manifest.
var ErrNoIndex = errors.New("no index")

// Manifest is the root of an index: which segments are live and what is
// known of every indexed file. It is rewritten (atomically) by each indexing
// run; segments are never modified.
type Manifest struct {
	Generation uint64 `json:"generation"`
	// TZ is the zone of timestamps that do not write one, as the times in
	// the index were computed ("UTC" when empty).
	TZ            string       `json:"tz,omitempty"`
	Roots         []Root       `json:"roots"`
	Segments      []SegmentRef `json:"segments"`
	Files         []FileRecord `json:"files"`
	Skipped       []Skipped    `json:"skipped,omitempty"`
	NextFileID    uint64       `json:"next_file_id"`
	NextSegmentID uint64       `json:"next_segment_id"`
}

// Root is one PATH argument the index was built for.
type Root struct {
	Given  string `json:"given"` // as typed, for grep-like display
	Abs    string `json:"abs"`   // absolute and clean
	IsFile bool   `json:"is_file"`
}

// SegmentRef names a live segment file in the index directory.
type SegmentRef struct {
	Name     string   `json:"name"`
	Lines    uint32   `json:"lines"`
	RawBytes int64    `json:"raw_bytes"`
	Size     int64    `json:"size"`
	FileIDs  []uint64 `json:"file_ids"` // files with lines in the segment
}

// FileRecord is the indexer's knowledge of one log file. A file keeps its ID
// while it only grows (even when renamed by rotation); a truncated or
// replaced file gets a new ID, which retires the lines indexed under the old.
type FileRecord struct {
	ID      uint64 `json:"id"`
	Root    int    `json:"root"`
	Path    string `json:"path"` // relative to the root, slash-separated
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	FPLen   int64  `json:"fp_len"`
	FP      uint64 `json:"fp"`
	Size    int64  `json:"size"`  // size when last indexed
	MTime   int64  `json:"mtime"` // unix nanoseconds, when last indexed
	Indexed int64  `json:"indexed"`
	Lines   int64  `json:"lines"` // complete lines indexed, = lines in [0, Indexed)
	// Timed is set once a timestamp was found in the file; TimeFormat is
	// the format last detected and LastTime the time of the last indexed
	// line (where the next appended lines start from).
	Timed bool `json:"timed,omitempty"`
	// Compression names the format of a compressed file (gzip, zstd,
	// bzip2, xz; package compressed), which is indexed whole as its
	// decompressed lines: Size is then the compressed size, Indexed the
	// decompressed bytes (counting a newline supplied after a last line
	// without one), and the segment holding its last lines holds its
	// restart points. Damage says where decompressing it failed, if it
	// did: the lines before are indexed.
	Compression string `json:"compression,omitempty"`
	Damage      string `json:"damage,omitempty"`
	TimeFormat  string `json:"time_format,omitempty"`
	LastTime    int64  `json:"last_time,omitempty"`
	// NULAt is 1 + the offset of the first NUL byte in [0, Indexed), 0
	// when there is none: from there on the file is binary (grep prints
	// "binary file matches" instead of its lines).
	NULAt int64 `json:"nul_at,omitempty"`
	// TailLen and TailFP fingerprint the last TailLen bytes of [0,
	// Indexed) (0: none, as in a version 5 index or a compressed file):
	// with FP, they tell a file appended to from one rewritten in place
	// that starts as it did.
	TailLen int64  `json:"tail_len,omitempty"`
	TailFP  uint64 `json:"tail_fp,omitempty"`
}

// SameContent reports whether r, the file rec describes (by device and
// inode), still holds rec's indexed bytes as far as its fingerprints
// tell: it starts as it did, and the bytes before the end of its indexed
// prefix are as they were. r must be at least Indexed bytes long for the
// second to hold.
func (rec *FileRecord) SameContent(r io.ReaderAt) (bool, error) {
	ok, err := logfile.SameStart(r, rec.FPLen, rec.FP)
	if !ok || err != nil || rec.TailLen == 0 {
		return ok, err
	}
	return logfile.SameEnd(r, rec.Indexed, rec.TailLen, rec.TailFP)
}

// Skipped is a file the indexer saw and left out, with the reason.
type Skipped struct {
	Root   int    `json:"root"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
	// Unreadable: it could not be read (permissions, I/O); searches report
	// it as grep does, and the indexer tries it again on every run. Other
	// skips (binary files) are not read again while dev, ino, size and
	// mtime stay the same.
	Unreadable bool   `json:"unreadable,omitempty"`
	Dev        uint64 `json:"dev"`
	Ino        uint64 `json:"ino"`
	Size       int64  `json:"size"`
	MTime      int64  `json:"mtime"`
}

// Paths are bytes, and JSON strings are Unicode: encoding/json replaces
// bytes that are not UTF-8 by U+FFFD, which would name another file. So a
// path that is not valid UTF-8 is also written in base64 beside it
// ("path_b64", "given_b64", "abs_b64"), which readers prefer. The wire
// types below add those fields; the exported types stay plain.

type rootWire struct {
	Root
	GivenB64 string `json:"given_b64,omitempty"`
	AbsB64   string `json:"abs_b64,omitempty"`
}

type skippedWire struct {
	Skipped
	PathB64 string `json:"path_b64,omitempty"`
}

// b64IfInvalid is s in base64 when it is not valid UTF-8, else "".
func b64IfInvalid(s string) string {
	if utf8.ValidString(s) {
		return ""
	}
	return base64.StdEncoding.EncodeToString([]byte(s))
}

// fromB64 replaces *s by the bytes b64 holds, when set.
func fromB64(s *string, b64, field string) error {
	if b64 == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	*s = string(b)
	return nil
}

func rootsToWire(roots []Root) []rootWire {
	out := make([]rootWire, len(roots))
	for i, r := range roots {
		out[i] = rootWire{Root: r, GivenB64: b64IfInvalid(r.Given), AbsB64: b64IfInvalid(r.Abs)}
	}
	return out
}

func rootsFromWire(ws []rootWire) ([]Root, error) {
	var out []Root
	for _, w := range ws {
		if err := errors.Join(fromB64(&w.Given, w.GivenB64, "given_b64"), fromB64(&w.Abs, w.AbsB64, "abs_b64")); err != nil {
			return nil, err
		}
		out = append(out, w.Root)
	}
	return out, nil
}

// EncodeManifest serializes m with its header and checksum.
func EncodeManifest(m *Manifest) ([]byte, error) {
	head := manifestHead{Generation: m.Generation, TZ: m.TZ, Roots: rootsToWire(m.Roots),
		NextFileID: m.NextFileID, NextSegmentID: m.NextSegmentID}
	for _, s := range m.Skipped {
		head.Skipped = append(head.Skipped, skippedWire{Skipped: s, PathB64: b64IfInvalid(s.Path)})
	}
	js, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	out := make([]byte, manifestHeader+8, manifestHeader+8+len(js)+64*len(m.Files))
	copy(out, ManifestMagic)
	binary.LittleEndian.PutUint32(out[8:], FormatVersion)
	binary.LittleEndian.PutUint64(out[manifestHeader:], uint64(len(js)))
	out = append(out, js...)
	out = appendTables(out, m)
	payload := out[manifestHeader:]
	binary.LittleEndian.PutUint64(out[16:], uint64(len(payload)))
	binary.LittleEndian.PutUint64(out[24:], xxhash.Sum64(payload))
	return out, nil
}

// DecodeManifest parses and validates a manifest. name is used in errors.
func DecodeManifest(name string, b []byte) (*Manifest, error) {
	payload, err := manifestPayload(name, b)
	if err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error {
		return &CorruptionError{Path: name, Section: "manifest", Offset: -1, Msg: fmt.Sprintf(format, args...)}
	}
	if v := binary.LittleEndian.Uint32(b[8:]); v < MinFormatVersion || v > FormatVersion {
		return nil, &VersionError{Path: name, Found: v}
	}
	js, tables, ok := splitPayload(payload)
	if !ok {
		return nil, bad("bad JSON length")
	}
	// Unknown fields are ignored: a newer writer may add optional ones.
	head, err := decodeHead(js)
	if err != nil {
		return nil, bad("%v", err)
	}
	m := &Manifest{Generation: head.Generation, TZ: head.TZ, NextFileID: head.NextFileID, NextSegmentID: head.NextSegmentID}
	if m.Roots, err = rootsFromWire(head.Roots); err != nil {
		return nil, bad("%v", err)
	}
	for _, s := range head.Skipped {
		if err := fromB64(&s.Path, s.PathB64, "path_b64"); err != nil {
			return nil, bad("%v", err)
		}
		m.Skipped = append(m.Skipped, s.Skipped)
	}
	if err := readTables(tables, m); err != nil {
		return nil, bad("tables: %v", err)
	}
	for i, f := range m.Files {
		if f.Root < 0 || f.Root >= len(m.Roots) {
			return nil, bad("file %d refers to root %d of %d", i, f.Root, len(m.Roots))
		}
		if f.Indexed < 0 || f.Lines < 0 || f.Indexed > f.Size && f.Compression == "" {
			return nil, bad("file %q has inconsistent sizes", f.Path)
		}
	}
	for _, s := range m.Segments {
		if s.Name == "" || filepath.Base(s.Name) != s.Name {
			return nil, bad("bad segment name %q", s.Name)
		}
	}
	return m, nil
}

// splitPayload splits a version 4 payload into its JSON head and its
// binary tables.
func splitPayload(payload []byte) (js, tables []byte, ok bool) {
	if len(payload) < 8 {
		return nil, nil, false
	}
	n := binary.LittleEndian.Uint64(payload)
	if n > uint64(len(payload)-8) {
		return nil, nil, false
	}
	return payload[8 : 8+n], payload[8+n:], true
}

// manifestPayload checks a manifest's envelope (magic, length, checksum),
// whatever its version, and returns its payload.
func manifestPayload(name string, b []byte) ([]byte, error) {
	bad := func(format string, args ...any) error {
		return &CorruptionError{Path: name, Section: "manifest", Offset: -1, Msg: fmt.Sprintf(format, args...)}
	}
	if len(b) < manifestHeader || string(b[:8]) != ManifestMagic {
		return nil, bad("bad magic or short file")
	}
	n := binary.LittleEndian.Uint64(b[16:])
	payload, ok := slice(b, manifestHeader, n)
	if !ok || manifestHeader+n != uint64(len(b)) {
		return nil, bad("payload length %d does not match file size %d", n, len(b))
	}
	if xxhash.Sum64(payload) != binary.LittleEndian.Uint64(b[24:]) {
		return nil, bad("checksum mismatch")
	}
	return payload, nil
}

// ReadManifest reads dir's manifest; ErrNoIndex when there is none.
func ReadManifest(dir string) (*Manifest, error) {
	var m *Manifest
	err := readManifestFile(dir, func(path string, b []byte) (err error) {
		m, err = DecodeManifest(path, b)
		return err
	})
	return m, err
}

// ReadRoots returns the PATHs an index was built for, from a manifest of
// any format version (the roots' JSON encoding has not changed since
// version 1; from version 4 on it is in the payload's JSON head), so that an index this build cannot read can be rebuilt from its
// directory alone.
func ReadRoots(dir string) ([]Root, error) {
	var roots struct {
		Roots []rootWire `json:"roots"`
	}
	err := readManifestFile(dir, func(path string, b []byte) error {
		payload, err := manifestPayload(path, b)
		if err != nil {
			return err
		}
		js := payload // versions 1 to 3: the payload is JSON
		if binary.LittleEndian.Uint32(b[8:]) >= 4 {
			var ok bool
			if js, _, ok = splitPayload(payload); !ok {
				return &CorruptionError{Path: path, Section: "manifest", Offset: -1, Msg: "bad JSON length"}
			}
		}
		return json.Unmarshal(js, &roots)
	})
	if err != nil {
		return nil, err
	}
	return rootsFromWire(roots.Roots)
}

// manifestReadMax: a manifest up to this size is read, a larger one (many
// files) mapped.
const manifestReadMax = 256 << 10

func readManifestFile(dir string, decode func(path string, b []byte) error) error {
	path := filepath.Join(dir, ManifestName)
	b, release, err := loadFile(path, manifestReadMax)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %w", dir, ErrNoIndex)
	}
	if err != nil {
		return err
	}
	defer release()
	return decode(path, b)
}
