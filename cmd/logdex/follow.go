package main

import (
	"context"
	"fmt"
	"time"

	"github.com/logdex/logdex/indexer"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/live"
)

// followPoll is how often follow looks for changes the watch cannot
// report (an index another process updates, a network file system).
const followPoll = time.Second

// followSettle lets a burst of writes end before indexing it.
const followSettle = 100 * time.Millisecond

// follow prints, as they are indexed, the matching lines added after it
// starts (tail -f | grep): it indexes the PATHs when they change (unless
// --no-update: then it follows an index another process, such as
// logdex serve, keeps up to date) and prints each new snapshot's matching
// new lines (query.Searcher.Delta), until interrupted.
func (e *env) follow(ctx context.Context, oi *openedIndex, q *query.Query, pr *printer, noUpdate bool) int {
	var changes <-chan struct{}
	if !noUpdate {
		var roots []string
		for _, r := range oi.ix.Roots() {
			roots = append(roots, r.Abs)
		}
		if w, err := live.NewWatch(roots, oi.dir); err == nil {
			defer w.Close()
			changes = w.Changes()
		}
	}
	var fl query.Follower
	var hist query.History // what earlier deltas leave for the next (Delta)
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return 0
		case <-tick.C:
		case <-changes:
			select {
			case <-time.After(followSettle):
			case <-ctx.Done():
				return 0
			}
		}
		if !noUpdate {
			if _, err := e.updateIndexLogged(ctx, indexer.Options{Dir: oi.dir, Roots: oi.build}, false, grepLogger); err != nil {
				if ctx.Err() != nil {
					return 0
				}
				fmt.Fprintln(e.stderr, "logdex: indexing:", err)
				continue
			}
		}
		if m, err := mmapstore.ReadManifest(oi.dir); err == nil && m.Generation == oi.ix.Generation() {
			continue
		}
		ix, err := mmapstore.OpenFrom(oi.dir, oi.ix)
		if err != nil {
			fmt.Fprintln(e.stderr, "logdex:", err)
			continue
		}
		next := &openedIndex{s: query.NewScopedSearcher(ix, oi.scopes), ix: ix, dir: oi.dir, build: oi.build, scopes: oi.scopes, withPath: oi.withPath}
		delta := next.s.Delta(oi.ix, &hist)
		hist.Add(delta)
		oi.close()
		*oi = *next
		pr.s = oi.s
		if err := fl.Read(ctx, oi.s, q, oi.ix.Generation(), delta, query.TailPos{}, pr.print); err != nil {
			if ctx.Err() != nil {
				return 0
			}
			fmt.Fprintln(e.stderr, "logdex:", err)
			return 2
		}
		if err := pr.w.Flush(); err != nil {
			return 2 // stdout closed (| head)
		}
	}
}
