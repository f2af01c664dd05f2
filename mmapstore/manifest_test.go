package mmapstore_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/logdex/logdex/mmapstore"
)

// TestManifestPathsAreBytes: paths that are not valid UTF-8 (file names
// are bytes) come back from the manifest exactly, through the base64 forms
// beside the JSON strings; valid ones are written as plain strings only.
func TestManifestPathsAreBytes(t *testing.T) {
	m := &mmapstore.Manifest{
		Generation: 3,
		Roots:      []mmapstore.Root{{Given: "logs\xff", Abs: "/srv/logs\xff"}, {Given: "plain", Abs: "/plain"}},
		Files: []mmapstore.FileRecord{
			{ID: 1, Root: 0, Path: "caf\xe9.log", Size: 10, Indexed: 10, Lines: 1},
			{ID: 2, Root: 1, Path: "ok/ünïcødé.log", Size: 5, Indexed: 5, Lines: 1},
		},
		Skipped:    []mmapstore.Skipped{{Root: 1, Path: "bin\xfe\x80.dat", Reason: "binary file"}},
		NextFileID: 3, NextSegmentID: 1,
	}
	b, err := mmapstore.EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"path_b64":"Ymlu/oAuZGF0"`, `"given_b64"`, `"abs_b64"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Fatalf("manifest lacks %s: %s", want, b[32:])
		}
	}
	if n := bytes.Count(b, []byte("_b64")); n != 3 {
		t.Fatalf("%d base64 fields, want 3 (valid paths and the binary file table need none): %s", n, b[32:])
	}
	got, err := mmapstore.DecodeManifest("m", b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
	}

	dir := t.TempDir()
	if err := mmapstore.PublishManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	roots, err := mmapstore.ReadRoots(dir)
	if err != nil || !reflect.DeepEqual(roots, m.Roots) {
		t.Fatalf("ReadRoots: %+v, %v", roots, err)
	}
	bad := bytes.Replace(b, []byte(`"path_b64":"Ymlu/oAuZGF0"`), []byte(`"path_b64":"!!!!!!!!!!!!"`), 1)
	if _, err := mmapstore.DecodeManifest("m", fixChecksum(t, bad)); err == nil {
		t.Fatal("a manifest with bad base64 decoded")
	}
}

// fixChecksum sets a manifest's payload length and checksum to its bytes'.
func fixChecksum(t *testing.T, b []byte) []byte {
	t.Helper()
	payload := b[32:]
	binary.LittleEndian.PutUint64(b[16:], uint64(len(payload)))
	binary.LittleEndian.PutUint64(b[24:], xxhash.Sum64(payload))
	return b
}

// fullManifest sets every field of the manifest, its segments and files.
func fullManifest(files int) *mmapstore.Manifest {
	m := &mmapstore.Manifest{
		Generation: 7, TZ: "Europe/Paris",
		Roots:      []mmapstore.Root{{Given: "logs", Abs: "/srv/logs"}, {Given: "one.log", Abs: "/var/one.log", IsFile: true}},
		Segments:   []mmapstore.SegmentRef{{Name: "seg-0000000000000001.ldx", Lines: 1<<32 - 1, RawBytes: 1 << 40, Size: 12345, FileIDs: []uint64{1, 9, 3, 1 << 63}}, {Name: "seg-0000000000000002.ldx"}},
		Skipped:    []mmapstore.Skipped{{Root: 0, Path: "x.bin", Reason: "binary file", Dev: 1, Ino: 2, Size: 3, MTime: -4}, {Path: "locked", Reason: "permission denied", Unreadable: true}},
		NextFileID: uint64(files + 1), NextSegmentID: 3,
	}
	for i := range files {
		f := mmapstore.FileRecord{ID: uint64(i + 1), Root: i % 2, Path: fmt.Sprintf("dir%03d/app-%05d.log", i/100, i), Dev: 2049, Ino: uint64(1e6 + i),
			FPLen: 1024, FP: uint64(i) * 0x9e3779b97f4a7c15, Size: int64(400 + i), MTime: 1.7e18 + int64(i), Indexed: int64(300 + i), Lines: int64(i % 7)}
		switch i % 4 {
		case 0:
			f.TailLen, f.TailFP = min(f.Indexed, 256), uint64(i)*0x51afd7ed558ccd
		case 1:
			f.Timed, f.TimeFormat, f.LastTime = true, "rfc3339", -int64(i)
		case 2:
			f.Compression, f.Damage, f.NULAt = "gzip", "unexpected EOF", 17
		case 3:
			f.Path = ""
		}
		m.Files = append(m.Files, f)
	}
	return m
}

func TestManifestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    *mmapstore.Manifest
	}{
		{"empty", &mmapstore.Manifest{}},
		{"roots only", &mmapstore.Manifest{Roots: []mmapstore.Root{{Given: ".", Abs: "/"}}}},
		{"every field", fullManifest(50)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := mmapstore.EncodeManifest(tc.m)
			if err != nil {
				t.Fatal(err)
			}
			got, err := mmapstore.DecodeManifest("m", b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.m) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.m)
			}
		})
	}
}

