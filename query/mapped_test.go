package query

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/logdex/logdex/query/lang"
)

// mappedLog writes a log whose lines are mostly filler, with "needle" on
// every 7th and "pair words" on every 11th, and returns its directory.
func mappedLog(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		fmt.Fprintf(&b, "2026-11-30T10:%02d:%02dZ line %d filler text", i/60%60, i%60, i)
		if i%7 == 0 {
			b.WriteString(" needle")
		}
		if i%11 == 0 {
			b.WriteString(" pair words")
		}
		b.WriteString(" and some more filler to spread the lines over pages\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "app.log"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMappedReads: hits read from a mapping of the log are the hits read
// with pread, page by page, for an exact word, a verified phrase and a
// regex.
func TestMappedReads(t *testing.T) {
	defer func(m int64) { mapMin = m }(mapMin)
	mapMin = 0
	dir := mappedLog(t)
	plain := testIndex(t, 64<<10, dir)
	mapped := testIndex(t, 64<<10, dir)
	mapped.SetMappedReads(true)
	for _, c := range []struct {
		q    string
		mode lang.Mode
	}{{"needle", lang.ModeQuery}, {`"pair words"`, lang.ModeQuery}, {`line [0-9]*5 filler`, lang.ModeRegex}} {
		q, err := Compile([]string{c.q}, c.mode, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []Order{OrderPath, OrderNewest, OrderOldest} {
			for _, limit := range []int{0, 1, 100} {
				opt := Options{Limit: limit, CountAll: true, Times: true, Order: o}
				want, wst := search(t, plain, q, opt)
				got, gst := search(t, mapped, q, opt)
				if !reflect.DeepEqual(got, want) || gst.Total != wst.Total {
					t.Fatalf("%s %s limit %d: mapped reads gave %d hits (total %d), pread %d (total %d)", c.q, o, limit, len(got), gst.Total, len(want), wst.Total)
				}
				if len(got) == 0 {
					t.Fatalf("%s: no hits", c.q)
				}
			}
		}
	}
}

// TestMappedLineReaderTruncated: a page in a time order reads its lines
// after the search, from the log's mapping; a log truncated between the
// two faults there, and the read goes by pread instead, which reports the
// lines gone. Nothing panics.
func TestMappedLineReaderTruncated(t *testing.T) {
	defer func(m int64) { mapMin = m }(mapMin)
	mapMin = 0
	dir := mappedLog(t)
	s := testIndex(t, 1<<30, dir)
	s.SetMappedReads(true)
	f := s.files[0]
	r := newLineReader(s)
	defer r.close()
	buf := make([]byte, 40)
	got, err := r.read(f, 200_000, buf)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := r.handle(f); len(h.Mapped()) == 0 {
		t.Fatal("not mapped")
	}
	want, err := os.ReadFile(filepath.Join(dir, "app.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want[200_000:200_040]) {
		t.Fatalf("read %q, want %q", got, want[200_000:200_040])
	}
	if err := os.Truncate(filepath.Join(dir, "app.log"), 8192); err != nil {
		t.Fatal(err)
	}
	if _, err := r.read(f, 200_000, buf); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("read past the new end: %v", err)
	}
	if got, err := r.read(f, 100, buf); err != nil || !bytes.Equal(got, want[100:140]) {
		t.Fatalf("read before the new end: %q, %v", got, err)
	}
}

// TestMappedReadTruncated: a log truncated after the search checked it
// faults where its mapping lies past the new end; the task is read again
// with pread, which reports the truncation, and nothing panics.
func TestMappedReadTruncated(t *testing.T) {
	defer func(m int64) { mapMin = m }(mapMin)
	mapMin = 0
	dir := mappedLog(t)
	s := testIndex(t, 1<<30, dir)
	s.SetMappedReads(true)
	q, err := Compile([]string{"needle"}, lang.ModeQuery, false)
	if err != nil {
		t.Fatal(err)
	}
	st := &Stats{}
	plans, err := s.plan(context.Background(), q, nil, 1, st)
	if err != nil {
		t.Fatal(err)
	}
	f := s.files[0]
	h, err := s.logs.Stat(f.lf, true)
	if err != nil || h.Stale() != nil {
		t.Fatal(err, h.Stale())
	}
	defer h.Close()
	m := h.Mapped()
	if len(m) == 0 {
		t.Fatal("not mapped")
	}
	if err := os.Truncate(filepath.Join(dir, "app.log"), 8192); err != nil {
		t.Fatal(err)
	}
	sr := f.spans[0]
	tk := &task{taskBody: taskBody{kind: taskIDs, file: f, h: h, seg: s.segs[sr.seg], span: sr.span, plan: plans.plans[sr.seg]}}
	var ls lineState
	s.run(context.Background(), q, tk, true, false, 0, &ls)
	if tk.err != nil {
		t.Fatal(tk.err)
	}
	if !tk.shrunk {
		t.Fatal("truncation not reported")
	}
	if len(tk.hits) == 0 || len(tk.hits) > 8192/100 {
		t.Fatalf("%d hits from the 8 KiB left", len(tk.hits))
	}
	for _, hr := range tk.hits {
		if hr.off+hr.n > 8192 {
			t.Fatalf("hit at %d past the new end", hr.off)
		}
		if txt := string(tk.buf[hr.tpos : hr.tpos+int(hr.n)]); !strings.Contains(txt, "needle") {
			t.Fatalf("hit %q", txt)
		}
	}
	if s.segs[sr.seg].Damage() != nil {
		t.Fatal("the segment was taken for damaged")
	}
}

// TestScanTruncated: a log truncated after the search checked it, read by
// a scan (a query with nothing to narrow by), plain or gzip: the task
// comes short, says so (the answer warns, its total a lower bound), and
// fails nothing (a gzip file's cut stream is not taken for damage).
func TestScanTruncated(t *testing.T) {
	for _, gz := range []bool{false, true} {
		dir := mappedLog(t)
		name := filepath.Join(dir, "app.log")
		if gz {
			b, err := os.ReadFile(name)
			must(t, err)
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			zw.Write(b)
			must(t, zw.Close())
			must(t, os.Remove(name))
			name += ".gz"
			must(t, os.WriteFile(name, z.Bytes(), 0o644))
		}
		s := testIndex(t, 1<<30, dir)
		q, err := Compile([]string{"filler"}, lang.ModeLiteral, false) // on every line: scanned
		must(t, err)
		f := s.files[0]
		h, err := s.logs.Stat(f.lf, true)
		if err != nil || h.Stale() != nil {
			t.Fatal(err, h.Stale())
		}
		defer h.Close()
		fi, err := os.Stat(name)
		must(t, err)
		must(t, os.Truncate(name, fi.Size()/2))
		sp := s.segs[f.spans[0].seg].Spans()[f.spans[0].span]
		tk := &task{taskBody: taskBody{kind: taskScan, file: f, h: h, start: sp.StartOffset, end: sp.EndOffset, line0: sp.StartLineNo, final: true}}
		var ls lineState
		s.run(context.Background(), q, tk, false, true, 0, &ls)
		if tk.err != nil || !tk.shrunk || tk.count == 0 || tk.count >= 3000 {
			t.Errorf("gzip %v: err %v, shrunk %v, %d of 3000 lines counted", gz, tk.err, tk.shrunk, tk.count)
		}
	}
}
