package main

// The priorities of serve's background work (live runs, merges) against
// its searches: nice values for the kernel, and Ps for Go's scheduler.

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// backgroundProcs gives serve's background threads Ps of their own and
// returns how many workers a live run may use. Live runs' workers and the
// merge run on threads of raised nice value so that the kernel runs
// searches first; but Go's scheduler knows no priority: a goroutine keeps
// its P until it blocks or is preempted (after 10 ms), so with one P per
// CPU those threads could hold every P while a search waited, runnable,
// for one (the 10-30 ms search stalls under live load). With one more P
// per background thread, searches always find a CPU's worth of Ps and the
// kernel, which knows the priorities, decides what runs. Searches keep one
// worker per CPU (server.Options.SearchWorkers). restore puts GOMAXPROCS
// back (serve runs more than once in one test process).
func backgroundProcs() (cpus, liveWorkers int, restore func()) {
	cpus = startProcs
	liveWorkers = cpus
	runtime.GOMAXPROCS(cpus + liveWorkers + 1) // + the merge's thread
	return cpus, liveWorkers, func() { runtime.GOMAXPROCS(cpus) }
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
