package logtime

import (
	"bytes"
	"testing"
	"time"
)

var fuzzSeeds = []string{
	"2015-07-29 17:41:44,747 - INFO  [QuorumPeer[myid=1]",
	"<34>1 2003-10-11T22:14:15.003Z mymachine su",
	"- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02",
	`{"level":"info","ts":1700000000.123456,"msg":"x"}`,
	`{"time":"2024-01-02T03:04:05.5+01:00"}`,
	"host1 app[12]: 2024-01-02T03:04:05Z started\n\tat x\nJun 14 15:16:01 h",
	"20171223-22:16:0:119|Step_LSC|",
	"2024-01-02T03:04:05+99:99", "9999-12-31 23:59:59", "0000-01-01 00:00:00",
	"Feb 29 12:00:00", "{\"ts\":99999999999999999999}", "{\"ts\":",
}

// FuzzParse: no input panics, a timestamp found by detection reads the same
// through the cached layout, and every format consumes only its input.
func FuzzParse(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	for _, fm := range formats {
		f.Add([]byte(fm.example))
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		ny = time.UTC
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fm := range formats {
			if _, n, ok := fm.parse(data); ok && (n <= 0 || n > len(data)) {
				t.Fatalf("%s: n=%d for %d bytes", fm.name, n, len(data))
			}
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			p := NewParser(Options{Location: ny, ModTime: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
			ns1, ok1 := p.Parse(line)
			ns2, ok2 := p.Parse(line)
			if ok1 && (!ok2 || ns1 != ns2) {
				t.Fatalf("%q: detected %d, layout read %d %v (%s)", line, ns1, ns2, ok2, p.Format())
			}
			if l := p.layouts[0]; ok1 && l.jsonKey == nil && (l.field >= maxScanFields || l.off >= maxScanBytes) {
				t.Fatalf("%q: layout beyond the scan bounds: %+v", line, l)
			}
			p.Detect([][]byte{line, line})
		}
		p := NewParser(Options{})
		for _, line := range bytes.Split(data, []byte("\n")) {
			p.Parse(line)
		}
	})
}

func FuzzParseUserTime(f *testing.F) {
	for _, s := range []string{"2026-11-29 14:02", "2h", "1h30m", "1795960920000", "now", "2026-11-29", "7d12h"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, s string) {
		ParseUserTime(s, now, nil)
	})
}
