package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/logdex/logdex/indexer"
)

// TestFaultIndexDiskFull: when the index cannot be updated (the
// disk is full), the default search answers from the index it has, with
// a warning, lines appended since included; without an index it fails,
// and an interrupted update is not taken for a full disk.
func TestFaultIndexDiskFull(t *testing.T) {
	dir := t.TempDir()
	logs := copyFixtures(t, dir)
	idx := filepath.Join(dir, "idx")
	full := func(context.Context, indexer.Options) (*indexer.Result, error) {
		return nil, fmt.Errorf("write segment: %w", &os.PathError{Op: "write", Path: idx, Err: syscall.ENOSPC})
	}
	search := func(update func(context.Context, indexer.Options) (*indexer.Result, error)) (int, string, string) {
		var stdout, stderr bytes.Buffer
		e := &env{stdout: &stdout, stderr: &stderr, update: update}
		code := e.run([]string{"search", "--index", idx, "-F", "disk-full-probe", logs})
		return code, stdout.String(), stderr.String()
	}
	if code, _, stderr := search(full); code != 2 || !strings.Contains(stderr, "no space left") {
		t.Fatalf("no index yet: exit %d, %s", code, stderr)
	}
	if code, _, stderr := search(nil); code != 1 {
		t.Fatalf("building the index: exit %d, %s", code, stderr)
	}
	f, err := os.OpenFile(filepath.Join(logs, "app", "api.log"), os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	fmt.Fprintln(f, "2026-10-10T09:00:00Z ERROR disk-full-probe appended after indexing")
	f.Close()
	code, stdout, stderr := search(full)
	if code != 0 || !strings.Contains(stdout, "disk-full-probe appended after indexing") ||
		!strings.Contains(stderr, "warning: the index could not be updated") || !strings.Contains(stderr, "no space left") {
		t.Fatalf("disk full: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	interrupted := func(context.Context, indexer.Options) (*indexer.Result, error) { return nil, context.Canceled }
	if code, _, _ := search(interrupted); code != 2 {
		t.Fatalf("interrupted update: exit %d", code)
	}
	// Ctrl-C while the update runs (the handler is ours while it does):
	// the search stops as grep killed by it would, saying nothing, 130.
	ctrlC := func(ctx context.Context, _ indexer.Options) (*indexer.Result, error) {
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if code, stdout, stderr := search(ctrlC); code != 130 || stdout != "" || stderr != "" {
		t.Fatalf("Ctrl-C during the update: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
