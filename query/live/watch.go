package live

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Watch follows changes beneath the index's roots with inotify so that a
// long-running searcher can trust what it saw of a file earlier: without
// it every search stats every indexed file (one syscall each, the largest
// cost of a selective search over many files). A search started after a
// change has been delivered sees it; inotify delivers within microseconds
// to milliseconds, which is the window a concurrent writer races anyway.
//
// It never makes an answer wrong, only slower: when watching fails (the
// inotify watch limit, a root moved away) it vouches for nothing and
// searchers stat every file again; after a queue overflow it vouches for
// nothing seen before it.
type Watch struct {
	w *fsnotify.Watcher

	mu      sync.RWMutex
	seq     uint64            // bumped per change
	changed map[string]uint64 // path -> seq of its last change
	// listings: directory -> seq of the last change of its entries
	listings map[string]uint64
	listed   uint64          // seq of the last change of any directory's entries
	reset    uint64          // nothing before this is vouched for
	broken   error           // set when watching stopped working
	roots    map[string]bool // the directories watched at the top
	done     chan struct{}
	// changes is signalled (without blocking: one pending signal stands
	// for any number of changes) whenever something beneath the roots
	// changes, for live indexing.
	changes chan struct{}
	ignore  string // a directory beneath the roots not to watch (the index's)

	// The sync barrier (Sync): a file of its own, written once per round,
	// whose event tells that every event queued before it was noted.
	barrierDir  string
	barrier     *os.File
	barrierSeen chan struct{}
	syncMu      sync.Mutex
	syncWaiting []chan bool   // Sync requests the next round answers
	syncClosed  bool          // no more rounds: requests are answered false at once
	syncKick    chan struct{} // a request is waiting (one signal stands for all)
}

// syncTimeout is how long Sync waits for its barrier event. Slower than
// that, inotify is not worth trusting: the watch breaks (every search
// then stats every file).
const syncTimeout = time.Second

// maxChanged bounds the change log; past it the log is dropped and all
// cached state with it.
const maxChanged = 1 << 16

// NewWatch starts watching the directories beneath roots (a file root's
// directory for a file). A root that cannot be watched leaves the Watch
// broken, not failed: searches then check every file as they would
// without it.
//
// ignore, when not empty, is a directory not to follow (the index's own, if
// it lies beneath a root: its updates are no log changes).
func NewWatch(roots []string, ignore string) (*Watch, error) {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	w := &Watch{w: fw, changed: map[string]uint64{}, listings: map[string]uint64{}, roots: map[string]bool{}, done: make(chan struct{}), changes: make(chan struct{}, 1)}
	if ignore != "" {
		if real, err := filepath.EvalSymlinks(ignore); err == nil {
			w.ignore = real
		}
	}
	w.barrierSeen, w.syncKick = make(chan struct{}, 1), make(chan struct{}, 1)
	if w.barrierDir, err = os.MkdirTemp("", "logdex-watch-"); err == nil {
		w.barrier, err = os.Create(filepath.Join(w.barrierDir, "barrier"))
	}
	if err == nil {
		err = fw.Add(w.barrierDir)
	}
	if err != nil {
		w.fail(fmt.Errorf("watch sync barrier: %w", err))
	}
	for _, r := range roots {
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			w.fail(err)
			continue
		}
		if fi, err := os.Stat(real); err == nil && !fi.IsDir() {
			real = filepath.Dir(real)
		}
		w.roots[real] = true
		w.addTree(real)
	}
	go w.loop()
	go w.syncLoop()
	return w, nil
}

// Close stops watching; from then on it vouches for nothing.
func (w *Watch) Close() error {
	w.fail(errors.New("watch closed"))
	err := w.w.Close()
	<-w.done
	if w.barrier != nil {
		w.barrier.Close()
	}
	if w.barrierDir != "" {
		os.RemoveAll(w.barrierDir)
	}
	return err
}

// Sync returns once every change completed before it was called has been
// noted, so that a search started after it misses no line written before
// it began (inotify queues an event when the write happens, but the
// events are read asynchronously). Calls at once share one round: one
// write of the barrier file and its event, tens of microseconds idle,
// milliseconds when the CPUs are busy (the event's reader waits its turn
// to run). false: the watch vouches for nothing (broken or closed).
func (w *Watch) Sync() bool { return <-w.StartSync() }

// StartSync is Sync without the wait: the channel gets Sync's answer. A
// server starts it before queueing a search for a slot, so that the round
// trip runs while the search waits its turn, not in the slot.
func (w *Watch) StartSync() <-chan bool {
	done := make(chan bool, 1)
	w.syncMu.Lock()
	if w.syncClosed || w.Err() != nil {
		w.syncMu.Unlock()
		done <- false
		return done
	}
	w.syncWaiting = append(w.syncWaiting, done)
	w.syncMu.Unlock()
	select {
	case w.syncKick <- struct{}{}:
	default: // a kick is pending already
	}
	return done
}

