package query

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query/lang"
	"github.com/rs/zerolog"
)

// seqWriter appends numbered lines ("seq N") to logs, so that a reader can
// tell a lost line from a duplicate.
type seqWriter struct {
	t    *testing.T
	root string
	next int
}

func (w *seqWriter) write(name string, n int, partial bool) {
	w.t.Helper()
	f, err := os.OpenFile(filepath.Join(w.root, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	must(w.t, err)
	defer f.Close()
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "2026-11-30T10:00:00Z INFO seq %d pad\n", w.next)
		w.next++
	}
	if partial {
		// The start of the next line: it waits for its newline.
		fmt.Fprintf(&b, "2026-11-30T10:00:00Z INFO seq %d", w.next)
	}
	_, err = f.WriteString(b.String())
	must(w.t, err)
}

// finish ends a partial line written before.
func (w *seqWriter) finish(name string) {
	w.t.Helper()
	f, err := os.OpenFile(filepath.Join(w.root, name), os.O_APPEND|os.O_WRONLY, 0o644)
	must(w.t, err)
	defer f.Close()
	_, err = f.WriteString(" pad\n")
	must(w.t, err)
	w.next++
}

// TestTailSequence: through rotations of every kind, the deltas of
// successive snapshots hold every line written to a live log exactly once
// (a partial last line once it ends), and SearchDelta resumes after any
// position without a gap or a duplicate.
func TestTailSequence(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	w := &seqWriter{t: t, root: root}
	q, err := CompileNode(&lang.All{}, lang.ModeQuery)
	must(t, err)
	seen := map[int]int{}
	base := -1 // lines before it were written before the first snapshot
	var prev *mmapstore.Index
	var prevS *Searcher
	var fl Follower
	var gen uint64
	var hist History
	late := map[int]bool{} // lines allowed to be missing yet (a copy indexed a run late)
	step := func(what string) {
		t.Helper()
		ix, s, delta := tailIndex(t, root, dir, prev, &hist)
		gen++
		// Read the delta in pieces: stop after a few hits, resume after
		// the last one delivered.
		var pos TailPos
		for {
			n, stop := 0, fmt.Errorf("stop")
			err := fl.Read(context.Background(), s, q, gen, delta, pos, func(h *Hit) error {
				if n == 3 {
					return stop
				}
				n++
				pos = TailPos{h.File.ID, h.Line}
				var seq int
				if _, err := fmt.Sscanf(string(h.Text), "2026-11-30T10:00:00Z INFO seq %d pad", &seq); err != nil {
					t.Fatalf("%s: %s:%d: %q", what, h.File.Path, h.Line, h.Text)
				}
				seen[seq]++
				return nil
			})
			if err == nil {
				break
			}
			if err != stop {
				t.Fatal(err)
			}
		}
		if prevS != nil {
			prevS.Close()
			prev.Close()
		}
		prev, prevS = ix, s
		for i := base; base >= 0 && i < w.next; i++ {
			if seen[i] != 1 && !(i == w.next-1 && seen[i] == 0) && !(late[i] && seen[i] == 0) {
				t.Fatalf("%s: line seq %d seen %d times", what, i, seen[i])
			}
		}
	}
	t.Cleanup(func() {
		if prevS != nil {
			prevS.Close()
			prev.Close()
		}
	})
	w.write("app.log", 10, false)
	w.write("other.log", 5, false)
	step("first index") // the first snapshot has no delta: its lines are the past
	base = w.next

	w.write("app.log", 7, true)
	step("append with a partial line")
	w.finish("app.log")
	w.write("app.log", 1, false)
	step("the partial line ended")

	// Rotation by rename, lines written to the old file after the last
	// index, then to the new one; a rotated file compressed.
	w.write("app.log", 4, false)
	must(t, os.Rename(filepath.Join(root, "app.log"), filepath.Join(root, "app.log.1")))
	w.write("app.log.1", 2, false) // still open by the writer
	w.write("app.log", 3, false)
	step("rename")

	// copytruncate: the copy is the past, the truncated file starts anew.
	w.write("other.log", 6, false)
	step("before copytruncate")
	w.write("other.log", 2, false) // in the copy only: the copy has them
	b, err := os.ReadFile(filepath.Join(root, "other.log"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(root, "other.log.1"), b, 0o644))
	must(t, os.Truncate(filepath.Join(root, "other.log"), 0))
	w.write("other.log", 4, false)
	step("copytruncate")

	// Delete and re-create; several rotations between two runs.
	must(t, os.Remove(filepath.Join(root, "app.log.1")))
	must(t, os.Rename(filepath.Join(root, "app.log"), filepath.Join(root, "app.log.1")))
	w.write("app.log", 2, false)
	must(t, os.Rename(filepath.Join(root, "app.log.1"), filepath.Join(root, "app.log.2")))
	must(t, os.Rename(filepath.Join(root, "app.log"), filepath.Join(root, "app.log.1")))
	w.write("app.log", 5, false)
	must(t, os.Remove(filepath.Join(root, "other.log")))
	w.write("other.log", 3, false)
	step("several rotations")

	// copytruncate whose copy a run lists only after finding the source
	// truncated (the copy was made between the walk's listing and the
	// read): the copy, indexed a run late, still continues its source.
	w.write("other.log", 3, false)
	step("before a late copy")
	first := w.next
	w.write("other.log", 2, false) // in the copy only
	b, err = os.ReadFile(filepath.Join(root, "other.log"))
	must(t, err)
	must(t, os.Truncate(filepath.Join(root, "other.log"), 0))
	w.write("other.log", 2, false)
	late[first], late[first+1] = true, true
	step("truncated, the copy not there yet")
	must(t, os.WriteFile(filepath.Join(root, "other.log.3"), b, 0o644))
	clear(late)
	step("the copy, a run late")

	// copytruncate's copy seen by a run while it is written (logrotate
	// copies in chunks): its lines that the source showed are not shown
	// again, whatever the copy held when each run saw it.
	slowCopy := func(name string, cuts ...int) {
		t.Helper()
		w.write("other.log", 2, false) // in the copy only, unless a run sees the source first
		b, err := os.ReadFile(filepath.Join(root, "other.log"))
		must(t, err)
		for _, c := range cuts {
			must(t, os.WriteFile(filepath.Join(root, name), b[:c], 0o644))
			step(fmt.Sprintf("%s holds %d of %d bytes", name, c, len(b)))
		}
		w.write("other.log", 2, false) // in the copy only, once it is done
		b, err = os.ReadFile(filepath.Join(root, "other.log"))
		must(t, err)
		must(t, os.WriteFile(filepath.Join(root, name), b, 0o644))
		must(t, os.Truncate(filepath.Join(root, "other.log"), 0))
		w.write("other.log", 2, false)
		step(name + " written, the source truncated")
	}
	slowCopy("other.log.4", 0) // empty when first indexed
	w.write("other.log", 40, false)
	step("a source longer than its fingerprint")
	slowCopy("other.log.5", 1100, 1500) // as long as the source's fingerprint
	w.write("other.log", 3, false)
	step("a short source")
	slowCopy("other.log.6", 100) // shorter than the source's fingerprint

	// A copy in progress that catches up with lines the source got after
	// the copy was first seen, the source truncated only after a run saw
	// both: those lines are shown once.
	w.write("other.log", 40, false)
	step("before a copy that catches up")
	b, err = os.ReadFile(filepath.Join(root, "other.log"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(root, "other.log.7"), b[:1100], 0o644))
	step("other.log.7 partly written")
	w.write("other.log", 5, false)
	b, err = os.ReadFile(filepath.Join(root, "other.log"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(root, "other.log.7"), b, 0o644))
	step("other.log.7 caught up, the source not truncated yet")
	must(t, os.Truncate(filepath.Join(root, "other.log"), 0))
	w.write("other.log", 2, false)
	step("the source of other.log.7 truncated")

	// A rotation compressed (logrotate's delaycompress): its lines were
	// shown when the live file had them.
	b, err = os.ReadFile(filepath.Join(root, "app.log.2"))
	must(t, err)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(b)
	must(t, err)
	must(t, zw.Close())
	must(t, os.WriteFile(filepath.Join(root, "app.log.3.gz"), gz.Bytes(), 0o644))
	must(t, os.Remove(filepath.Join(root, "app.log.2")))
	step("a rotation compressed")
	for i := base; i < w.next; i++ {
		if seen[i] != 1 {
			t.Fatalf("line seq %d seen %d times", i, seen[i])
		}
	}
}

