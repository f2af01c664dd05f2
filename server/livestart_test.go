package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestLiveIndexingStartsWithFirstSnapshot: the re-index loop starts
// (Serve) before any index is open, so before the watch exists; once the
// first snapshot starts the watch, an append is indexed within LiveDelay
// plus a run, with no periodic re-index to fall back on.
func TestLiveIndexingStartsWithFirstSnapshot(t *testing.T) {
	fx := newFixture(t)
	s, _ := serveLive(t, fx, 20*time.Millisecond)
	time.Sleep(20 * time.Millisecond) // the loop is waiting, without a watch
	_, err := s.Reload()
	must(t, err)
	gen, _ := s.Ready()
	f, err := os.OpenFile(filepath.Join(fx.logs, "app.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	must(t, err)
	_, err = f.WriteString("2026-11-30T12:00:00Z INFO appended after the first snapshot\n")
	f.Close()
	must(t, err)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if g, _ := s.Ready(); g != gen {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the append was not indexed in 10 s: live indexing did not start")
		}
	}
}

// TestCreatedFileIsSearched: a log created (or a rotation compressed into
// place) after the last live run is in the answer of a search made right
// after: the search waits for the run the creation starts, instead of
// answering without the file until the next run (LiveDelay and the run's
// time later). The delay here is long, so that an answer given without
// waiting could not have the file.
func TestCreatedFileIsSearched(t *testing.T) {
	fx := newFixture(t)
	s, base := serveLive(t, fx, 500*time.Millisecond)
	_, err := s.Reload()
	must(t, err)
	count := func(path string) int64 {
		t.Helper()
		resp, err := http.Get(base + path)
		must(t, err)
		defer resp.Body.Close()
		var v struct {
			Total int64 `json:"total"`
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %s", path, resp.Status)
		}
		must(t, json.NewDecoder(resp.Body).Decode(&v))
		return v.Total
	}
	for i, name := range []string{"fresh.log", "sub/fresher.log"} {
		word := fmt.Sprintf("zzcreated%d", i)
		p := filepath.Join(fx.logs, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte("2026-11-30T12:00:00Z INFO "+word+" written after the run\n"), 0o644))
		if n := count("/api/search?limit=10&q=" + word); n != 1 {
			t.Fatalf("%s created: search total %d, want 1", name, n)
		}
	}
	// copytruncate of a log just appended to: the appended line is in the
	// copy only, a file no run has walked yet.
	log := filepath.Join(fx.logs, "db", "postgres.log")
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString("2026-11-30T12:00:00.000 UTC [1] LOG:  zzcopied before the copy\n")
	must(t, errors.Join(err, f.Close()))
	body, err := os.ReadFile(log)
	must(t, err)
	must(t, os.WriteFile(log+".1", body, 0o644))
	must(t, os.Truncate(log, 0))
	if n := count("/api/search?limit=10&q=zzcopied"); n != 1 {
		t.Fatalf("copytruncate: search total %d, want 1", n)
	}
	// A histogram after another creation waits as well.
	must(t, os.WriteFile(filepath.Join(fx.logs, "third.log"), []byte("2026-11-30T12:00:00Z INFO zzcreated3\n"), 0o644))
	resp, err := http.Get(base + "/api/histogram?q=zzcreated3")
	must(t, err)
	var h struct {
		Buckets []struct {
			Count int64 `json:"count"`
		} `json:"buckets"`
	}
	must(t, json.NewDecoder(resp.Body).Decode(&h))
	resp.Body.Close()
	var sum int64
	for _, b := range h.Buckets {
		sum += b.Count
	}
	if sum != 1 {
		t.Fatalf("histogram of a created file's word: %d, want 1", sum)
	}
}

// serveLive serves fx's index over HTTP with live indexing (the fixture's
// re-index run LiveDelay after a change), no snapshot open yet; base is
// its URL.
func serveLive(t *testing.T, fx *fixture, delay time.Duration) (s *Server, base string) {
	t.Helper()
	s, err := New(Options{IndexDir: fx.index, Logger: zerolog.Nop(), Reindex: fx.reindexFunc(), LiveDelay: delay})
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go s.Serve(ln)
	t.Cleanup(func() { s.Close() })
	return s, "http://" + ln.Addr().String()
}
