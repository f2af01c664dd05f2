package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSearchFollow: search --follow prints each matching line written
// after it started once, as grep prints it, through a rotation by rename
// and a partial line, and exits 0 on SIGINT.
func TestSearchFollow(t *testing.T) {
	dir, root := fixtureCopy(t)
	log := filepath.Join(root, "follow.log")
	write := func(path, s string) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.WriteString(s)
	}
	write(log, "2026-11-30T10:00:00Z INFO zqfollow before\n")
	cmd := exec.Command(logdexBin(t), "search", "--follow", "zqfollow", "logs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// next is the next line printed, past probes printed late (on a loaded
	// machine a probe can come after the loop below stopped waiting).
	next := func() (string, bool) {
		for {
			select {
			case got := <-lines:
				if strings.Contains(got, "zqfollow probe") {
					continue
				}
				return got, true
			case <-time.After(20 * time.Second):
				return "", false
			}
		}
	}
	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			got, ok := next()
			if !ok {
				t.Fatalf("no line in 20s, want %q; stderr: %s", w, stderr.String())
			}
			if got != w {
				t.Fatalf("got %q, want %q", got, w)
			}
		}
	}
	// The follower indexes first; lines written before it is ready
	// are the past. Keep writing numbered lines until one shows.
	var first int
	for i := 0; first == 0; i++ {
		write(log, fmt.Sprintf("2026-11-30T10:00:01Z INFO zqfollow probe %d\nunrelated\n", i))
		select {
		case got := <-lines:
			if _, err := fmt.Sscanf(got, "logs/follow.log:%d:", &first); err != nil {
				t.Fatalf("%q", got)
			}
		case <-time.After(50 * time.Millisecond):
		}
	}
	for len(lines) > 0 { // probes printed meanwhile (next skips later ones)
		<-lines
	}
	n := lineCount(t, log)
	write(log, "2026-11-30T10:00:02Z WARN zqfollow one\nnope\n2026-11-30T10:00:03Z WARN zqfollow part")
	expect(fmt.Sprintf("logs/follow.log:%d:2026-11-30T10:00:02Z WARN zqfollow one", n+1))
	write(log, "ial\n")
	expect(fmt.Sprintf("logs/follow.log:%d:2026-11-30T10:00:03Z WARN zqfollow partial", n+3))
	if err := os.Rename(log, log+".1"); err != nil {
		t.Fatal(err)
	}
	write(log+".1", "2026-11-30T10:00:04Z WARN zqfollow late\n")
	write(log, "2026-11-30T10:00:05Z WARN zqfollow fresh\n")
	got := map[string]bool{}
	for range 2 {
		l, ok := next()
		if !ok {
			t.Fatalf("no line in 20s after the rotation; got %v", got)
		}
		got[l] = true
	}
	for _, w := range []string{
		fmt.Sprintf("logs/follow.log.1:%d:2026-11-30T10:00:04Z WARN zqfollow late", n+4),
		"logs/follow.log:1:2026-11-30T10:00:05Z WARN zqfollow fresh",
	} {
		if !got[w] {
			t.Errorf("missing %q in %v", w, got)
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v; stderr: %s", err, stderr.String())
	}
	for l := range lines {
		if !strings.Contains(l, "zqfollow probe") {
			t.Errorf("extra line %q", l)
		}
	}
}

func lineCount(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