// lateTail indexes a log tree generation by generation and lets a reader
// read the deltas later, each with the latest snapshot, as the server's
// tail does for a reader that lags.
type lateTail struct {
	t         *testing.T
	root, dir string
	w         *seqWriter
	q         *Query
	hist      History
	deltas    []Delta
	prev      *mmapstore.Index
	last      *Searcher
	fl        Follower
	seen      map[int]int
}

func newLateTail(t *testing.T) *lateTail {
	root := t.TempDir()
	q, err := CompileNode(&lang.All{}, lang.ModeQuery)
	must(t, err)
	return &lateTail{t: t, root: root, dir: t.TempDir(), w: &seqWriter{t: t, root: root}, q: q, seen: map[int]int{}}
}

func (lt *lateTail) index() {
	lt.t.Helper()
	ix, s, d := tailIndex(lt.t, lt.root, lt.dir, lt.prev, &lt.hist)
	lt.deltas = append(lt.deltas, d)
	lt.t.Cleanup(func() { s.Close(); ix.Close() })
	lt.prev, lt.last = ix, s
}

// read reads the deltas from generation from on (0-based) with the
// latest snapshot.
func (lt *lateTail) read(from int) {
	lt.t.Helper()
	for g := from; g < len(lt.deltas); g++ {
		err := lt.fl.Read(context.Background(), lt.last, lt.q, uint64(g+1), lt.deltas[g], TailPos{}, func(h *Hit) error {
			var seq int
			if _, err := fmt.Sscanf(string(h.Text), "2026-11-30T10:00:00Z INFO seq %d pad", &seq); err != nil {
				lt.t.Fatalf("%s:%d: %q", h.File.Path, h.Line, h.Text)
			}
			lt.seen[seq]++
			return nil
		})
		must(lt.t, err)
	}
}

