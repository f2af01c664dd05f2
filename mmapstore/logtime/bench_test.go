package logtime

import (
	"fmt"
	"strconv"
	"testing"
	"time"
)

// Benchmarks: ns per line once the format is detected (Parse), against
// time.ParseInLocation handed the timestamp's exact bytes and layout (a
// lower bound for a time.Parse-based reader, which would also have to find
// the timestamp and apply the year and DST rules), in the same run:
//
//	go test -run '^$' -bench . -benchmem ./mmapstore/logtime/
//
// The figures below are thread CPU time per line (getrusage, best of 5
// rounds of 2M lines, the three readers interleaved) on the shared 2-core
// dev VM, Go 1.26, because wall-clock benchmarks there were inflated 3–6x by
// other load. "strptime" is github.com/itchyny/timefmt-go v0.1.9
// ParseInLocation, measured the same way in the same run from a scratch
// module (it is not a dependency: it lost). All Parse figures are 0 allocs.
//
//	format           Parse  time.Parse  strptime   (ns/line)
//	iso8601             36         190        96
//	  in America/New_York 38 (hour-cached zone offset)
//	rfc3339             39          70       102
//	syslog-rfc5424      42          67        98
//	syslog-rfc3164      34         138        74
//	apache-access       56         187       105
//	ctime               36         184       112
//	hdfs                32         115        71
//	spark               34         141        78
//	logcat              33         159        88
//	healthapp           37         n/a       n/a   (unpadded fields)
//	db2                 38         181        88
//	epoch               24          22        53   (strconv.ParseInt)
//	proxifier           31         111        63
//	go-log              39         182        94
//	klog                34         144        82
//	dd-mon-yyyy         39         179       104
//	json:ts             31         n/a       n/a
//	json:time           45         n/a       n/a
//	all 32000 loghub lines, a new Parser per file, detection included: 37.5
//
// One detection run (BenchmarkDetect) costs ~0.5 µs; the backoff keeps it
// off the per-line cost (BenchmarkContinuation: ~26 ns/line for a log that
// is 90% stack trace).

// benchCase is a format's synthetic line stream and its time.Parse reader.
type benchCase struct {
	name string
	line func(t time.Time) string
	std  func(line []byte) (int64, bool) // nil when time.Parse cannot read it
}

func stdAt(layout string, off, n int) func([]byte) (int64, bool) {
	return func(line []byte) (int64, bool) {
		if len(line) < off+n {
			return 0, false
		}
		t, err := time.ParseInLocation(layout, string(line[off:off+n]), time.UTC)
		return t.UnixNano(), err == nil
	}
}

const benchMsg = " INFO [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: Created MRAppMaster for application"

var benchCases = []benchCase{
	{"iso8601", func(t time.Time) string { return t.Format("2006-01-02 15:04:05,000") + benchMsg },
		stdAt("2006-01-02 15:04:05,000", 0, 23)},
	{"rfc3339", func(t time.Time) string { return t.Format("2006-01-02T15:04:05.000000Z07:00") + benchMsg },
		stdAt(time.RFC3339Nano, 0, 27)},
	{"syslog-rfc5424", func(t time.Time) string { return "<34>1 " + t.Format("2006-01-02T15:04:05.000Z07:00") + benchMsg },
		stdAt(time.RFC3339Nano, 6, 24)},
	{"syslog-rfc3164", func(t time.Time) string {
		return t.Format(time.Stamp) + " combo sshd(pam_unix)[19939]: check pass; user unknown"
	},
		stdAt(time.Stamp, 0, 15)},
	{"apache-access", func(t time.Time) string {
		return "127.0.0.1 - frank [" + t.Format("02/Jan/2006:15:04:05 -0700") + `] "GET /apache_pb.gif HTTP/1.0" 200 2326`
	}, stdAt("02/Jan/2006:15:04:05 -0700", 19, 26)},
	{"ctime", func(t time.Time) string {
		return "[" + t.Format("Mon Jan 02 15:04:05 2006") + "] [error] mod_jk child workerEnv"
	},
		stdAt("Mon Jan 02 15:04:05 2006", 1, 24)},
	{"hdfs", func(t time.Time) string { return t.Format("060102 150405") + " 148" + benchMsg },
		stdAt("060102 150405", 0, 13)},
	{"spark", func(t time.Time) string { return t.Format("06/01/02 15:04:05") + benchMsg },
		stdAt("06/01/02 15:04:05", 0, 17)},
	{"logcat", func(t time.Time) string {
		return t.Format("01-02 15:04:05.000") + "  1702  2395 D WindowManager: printFreezingDisplayLogs"
	},
		stdAt("01-02 15:04:05.000", 0, 18)},
	{"healthapp", func(t time.Time) string {
		return fmt.Sprintf("%s:%d|Step_LSC|30002312|onStandStepChanged 3579", t.Format("20060102-15:4:5"), t.Nanosecond()/1e6)
	}, nil},
	{"db2", func(t time.Time) string {
		return t.Format("2006-01-02-15.04.05.000000") + " R02-M1-N0-C:J12-U11 RAS KERNEL INFO"
	},
		stdAt("2006-01-02-15.04.05.000000", 0, 26)},
	{"epoch", func(t time.Time) string {
		return "- " + strconv.FormatInt(t.Unix(), 10) + " 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 RAS KERNEL INFO"
	}, func(line []byte) (int64, bool) {
		v, err := strconv.ParseInt(string(line[2:12]), 10, 64)
		return v * 1e9, err == nil
	}},
	{"proxifier", func(t time.Time) string {
		return "[" + t.Format("01.02 15:04:05") + "] chrome.exe - proxy.cse.cuhk.edu.hk:5070 open"
	},
		stdAt("01.02 15:04:05", 1, 14)},
	{"go-log", func(t time.Time) string { return t.Format("2006/01/02 15:04:05.000000") + " main.go:12: message" },
		stdAt("2006/01/02 15:04:05.000000", 0, 26)},
	{"klog", func(t time.Time) string { return "I" + t.Format("0102 15:04:05.000000") + "   12345 main.go:42] hi" },
		stdAt("0102 15:04:05.000000", 1, 20)},
	{"dd-mon-yyyy", func(t time.Time) string {
		return t.Format("02-Jan-2006 15:04:05.000") + " INFO [main] org.apache.catalina"
	},
		stdAt("02-Jan-2006 15:04:05.000", 0, 24)},
	{"json:ts", func(t time.Time) string {
		return fmt.Sprintf(`{"level":"info","ts":%d.%06d,"caller":"main.go:12","msg":"request served"}`, t.Unix(), t.Nanosecond()/1e3)
	}, nil},
	{"json:time", func(t time.Time) string {
		return `{"time":"` + t.Format(time.RFC3339Nano) + `","level":"INFO","msg":"request served"}`
	}, nil},
}

