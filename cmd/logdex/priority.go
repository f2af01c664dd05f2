package main

// The priorities of serve's background work (live runs, merges) against
// its searches: nice values for the kernel, and Ps for Go's scheduler.

import (
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// backgroundProcs gives serve's background threads Ps of their own while
// they run and returns how many workers a live run may use. Live runs'
// workers and the merge run on threads of raised nice value so that the
// kernel runs searches first; but Go's scheduler knows no priority: a
// goroutine keeps its P until it blocks or is preempted (after 10 ms), so
// with one P per CPU those threads could hold every P while a search
// waited, runnable, for one (the 10-30 ms search stalls under live load).
// With one more P per background thread, searches always find a CPU's
// worth of Ps and the kernel, which knows the priorities, decides what
// runs. Searches keep one worker per CPU (server.Options.SearchWorkers).
// The extra Ps are there only while a live run or a merge holds them
// (bg.hold): with more Ps than CPUs and nothing in the background, the
// request goroutines of a loaded server spread over more threads than
// CPUs, and the context switches, idle Ps spinning for work and the
// sweeper's yields cost an uncached page ~1.6x the CPU (in process, 5 Ps
// against 2 on 2 CPUs). bg.restore puts GOMAXPROCS back (serve runs more
// than once in one test process).
func backgroundProcs() (cpus, liveWorkers int, bg *bgProcs) {
	cpus = startProcs
	liveWorkers = cpus
	return cpus, liveWorkers, &bgProcs{cpus: cpus, raised: cpus + liveWorkers + 1} // + the merge's thread
}

// bgProcs counts the background jobs running and sets GOMAXPROCS to
// raised while there is one, to cpus otherwise.
type bgProcs struct {
	mu           sync.Mutex
	cpus, raised int
	running      int
}

// hold raises GOMAXPROCS for a background job until the returned release
// is called.
func (b *bgProcs) hold() (release func()) {
	b.mu.Lock()
	if b.running++; b.running == 1 {
		runtime.GOMAXPROCS(b.raised)
	}
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			if b.running--; b.running == 0 {
				runtime.GOMAXPROCS(b.cpus)
			}
			b.mu.Unlock()
		})
	}
}

// onDemand is a hold taken by the first call of take and given back by
// release. A live run takes it as its first worker starts: a run that
// finds nothing to index (most periodic re-indexes) starts no worker and
// leaves GOMAXPROCS alone, as each change of it stops the world. A take
// after release holds nothing.
func (b *bgProcs) onDemand() (take, release func()) {
	var once sync.Once
	var rel func()
	take = func() { once.Do(func() { rel = b.hold() }) }
	release = func() {
		once.Do(func() {}) // waits for a take under way; none after it
		if rel != nil {
			rel()
		}
	}
	return take, release
}

// restore puts GOMAXPROCS back to the CPUs serve started with.
func (b *bgProcs) restore() {
	b.mu.Lock()
	defer b.mu.Unlock()
	runtime.GOMAXPROCS(b.cpus)
}

// startProcs is GOMAXPROCS as the process started: the CPUs it may use.
var startProcs = runtime.GOMAXPROCS(0)

// mergeBacklog: with this many live segments, merges are falling behind
// the live runs (a tier merges at 8).
const mergeBacklog = 32

// mergeNice is the nice value of a background merge when the index has
// segs live segments: +10, so that a merge yields the CPU to live runs and
// searches; but 0 once merges fall behind, as on a machine busy with
// other work a thread at +10 gets almost no CPU, and every search plans
// over every segment.
func mergeNice(segs int) int {
	if segs >= mergeBacklog {
		return 0
	}
	return 10
}

// onThread runs f on a thread of its own at the given nice value.
func onThread(nice int, f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		niceThread(nice)
		f()
	}()
	<-done
}

// liveCatchUp: a live run that took this long is falling behind the
// appends (the index lag should stay under a second).
const liveCatchUp = 500 * time.Millisecond

// liveWorkerStart is the WorkerStart of a live run that follows one of
// duration prev: lowerPriority, unless prev fell behind. On a machine busy
// with other work, threads at raised nice get ever less of the CPU; the
// lag would grow, and with it the searches' cost, as they scan the bytes
// not indexed yet (at nice 0, taking yet more from indexing): a spiral the
// live benchmark fell into at load averages of 12 and more. Runs that
// catch up run at normal priority (each run has threads of its own).
func liveWorkerStart(prev time.Duration) func() {
	if prev >= liveCatchUp {
		return nil
	}
	return lowerPriority
}

// lowerPriority is the indexer's WorkerStart for live runs: their reading
// and tokenizing yields the CPU to searches, yet wins over a merge (at +10).
func lowerPriority() { niceThread(5) }

// niceThread locks the calling goroutine to its thread and sets that
// thread's nice value. The lock is never released, so the thread exits
// with the goroutine (raising the nice value back needs privileges).
func niceThread(nice int) {
	runtime.LockOSThread()
	unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), nice)
}
