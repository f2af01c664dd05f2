package query

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/logdex/logdex/query/lang"
	"github.com/logdex/logdex/query/live"
	"github.com/rs/zerolog"
)

// TestChangesBetweenSearches changes indexed files between two searches on
// the same searcher (which keeps directories and files open across
// searches): each answer must be grep's over the indexed paths as they are
// now, never bytes of a file that is no longer there.
func TestChangesBetweenSearches(t *testing.T) {
	needGrep(t)
	cases := []struct {
		name   string
		change func(t *testing.T, root string)
	}{
		{"unchanged", func(*testing.T, string) {}},
		{"appended", func(t *testing.T, root string) {
			appendFile(t, filepath.Join(root, "app/api.log"), "late needle appended\n")
		}},
		{"rotated by rename", func(t *testing.T, root string) {
			p := filepath.Join(root, "app/api.log")
			must(t, os.Rename(p, p+".1"))
			must(t, os.WriteFile(p, []byte("fresh file\nneedle in the new file\n"), 0o644))
		}},
		{"copytruncate, same size", func(t *testing.T, root string) {
			p := filepath.Join(root, "app/api.log")
			old, err := os.ReadFile(p)
			must(t, err)
			b := []byte("needle rewritten in place\n")
			b = append(b, make([]byte, len(old)-len(b))...)
			for i := len("needle rewritten in place\n"); i < len(b); i++ {
				b[i] = 'x'
			}
			b[len(b)-1] = '\n'
			must(t, os.WriteFile(p, b, 0o644)) // truncates, same inode
		}},
		{"truncated", func(t *testing.T, root string) {
			must(t, os.Truncate(filepath.Join(root, "app/api.log"), 10))
		}},
		{"deleted", func(t *testing.T, root string) {
			must(t, os.Remove(filepath.Join(root, "app/api.log")))
		}},
		{"directory replaced", func(t *testing.T, root string) {
			d := filepath.Join(root, "app")
			must(t, os.Rename(d, d+".old"))
			must(t, os.MkdirAll(d, 0o755))
			must(t, os.WriteFile(filepath.Join(d, "api.log"), []byte("needle after the directory moved\n"), 0o644))
		}},
		{"replaced by symlink", func(t *testing.T, root string) {
			p := filepath.Join(root, "app/api.log")
			must(t, os.Remove(p))
			must(t, os.Symlink("../top.log", p))
		}},
	}
	for _, watched := range []bool{false, true} {
		for _, c := range cases {
			name := c.name
			if watched {
				name += " (watched)"
			}
			t.Run(name, func(t *testing.T) { checkChange(t, c.change, watched) })
		}
	}
}

