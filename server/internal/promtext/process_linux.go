package promtext

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// userHZ is the unit of the CPU times in /proc (USER_HZ, 100 on every
// Linux the Prometheus client's procfs supports; it assumes it too).
const userHZ = 100

// ProcessMetrics reports the process_* families of the Prometheus Go
// client's process collector, read from /proc/self as its procfs reads
// them. Like that collector (errors not reported), a family whose source
// cannot be read is left out.
func ProcessMetrics() []Family {
	var fams []Family
	if st, ok := readSelfStat(); ok {
		fams = append(fams,
			counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", float64(st.utime+st.stime)/userHZ),
			gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", float64(st.vsize)),
			gauge("process_resident_memory_bytes", "Resident memory size in bytes.", float64(st.rss*uint64(os.Getpagesize()))))
		if boot, ok := bootTime(); ok {
			fams = append(fams, gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", float64(boot)+float64(st.starttime)/userHZ))
		}
	}
	if n, ok := openFDs(); ok {
		fams = append(fams, gauge("process_open_fds", "Number of open file descriptors.", float64(n)))
	}
	var files, as syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &files) == nil && syscall.Getrlimit(syscall.RLIMIT_AS, &as) == nil {
		fams = append(fams,
			gauge("process_max_fds", "Maximum number of open file descriptors.", float64(files.Cur)),
			gauge("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", float64(as.Cur)))
	}
	if in, out, ok := netOctets(); ok {
		fams = append(fams,
			counter("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", in),
			counter("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", out))
	}
	return fams
}

type selfStat struct{ utime, stime, starttime, vsize, rss uint64 }

func readSelfStat() (selfStat, bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return selfStat{}, false
	}
	return parseStat(b)
}

// parseStat reads proc(5)'s /proc/PID/stat. The command name, field 2,
// is in parentheses and may hold spaces and parentheses itself, so
// fields are counted after the last ')'.
func parseStat(b []byte) (selfStat, bool) {
	end := bytes.LastIndexByte(b, ')')
	if end < 0 {
		return selfStat{}, false
	}
	f := bytes.Fields(b[end+1:]) // f[0] is field 3 (state)
	field := func(n int) (uint64, bool) {
		if n-3 >= len(f) {
			return 0, false
		}
		v, err := strconv.ParseUint(string(f[n-3]), 10, 64)
		return v, err == nil
	}
	var st selfStat
	for _, x := range []struct {
		n   int
		dst *uint64
	}{{14, &st.utime}, {15, &st.stime}, {22, &st.starttime}, {23, &st.vsize}, {24, &st.rss}} {
		v, ok := field(x.n)
		if !ok {
			return selfStat{}, false
		}
		*x.dst = v
	}
	return st, true
}

var boot struct {
	once sync.Once
	t    uint64
	ok   bool
}

// bootTime is the btime line of /proc/stat, read once: it does not change.
func bootTime() (uint64, bool) {
	boot.once.Do(func() {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return
		}
		for line := range bytes.Lines(b) {
			if v, ok := bytes.CutPrefix(line, []byte("btime ")); ok {
				t, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
				boot.t, boot.ok = t, err == nil
				return
			}
		}
	})
	return boot.t, boot.ok
}

// openFDs counts /proc/self/fd, the descriptor reading it included (as
// procfs counts).
func openFDs() (int, bool) {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	return len(names), err == nil
}

// netOctets reads InOctets and OutOctets of the IpExt lines of
// /proc/self/net/netstat (a line of names, then one of values); a missing
// value counts 0, as the Prometheus client reports it.
func netOctets() (in, out float64, ok bool) {
	b, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	return parseNetstat(b)
}

func parseNetstat(b []byte) (in, out float64, ok bool) {
	var names [][]byte
	for line := range bytes.Lines(b) {
		rest, isIP := bytes.CutPrefix(line, []byte("IpExt:"))
		if !isIP {
			continue
		}
		if names == nil {
			names = bytes.Fields(rest)
			continue
		}
		for i, v := range bytes.Fields(rest) {
			if i >= len(names) {
				break
			}
			x, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return 0, 0, false
			}
			switch string(names[i]) {
			case "InOctets":
				in = x
			case "OutOctets":
				out = x
			}
		}
		return in, out, true
	}
	return 0, 0, false
}