// check fails unless every line from base on was read once.
func (lt *lateTail) check(base int) {
	lt.t.Helper()
	for i := base; i < lt.w.next; i++ {
		if lt.seen[i] != 1 {
			lt.t.Errorf("line seq %d seen %d times", i, lt.seen[i])
		}
	}
}

// TestTailLateReader: a reader that reads a generation only after later
// ones are indexed still gets every line once when a copytruncate copy was
// found while being written and its source was truncated before the reader
// got to the source's lines: they are read from the copy.
func TestTailLateReader(t *testing.T) {
	lt := newLateTail(t)
	lt.w.write("other.log", 40, false) // longer than a fingerprint
	lt.index()                         // the past
	base := lt.w.next
	lt.w.write("other.log", 5, false)
	b, err := os.ReadFile(filepath.Join(lt.root, "other.log"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(lt.root, "other.log.1"), b[:1100], 0o644))
	lt.index() // the copy found while written; the source's 5 new lines are its
	must(t, os.WriteFile(filepath.Join(lt.root, "other.log.1"), b, 0o644))
	must(t, os.Truncate(filepath.Join(lt.root, "other.log"), 0))
	lt.w.write("other.log", 3, false)
	lt.index()
	lt.read(1)
	lt.check(base)
}

// TestTailLateReaderGrowingCopy: a reader that reads several generations
// with a snapshot whose copy is still being written gets the lines the
// copy lacks from a later generation, each once.
func TestTailLateReaderGrowingCopy(t *testing.T) {
	lt := newLateTail(t)
	src := filepath.Join(lt.root, "other.log")
	// copyLines writes the first n lines of the source (as it is now, or
	// as it was before its truncation) to the copy.
	var b []byte
	copyLines := func(n int) {
		t.Helper()
		if now, err := os.ReadFile(src); err == nil && len(now) >= len(b) {
			b = now
		}
		end := 0
		for range n {
			end += bytes.IndexByte(b[end:], '\n') + 1
		}
		must(t, os.WriteFile(filepath.Join(lt.root, "other.log.1"), b[:end], 0o644))
	}
	lt.w.write("other.log", 100, false)
	lt.index() // the past
	base := lt.w.next
	lt.w.write("other.log", 10, false)
	copyLines(50)
	lt.index() // the copy found with 50 lines
	lt.w.write("other.log", 10, false)
	copyLines(80)
	lt.index()
	copyLines(105)
	must(t, os.Truncate(src, 0))
	lt.w.write("other.log", 2, false)
	lt.index() // the source truncated, the copy not done
	lt.read(1) // three generations with the last snapshot
	n := len(lt.deltas)
	copyLines(120)
	lt.index() // the copy done (120 lines: all the source had)
	lt.read(n)
	lt.check(base)
}

// tailIndex brings the index of root in dir up to date and opens it after
// prev (which it reuses): its searcher and its delta, added to hist.
func tailIndex(t *testing.T, root, dir string, prev *mmapstore.Index, hist *History) (*mmapstore.Index, *Searcher, Delta) {
	t.Helper()
	if _, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{root}, Logger: zerolog.Nop()}); err != nil {
		t.Fatal(err)
	}
	ix, err := mmapstore.OpenFrom(dir, prev)
	must(t, err)
	s := NewSearcher(ix, nil)
	d := s.Delta(prev, hist)
	hist.Add(d)
	return ix, s, d
}

