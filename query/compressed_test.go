package query

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/compressed"
	"github.com/logdex/logdex/query/lang"
	"github.com/rs/zerolog"
)

// compressedTools are the grep of each format, as users run them.
var compressedTools = []struct {
	ext, compress, grep string
}{
	{".gz", "gzip -n -c", "zgrep"},
	{".zst", "zstd -q -c", "zstdgrep"},
	{".bz2", "bzip2 -c", "bzgrep"},
	{".xz", "xz -c", "xzgrep"},
}

// writeCompressedLogs writes the same kind of log as plain, compressed with
// every tool (one of them in several gzip members, one without a final
// newline) and returns the directory.
func writeCompressedLogs(t *testing.T, lines int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "logs")
	must(t, os.MkdirAll(dir, 0o755))
	r := rand.New(rand.NewPCG(5, 6))
	gen := func(n int) []byte {
		var b bytes.Buffer
		words := []string{"error", "timeout", "GET /api/v1/orders", "connection reset", "user=mallory", "ok", "retry", "Zoë", "503"}
		for i := range n {
			fmt.Fprintf(&b, "2026-11-29T%02d:%02d:%02d.%03dZ %s id=%x %s %s\n", i/3600%24, i/60%60, i%60, i%1000,
				[]string{"INFO", "WARN", "ERROR"}[r.IntN(3)], r.Uint64(), words[r.IntN(len(words))], words[r.IntN(len(words))])
			if r.IntN(20) == 0 {
				b.WriteString("\tat com.example.Handler.run(Handler.java:42)\n")
			}
		}
		return b.Bytes()
	}
	must(t, os.WriteFile(filepath.Join(dir, "app.log"), gen(lines), 0o644))
	for i, tool := range compressedTools {
		if _, err := exec.LookPath(strings.Fields(tool.compress)[0]); err != nil {
			t.Skipf("%s not installed", tool.compress)
		}
		data := gen(lines)
		if i == 1 {
			data = bytes.TrimSuffix(data, []byte("\n")) // no final newline
		}
		name := filepath.Join(dir, fmt.Sprintf("app.log.%d%s", i+1, tool.ext))
		out := compress(t, tool.compress, data)
		if i == 0 { // two gzip members, as `cat a.gz b.gz` makes
			out = append(out, compress(t, tool.compress, gen(lines/3))...)
		}
		must(t, os.WriteFile(name, out, 0o644))
	}
	return dir
}

func compress(t *testing.T, cmdline string, data []byte) []byte {
	t.Helper()
	f := strings.Fields(cmdline)
	cmd := exec.Command(f[0], f[1:]...)
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	must(t, err)
	return out
}

