package indexer

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
)

// TestFindMissedDuringWalk: indexed files the walk did not meet are found
// under their new names in their directories (a rename while the walk
// read it), deleted ones are not, with one listing a directory.
func TestFindMissedDuringWalk(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "app"), 0o755))
	old := &mmapstore.Manifest{}
	for i := range 50 {
		p := filepath.Join(dir, "app", fmt.Sprintf("f%02d.log", i))
		must(os.WriteFile(p, []byte("x\n"), 0o644))
		fi, err := os.Stat(p)
		must(err)
		dev, ino := logfile.StatIDs(fi)
		old.Files = append(old.Files, mmapstore.FileRecord{ID: uint64(i + 1), Root: 0, Path: fmt.Sprintf("app/f%02d.log", i), Dev: dev, Ino: ino})
	}
	// Renamed: f00 and f01; the rest deleted.
	must(os.Rename(filepath.Join(dir, "app/f00.log"), filepath.Join(dir, "app/f00.log.1")))
	must(os.Rename(filepath.Join(dir, "app/f01.log"), filepath.Join(dir, "app/g01.log")))
	for i := 2; i < 50; i++ {
		must(os.Remove(filepath.Join(dir, "app", fmt.Sprintf("f%02d.log", i))))
	}
	r, err := resolveRoot(dir)
	must(err)
	defer r.dir.Close()
	u := &update{roots: []*root{r}}
	atPath := []int{}
	files, added := u.findMissedDuringWalk(nil, old, map[int]int{0: 0}, atPath)
	var got []string
	for _, f := range files {
		got = append(got, f.rel)
	}
	if !added || fmt.Sprint(got) != "[app/f00.log.1 app/g01.log]" {
		t.Fatalf("found %v (added %v), want the two renamed files", got, added)
	}
}
