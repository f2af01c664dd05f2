package logtime

import (
	"strings"
	"testing"
	"time"
)

// A fresh Parser reads each line: detection plus parse of one line, in UTC
// with an mtime of 2024-06-15 unless a case says otherwise.
func TestFormats(t *testing.T) {
	mtime := time.Date(2024, 6, 15, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		line   string
		format string // "" when the line has no timestamp
		want   string // RFC 3339 in UTC
	}{
		// ISO 8601 / RFC 3339: separators, precision, zones.
		{"2024-01-02T03:04:05Z msg", "rfc3339", "2024-01-02T03:04:05Z"},
		{"2024-01-02t03:04:05z", "rfc3339", "2024-01-02T03:04:05Z"},
		{"2024-01-02T03:04:05.1Z", "rfc3339", "2024-01-02T03:04:05.1Z"},
		{"2024-01-02T03:04:05.123Z", "rfc3339", "2024-01-02T03:04:05.123Z"},
		{"2024-01-02T03:04:05.123456Z", "rfc3339", "2024-01-02T03:04:05.123456Z"},
		{"2024-01-02T03:04:05.123456789Z", "rfc3339", "2024-01-02T03:04:05.123456789Z"},
		{"2024-01-02T03:04:05.1234567891234Z", "rfc3339", "2024-01-02T03:04:05.123456789Z"},
		{"2024-01-02T03:04:05+02:00", "rfc3339", "2024-01-02T01:04:05Z"},
		{"2024-01-02T03:04:05-0530 x", "rfc3339", "2024-01-02T08:34:05Z"},
		{"2024-01-02T03:04:05+01", "rfc3339", "2024-01-02T02:04:05Z"},
		{"2024-01-02T03:04:05", "iso8601", "2024-01-02T03:04:05Z"},
		{"2024-01-02T03:04Z", "iso8601", "2024-01-02T03:04:00Z"},
		{"2024-01-02 03:04:05.250 +0100 x", "iso8601", "2024-01-02T02:04:05.25Z"},
		{"2024-01-02 03:04:05 UTC", "iso8601", "2024-01-02T03:04:05Z"},
		{"2015-07-29 17:41:44,747 - INFO  [QuorumPeer[myid=1]", "iso8601", "2015-07-29T17:41:44.747Z"},
		{"2015-10-18 18:01:47,978 INFO [main] org.apache", "iso8601", "2015-10-18T18:01:47.978Z"},
		{"2016-09-28 04:30:30, Info                  CBS    Loaded", "iso8601", "2016-09-28T04:30:30Z"},
		{"2024-02-29 00:00:00 leap day", "iso8601", "2024-02-29T00:00:00Z"},
		{"2023-02-29 00:00:00 not a day", "", ""},
		{"2024-13-01 00:00:00", "", ""},
		{"2024-01-02 24:00:00", "", ""},
		{"2024-01-02 03:04:05123", "", ""},
		{"2017-05-16_13:53:08", "", ""},
		// RFC 5424 syslog.
		{"<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47", "syslog-rfc5424", "2003-10-11T22:14:15.003Z"},
		{"<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc", "syslog-rfc5424", "2003-08-24T12:14:15.000003Z"},
		// RFC 3164 syslog: no year, from the mtime.
		{"Jun 14 15:16:01 combo sshd(pam_unix)[19939]: auth", "syslog-rfc3164", "2024-06-14T15:16:01Z"},
		{"Jul  1 09:00:55 calvisitor kernel[0]: x", "syslog-rfc3164", "2023-07-01T09:00:55Z"},
		{"Jun 16 11:59:59 one day after the mtime", "syslog-rfc3164", "2024-06-16T11:59:59Z"},
		{"Jun 16 12:00:01 over a day after: last year", "syslog-rfc3164", "2023-06-16T12:00:01Z"},
		{"Nov 9 12:01:01 dn228", "syslog-rfc3164", "2023-11-09T12:01:01Z"},
		{"Dec 10 06:55:46.123456 LabSZ sshd[24200]: x", "syslog-rfc3164", "2023-12-10T06:55:46.123456Z"},
		{"Foo 10 06:55:46 LabSZ", "", ""},
		// Access logs and ctime.
		{`127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326`, "apache-access", "2000-10-10T20:55:36Z"},
		{"[10/Oct/2000:13:55:36 +0000]", "apache-access", "2000-10-10T13:55:36Z"},
		{"[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok", "ctime", "2005-12-04T04:47:44Z"},
		{"[Sun Dec  4 04:47:44.123456 2005] [core:notice]", "ctime", "2005-12-04T04:47:44.123456Z"},
		{"Mon Jan  2 15:04:05 2006", "ctime", "2006-01-02T15:04:05Z"},
		// Compact forms.
		{"081109 203615 148 INFO dfs.DataNode$PacketResponder", "hdfs", "2008-11-09T20:36:15Z"},
		{"990101 000000 x", "hdfs", "1999-01-01T00:00:00Z"},
		{"081109 2036150", "", ""},
		{"17/06/09 20:10:40 INFO executor.CoarseGrainedExecutorBackend", "spark", "2017-06-09T20:10:40Z"},
		{"03-17 16:13:38.811  1702  2395 D WindowManager:", "logcat", "2024-03-17T16:13:38.811Z"},
		{"20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579", "healthapp", "2017-12-23T22:15:29.606Z"},
		{"20171223-22:15:35:96|Step_LSC|", "healthapp", "2017-12-23T22:15:35.096Z"},
		{"20171223-22:16:0:119|Step_LSC|", "healthapp", "2017-12-23T22:16:00.119Z"},
		{"20171224-1:2:3:4|x", "healthapp", "2017-12-24T01:02:03.004Z"},
		{"2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11 RAS", "db2", "2005-06-03T15:42:50.675872Z"},
		{"- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02", "epoch", "2005-06-03T22:42:50Z"},
		{"1286536308.779    180 192.168.0.224 TCP_MISS/200", "epoch", "2010-10-08T11:11:48.779Z"},
		{"1286536308779 x", "epoch", "2010-10-08T11:11:48.779Z"},
		{"134681 node-246 unix.hw state_change.unavailable 1077804742 1 Component", "epoch", "2004-02-26T14:12:22Z"},
		{"id 12345678901 x", "", ""},
		{"[10.30 16:49:06] chrome.exe - proxy.cse.cuhk.edu.hk:5070", "proxifier", "2023-10-30T16:49:06Z"},
		{"2009/01/23 01:23:23 message", "go-log", "2009-01-23T01:23:23Z"},
		{"2009/01/23 01:23:23.123456 file.go:12: message", "go-log", "2009-01-23T01:23:23.123456Z"},
		{"I0102 15:04:05.123456   12345 main.go:42] hi", "klog", "2024-01-02T15:04:05.123456Z"},
		{"E1231 23:59:59.000001   1 x.go:1] late", "klog", "2023-12-31T23:59:59.000001Z"},
		{"02-Jan-2006 15:04:05.000 INFO [main] org.apache.catalina", "dd-mon-yyyy", "2006-01-02T15:04:05Z"},
		// Timestamps after other tokens.
		{"host1 app[12]: 2024-01-02T03:04:05Z started", "rfc3339", "2024-01-02T03:04:05Z"},
		{"INFO [main] 2024-01-02 03:04:05,006 started", "iso8601", "2024-01-02T03:04:05.006Z"},
		{"level=info time=2024-01-02T03:04:05Z msg=x", "rfc3339", "2024-01-02T03:04:05Z"},
		{`time="2024-01-02T03:04:05+01:00" level=info`, "rfc3339", "2024-01-02T02:04:05Z"},
		{"nova-api.log.1.2017-05-16_13:53:08 2017-05-16 00:00:00.008 25746 INFO", "iso8601", "2017-05-16T00:00:00.008Z"},
		// Bounded search: too deep into the line is a time in a message.
		{"a b c d e f g h i 2024-01-02T03:04:05Z", "", ""},
		// JSON lines.
		{`{"level":"info","ts":1700000000.123456,"msg":"x"}`, "json:ts", "2023-11-14T22:13:20.123456Z"},
		{`{"ts":1700000000123,"msg":"ms"}`, "json:ts", "2023-11-14T22:13:20.123Z"},
		{`{"ts":1700000000123456,"msg":"us"}`, "json:ts", "2023-11-14T22:13:20.123456Z"},
		{`{"ts":1700000000123456789}`, "json:ts", "2023-11-14T22:13:20.123456789Z"},
		{`{"ts":1700000000123.5}`, "json:ts", "2023-11-14T22:13:20.1235Z"},
		{`{"time":"2024-01-02T03:04:05.5+01:00","msg":"x"}`, "json:time", "2024-01-02T02:04:05.5Z"},
		{`{"@timestamp": "2024-01-02T03:04:05Z", "message": "x"}`, "json:@timestamp", "2024-01-02T03:04:05Z"},
		{`{"msg":"timestamp","timestamp":"2024-01-02 03:04:05,1"}`, "json:timestamp", "2024-01-02T03:04:05.1Z"},
		{`{"msg":"a \"time\": 1700000000","time":12.5,"ts":"1700000000"}`, "json:ts", "2023-11-14T22:13:20Z"},
		{`{"time":12.5}`, "", ""},
		{`{"ts":1.7e9}`, "", ""},
		// No timestamp.
		{"", "", ""},
		{"\tat org.apache.hadoop.mapred.Task.run(Task.java:123)", "", ""},
		{"java.lang.NullPointerException: 12:00:00", "", ""},
	}
	for _, tt := range tests {
		p := NewParser(Options{ModTime: mtime})
		ns, ok := p.Parse([]byte(tt.line))
		if tt.format == "" {
			if ok || p.Format() != "" {
				t.Errorf("%q: got %s (%s), want no timestamp", tt.line, rfc(ns), p.Format())
			}
			continue
		}
		if !ok {
			t.Errorf("%q: no timestamp, want %s (%s)", tt.line, tt.want, tt.format)
			continue
		}
		if got := rfc(ns); got != tt.want || p.Format() != tt.format {
			t.Errorf("%q: got %s (%s), want %s (%s)", tt.line, got, p.Format(), tt.want, tt.format)
		}
	}
}

func rfc(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// Every format's example parses alone and with the bytes after it cut one
// at a time; no prefix of it panics or reads past the end.
func TestFormatExamples(t *testing.T) {
	for _, f := range formats {
		b := []byte(f.example)
		if _, n, ok := f.parse(b); !ok || n != len(b) {
			t.Errorf("%s: example %q: n=%d ok=%v", f.name, f.example, n, ok)
		}
		if formatByName(f.name) != f {
			t.Errorf("%s: name not unique", f.name)
		}
		for i := range b {
			f.parse(b[:i])
		}
	}
}

// A format's first bytes cover every byte its parser accepts first.
func TestFormatFirstBytes(t *testing.T) {
	for _, f := range formats {
		for c := 0; c < 256; c++ {
			b := []byte(f.example)
			b[0] = byte(c)
			if _, _, ok := f.parse(b); ok && !strings.ContainsRune(f.first, rune(c)) {
				t.Errorf("%s: parses %q but first bytes %q lack it", f.name, b, f.first)
			}
		}
	}
}