// toolGrep runs a file's grep (zgrep and the like, or grep) with -n and
// returns "path:line:text" lines.
func toolGrep(t *testing.T, path string, args []string) []string {
	t.Helper()
	tool := "grep"
	for _, c := range compressedTools {
		if strings.HasSuffix(path, c.ext) {
			tool = c.grep
		}
	}
	cmd := exec.Command(tool, append(append([]string{"-n"}, args...), path)...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 {
		return nil
	} else if err != nil {
		t.Fatalf("%s %q %s: %v", tool, args, path, err)
	}
	var got []string
	for _, l := range strings.SplitAfter(string(out), "\n") {
		if l = strings.TrimSuffix(l, "\n"); l != "" {
			got = append(got, filepath.ToSlash(path)+":"+l)
		}
	}
	return got
}

// TestCompressedLikeZgrep: compressed logs of every format answer exactly
// what zgrep, zstdgrep, bzgrep and xzgrep print, with decompressed line
// numbers, for literals, regexes and case folding, and a hit's context
// lines are the file's.
func TestCompressedLikeZgrep(t *testing.T) {
	dir := writeCompressedLogs(t, cases(20000, 3000))
	s := testIndex(t, 256<<10, dir)
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, c := range []struct {
		mode lang.Mode
		fold bool
		pat  string
	}{
		{lang.ModeLiteral, false, "user=mallory"},
		{lang.ModeLiteral, true, "connection RESET"},
		{lang.ModeLiteral, false, "Handler.java:42"},
		{lang.ModeRegex, false, "ERROR .* 503$"},
		{lang.ModeRegex, true, "zoë retry"},
		{lang.ModeLiteral, false, "id=1"},
	} {
		q, err := Compile([]string{c.pat}, c.mode, c.fold)
		must(t, err)
		got, st := search(t, s, q, Options{})
		if len(st.Warnings) > 0 {
			t.Fatalf("%q: warnings %v", c.pat, st.Warnings)
		}
		args := []string{"-F", c.pat} // bzgrep takes no -e
		if c.mode == lang.ModeRegex {
			args[0] = "-E"
		}
		if c.fold {
			args = append([]string{"-i"}, args...)
		}
		var want []string
		for _, f := range files {
			want = append(want, toolGrep(t, f, args)...)
		}
		var gotS []string
		for _, g := range got {
			gotS = append(gotS, fmt.Sprintf("%s:%d:%s", g.path, g.no, g.text))
		}
		if strings.Join(gotS, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%q: %d lines, the greps %d; first difference at %s", c.pat, len(gotS), len(want), firstDiff([]byte(strings.Join(gotS, "\n")), []byte(strings.Join(want, "\n"))))
		}
		// Context: lines around a few hits come from the decompressed file.
		for i, g := range got {
			if i%37 != 0 {
				continue
			}
			f := fileByPath(s, g.path)
			var ctx []string
			must(t, s.ReadLines(context.Background(), f, g.no-2, g.no+2, func(l Line) error {
				ctx = append(ctx, strconv.FormatInt(l.No, 10)+":"+string(l.Text))
				return nil
			}))
			wantCtx := toolGrep(t, g.path, []string{"-C", "2", "-F", g.text})
			for _, l := range ctx {
				found := false
				for _, w := range wantCtx {
					found = found || strings.HasSuffix(w, ":"+l) || strings.Contains(w, "-"+l[strings.IndexByte(l, ':')+1:])
				}
				if !found {
					t.Fatalf("%s:%d: context line %q not in the file's", g.path, g.no, l)
				}
			}
		}
	}
}

// TestCompressedDamaged: a truncated compressed file is indexed up to the
// damage, with its lines before it found (gzip and zstd decode as they go;
// a bzip2 or xz file of one block loses the block), never a crash.
func TestCompressedDamaged(t *testing.T) {
	dir := writeCompressedLogs(t, 3000)
	for _, c := range compressedTools {
		p := filepath.Join(dir, "app.log."+strconv.Itoa(1+indexOfExt(c.ext))+c.ext)
		b, err := os.ReadFile(p)
		must(t, err)
		must(t, os.WriteFile(p, b[:len(b)*2/3], 0o644))
		// Damaged long ago (one cut short just now is taken for one
		// still being written: TestCompressedBeingWritten).
		old := time.Now().Add(-time.Hour)
		must(t, os.Chtimes(p, old, old))
	}
	s := testIndex(t, 1<<20, dir)
	q, err := Compile([]string{"mallory"}, lang.ModeQuery, true)
	must(t, err)
	got, _ := search(t, s, q, Options{})
	per := map[string]int{}
	for _, g := range got {
		per[filepath.Base(g.path)]++
	}
	if n := len(s.Files()); n != len(compressedTools)+1 {
		t.Fatalf("%d files indexed, want the %d damaged ones and the live log", n, len(compressedTools))
	}
	for _, f := range s.Files() {
		rec := f.Record()
		streaming := rec.Compression == "gzip" || rec.Compression == "zstd"
		if rec.Compression != "" && (rec.Damage == "" || streaming && per[filepath.Base(f.Path)] == 0) {
			t.Errorf("%s: damage %q, %d hits before it", f.Path, rec.Damage, per[filepath.Base(f.Path)])
		}
	}
}

func indexOfExt(ext string) int {
	for i, c := range compressedTools {
		if c.ext == ext {
			return i
		}
	}
	return -1
}

// TestCompressedBeingWritten: a compressed file cut short and modified
// just now is being written (logrotate's gzip, from a file that still
// holds its lines): it is left out of the index, so that no line is found
// twice and it is not called damaged, and taken whole once complete.
func TestCompressedBeingWritten(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&text, "2026-11-28T10:%02d:%02dZ INFO request %d served by zqrot\n", i/60%60, i%60, i)
	}
	must(t, os.WriteFile(filepath.Join(dir, "app.log.2"), []byte(text.String()), 0o644))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(text.String()))
	zw.Close()
	p := filepath.Join(dir, "app.log.2.gz")
	must(t, os.WriteFile(p, gz.Bytes()[:gz.Len()/2], 0o644)) // gzip half way
	ix := filepath.Join(t.TempDir(), "ix")
	update := func() *Searcher {
		_, err := indexer.Update(context.Background(), indexer.Options{Dir: ix, Roots: []string{dir}, Logger: zerolog.Nop()})
		must(t, err)
		mi, err := mmapstore.Open(ix)
		must(t, err)
		s := NewSearcher(mi, []string{dir})
		t.Cleanup(func() { s.Close(); mi.Close() })
		return s
	}
	count := func(s *Searcher) int64 {
		q, err := Compile([]string{"zqrot"}, lang.ModeQuery, true)
		must(t, err)
		st, err := s.Search(context.Background(), q, Options{}, nil)
		must(t, err)
		return st.Total
	}
	s := update()
	if n := count(s); n != 3000 || len(s.Files()) != 1 {
		t.Fatalf("while gzip writes: %d hits in %d files, want 3000 in the uncompressed one", n, len(s.Files()))
	}
	// gzip finishes and removes its input.
	must(t, os.WriteFile(p, gz.Bytes(), 0o644))
	must(t, os.Remove(filepath.Join(dir, "app.log.2")))
	s = update()
	if n := count(s); n != 3000 || len(s.Files()) != 1 || s.Files()[0].Record().Damage != "" {
		t.Fatalf("once gzip is done: %d hits in %d files, want 3000 in the whole .gz", n, len(s.Files()))
	}
}

