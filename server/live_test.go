package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// liveWriter appends numbered lines ("zqlive wW sN pad") to one log and
// rotates it its way; done counts the lines fully written.
type liveWriter struct {
	w      int
	path   string
	rotate string // "", "rename", "copytruncate"
	split  bool   // write each line in two writes (a partial line between)
	done   atomic.Int64
	rot    int
}

func (lw *liveWriter) line(n int64) string {
	return fmt.Sprintf("2026-11-30T12:00:00Z INFO zqlive w%d s%d pad\n", lw.w, n)
}

func (lw *liveWriter) run(t *testing.T, stop <-chan struct{}) {
	f, err := os.OpenFile(lw.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Error(err)
		return
	}
	defer func() { f.Close() }()
	for n := int64(0); ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		l := lw.line(n)
		if lw.split {
			f.WriteString(l[:20])
			time.Sleep(time.Millisecond)
			f.WriteString(l[20:])
		} else {
			f.WriteString(l)
		}
		lw.done.Store(n + 1)
		if n%5 == 4 {
			time.Sleep(5 * time.Millisecond)
		}
		if lw.rotate != "" && n%100 == 99 {
			f = lw.rotateNow(t, f)
		}
	}
}

// rotateNow rotates the log as logrotate would: the numbered files shift
// up, then the log becomes .1 (rename: the writer reopens the name) or is
// copied to .1 and truncated in place (copytruncate; the writer keeps
// its descriptor, appending at the new end).
func (lw *liveWriter) rotateNow(t *testing.T, f *os.File) *os.File {
	lw.rot++
	for i := lw.rot - 1; i >= 1; i-- {
		os.Rename(fmt.Sprintf("%s.%d", lw.path, i), fmt.Sprintf("%s.%d", lw.path, i+1))
	}
	switch lw.rotate {
	case "rename":
		if err := os.Rename(lw.path, lw.path+".1"); err != nil {
			t.Error(err)
		}
		f.Close()
		nf, err := os.OpenFile(lw.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Error(err)
		}
		return nf
	default: // copytruncate
		b, err := os.ReadFile(lw.path)
		if err == nil {
			err = os.WriteFile(lw.path+".1", b, 0o644)
		}
		if err == nil {
			err = f.Truncate(0)
		}
		if err != nil {
			t.Error(err)
		}
		return f
	}
}

type seqKey struct{ w, s int64 }

// copyInProgress tells whether a search's warnings say copytruncate's
// copy was read as it is now, not yet indexed: between the copy and the
// truncation its lines are in both files, and a search then may return
// them twice, as grep -r would (README, Live logs).
func copyInProgress(warnings []string) bool {
	return slices.ContainsFunc(warnings, func(w string) bool {
		return strings.Contains(w, "copy.log.1: replaced since indexing")
	})
}

func parseSeq(t *testing.T, text string) seqKey {
	var k seqKey
	if _, err := fmt.Sscanf(text, "2026-11-30T12:00:00Z INFO zqlive w%d s%d pad", &k.w, &k.s); err != nil {
		t.Errorf("not a whole line: %q", text)
	}
	return k
}

