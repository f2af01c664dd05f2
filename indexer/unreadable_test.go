package indexer_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/rs/zerolog"
)

// TestUnreadableRetried: a file that cannot be read is left out with a
// warning and recorded as unreadable (not cached like a sparse file's
// skip), tried again on every run without rewriting the manifest while
// nothing changes, and indexed once it can be read.
func TestUnreadableRetried(t *testing.T) {
	root, dir := logTree(t, map[string]string{"ok.log": "readable\n", "secret.log": "hidden line\n"})

	tries := 0
	restore := indexer.SetOpenLog(func(d *os.Root, name string, nofollow bool) (*os.File, fs.FileInfo, error) {
		if name == "secret.log" {
			tries++
			return nil, nil, &fs.PathError{Op: "openat", Path: name, Err: syscall.EACCES}
		}
		return logfile.Open(d, name, nofollow)
	})
	defer restore()
	run := func() (*indexer.Result, string) {
		var log bytes.Buffer
		res, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.New(&log)})
		must(t, err)
		return res, log.String()
	}
	for i := range 2 {
		res, log := run()
		if res.Unreadable != 1 || res.Skipped != 0 || !strings.Contains(log, `"level":"warn"`) || !strings.Contains(log, "permission denied") {
			t.Fatalf("run %d: %d unreadable, %d skipped, log %s", i, res.Unreadable, res.Skipped, log)
		}
		if tries != i+1 {
			t.Fatalf("run %d: the unreadable file was tried %d times", i, tries)
		}
		if i == 1 && res.Changed {
			t.Fatal("a run that found the same unreadable file published a new manifest")
		}
		m, err := mmapstore.ReadManifest(dir)
		must(t, err)
		var unreadable []string
		for _, s := range m.Skipped {
			if s.Unreadable {
				unreadable = append(unreadable, s.Path+": "+s.Reason)
			}
		}
		if len(m.Files) != 1 || len(unreadable) != 1 || unreadable[0] != "secret.log: permission denied" {
			t.Fatalf("run %d: files %v, unreadable %q", i, m.Files, unreadable)
		}
	}
	restore()
	res, _ := run()
	if res.Unreadable != 0 || res.New != 1 || res.Files != 2 || !res.Changed {
		t.Fatalf("once readable: %+v", res)
	}
	if got, _ := searchAll(t, dir, root); len(got) != 2 || got[1].text != "hidden line" {
		t.Fatalf("once readable, the index answers %v", got)
	}
}

// logTree writes files (name -> content) into a new log root and returns
// it with a directory for its index.
func logTree(t *testing.T, files map[string]string) (root, dir string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "logs")
	dir = filepath.Join(t.TempDir(), "index")
	must(t, os.MkdirAll(root, 0o755))
	for name, content := range files {
		p := filepath.Join(root, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return root, dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