// TestCompressedRenamedByRotation: logrotate renames every compressed
// rotation on every cycle (app.log.2.gz to app.log.3.gz); until the next
// index run their lines are read under the new names, as a plain file's
// are, and a compressed file new at an indexed name is not read with the
// indexed file's restart points (it waits for that run).
func TestCompressedRenamedByRotation(t *testing.T) {
	dir := t.TempDir()
	gz := func(tag string) []byte {
		var text strings.Builder
		for i := range 500 {
			fmt.Fprintf(&text, "2026-11-28T10:%02d:%02dZ INFO request %d zqrot %s\n", i/60%60, i%60, i, tag)
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(text.String()))
		zw.Close()
		return b.Bytes()
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	must(t, os.WriteFile(p("app.log.2.gz"), gz("older"), 0o644))
	must(t, os.WriteFile(p("app.log.3.gz"), gz("oldest"), 0o644))
	ix := filepath.Join(t.TempDir(), "ix")
	_, err := indexer.Update(context.Background(), indexer.Options{Dir: ix, Roots: []string{dir}, Logger: zerolog.Nop()})
	must(t, err)
	// The next cycle: the oldest drops out, the others shift, and a newly
	// compressed rotation takes the freed name.
	must(t, os.Remove(p("app.log.3.gz")))
	must(t, os.Rename(p("app.log.2.gz"), p("app.log.3.gz")))
	must(t, os.WriteFile(p("app.log.2.gz"), gz("newest"), 0o644))
	mi, err := mmapstore.Open(ix)
	must(t, err)
	s := NewSearcher(mi, []string{dir})
	defer func() { s.Close(); mi.Close() }()
	q, err := Compile([]string{"zqrot"}, lang.ModeQuery, true)
	must(t, err)
	byPath := map[string]int{}
	st, err := s.Search(context.Background(), q, Options{Text: true}, func(h *Hit) error {
		if !strings.HasSuffix(string(h.Text), " older") {
			t.Fatalf("%s:%d: %q, want only the indexed lines of app.log.2.gz", h.File.Path, h.Line, h.Text)
		}
		byPath[filepath.Base(h.File.Path)]++
		return nil
	})
	must(t, err)
	if st.Total != 500 || byPath["app.log.3.gz"] != 500 {
		t.Errorf("%d hits %v, want the 500 of the renamed app.log.2.gz under app.log.3.gz", st.Total, byPath)
	}
	if !slices.ContainsFunc(st.Warnings, func(w string) bool {
		return strings.Contains(w, "app.log.2.gz") && strings.Contains(w, "next index run")
	}) {
		t.Errorf("warnings %q: nothing says app.log.2.gz's new content waits for the next index run", st.Warnings)
	}
}

// TestStreamedTruncated: read from the start (its restart points lost), a
// gzip file cut short since it was checked reads short, as a plain file
// does: no newlines made up for the bytes that are gone.
func TestStreamedTruncated(t *testing.T) {
	var text strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&text, "line %d of a log compressed whole\n", i)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(text.String()))
	must(t, zw.Close())
	cut := z.Bytes()[:z.Len()/4]
	for _, off := range []int64{0, int64(text.Len() / 2)} {
		r := &streamed{f: bytes.NewReader(cut), size: int64(len(cut)), kind: compressed.Gzip, logical: int64(text.Len())}
		p := make([]byte, 64)
		n, err := r.ReadAt(p, off)
		if err != io.EOF && err != nil || off > 0 && n != 0 || bytes.Contains(p[:n], []byte("\n\n")) {
			t.Errorf("at %d: %d bytes %q, %v; want what was there, then io.EOF", off, n, p[:n], err)
		}
	}
}

