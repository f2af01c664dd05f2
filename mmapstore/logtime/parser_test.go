package logtime

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

var mtime2024 = time.Date(2024, 6, 15, 12, 0, 0, 0, time.UTC)

// parseAll runs lines through one Parser and returns each result as an
// RFC 3339 string, "-" for no timestamp.
func parseAll(p *Parser, lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if ns, ok := p.Parse([]byte(l)); ok {
			out[i] = rfc(ns)
		} else {
			out[i] = "-"
		}
	}
	return out
}

func TestParserSequences(t *testing.T) {
	tests := []struct {
		name   string
		lines  []string
		want   []string
		format string
	}{
		{
			name: "stack trace",
			lines: []string{
				"2015-10-18 18:01:47,978 ERROR [main] Task failed",
				"java.lang.RuntimeException: boom 2015-10-18 18:01:47",
				"\tat org.apache.hadoop.mapred.Task.run(Task.java:123)",
				"\t2015-10-18 18:01:47,978 looks like a time but is indented",
				"Caused by: java.io.IOException",
				"\t... 12 more",
				"java.lang.RuntimeException: boom 2015-10-18 18:01:47",
				"2015-10-18 18:01:48,001 INFO [main] next",
			},
			want:   []string{"2015-10-18T18:01:47.978Z", "-", "-", "-", "-", "-", "-", "2015-10-18T18:01:48.001Z"},
			format: "iso8601",
		},
		{
			name: "header before the first timestamp",
			lines: []string{
				"=== log opened ===",
				"",
				"Jun 14 15:16:01 combo sshd[1]: x",
			},
			want:   []string{"-", "-", "2024-06-14T15:16:01Z"},
			format: "syslog-rfc3164",
		},
		{
			name: "prefix of varying width keeps the field",
			lines: []string{
				"- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02",
				"APPREAD 1117869872 2005.06.04 R04-M1-N4-I:J18-U11 2005-06-04-00.24.32.432192",
				"KERNDTLB 1118536327 2005.06.11 R30-M0-N9-C:J16-U01 2005-06-11-17.32.07.581048",
			},
			want:   []string{"2005-06-03T22:42:50Z", "2005-06-04T07:24:32Z", "2005-06-12T00:32:07Z"},
			format: "epoch",
		},
		{
			name: "format changes mid-file",
			lines: []string{
				"2024-01-02T03:04:05Z a",
				"2024-01-02T03:04:06Z b",
				"Jun 14 15:16:01 host c",
				"Jun 14 15:16:02 host d",
				"Jun 14 15:16:03 host e",
				"Jun 14 15:16:04 host f",
			},
			// At the line's start: the new format counts from its first line.
			want:   []string{"2024-01-02T03:04:05Z", "2024-01-02T03:04:06Z", "2024-06-14T15:16:01Z", "2024-06-14T15:16:02Z", "2024-06-14T15:16:03Z", "2024-06-14T15:16:04Z"},
			format: "syslog-rfc3164",
		},
		{
			name: "a new format further in the line is on probation",
			lines: []string{
				"2024-01-02T03:04:05Z a",
				"2024-01-02T03:04:06Z b",
				"[worker-7] Jun 14 15:16:01 host c",
				"[worker-7] Jun 14 15:16:02 host d",
				"[worker-7] Jun 14 15:16:03 host e",
			},
			// (A lone date at a new place is more often a message's text.)
			want:   []string{"2024-01-02T03:04:05Z", "2024-01-02T03:04:06Z", "-", "2024-06-14T15:16:02Z", "2024-06-14T15:16:03Z"},
			format: "rfc3339",
		},
		{
			name: "two layouts interleaved",
			lines: []string{
				"2024-01-02T03:04:05Z a",
				`{"ts":1700000000,"msg":"b"}`,
				"2024-01-02T03:04:06Z c",
				`{"ts":1700000001,"msg":"d"}`,
				"2024-01-02T03:04:07Z e",
			},
			want:   []string{"2024-01-02T03:04:05Z", "2023-11-14T22:13:20Z", "2024-01-02T03:04:06Z", "2023-11-14T22:13:21Z", "2024-01-02T03:04:07Z"},
			format: "rfc3339",
		},
		{
			name:   "no timestamps",
			lines:  []string{"hello", "world 12:00", "x=1 y=2"},
			want:   []string{"-", "-", "-"},
			format: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewParser(Options{ModTime: mtime2024})
			got := parseAll(p, tt.lines)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			if p.Format() != tt.format {
				t.Errorf("format %q, want %q", p.Format(), tt.format)
			}
		})
	}
}

// Detect picks the majority layout, so a banner line with another format
// does not become the file's format, and Parse then needs no detection run.
func TestDetectMajority(t *testing.T) {
	sample := [][]byte{
		[]byte("Log started 2024-01-02T03:04:05Z by init"),
		[]byte("081109 203615 148 INFO a"),
		[]byte("081109 203616 148 INFO b"),
		[]byte("  continuation"),
		[]byte("081109 203617 148 INFO c"),
	}
	p := NewParser(Options{ModTime: mtime2024})
	if !p.Detect(sample) || p.Format() != "hdfs" {
		t.Fatalf("Detect: format %q", p.Format())
	}
	if ns, ok := p.Parse([]byte("081109 203618 148 INFO d")); !ok || rfc(ns) != "2008-11-09T20:36:18Z" || p.detectRuns != 0 {
		t.Errorf("Parse after Detect: %s ok=%v runs=%d", rfc(ns), ok, p.detectRuns)
	}
	if ns, ok := p.Parse(sample[0]); !ok || rfc(ns) != "2024-01-02T03:04:05Z" || p.detectRuns != 0 {
		t.Errorf("minority layout kept: %s ok=%v runs=%d", rfc(ns), ok, p.detectRuns)
	}
	if p.Detect([][]byte{[]byte("no time"), nil}) || p.Format() != "" {
		t.Errorf("Detect on timestamp-less sample: format %q", p.Format())
	}
}

