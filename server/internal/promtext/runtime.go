package promtext

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
)

// GoMetrics reports the go_* families of the Prometheus Go client's
// default Go collector (client_golang 1.25: its MemStats-like set, its
// base set, and the /gc/gogc, /gc/gomemlimit and /sched/gomaxprocs
// gauges). The values come from runtime.ReadMemStats, the source of the
// client's older collector, rather than runtime/metrics, whose package
// initialisation alone costs every logdex process ~0.15 ms.
func GoMetrics() []Family {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	quantiles := make([]float64, len(gc.PauseQuantiles))
	for i, q := range gc.PauseQuantiles {
		quantiles[i] = q.Seconds()
	}
	threads, _ := runtime.ThreadCreateProfile(nil)

	fams := []Family{
		{Name: "go_gc_duration_seconds", Help: "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", Type: Summary,
			Metrics: []Metric{{Quantiles: []float64{0, 0.25, 0.5, 0.75, 1}, Values: quantiles, Sum: gc.PauseTotal.Seconds(), Count: uint64(gc.NumGC)}}},
		gauge("go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", float64(gcPercent())),
		gauge("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", float64(debug.SetMemoryLimit(-1))),
		gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())),
		{Name: "go_info", Help: "Information about the Go environment.", Type: Gauge, Labels: []string{"version"},
			Metrics: []Metric{{LabelValues: []string{runtime.Version()}, Value: 1}}},
		gauge("go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", float64(ms.Alloc)),
		counter("go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", float64(ms.TotalAlloc)),
		gauge("go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", float64(ms.BuckHashSys)),
		counter("go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", float64(ms.Frees)),
		gauge("go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", float64(ms.GCSys)),
		gauge("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", float64(ms.HeapAlloc)),
		gauge("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", float64(ms.HeapIdle)),
		gauge("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", float64(ms.HeapInuse)),
		gauge("go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", float64(ms.HeapObjects)),
		gauge("go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", float64(ms.HeapReleased)),
		gauge("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", float64(ms.HeapSys)),
		gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", float64(gc.LastGC.UnixNano())/1e9),
		counter("go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", float64(ms.Mallocs)),
		gauge("go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", float64(ms.MCacheInuse)),
		gauge("go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", float64(ms.MCacheSys)),
		gauge("go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", float64(ms.MSpanInuse)),
		gauge("go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", float64(ms.MSpanSys)),
		gauge("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", float64(ms.NextGC)),
		gauge("go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", float64(ms.OtherSys)),
		gauge("go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", float64(ms.StackInuse)),
		gauge("go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", float64(ms.StackSys)),
		gauge("go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", float64(ms.Sys)),
		gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", float64(runtime.GOMAXPROCS(0))),
		gauge("go_threads", "Number of OS threads created.", float64(threads)),
	}
	return fams
}

func gauge(name, help string, v float64) Family {
	return Family{Name: name, Help: help, Type: Gauge, Metrics: []Metric{{Value: v}}}
}

func counter(name, help string, v float64) Family {
	return Family{Name: name, Help: help, Type: Counter, Metrics: []Metric{{Value: v}}}
}

// reportedGCPercent is the percentage the server's pacing set (0: none).
var reportedGCPercent atomic.Int64

// ReportGCPercent records the GOGC percentage set with
// debug.SetGCPercent (0: none set, the environment's holds), which only
// runtime/metrics could read back.
func ReportGCPercent(p int) { reportedGCPercent.Store(int64(p)) }

// gcPercent is the percentage reported set, else GOGC as the runtime
// reads it at start-up (readGOGC, then negative means off).
func gcPercent() int {
	if p := reportedGCPercent.Load(); p != 0 {
		return int(p)
	}
	v := os.Getenv("GOGC")
	if v == "off" {
		return -1
	}
	if n, err := strconv.ParseInt(v, 10, 32); err == nil {
		return max(int(n), -1)
	}
	return 100
}
