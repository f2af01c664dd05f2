package logfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestEndLinesAtNUL(t *testing.T) {
	for _, c := range []struct {
		in, out string
		first   int
	}{
		{"", "", -1},
		{"no nul\n", "no nul\n", -1},
		{"a\x00b\x00\x00c\n", "a\nb\n\nc\n", 1},
		{"\x00", "\n", 0},
	} {
		b := []byte(c.in)
		if got := EndLinesAtNUL(b); got != c.first || string(b) != c.out {
			t.Errorf("%q: %d %q, want %d %q", c.in, got, b, c.first, c.out)
		}
	}
}

// BenchmarkEndLinesAtNUL is the cost of looking for NULs in a search's
// 256 KiB scan block of log text (none found), the common case.
func BenchmarkEndLinesAtNUL(b *testing.B) {
	line := "2026-10-10T04:23:27.304Z ERROR [nio-8080-exec-118] ErrorHandler - req=fd74a8f356e1c5c8 unhandled exception\n"
	block := []byte(strings.Repeat(line, (256<<10)/len(line)))
	b.SetBytes(int64(len(block)))
	for b.Loop() {
		if EndLinesAtNUL(block) >= 0 {
			b.Fatal("found a NUL")
		}
	}
}

// TestOpenNoFollow: with nofollow, a symlink in the name's place is
// refused (ELOOP) even when its target lies beneath the root, which
// os.Root would follow; without it, the target beneath the root opens.
func TestOpenNoFollow(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "db"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "db", "other.log"), []byte("other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app.log"), []byte("app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("db/other.log", filepath.Join(dir, "link.log")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, tc := range []struct {
		name     string
		nofollow bool
		want     string // the content read, "" when refused
	}{
		{"app.log", true, "app\n"},
		{"app.log", false, "app\n"},
		{"link.log", true, ""},
		{"link.log", false, "other\n"},
	} {
		f, _, err := Open(root, tc.name, tc.nofollow)
		if tc.want == "" {
			if !errors.Is(err, syscall.ELOOP) {
				t.Errorf("Open(%s, nofollow %v): %v, want ELOOP", tc.name, tc.nofollow, err)
			}
			if f != nil {
				f.Close()
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%s, nofollow %v): %v", tc.name, tc.nofollow, err)
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != tc.want {
			t.Errorf("Open(%s, nofollow %v) read %q, want %q", tc.name, tc.nofollow, b, tc.want)
		}
	}
}