// TestManifestCorrupt: any damage to the tables (with a checksum that
// matches, as a buggy writer would leave) is ErrCorrupt, never a panic or
// a manifest.
func TestManifestCorrupt(t *testing.T) {
	good, err := mmapstore.EncodeManifest(fullManifest(6))
	if err != nil {
		t.Fatal(err)
	}
	jsonEnd := 40 + int(binary.LittleEndian.Uint64(good[32:]))
	for n := jsonEnd; n < len(good); n++ {
		b := fixChecksum(t, bytes.Clone(good[:n]))
		if m, err := mmapstore.DecodeManifest("m", b); !errors.Is(err, mmapstore.ErrCorrupt) {
			t.Fatalf("cut at %d of %d: %+v, %v", n, len(good), m, err)
		}
	}
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
	}{
		{"trailing byte", func(b []byte) []byte { return append(b, 0) }},
		{"JSON length too long", func(b []byte) []byte { binary.LittleEndian.PutUint64(b[32:], 1<<40); return b }},
		{"short payload", func(b []byte) []byte { return b[:36] }},
		{"huge segment count", func(b []byte) []byte {
			return append(b[:jsonEnd], 0xff, 0xff, 0xff, 0xff, 0x0f)
		}},
		{"bad varint", func(b []byte) []byte {
			return append(b[:jsonEnd], 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fixChecksum(t, tc.edit(bytes.Clone(good)))
			if m, err := mmapstore.DecodeManifest("m", b); !errors.Is(err, mmapstore.ErrCorrupt) {
				t.Fatalf("%+v, %v", m, err)
			}
		})
	}
	// Fingerprint lengths a reader would allocate or read by.
	for _, tc := range []struct {
		name string
		edit func(f *mmapstore.FileRecord)
	}{
		{"negative fingerprint", func(f *mmapstore.FileRecord) { f.FPLen = -1 }},
		{"huge fingerprint", func(f *mmapstore.FileRecord) { f.FPLen = 1 << 40 }},
		{"tail past indexed", func(f *mmapstore.FileRecord) { f.Indexed, f.TailLen = 10, 11 }},
		{"huge tail", func(f *mmapstore.FileRecord) { f.Size, f.Indexed, f.TailLen = 1<<41, 1<<41, 1<<40 }},
		{"negative tail", func(f *mmapstore.FileRecord) { f.TailLen = -5 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fullManifest(6)
			tc.edit(&m.Files[4])
			b, err := mmapstore.EncodeManifest(m)
			if err != nil {
				t.Fatal(err)
			}
			if m, err := mmapstore.DecodeManifest("m", b); !errors.Is(err, mmapstore.ErrCorrupt) {
				t.Fatalf("%+v, %v", m, err)
			}
		})
	}
}

// TestReadRootsOldVersions: the roots of a version 3 manifest (whose
// payload is JSON) are still read, so that its index can be rebuilt.
func TestReadRootsOldVersions(t *testing.T) {
	payload := []byte(`{"generation":2,"roots":[{"given":"logs","abs":"/srv/logs","is_file":false},{"given":"x\ufffd","abs":"/x\ufffd","is_file":true,"given_b64":"eP8=","abs_b64":"L3j/"}],"segments":[],"files":[]}`)
	b := make([]byte, 32, 32+len(payload))
	copy(b, mmapstore.ManifestMagic)
	binary.LittleEndian.PutUint32(b[8:], 3)
	b = fixChecksum(t, append(b, payload...))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, mmapstore.ManifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
	roots, err := mmapstore.ReadRoots(dir)
	want := []mmapstore.Root{{Given: "logs", Abs: "/srv/logs"}, {Given: "x\xff", Abs: "/x\xff", IsFile: true}}
	if err != nil || !reflect.DeepEqual(roots, want) {
		t.Fatalf("ReadRoots: %+v, %v", roots, err)
	}
	if _, err := mmapstore.ReadManifest(dir); !errors.Is(err, mmapstore.ErrVersion) {
		t.Fatalf("ReadManifest of version 3: %v", err)
	}
}

// BenchmarkDecodeManifest decodes the manifest of 100,000 small files.
func BenchmarkDecodeManifest(b *testing.B) {
	data, err := mmapstore.EncodeManifest(fullManifest(100_000))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportMetric(float64(len(data)), "manifest-bytes")
	for b.Loop() {
		if _, err := mmapstore.DecodeManifest("m", data); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzManifest: DecodeManifest returns an error for bad bytes, never panics.
func FuzzManifest(f *testing.F) {
	good, _ := mmapstore.EncodeManifest(&mmapstore.Manifest{Roots: []mmapstore.Root{{Given: "logs", Abs: "/logs"}}, Files: []mmapstore.FileRecord{{ID: 1, Path: "a.log", Size: 10, Indexed: 5}}})
	f.Add(good)
	full, _ := mmapstore.EncodeManifest(fullManifest(8))
	f.Add(full)
	f.Fuzz(func(t *testing.T, data []byte) {
		// Fuzzing the tables needs a matching checksum.
		if len(data) >= 32 {
			binary.LittleEndian.PutUint64(data[16:], uint64(len(data)-32))
			binary.LittleEndian.PutUint64(data[24:], xxhash.Sum64(data[32:]))
		}
		mmapstore.DecodeManifest("fuzz", data)
	})
}

// TestManifestPathBlowUp: shared path prefixes cannot expand a small
// manifest into gigabytes of paths (each record may repeat the whole
// previous path for a few bytes).
func TestManifestPathBlowUp(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files int
		path  string
	}{
		{"one path too long", 1, strings.Repeat("d/", 40_000)},
		{"a long path repeated", 2000, strings.Repeat("d/", 30_000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &mmapstore.Manifest{Roots: []mmapstore.Root{{Given: "logs", Abs: "/srv/logs"}}}
			for i := range tc.files {
				m.Files = append(m.Files, mmapstore.FileRecord{ID: uint64(i + 1), Path: tc.path})
			}
			b, err := mmapstore.EncodeManifest(m)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := mmapstore.DecodeManifest("m", b); !errors.Is(err, mmapstore.ErrCorrupt) {
				t.Fatalf("%d bytes of manifest decoded to %d files (%v), want ErrCorrupt", len(b), len(got.Files), err)
			}
		})
	}
}