// TestLiveWritersReaders: while writers append (one splitting its lines,
// two rotating by rename and by copytruncate) and the server indexes
// live, searches never see a line twice nor miss a line of an indexed
// append-only log completed before they began, and a live tail receives
// every line once. Live runs leave merging to background merges (of small
// segments, so that they happen often), which a tail must not mistake for
// new lines. After the writers stop, one search finds every line once.
func TestLiveWritersReaders(t *testing.T) {
	fx := newFixture(t)
	var merged atomic.Int64
	reindex, merge := fx.liveFuncs(16<<10, &merged)
	s, url := serving(t, Options{IndexDir: fx.index, Display: []string{"logs"}, Logger: zerolog.Nop(),
		Reindex: reindex, Merge: merge, LiveDelay: 20 * time.Millisecond, ReindexEvery: 500 * time.Millisecond})
	defer s.Close()
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()

	tc := openTailAt(t, client, url, "q=zqlive", "")
	defer tc.cancel()
	writers := []*liveWriter{
		{w: 0, path: filepath.Join(fx.logs, "plain0.log")},
		{w: 1, path: filepath.Join(fx.logs, "split.log"), split: true},
		{w: 2, path: filepath.Join(fx.logs, "rename.log"), rotate: "rename"},
		{w: 3, path: filepath.Join(fx.logs, "copy.log"), rotate: "copytruncate"},
	}
	// The logs exist before the index is opened: a file created since is
	// found by the next live run, not by a search (the index lists files).
	for _, lw := range writers {
		must(t, os.WriteFile(lw.path, nil, 0o644))
	}
	fx.reindex(t)
	_, err := s.Reload()
	must(t, err)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, lw := range writers {
		wg.Add(1)
		go func() { defer wg.Done(); lw.run(t, stop) }()
	}
	var stopOnce sync.Once
	stopWriters := func() { stopOnce.Do(func() { close(stop); wg.Wait() }) }
	defer stopWriters() // a failed check stops them before the logs go

	var lastWarn []string
	search := func() []seqKey {
		resp, err := client.Get(url + "/api/search?q=zqlive&limit=10000")
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var sr searchResp
		if err := json.Unmarshal(b, &sr); err != nil {
			t.Fatalf("%d %.200s: %v", resp.StatusCode, b, err)
		}
		if sr.NextCursor != nil {
			t.Fatal("more than 10000 hits: make the test smaller")
		}
		var ks []seqKey
		lastWarn = append(sr.Warnings, "cache: "+resp.Header.Get("X-Logdex-Cache"), fmt.Sprintf("stats %+v total %d", sr.Stats, sr.Total))
		where := map[seqKey]string{}
		for _, h := range sr.Hits {
			k := parseSeq(t, h.Text)
			if where[k] != "" {
				t.Logf("%v at %s and %s:%d; warnings %q", k, where[k], h.Path, h.Line, sr.Warnings)
			}
			where[k] = fmt.Sprintf("%s:%d", h.Path, h.Line)
			ks = append(ks, k)
		}
		return ks
	}
	var searches int
	// 2 s, and longer (up to 15 s) until a background merge published:
	// rotations retire small segments, so slow (-race, loaded) runs may
	// take a while to have enough for a merge.
	deadline, longest := time.Now().Add(2*time.Second), time.Now().Add(15*time.Second)
	for time.Now().Before(deadline) || merged.Load() == 0 && time.Now().Before(longest) {
		before := []int64{writers[0].done.Load(), writers[1].done.Load()}
		seen := map[seqKey]bool{}
		for _, k := range search() {
			if seen[k] && !(k.w == 3 && copyInProgress(lastWarn)) {
				t.Fatalf("search %d: w%d s%d twice", searches, k.w, k.s)
			}
			seen[k] = true
		}
		for w, n := range before {
			for s := range n {
				if !seen[seqKey{int64(w), s}] {
					first := lastWarn
					again := len(search())
					t.Fatalf("search %d: w%d s%d (written before it began) missing; %d hits, warnings %q; again: %d hits %q", searches, w, s, len(seen), first, again, lastWarn)
				}
			}
		}
		searches++
	}
	stopWriters()
	// A run that starts now indexes everything written (the lock
	// serializes it with a live run in progress).
	fx.reindex(t)
	_, err = s.Reload()
	must(t, err)

	want := 0
	for _, lw := range writers {
		want += int(lw.done.Load())
	}
	check := func(what string, ks []seqKey) {
		t.Helper()
		seen := map[seqKey]bool{}
		for _, k := range ks {
			if seen[k] {
				t.Fatalf("%s: w%d s%d twice", what, k.w, k.s)
			}
			seen[k] = true
		}
		for _, lw := range writers {
			for s := range lw.done.Load() {
				if !seen[seqKey{int64(lw.w), s}] {
					t.Fatalf("%s: w%d s%d missing", what, lw.w, s)
				}
			}
		}
	}
	check("final search", search())
	var tailed []seqKey
	tailedAt := map[seqKey]string{}
	timeout := time.After(20 * time.Second)
	for len(tailed) < want {
		select {
		case ev := <-tc.events:
			if ev.name != "hit" {
				continue
			}
			var h tailHit
			must(t, json.Unmarshal([]byte(ev.data), &h))
			if !strings.HasSuffix(h.Text, " pad") {
				t.Fatalf("tail sent a partial line %q", h.Text)
			}
			k := parseSeq(t, h.Text)
			if tailedAt[k] != "" {
				t.Errorf("tail: %v at %s and %s:%d (%s)", k, tailedAt[k], h.Path, h.Line, h.ID)
			}
			tailedAt[k] = fmt.Sprintf("%s:%d (%s)", h.Path, h.Line, h.ID)
			tailed = append(tailed, k)
		case <-timeout:
			for _, lw := range writers {
				for s := range lw.done.Load() {
					if k := (seqKey{int64(lw.w), s}); tailedAt[k] == "" {
						t.Logf("tail: %v missing; %v at %s, %v at %s", k, s-1, tailedAt[seqKey{k.w, s - 1}], s+1, tailedAt[seqKey{k.w, s + 1}])
						break
					}
				}
			}
			check("tail", tailed)
			t.Fatalf("tail: %d lines of %d", len(tailed), want)
		}
	}
	check("tail", tailed)
	if merged.Load() == 0 {
		t.Error("no background merge happened")
	}
	t.Logf("%d lines, %d searches, %d rotations, %d segments merged", want, searches, writers[2].rot+writers[3].rot, merged.Load())
}