// TestCompressedSeekableCopy: a zstd file of one frame and an xz file of
// one block (what zstd and xz write) have no restart point but their
// start; the index keeps a seekable copy of each, through which their
// lines are read, answers stay what zstdgrep and xzgrep print, and a copy
// damaged or missing only makes reads decompress the file itself. Once a
// file leaves the index, its copy goes too.
func TestCompressedSeekableCopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	must(t, os.MkdirAll(dir, 0o755))
	var b bytes.Buffer
	r := rand.New(rand.NewPCG(8, 9))
	for i := 0; b.Len() < 5*compressed.DefaultInterval/2; i++ {
		fmt.Fprintf(&b, "2026-11-29T10:%02d:%02d.%03dZ INFO req=%x user=%s took %dms\n", i/60%60, i%60, i%1000, r.Uint64(),
			[]string{"alice", "bob", "mallory"}[r.IntN(3)], r.IntN(900))
	}
	for _, tool := range []struct{ name, cmd string }{{"app.log.1.zst", "zstd -q -c"}, {"app.log.2.xz", "xz -c -T1"}} {
		if _, err := exec.LookPath(strings.Fields(tool.cmd)[0]); err != nil {
			t.Skipf("%s not installed", tool.cmd)
		}
		must(t, os.WriteFile(filepath.Join(dir, tool.name), compress(t, tool.cmd, b.Bytes()), 0o644))
	}
	idx := t.TempDir()
	update := func() {
		t.Helper()
		if _, err := indexer.Update(context.Background(), indexer.Options{Dir: idx, Roots: []string{dir}, SegmentBytes: 1 << 20, Logger: zerolog.Nop()}); err != nil {
			t.Fatal(err)
		}
	}
	open := func() *Searcher {
		t.Helper()
		ix, err := mmapstore.Open(idx)
		must(t, err)
		s := NewSearcher(ix, nil)
		t.Cleanup(func() { s.Close(); ix.Close() })
		return s
	}
	shadows := func() []string {
		m, _ := filepath.Glob(filepath.Join(idx, "shadow-*"))
		return m
	}
	update()
	if got := shadows(); len(got) != 2 {
		t.Fatalf("seekable copies %q, want one for each file", got)
	}
	q, err := Compile([]string{"user=mallory took 4"}, lang.ModeLiteral, false)
	must(t, err)
	want := map[string][]string{}
	for _, f := range []string{"app.log.1.zst", "app.log.2.xz"} {
		want[f] = toolGrep(t, filepath.Join(dir, f), []string{"-F", "user=mallory took 4"})
	}
	check := func(s *Searcher, viaCopy bool, files ...string) {
		t.Helper()
		got, st := search(t, s, q, Options{})
		if len(st.Warnings) > 0 {
			t.Fatalf("warnings %v", st.Warnings)
		}
		var all []string
		for _, f := range files {
			all = append(all, want[f]...)
		}
		var gotS []string
		for _, g := range got {
			gotS = append(gotS, fmt.Sprintf("%s:%d:%s", g.path, g.no, g.text))
		}
		if len(all) < 50*len(files) || strings.Join(gotS, "\n") != strings.Join(all, "\n") {
			t.Fatalf("%d lines, the greps %d; first difference at %s", len(gotS), len(all), firstDiff([]byte(strings.Join(gotS, "\n")), []byte(strings.Join(all, "\n"))))
		}
		for _, f := range s.Files() {
			h, err := s.logs.Check(f.lf)
			must(t, err)
			src, err := s.source(f, h)
			must(t, err)
			if d, ok := src.(*decompressed); !ok || (d.fallback != nil) != viaCopy {
				t.Fatalf("%s: read through its copy %t, want %t", f.Path, ok && d.fallback != nil, viaCopy)
			}
			// The last line, as the file ends.
			last := b.Bytes()[bytes.LastIndexByte(b.Bytes()[:b.Len()-1], '\n')+1:]
			line := make([]byte, len(last))
			if _, err := src.ReadAt(line, int64(b.Len()-len(last))); err != nil || !bytes.Equal(line, last) {
				t.Fatalf("%s: last line %q, %v", f.Path, line, err)
			}
			// And bytes in the middle (the copy's damaged frame, below).
			mid := make([]byte, 300)
			if _, err := src.ReadAt(mid, int64(b.Len()/2)); err != nil || !bytes.Equal(mid, b.Bytes()[b.Len()/2:b.Len()/2+300]) {
				t.Fatalf("%s: middle bytes differ (%v)", f.Path, err)
			}
			h.Close()
		}
	}
	s0 := open()
	check(s0, true, "app.log.1.zst", "app.log.2.xz")
	// The index's size counts the copies.
	var onDisk int64
	for _, pat := range []string{"seg-*.ldx", "shadow-*.zst"} {
		m, _ := filepath.Glob(filepath.Join(idx, pat))
		for _, p := range m {
			fi, err := os.Stat(p)
			must(t, err)
			onDisk += fi.Size()
		}
	}
	if got := s0.ix.Stats().IndexBytes; got != onDisk {
		t.Fatalf("index size %d, want its segments and copies' %d", got, onDisk)
	}
	// A file gone: its copy is collected.
	must(t, os.Remove(filepath.Join(dir, "app.log.2.xz")))
	update()
	copies := shadows()
	if len(copies) != 1 {
		t.Fatalf("seekable copies %q after the xz file left, want the zstd file's", copies)
	}
	// A copy damaged in the middle: reads fall back to the file itself
	// (a frame is checked before its bytes are used).
	c, err := os.ReadFile(copies[0])
	must(t, err)
	for i := len(c) / 2; i < len(c)/2+64; i++ {
		c[i] ^= 0x55
	}
	must(t, os.WriteFile(copies[0], c, 0o644))
	check(open(), true, "app.log.1.zst")
	// A copy missing: the file itself from the start.
	must(t, os.Remove(copies[0]))
	check(open(), false, "app.log.1.zst")
}