// TestTailResumedReader: a reader that starts after the generation that
// found a copy in progress (a tail resumed from its last event id) still
// reads from that copy the source's lines it finds truncated.
func TestTailResumedReader(t *testing.T) {
	lt := newLateTail(t)
	src := filepath.Join(lt.root, "other.log")
	full := func(n int) []byte {
		t.Helper()
		b, err := os.ReadFile(src)
		must(t, err)
		end := 0
		for range n {
			end += bytes.IndexByte(b[end:], '\n') + 1
		}
		return b[:end]
	}
	lt.w.write("other.log", 100, false)
	lt.index() // the past
	lt.w.write("other.log", 10, false)
	must(t, os.WriteFile(filepath.Join(lt.root, "other.log.1"), full(50), 0o644))
	lt.index() // the copy found with 50 lines
	base := lt.w.next
	lt.w.write("other.log", 10, false)
	lt.index() // the reader resumes here
	b := full(120)
	must(t, os.WriteFile(filepath.Join(lt.root, "other.log.1"), b[:len(b)-100], 0o644))
	must(t, os.Truncate(src, 0))
	lt.w.write("other.log", 2, false)
	lt.index() // the source truncated, the copy not done
	lt.read(2)
	n := len(lt.deltas)
	must(t, os.WriteFile(filepath.Join(lt.root, "other.log.1"), b, 0o644))
	lt.index() // the copy done
	lt.read(n)
	lt.check(base)
}

// TestTailPendingOutlastsDeltas: lines waiting for a copy in progress wait
// for index generations, not for deltas read: a reader far behind reads
// many deltas with one snapshot, whose copy does not grow meanwhile.
func TestTailPendingOutlastsDeltas(t *testing.T) {
	lt := newLateTail(t)
	src := filepath.Join(lt.root, "other.log")
	lt.w.write("other.log", 100, false)
	lt.index() // the past
	base := lt.w.next
	lt.w.write("other.log", 10, false)
	b, err := os.ReadFile(src)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(lt.root, "other.log.1"), b[:len(b)/2], 0o644))
	lt.index() // the copy found half written; the source's 10 new lines are its
	must(t, os.Truncate(src, 0))
	lt.index() // the source truncated, the copy not done
	lt.read(1)
	// Many deltas of nothing, read with the same snapshot.
	for g := range uint64(3 * followKeep) {
		must(t, lt.fl.Read(context.Background(), lt.last, lt.q, 1000+g, Delta{}, TailPos{}, func(*Hit) error { return nil }))
	}
	n := len(lt.deltas)
	must(t, os.WriteFile(filepath.Join(lt.root, "other.log.1"), b, 0o644))
	lt.index() // the copy done
	lt.read(n)
	lt.check(base)
}

// TestDeltaCopyOfFileRoots: a log whose files are given one by one (serve
// app.log app.log.1, not their directory) is one log too: copytruncate's
// copy into app.log.1 continues app.log, and a copy into a .0 rotation
// (savelog's naming) likewise; neither shows the copied lines again.
func TestDeltaCopyOfFileRoots(t *testing.T) {
	for _, rotated := range []string{"app.log.1", "app.log.0"} {
		t.Run(rotated, func(t *testing.T) {
			root, dir := t.TempDir(), t.TempDir()
			live, old := filepath.Join(root, "app.log"), filepath.Join(root, rotated)
			must(t, os.WriteFile(live, []byte("a1 first line of the live file\na2\na3\na4\na5\n"), 0o644))
			must(t, os.WriteFile(old, []byte("o1 an older rotation\no2\n"), 0o644))
			index := func(prev *mmapstore.Index) (*mmapstore.Index, *Searcher) {
				if _, err := indexer.Update(context.Background(), indexer.Options{Dir: dir, Roots: []string{live, old}, Logger: zerolog.Nop()}); err != nil {
					t.Fatal(err)
				}
				ix, err := mmapstore.OpenFrom(dir, prev)
				must(t, err)
				return ix, NewSearcher(ix, nil)
			}
			prev, _ := index(nil)
			// copytruncate: the live file copied over the rotation (a new
			// file there), then truncated; a new line comes.
			b, err := os.ReadFile(live)
			must(t, err)
			must(t, os.Remove(old))
			must(t, os.WriteFile(old, b, 0o644))
			must(t, os.WriteFile(live, []byte("b1 after the rotation\n"), 0o644))
			_, s := index(prev)
			d := s.Delta(prev, nil)
			for id, r := range d.Lines {
				f, _ := s.FileByID(id)
				if filepath.Base(f.Path) == rotated {
					t.Errorf("%s: lines %d..%d shown again (a copy of app.log)", f.Path, r.From, r.To-1)
				}
			}
		})
	}
}