// checkChange indexes a small tree, searches it, applies change and
// searches again with the same searcher. Watched, the second answer may
// lag by the inotify delivery; it must become right within seconds.
func checkChange(t *testing.T, change func(t *testing.T, root string), watched bool) {
	{
		{
			root := t.TempDir()
			must(t, os.MkdirAll(filepath.Join(root, "app"), 0o755))
			files := map[string]string{
				// Long enough for the needles to be read by offset, not scanned.
				"app/api.log":    "start\n" + filler + "needle one\nmiddle\n" + filler + "needle two\nend\n",
				"app/worker.log": "needle in worker\nother\n",
				"top.log":        "top needle\n",
			}
			var paths []string
			for name, content := range files {
				must(t, os.WriteFile(filepath.Join(root, name), []byte(content), 0o644))
				paths = append(paths, filepath.Join(root, name))
			}
			s := testIndex(t, 1<<20, root)
			if watched {
				w, err := live.NewWatch([]string{root}, "")
				must(t, err)
				must(t, w.Err())
				t.Cleanup(func() { w.Close() })
				s.SetWatch(w)
			}
			q, err := Compile([]string{"needle"}, lang.ModeLiteral, false)
			must(t, err)
			first, _ := search(t, s, q, Options{})
			if err := diffLines(first, grepLines(t, []string{"-H", "-F", "needle"}, paths)); err != nil {
				t.Fatalf("before the change: %v", err)
			}
			if watched {
				// Unchanged files cost no lstat once seen.
				n := s.logs.Lookups()
				search(t, s, q, Options{})
				if d := s.logs.Lookups() - n; d != 0 {
					t.Fatalf("watched search of unchanged files did %d lstats", d)
				}
			}
			inodes := map[[2]uint64]bool{} // the indexed files
			for _, p := range paths {
				fi, err := os.Lstat(p)
				must(t, err)
				dev, ino := logfile.StatIDs(fi)
				inodes[[2]uint64{dev, ino}] = true
			}
			change(t, root)
			// The answer is grep -r's over the indexed paths that are
			// regular files now, and over the names in their directories
			// that indexed files were renamed to (rotations).
			var now []string
			seen := map[string]bool{}
			for _, p := range paths {
				if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() && !seen[p] {
					now, seen[p] = append(now, p), true
				}
				ents, _ := os.ReadDir(filepath.Dir(p))
				for _, e := range ents {
					q := filepath.Join(filepath.Dir(p), e.Name())
					if fi, err := os.Lstat(q); err == nil && fi.Mode().IsRegular() && !seen[q] {
						if dev, ino := logfile.StatIDs(fi); inodes[[2]uint64{dev, ino}] && !slices.Contains(paths, q) {
							now, seen[q] = append(now, q), true
						}
					}
				}
			}
			var want []gotLine
			if len(now) > 0 {
				want = grepLines(t, []string{"-H", "-F", "needle"}, now)
			}
			var got []gotLine
			for start := time.Now(); ; {
				got, _ = search(t, s, q, Options{})
				err := diffLines(got, want)
				if err == nil {
					break
				}
				if !watched || time.Since(start) > 5*time.Second {
					t.Fatalf("after the change: %v", err)
				}
				time.Sleep(time.Millisecond)
			}
			// Paged by cursors, one hit a page (every hit a cursor), the
			// answer is the same, each line once:
			// a rotated file shown under its new name keeps its place in
			// path order (that of its indexed name).
			for _, order := range []Order{OrderPath, OrderOldest, OrderNewest} {
				var paged []gotLine
				var after *Cursor
				for page := 0; ; page++ {
					n := 0
					_, err := s.Search(t.Context(), q, Options{Limit: 1, After: after, Text: true, Order: order}, func(h *Hit) error {
						paged = append(paged, gotLine{h.File.Path, h.Line, string(h.Text)})
						c := h.Cursor()
						after = &c
						n++
						return nil
					})
					must(t, err)
					if n < 1 || page > len(got) {
						break
					}
				}
				slices.SortFunc(paged, func(a, b gotLine) int { return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.no, b.no)) })
				want := slices.Clone(got)
				slices.SortFunc(want, func(a, b gotLine) int { return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.no, b.no)) })
				if err := diffLines(paged, want); err != nil {
					t.Fatalf("paged one hit at a time in order %v after the change: %v", order, err)
				}
			}
			// A file deleted or replaced is not kept open (its disk space
			// must be freed).
			for _, p := range paths {
				fi, err := os.Lstat(p)
				f := fileByPath(s, p)
				if err == nil && fi.Mode().IsRegular() && sameInode(fi, f) {
					continue
				}
				if rec := f.Record(); holdsOpen(t, rec.Dev, rec.Ino) {
					t.Fatalf("%s: no longer the indexed file, still kept open", p)
				}
			}
			// The lines around a hit come from the file as it is now too.
			type hitFile struct {
				f    *File
				no   int64
				text string
			}
			var hits []hitFile
			_, err = s.Search(t.Context(), q, Options{Text: true}, func(h *Hit) error {
				hits = append(hits, hitFile{h.File, h.Line, string(h.Text)})
				return nil
			})
			must(t, err)
			for _, h := range hits {
				var text string
				s.ReadLines(t.Context(), h.f, h.no, h.no, func(l Line) error { text = string(l.Text); return nil })
				if text != h.text {
					t.Fatalf("ReadLines %s:%d = %q, hit says %q", h.f.Path, h.no, text, h.text)
				}
			}
		}
	}
}