// syncLoop runs Sync's rounds: the requests waiting when a round starts
// are answered by its barrier event, which inotify delivers after every
// event queued before the barrier write (one queue, in order). Requests
// made during a round wait for the next one.
func (w *Watch) syncLoop() {
	for {
		closed := false
		select {
		case <-w.syncKick:
		case <-w.done:
			closed = true
		}
		w.syncMu.Lock()
		batch := w.syncWaiting
		w.syncWaiting, w.syncClosed = nil, closed
		w.syncMu.Unlock()
		ok := !closed && len(batch) > 0 && w.barrierRound()
		for _, r := range batch {
			r <- ok
		}
		if closed {
			return
		}
	}
}

func (w *Watch) barrierRound() bool {
	if w.Err() != nil {
		return false
	}
	select {
	case <-w.barrierSeen: // an earlier round's, late: not this one's
	default:
	}
	if _, err := w.barrier.WriteAt([]byte{'.'}, 0); err != nil {
		w.fail(fmt.Errorf("watch sync barrier: %w", err))
		return false
	}
	t := time.NewTimer(syncTimeout)
	defer t.Stop()
	select {
	case <-w.barrierSeen:
		return w.Err() == nil
	case <-t.C:
		w.fail(fmt.Errorf("inotify events late by over %v; every search checks every file", syncTimeout))
	case <-w.done:
	}
	return false
}

// Err is why the Watch vouches for nothing, or nil.
func (w *Watch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.broken
}

// now returns a sequence to remember with what is about to be observed.
func (w *Watch) now() uint64 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.seq
}

// Seq is the sequence of the changes noted so far: a walk of the roots
// that starts after reading it sees every file created, removed or
// renamed up to it (ListingSeq).
func (w *Watch) Seq() uint64 { return w.now() }

// ListingSeq is the sequence of the last change noted of any watched
// directory's entries (a file created, removed or renamed), or of events
// lost: the files a walk found before that may not be all there are.
func (w *Watch) ListingSeq() uint64 {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return max(w.listed, w.reset)
}

// unchangedSince reports whether path and the directories above it have
// seen no change after seq.
func (w *Watch) unchangedSince(path string, seq uint64) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.broken != nil || w.reset > seq {
		return false
	}
	// path is clean and absolute: its ancestors are its prefixes up to
	// each separator.
	for p := path; p != ""; p = p[:strings.LastIndexByte(p, filepath.Separator)] {
		if w.changed[p] > seq {
			return false
		}
	}
	return true
}

func (w *Watch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken == nil {
		w.broken = err
	}
}

// addTree watches dir and the directories beneath it (not through
// symlinks, as the indexer does not follow them).
func (w *Watch) addTree(dir string) {
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // gone meanwhile: its removal is an event
			}
			w.fail(err)
			return nil
		}
		if d.IsDir() {
			if p == w.ignore {
				return fs.SkipDir
			}
			if err := w.w.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				w.fail(err)
			}
		}
		return nil
	})
}

func (w *Watch) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.w.Events:
			if !ok {
				return
			}
			if w.barrier != nil && ev.Name == w.barrier.Name() {
				select {
				case w.barrierSeen <- struct{}{}:
				default:
				}
				continue
			}
			if w.ignore != "" && (ev.Name == w.ignore || strings.HasPrefix(ev.Name, w.ignore+string(filepath.Separator))) {
				continue
			}
			w.note(ev.Name)
			if ev.Has(fsnotify.Create | fsnotify.Remove | fsnotify.Rename) {
				// The directory's listing changed too (names by inode,
				// for files renamed since indexing); its files' own
				// states do not depend on it.
				w.noteListing(filepath.Dir(ev.Name))
			}
			w.signal()
			if w.roots[ev.Name] && ev.Has(fsnotify.Remove|fsnotify.Rename) {
				// Nothing watches a root's parent: a root put back
				// would go unwatched.
				w.fail(errors.New(ev.Name + " was removed or renamed; changes beneath it are no longer followed"))
			}
			if ev.Has(fsnotify.Create) {
				// Directories appear with content already in them
				// (mkdir -p, moves): watch them whole.
				if fi, err := os.Lstat(ev.Name); err == nil && fi.IsDir() {
					w.addTree(ev.Name)
				}
			}
		case err, ok := <-w.w.Errors:
			if !ok {
				return
			}
			w.mu.Lock()
			w.seq++
			w.reset = w.seq // events were lost: trust nothing seen before
			w.mu.Unlock()
			w.signal()
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				w.fail(err)
			}
		}
	}
}

func (w *Watch) note(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	if len(w.changed) >= maxChanged {
		clear(w.changed)
		clear(w.listings)
		w.reset = w.seq
	}
	w.changed[strings.TrimSuffix(path, string(filepath.Separator))] = w.seq
}

// noteListing records a change of dir's entries.
func (w *Watch) noteListing(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	w.listings[dir] = w.seq
	w.listed = w.seq
}

// listingUnchangedSince reports whether dir's entries saw no change after
// seq.
func (w *Watch) listingUnchangedSince(dir string, seq uint64) bool {
	w.mu.RLock()
	defer w.mu.RUnlock()
	return w.broken == nil && w.reset <= seq && w.listings[dir] <= seq && w.changed[dir] <= seq
}

// Changes is signalled when something beneath the roots changed since the
// last receive (changes coalesce: one signal may stand for many).
func (w *Watch) Changes() <-chan struct{} { return w.changes }

func (w *Watch) signal() {
	select {
	case w.changes <- struct{}{}:
	default:
	}
}