// benchLines returns 1024 lines of c's format, ~1.7 s apart.
func benchLines(c benchCase) [][]byte {
	t0 := time.Date(2024, 3, 9, 22, 0, 0, 123456000, time.UTC)
	lines := make([][]byte, 1024)
	for i := range lines {
		lines[i] = []byte(c.line(t0.Add(time.Duration(i) * 1700 * time.Millisecond)))
	}
	return lines
}

func BenchmarkParse(b *testing.B) {
	for _, c := range benchCases {
		lines := benchLines(c)
		b.Run(c.name, func(b *testing.B) {
			p := NewParser(Options{ModTime: time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC)})
			if !p.Detect(lines[:16]) || p.Format() != c.name {
				b.Fatalf("detected %q", p.Format())
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, ok := p.Parse(lines[i&1023]); !ok {
					b.Fatalf("%s", lines[i&1023])
				}
			}
		})
	}
}

func BenchmarkStdlib(b *testing.B) {
	for _, c := range benchCases {
		if c.std == nil {
			continue
		}
		lines := benchLines(c)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, ok := c.std(lines[i&1023]); !ok {
					b.Fatalf("%s", lines[i&1023])
				}
			}
		})
	}
}

// BenchmarkZone: local times in a named zone with DST, through the hour
// cache, against UTC.
func BenchmarkZone(b *testing.B) {
	lines := benchLines(benchCases[0])
	for _, name := range []string{"UTC", "America/New_York"} {
		loc := mustLoad(b, name)
		b.Run(name, func(b *testing.B) {
			p := NewParser(Options{Location: loc})
			p.Detect(lines[:1])
			for i := 0; b.Loop(); i++ {
				p.Parse(lines[i&1023])
			}
		})
	}
}

// BenchmarkDetect is the cost of one detection run (a fresh Parser per
// line), paid on a file's first line and on backoff-bounded misses.
func BenchmarkDetect(b *testing.B) {
	for _, line := range []string{
		"2015-10-18 18:01:47,978 INFO [main] org.apache.hadoop.mapreduce.v2.app.MRAppMaster: Created",
		"134681 node-246 unix.hw state_change.unavailable 1077804742 1 Component State Change",
		"\tat org.apache.hadoop.mapred.Task.run(Task.java:123) and no time (Foo.java:12) [a, b]",
	} {
		b.Run(line[:12], func(b *testing.B) {
			for b.Loop() {
				NewParser(Options{Location: time.UTC, ModTime: mtime2024}).detectLine([]byte(line))
			}
		})
	}
}

// BenchmarkLoghub parses the 16 loghub samples, a parser per file, and
// reports ns per line over all of them.
func BenchmarkLoghub(b *testing.B) {
	var files [][][]byte
	total := 0
	for _, c := range []string{"Android", "Apache", "BGL", "HDFS", "HPC", "Hadoop", "HealthApp", "Linux",
		"Mac", "OpenSSH", "OpenStack", "Proxifier", "Spark", "Thunderbird", "Windows", "Zookeeper"} {
		lines := loghubLines(b, c+"_2k.log")
		files = append(files, lines)
		total += len(lines)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, lines := range files {
			p := NewParser(Options{ModTime: mtime2024})
			for _, l := range lines {
				p.Parse(l)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*total), "ns/line")
}

// BenchmarkContinuation: a Java log where 9 of 10 lines are a stack trace.
func BenchmarkContinuation(b *testing.B) {
	var lines [][]byte
	for i := 0; i < 1000; i++ {
		if i%10 == 0 {
			lines = append(lines, []byte(fmt.Sprintf("2015-10-18 18:01:%02d,978 ERROR [main] failed", i/10%60)))
		} else {
			lines = append(lines, []byte(fmt.Sprintf("\tat org.apache.hadoop.mapred.Task.run%d(Task.java:%d)", i, i)))
		}
	}
	p := NewParser(Options{})
	for i := 0; b.Loop(); i++ {
		p.Parse(lines[i%1000])
	}
}
