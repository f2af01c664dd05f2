package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/rs/zerolog"
)

// TestShutdownCancelsMerge: a re-index run reporting merges due starts a
// background merge, and Shutdown cancels it and returns only once it ended
// (a merge removes its outputs when cancelled).
func TestShutdownCancelsMerge(t *testing.T) {
	fx := newFixture(t)
	started, ended := make(chan struct{}), make(chan error, 1)
	var once sync.Once
	s, _ := serving(t, Options{IndexDir: fx.index, Logger: zerolog.Nop(),
		Reindex: func(context.Context, *mmapstore.Index) (ReindexResult, error) {
			return ReindexResult{MergeDue: true}, nil
		},
		Merge: func(ctx context.Context) (ReindexResult, error) {
			once.Do(func() { close(started) })
			<-ctx.Done()
			ended <- ctx.Err()
			return ReindexResult{}, ctx.Err()
		}})
	s.TriggerReindex()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no merge started after a run reporting merges due")
	}
	must(t, s.Close())
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("merge ended with %v, want cancelled", err)
		}
	default:
		t.Fatal("Shutdown returned before the merge ended")
	}
}

// TestMergeFailedAfterPublishing: a background merge that published a set
// and then failed on the next is served at once (its inputs' mappings
// released), not only after the next re-index.
func TestMergeFailedAfterPublishing(t *testing.T) {
	fx := newFixture(t)
	s, base := serving(t, Options{IndexDir: fx.index, Logger: zerolog.Nop(),
		Reindex: func(context.Context, *mmapstore.Index) (ReindexResult, error) {
			return ReindexResult{MergeDue: true}, nil
		},
		Merge: func(ctx context.Context) (ReindexResult, error) {
			// What the merge published before failing (here: a run that
			// indexes one more file).
			if err := os.WriteFile(filepath.Join(fx.logs, "merged.log"), []byte("zqmergepub\n"), 0o644); err != nil {
				return ReindexResult{}, err
			}
			res, err := indexer.Update(ctx, indexer.Options{Dir: fx.index, Roots: []string{fx.logs}, Logger: zerolog.Nop()})
			if err != nil {
				return ReindexResult{}, err
			}
			return ReindexResult{Changed: res.Changed}, errors.New("the next set failed")
		}})
	defer s.Shutdown(context.Background())
	gen := s.cur.Load().ix.Generation()
	s.TriggerReindex()
	for deadline := time.Now().Add(10 * time.Second); s.cur.Load().ix.Generation() == gen; {
		if time.Now().After(deadline) {
			t.Fatal("the merge's published manifest is not served")
		}
		time.Sleep(5 * time.Millisecond)
	}
	resp, err := http.Get(base + "/api/search?q=zqmergepub")
	must(t, err)
	defer resp.Body.Close()
	var r struct{ Total int64 }
	must(t, json.NewDecoder(resp.Body).Decode(&r))
	if r.Total != 1 {
		t.Fatalf("total %d, want the published file's line", r.Total)
	}
}