var filler = strings.Repeat("filler line of the api log\n", 100)

func fileByPath(s *Searcher, p string) *File {
	for _, f := range s.Files() {
		if f.Path == p {
			return f
		}
	}
	return nil
}

func appendFile(t *testing.T, p, s string) {
	f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(s)
	must(t, err)
	must(t, f.Close())
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// holdsOpen reports whether this process has a descriptor open on the
// file with device dev and inode ino (deleted or not).
func holdsOpen(t *testing.T, dev, ino uint64) bool {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	for _, e := range ents {
		fi, err := os.Stat(filepath.Join("/proc/self/fd", e.Name()))
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(st.Dev) == dev && st.Ino == ino {
			return true
		}
	}
	return false
}

func sameInode(fi os.FileInfo, f *File) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && uint64(st.Dev) == f.Record().Dev && st.Ino == f.Record().Ino
}

// TestSearchesWhileFilesChange searches from several goroutines while
// indexed files are appended to, rotated, truncated and rewritten: no
// search may fail (a closed shared file would show here), and no hit may
// carry bytes that are in no file (a stale read buffer's zeros). A line
// rewritten between a file's check and its read is a race any reader
// runs, so hit texts are not held to the needle.
func TestSearchesWhileFilesChange(t *testing.T) {
	root := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(root, "app"), 0o755))
	names := []string{"app/a.log", "app/b.log", "c.log"}
	for _, n := range names {
		must(t, os.WriteFile(filepath.Join(root, n), []byte(filler+"needle at the start\n"+filler), 0o644))
	}
	s := testIndex(t, 1<<20, root)
	w, err := live.NewWatch([]string{root}, "")
	must(t, err)
	defer w.Close()
	s.SetWatch(w)
	piped := NewSearcher(s.ix, nil) // the same index through the worker pipeline
	piped.noInline = true
	piped.SetWatch(w)
	defer piped.Close()
	q, err := Compile([]string{"needle"}, lang.ModeQuery, true)
	must(t, err)

	stop := make(chan struct{})
	errs := make(chan error, 8)
	var searches atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half stop at their first hit (the early-stop paths), half
			// through the worker pipeline.
			opt := Options{Text: true, Limit: 50, CountAll: true}
			if g%2 == 1 {
				opt = Options{Text: true, Limit: 1}
			}
			ss := s
			if g >= 2 {
				ss = piped
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := ss.Search(t.Context(), q, opt, func(h *Hit) error {
					if bytes.IndexByte(h.Text, 0) >= 0 {
						return fmt.Errorf("%s:%d: hit text from no file: %q", h.File.Path, h.Line, h.Text)
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
				searches.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(time.Second / raceScale)
	for i := 0; time.Now().Before(deadline); i++ {
		p := filepath.Join(root, names[i%len(names)])
		switch i % 4 {
		case 0:
			appendFile(t, p, "Needle appended\n"+filler)
		case 1:
			must(t, os.Rename(p, p+".1"))
			must(t, os.WriteFile(p, []byte("needle in a new file\n"+filler), 0o644))
		case 2:
			must(t, os.Truncate(p, int64(len(filler)/2)))
		case 3:
			must(t, os.WriteFile(p, []byte(filler+"rewritten needle\n"), 0o644))
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if searches.Load() == 0 {
		t.Fatal("no search completed")
	}
	t.Logf("%d searches while files changed", searches.Load())
}

// TestPagingAcrossIndexedRotation: logrotate runs between two pages and
// the rotation is indexed before the next (the server's live indexing
// does so within a second): the cursor's file now has another path, and
// the next page goes on after the cursor's line in it, wherever it is, in
// every order; no hit is shown twice. The new file at the cursor's path is
// another, shown whole where the order has it. With copytruncate the
// cursor's file (its inode) is emptied and written again: the next page
// goes on in the copy, which starts as the cursor's file did.
func TestPagingAcrossIndexedRotation(t *testing.T) {
	for _, style := range []string{"rename", "copytruncate", "copytruncate of a grown log", "copytruncate not indexed yet"} {
		t.Run(style, func(t *testing.T) { pageAcrossRotation(t, style) })
	}
}

func pageAcrossRotation(t *testing.T, style string) {
	for _, order := range []Order{OrderPath, OrderOldest, OrderNewest} {
		root := t.TempDir()
		write := func(name, tag string, minute, n int) {
			var b strings.Builder
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&b, "2026-12-01T17:%02d:%02dZ INFO %s %d figword\n", minute, i, tag, i)
			}
			must(t, os.WriteFile(filepath.Join(root, name), []byte(b.String()), 0o644))
		}
		write("rot.log.1", "old", 0, 20)
		write("rot.log", "cur", 1, 20)
		ix := filepath.Join(t.TempDir(), "ix")
		open := func() *Searcher {
			_, err := indexer.Update(t.Context(), indexer.Options{Dir: ix, Roots: []string{root}, Logger: zerolog.Nop()})
			must(t, err)
			mi, err := mmapstore.Open(ix)
			must(t, err)
			s := NewSearcher(mi, []string{root})
			t.Cleanup(func() { s.Close(); mi.Close() })
			return s
		}
		q, err := Compile([]string{"figword"}, lang.ModeQuery, false)
		must(t, err)
		seen := map[string]int{}
		var token string
		page := func(s *Searcher, limit int) int {
			var after *Cursor
			if token != "" {
				after, err = DecodeCursor(token) // as the API hands it back
				must(t, err)
			}
			n := 0
			_, err := s.Search(t.Context(), q, Options{Limit: limit, After: after, Text: true, Order: order}, func(h *Hit) error {
				seen[strings.Fields(string(h.Text))[2]+" "+strings.Fields(string(h.Text))[3]]++
				token = h.Cursor().Encode()
				n++
				return nil
			})
			must(t, err)
			return n
		}
		s := open()
		page(s, 10)
		want := 41 // every line once
		if style == "copytruncate of a grown log" {
			// Past the 1 KiB its start is fingerprinted by when the cursor
			// was made, and indexed so: the copy's fingerprint is longer.
			f, err := os.OpenFile(filepath.Join(root, "rot.log"), os.O_APPEND|os.O_WRONLY, 0)
			must(t, err)
			for i := 21; i <= 50; i++ {
				fmt.Fprintf(f, "2026-12-01T17:01:%02dZ INFO cur %d figword\n", i, i)
			}
			must(t, f.Close())
			s, want = open(), 71
		}
		must(t, os.Rename(filepath.Join(root, "rot.log.1"), filepath.Join(root, "rot.log.2")))
		if style == "rename" {
			must(t, os.Rename(filepath.Join(root, "rot.log"), filepath.Join(root, "rot.log.1")))
		} else { // a copy under the rotated name; the log emptied in place
			b, err := os.ReadFile(filepath.Join(root, "rot.log"))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(root, "rot.log.1"), b, 0o644))
		}
		write("rot.log", "new", 2, 1)
		if style != "copytruncate not indexed yet" {
			s = open()
		}
		for page(s, 7) > 0 {
		}
		switch {
		case style == "copytruncate not indexed yet":
			// Until the next index run the copy is the new content of an
			// indexed path (rot.log.1's), shown whole; the log's inode
			// holds new lines, none shown before: they are shown (the
			// cursor's line number is not theirs).
			if n := seen["new 1"]; n != 1 && order != OrderNewest {
				t.Errorf("order %v: the log's new line shown %d times, want once", order, n)
			}
			continue
		case order == OrderNewest && style == "copytruncate of a grown log":
			want = 40 // the lines appended after the first page are newer than it
		case order == OrderNewest:
			want-- // but the new one, newer than the first page
		}
		for line, n := range seen {
			if n > 1 {
				t.Errorf("order %v: %q shown %d times", order, line, n)
			}
		}
		if len(seen) != want {
			t.Errorf("order %v: %d lines shown, want %d: %v", order, len(seen), want, seen)
		}
	}
}
