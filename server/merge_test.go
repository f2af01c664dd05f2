package server

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

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
		Reindex: func(context.Context) (ReindexResult, error) { return ReindexResult{MergeDue: true}, nil },
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
