package mmapstore_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
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
	for _, want := range []string{`"path_b64":"Y2Fm6S5sb2c="`, `"given_b64"`, `"abs_b64"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Fatalf("manifest lacks %s: %s", want, b[32:])
		}
	}
	if n := bytes.Count(b, []byte("_b64")); n != 4 {
		t.Fatalf("%d base64 fields, want 4 (valid paths need none): %s", n, b[32:])
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
	bad := bytes.Replace(b, []byte(`"path_b64":"Y2Fm6S5sb2c="`), []byte(`"path_b64":"!!"`), 1)
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
