package compressed

import (
	"bytes"
	"errors"
	"fmt"
)

// Kind is a compression format recognised by its magic bytes.
type Kind uint8

// The formats; the numbers are part of the table encoding.
const (
	None Kind = iota
	Gzip
	Zstd
	Bzip2
	XZ
)

func (k Kind) String() string {
	switch k {
	case None:
		return "none"
	case Gzip:
		return "gzip"
	case Zstd:
		return "zstd"
	case Bzip2:
		return "bzip2"
	case XZ:
		return "xz"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// SniffLen is how many leading bytes Sniff needs to recognise every kind.
const SniffLen = 6

var (
	gzipMagic  = []byte{0x1f, 0x8b}
	zstdMagic  = []byte{0x28, 0xb5, 0x2f, 0xfd}
	bzip2Magic = []byte("BZh")
	xzMagic    = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
)

// Sniff recognises a compressed file by its first bytes (at least SniffLen
// of them when the file is that long), not by its name: logrotate and
// friends name files freely. A zstd file may start with a skippable frame
// (magic 0x184D2A50 to 0x184D2A5F; pzstd writes one before each frame), as
// zstd -d accepts it. It returns None for anything else, including gzip
// data whose method byte is not deflate.
func Sniff(head []byte) Kind {
	switch {
	case len(head) >= 3 && bytes.HasPrefix(head, gzipMagic) && head[2] == 8:
		return Gzip
	case bytes.HasPrefix(head, zstdMagic):
		return Zstd
	case len(head) >= 4 && zstdMagicPrefix(head[:4]):
		return Zstd // a skippable frame
	case len(head) >= 4 && bytes.HasPrefix(head, bzip2Magic) && head[3] >= '1' && head[3] <= '9':
		return Bzip2
	case bytes.HasPrefix(head, xzMagic):
		return XZ
	}
	return None
}

// ErrTruncated is returned (wrapped, with the kind and the file size) when
// the compressed input ends inside a stream: everything before the cut has
// been yielded.
var ErrTruncated = errors.New("compressed input is truncated")

// ErrTrailingGarbage is the Err of a CorruptError returned after the last
// complete stream when bytes follow that do not start another stream. For
// gzip those bytes have been yielded verbatim first, as `gzip -cdf` (and so
// zgrep) prints them, unless they are all zeros: zero padding to the end of
// a gzip file is no error and no content, as for `gzip -d` and zcat. For
// the other kinds they are not part of the content, as zstd, xz and
// bzip2 -d leave them out (xz's stream padding is no error either).
var ErrTrailingGarbage = errors.New("trailing garbage after the last stream")

// CorruptError reports compressed input that cannot be decoded (or a
// decoded stream that fails its checksum). Offset is the compressed byte
// offset at or just after the damage, as precise as the decoder tells.
type CorruptError struct {
	Kind   Kind
	Offset int64
	Err    error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("corrupt %s input near compressed byte %d: %v", e.Kind, e.Offset, e.Err)
}

func (e *CorruptError) Unwrap() error { return e.Err }

func corrupt(k Kind, off int64, format string, args ...any) *CorruptError {
	return &CorruptError{Kind: k, Offset: off, Err: fmt.Errorf(format, args...)}
}

func truncated(k Kind, size int64) error {
	return fmt.Errorf("%s input of %d bytes: %w", k, size, ErrTruncated)
}

// ParseKind reads a Kind's String (None for "" and "none").
func ParseKind(s string) (Kind, error) {
	for k := None; k <= XZ; k++ {
		if k.String() == s {
			return k, nil
		}
	}
	if s == "" {
		return None, nil
	}
	return None, fmt.Errorf("unknown compression %q", s)
}
