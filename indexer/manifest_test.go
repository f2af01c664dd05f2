package indexer_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

// segmentFiles lists the segment files in an index directory.
func segmentFiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	must(t, err)
	return m
}

// TestManifestReadErrorKeepsIndex: a manifest that cannot be read for a
// reason other than damage or another format version (here: EISDIR, as
// EIO or EACCES would be) fails the run and leaves the index alone: no
// rebuild, no segment written or collected. Once readable, nothing needs
// indexing.
func TestManifestReadErrorKeepsIndex(t *testing.T) {
	root, dir := logTree(t, map[string]string{"a.log": "one\ntwo\n"})
	update(t, dir, root)
	segs := segmentFiles(t, dir)
	man := filepath.Join(dir, mmapstore.ManifestName)
	must(t, os.Rename(man, man+".aside"))
	must(t, os.Mkdir(man, 0o755))
	if _, err := indexer.Update(t.Context(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop()}); err == nil {
		t.Fatal("a run over an unreadable manifest succeeded")
	}
	if got := segmentFiles(t, dir); !slices.Equal(got, segs) {
		t.Fatalf("segments %v became %v", segs, got)
	}
	must(t, os.Remove(man))
	must(t, os.Rename(man+".aside", man))
	if res := update(t, dir, root); res.Changed || res.NewSegs != 0 {
		t.Fatalf("after the manifest came back: %+v", res)
	}
}

// TestMismatchedSegmentRebuilt: a segment that does not match its manifest
// is dropped by the next run and its files indexed again; the index then
// opens clean and answers every line.
func TestMismatchedSegmentRebuilt(t *testing.T) {
	root, dir := logTree(t, map[string]string{"a.log": "one\ntwo\n", "b.log": "three\n"})
	update(t, dir, root)
	m, err := mmapstore.ReadManifest(dir)
	must(t, err)
	m.Files[0].Lines++ // the segment holds fewer lines of it than the record says
	must(t, mmapstore.PublishManifest(dir, m))
	ix, err := mmapstore.Open(dir)
	must(t, err)
	if len(ix.Damaged()) != 1 {
		t.Fatalf("damaged %v", ix.Damaged())
	}
	ix.Close()
	if res := update(t, dir, root); !res.Changed || res.NewSegs != 1 {
		t.Fatalf("repair run: %+v", res)
	}
	got, st := searchAll(t, dir, root)
	if len(got) != 3 || len(st.Warnings) != 0 {
		t.Fatalf("after repair: %+v %v", got, st.Warnings)
	}
	ix, err = mmapstore.Open(dir)
	must(t, err)
	defer ix.Close()
	if len(ix.Damaged()) != 0 {
		t.Fatalf("still damaged: %v", ix.Damaged())
	}
}
