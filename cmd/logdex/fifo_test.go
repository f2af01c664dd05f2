package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFaultFIFO: a log replaced by a FIFO (and one there from the start)
// is skipped; no search or index run blocks opening it. Indexing drops it
// silently, as grep -r skips FIFOs; a search of the index as it is
// (--no-update) warns that the indexed file is no longer a regular one.
func TestFaultFIFO(t *testing.T) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(logs, 0o755))
	writeLog := func(name, content string) { must(t, os.WriteFile(filepath.Join(logs, name), []byte(content), 0o644)) }
	writeLog("a.log", "a fifo-probe line\n")
	writeLog("b.log", "b fifo-probe line\n")
	must(t, syscall.Mkfifo(filepath.Join(logs, "early.log"), 0o644))
	idx := filepath.Join(dir, "idx")
	type result struct {
		code           int
		stdout, stderr string
	}
	runBounded := func(args ...string) result {
		t.Helper()
		done := make(chan result, 1)
		go func() {
			var stdout, stderr bytes.Buffer
			code := run(args, nil, &stdout, &stderr)
			done <- result{code, stdout.String(), stderr.String()}
		}()
		select {
		case r := <-done:
			return r
		case <-time.After(20 * time.Second):
			// Unblock the opener (a writer end) so the test can end, then fail.
			for _, n := range []string{"early.log", "b.log"} {
				if f, err := os.OpenFile(filepath.Join(logs, n), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			}
			t.Fatalf("%v blocked on a FIFO", args)
			return result{}
		}
	}
	if r := runBounded("index", "-q", "--index", idx, logs); r.code != 0 {
		t.Fatalf("index: %d %s", r.code, r.stderr)
	}
	must(t, os.Remove(filepath.Join(logs, "b.log")))
	must(t, syscall.Mkfifo(filepath.Join(logs, "b.log"), 0o644))
	for _, extra := range [][]string{{"--no-update"}, nil} {
		args := append([]string{"search", "--index", idx}, extra...)
		r := runBounded(append(args, "-F", "fifo-probe", logs)...)
		if r.code != 0 || !strings.Contains(r.stdout, "a.log:1:a fifo-probe line") || strings.Contains(r.stdout, "b.log") ||
			extra != nil && !strings.Contains(r.stderr, "b.log: no longer a regular file") {
			t.Fatalf("search %v: exit %d\nstdout %s\nstderr %s", extra, r.code, r.stdout, r.stderr)
		}
	}
	if r := runBounded("index", "-q", "--index", idx, logs); r.code != 0 {
		t.Fatalf("index with FIFOs: %d %s", r.code, r.stderr)
	}
}
