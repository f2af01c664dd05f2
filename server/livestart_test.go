package server

import (
	"net"
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
	s, err := New(Options{IndexDir: fx.index, Logger: zerolog.Nop(), Reindex: fx.reindexFunc(), LiveDelay: 20 * time.Millisecond})
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	go s.Serve(ln)
	defer s.Close()
	time.Sleep(20 * time.Millisecond) // the loop is waiting, without a watch
	_, err = s.Reload()
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
