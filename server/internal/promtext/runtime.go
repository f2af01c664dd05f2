package promtext

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// GoMetrics reports the go_* families of the Prometheus Go client's
// default Go collector (client_golang 1.25: the MemStats-like set, the
// base set, and /gc/gogc, /gc/gomemlimit, /sched/gomaxprocs), computed the
// same way: from runtime/metrics, without stopping the world.
func GoMetrics() []Family {
	s := readRuntime()
	// memStatsFromRM of the Prometheus client: tiny allocations count in
	// both mallocs and frees, as in runtime.MemStats.
	tiny := s.get(rmTinyAllocs)
	heapInuse := s.get(rmHeapObjects) + s.get(rmHeapUnused)
	heapIdle := s.get(rmHeapReleased) + s.get(rmHeapFree)
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
		gauge("go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", float64(s.get(rmGOGC))),
		gauge("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", float64(s.get(rmGOMEMLIMIT))),
		gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())),
		{Name: "go_info", Help: "Information about the Go environment.", Type: Gauge, Labels: []string{"version"},
			Metrics: []Metric{{LabelValues: []string{runtime.Version()}, Value: 1}}},
		gauge("go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", float64(s.get(rmHeapObjects))),
		counter("go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", float64(s.get(rmAllocBytes))),
		gauge("go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", float64(s.get(rmBuckets))),
		counter("go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", float64(s.get(rmFrees)+tiny)),
		gauge("go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", float64(s.get(rmMetaOther))),
		gauge("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", float64(s.get(rmHeapObjects))),
		gauge("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", float64(heapIdle)),
		gauge("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", float64(heapInuse)),
		gauge("go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", float64(s.get(rmObjects))),
		gauge("go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", float64(s.get(rmHeapReleased))),
		gauge("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", float64(heapInuse+heapIdle)),
		gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", float64(gc.LastGC.UnixNano())/1e9),
		counter("go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", float64(s.get(rmAllocs)+tiny)),
		gauge("go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", float64(s.get(rmMCacheInuse))),
		gauge("go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", float64(s.get(rmMCacheInuse)+s.get(rmMCacheFree))),
		gauge("go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", float64(s.get(rmMSpanInuse))),
		gauge("go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", float64(s.get(rmMSpanInuse)+s.get(rmMSpanFree))),
		gauge("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", float64(s.get(rmHeapGoal))),
		gauge("go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", float64(s.get(rmOther))),
		gauge("go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", float64(s.get(rmStacks))),
		gauge("go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", float64(s.get(rmStacks)+s.get(rmOSStacks))),
		gauge("go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", float64(s.get(rmTotal))),
		gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", float64(s.get(rmGOMAXPROCS))),
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

// The runtime/metrics read, in the order of runtimeNames.
const (
	rmTinyAllocs = iota
	rmAllocs
	rmFrees
	rmAllocBytes
	rmTotal
	rmHeapObjects
	rmHeapUnused
	rmHeapReleased
	rmHeapFree
	rmObjects
	rmStacks
	rmOSStacks
	rmMSpanInuse
	rmMSpanFree
	rmMCacheInuse
	rmMCacheFree
	rmBuckets
	rmMetaOther
	rmOther
	rmHeapGoal
	rmGOGC
	rmGOMEMLIMIT
	rmGOMAXPROCS
)

var runtimeNames = [...]string{
	rmTinyAllocs:   "/gc/heap/tiny/allocs:objects",
	rmAllocs:       "/gc/heap/allocs:objects",
	rmFrees:        "/gc/heap/frees:objects",
	rmAllocBytes:   "/gc/heap/allocs:bytes",
	rmTotal:        "/memory/classes/total:bytes",
	rmHeapObjects:  "/memory/classes/heap/objects:bytes",
	rmHeapUnused:   "/memory/classes/heap/unused:bytes",
	rmHeapReleased: "/memory/classes/heap/released:bytes",
	rmHeapFree:     "/memory/classes/heap/free:bytes",
	rmObjects:      "/gc/heap/objects:objects",
	rmStacks:       "/memory/classes/heap/stacks:bytes",
	rmOSStacks:     "/memory/classes/os-stacks:bytes",
	rmMSpanInuse:   "/memory/classes/metadata/mspan/inuse:bytes",
	rmMSpanFree:    "/memory/classes/metadata/mspan/free:bytes",
	rmMCacheInuse:  "/memory/classes/metadata/mcache/inuse:bytes",
	rmMCacheFree:   "/memory/classes/metadata/mcache/free:bytes",
	rmBuckets:      "/memory/classes/profiling/buckets:bytes",
	rmMetaOther:    "/memory/classes/metadata/other:bytes",
	rmOther:        "/memory/classes/other:bytes",
	rmHeapGoal:     "/gc/heap/goal:bytes",
	rmGOGC:         "/gc/gogc:percent",
	rmGOMEMLIMIT:   "/gc/gomemlimit:bytes",
	rmGOMAXPROCS:   "/sched/gomaxprocs:threads",
}

type runtimeSamples []metrics.Sample

func readRuntime() runtimeSamples {
	s := make(runtimeSamples, len(runtimeNames))
	for i, name := range runtimeNames {
		s[i].Name = name
	}
	metrics.Read(s) // safe concurrently: each scrape has its own samples
	return s
}

// get returns a sample's value; 0 for one this Go release does not have.
func (s runtimeSamples) get(i int) uint64 {
	if s[i].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[i].Value.Uint64()
}