// Re-detection is bounded: long stretches without timestamps cost a
// logarithmic number of scans, then one per maxBackoff lines.
func TestRedetectBackoff(t *testing.T) {
	p := NewParser(Options{ModTime: mtime2024})
	p.Parse([]byte("2024-01-02T03:04:05Z start"))
	const n = 100000
	for i := 0; i < n; i++ {
		p.Parse([]byte(fmt.Sprintf("frame %d of a very long dump", i)))
	}
	if limit := 11 + n/maxBackoff + 1; p.detectRuns > limit {
		t.Errorf("%d detection runs over %d lines, want <= %d", p.detectRuns, n, limit)
	}
	if _, ok := p.Parse([]byte("2024-01-02T03:04:06Z back")); !ok {
		t.Error("known layout not read after the stretch")
	}

	// A file with no timestamp at all: eager detection on the first lines,
	// then backoff.
	p = NewParser(Options{})
	for i := 0; i < n; i++ {
		p.Parse([]byte("plain text line"))
	}
	if limit := eagerLines + 11 + n/maxBackoff + 1; p.detectRuns > limit {
		t.Errorf("timestamp-less file: %d detection runs, want <= %d", p.detectRuns, limit)
	}
	// Lines after a header of eagerLines lines are still found.
	p = NewParser(Options{})
	for i := 0; i < eagerLines; i++ {
		p.Parse([]byte("header"))
	}
	found := -1
	for i := 0; i < 200 && found < 0; i++ {
		if _, ok := p.Parse([]byte("2024-01-02T03:04:05Z x")); ok {
			found = i
		}
	}
	if found < 0 || found > 2 {
		t.Errorf("first timestamp after the header found at line %d", found)
	}
}

// The layouts kept per file are bounded; the least used is replaced.
func TestLayoutLimit(t *testing.T) {
	p := NewParser(Options{ModTime: mtime2024})
	lines := []string{
		"2024-01-02T03:04:05Z a", "a 2024-01-02T03:04:05Z", "a b 2024-01-02T03:04:05Z",
		"a b c 2024-01-02T03:04:05Z", "a b c d 2024-01-02T03:04:05Z", "a b c d e 2024-01-02T03:04:05Z",
	}
	for i := 0; i < 5; i++ {
		for _, l := range lines {
			p.Parse([]byte(l))
		}
	}
	if p.n != maxLayouts {
		t.Errorf("%d layouts kept, want %d", p.n, maxLayouts)
	}
	if _, ok := p.Parse([]byte(lines[0])); !ok || p.Format() != "rfc3339" {
		t.Errorf("first layout lost: format %q", p.Format())
	}
}

// Pathological long lines: detection and parsing stay linear in the line
// (no time assertion; a quadratic scan would make this test crawl).
func TestLongLines(t *testing.T) {
	const n = 1 << 20
	lines := []string{
		"2024-01-02 03:04:05." + strings.Repeat("9", n),
		strings.Repeat("[1 ", n/3),
		"{" + strings.Repeat(`"ts""ts"`, n/8),
		strings.Repeat("x", n) + " 2024-01-02T03:04:05Z",
		strings.Repeat("Jun 14 ", n/7),
	}
	for _, l := range lines {
		p := NewParser(Options{})
		for i := 0; i < 3; i++ {
			p.Parse([]byte(l))
		}
	}
	p := NewParser(Options{})
	p.Parse([]byte("a b c d e f 2024-01-02T03:04:05Z"))
	for i := 0; i < 100; i++ {
		p.Parse([]byte(strings.Repeat("y", 1<<16)))
	}
}

func TestFill(t *testing.T) {
	times := []int64{0, 0, 5, 0, 7, 0}
	ok := []bool{false, false, true, false, true, false}
	if !Fill(times, ok) || fmt.Sprint(times) != "[5 5 5 5 7 7]" {
		t.Errorf("Fill: %v", times)
	}
	none := []int64{1, 2}
	if Fill(none, []bool{false, false}) || fmt.Sprint(none) != "[1 2]" {
		t.Errorf("Fill without times: %v", none)
	}
	var c Carry
	if _, ok := c.Next(0, false); ok {
		t.Error("Carry before any time")
	}
	if v, ok := c.Next(9, true); !ok || v != 9 {
		t.Errorf("Carry: %d %v", v, ok)
	}
	if v, ok := c.Next(0, false); !ok || v != 9 {
		t.Errorf("Carry forward: %d %v", v, ok)
	}
	var s Carry
	s.Seed(3)
	if v, ok := s.Next(0, false); !ok || v != 3 {
		t.Errorf("Seed: %d %v", v, ok)
	}
}
