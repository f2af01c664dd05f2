package logtime

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logdex/logdex/fixtures/loghub"
)

// loghubLines returns a sample's lines without their "\r\n".
func loghubLines(t testing.TB, name string) [][]byte {
	data, err := os.ReadFile(filepath.Join(loghub.DirOrSkip(t), name))
	if err != nil {
		t.Skip(err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\r\n"), []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimSuffix(l, []byte("\r"))
	}
	return lines
}

// Each loghub sample is detected with the right format, every one of its
// 2000 lines gets a time, and the first and last lines get the instants
// checked by hand (epochs with `date -u -d @N`; year-less formats with an
// mtime in the year the logs were written; UTC for local times).
func TestLoghub(t *testing.T) {
	tests := []struct {
		file, format, mtime string
		first, last         string
	}{
		{"Android_2k.log", "logcat", "2017-04-01T00:00:00Z", "2017-03-17T16:13:38.811Z", "2017-03-17T16:16:09.141Z"},
		{"Apache_2k.log", "ctime", "", "2005-12-04T04:47:44Z", "2005-12-05T19:15:57Z"},
		// BGL and Thunderbird write an epoch first: the instant, where their
		// later stamps are local time (US Pacific; see TestLoghubLocalStamps).
		{"BGL_2k.log", "epoch", "", "2005-06-03T22:42:50Z", "2006-01-03T15:13:09Z"},
		{"HDFS_2k.log", "hdfs", "", "2008-11-09T20:36:15Z", "2008-11-11T10:20:17Z"},
		{"HPC_2k.log", "epoch", "", "2004-02-26T14:12:22Z", "2005-12-15T18:25:39Z"},
		{"Hadoop_2k.log", "iso8601", "", "2015-10-18T18:01:47.978Z", "2015-10-18T18:10:55.202Z"},
		{"HealthApp_2k.log", "healthapp", "", "2017-12-23T22:15:29.606Z", "2017-12-24T01:02:35.789Z"},
		{"Linux_2k.log", "syslog-rfc3164", "2005-12-31T00:00:00Z", "2005-06-14T15:16:01Z", "2005-07-27T14:42:00Z"},
		{"Mac_2k.log", "syslog-rfc3164", "2017-07-08T09:00:00Z", "2017-07-01T09:00:55Z", "2017-07-08T08:10:46Z"},
		// An mtime in January: the December lines are the year before.
		{"OpenSSH_2k.log", "syslog-rfc3164", "2018-01-05T00:00:00Z", "2017-12-10T06:55:46Z", "2017-12-10T11:04:45Z"},
		{"OpenStack_2k.log", "iso8601", "", "2017-05-16T00:00:00.008Z", "2017-05-16T00:14:47.687Z"},
		{"Proxifier_2k.log", "proxifier", "2017-11-01T00:00:00Z", "2017-10-30T16:49:06Z", "2017-07-27T10:23:42Z"},
		{"Spark_2k.log", "spark", "", "2017-06-09T20:10:40Z", "2017-06-09T20:11:11Z"},
		{"Thunderbird_2k.log", "epoch", "", "2005-11-09T20:01:01Z", "2005-11-09T20:15:32Z"},
		{"Windows_2k.log", "iso8601", "", "2016-09-28T04:30:30Z", "2016-09-29T02:04:40Z"},
		{"Zookeeper_2k.log", "iso8601", "", "2015-07-29T17:41:44.747Z", "2015-08-10T18:12:34.004Z"},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(strings.TrimSuffix(tt.file, "_2k.log"), func(t *testing.T) {
			lines := loghubLines(t, tt.file)
			var mt time.Time
			if tt.mtime != "" {
				mt, _ = time.Parse(time.RFC3339, tt.mtime)
			}
			p := NewParser(Options{ModTime: mt})
			var first, last int64
			for i, l := range lines {
				ns, ok := p.Parse(l)
				if !ok {
					t.Fatalf("line %d has no time: %.100s", i+1, l)
				}
				if i == 0 {
					first = ns
				}
				last = ns
			}
			if p.Format() != tt.format || p.n != 1 {
				t.Errorf("format %q (%d layouts), want %q", p.Format(), p.n, tt.format)
			}
			if rfc(first) != tt.first || rfc(last) != tt.last {
				t.Errorf("first %s last %s, want %s and %s", rfc(first), rfc(last), tt.first, tt.last)
			}
			// Detect on the first lines agrees.
			q := NewParser(Options{ModTime: mt})
			if !q.Detect(lines[:32]) || q.Format() != tt.format {
				t.Errorf("Detect: %q", q.Format())
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join(loghub.DirOrSkip(t), "*.log"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s: no test case", filepath.Base(f))
		}
	}
}

// BGL and Thunderbird write each event twice, as an epoch and as US Pacific
// local time: on every line both must read as the same instant (to the
// second), which checks the DB2 and syslog formats and the zone handling on
// real data.
func TestLoghubLocalStamps(t *testing.T) {
	la := mustLoad(t, "America/Los_Angeles")
	tests := []struct {
		file  string
		field int // where the local stamp starts
		f     *format
	}{
		{"BGL_2k.log", 4, formatByName("db2")},
		{"Thunderbird_2k.log", 4, formatByName("syslog-rfc3164")},
	}
	for _, tt := range tests {
		lines := loghubLines(t, tt.file)
		p := NewParser(Options{Location: la, ModTime: time.Date(2006, 6, 1, 0, 0, 0, 0, la)})
		for i, l := range lines {
			epoch, ok1 := p.Parse(l)
			ns, ok2 := p.parseLayout(&layout{f: tt.f, field: tt.field}, l)
			if !ok1 || !ok2 || epoch/1e9 != ns/1e9 {
				t.Fatalf("%s line %d: epoch %s, local stamp %s (%v %v)", tt.file, i+1, rfc(epoch), rfc(ns), ok1, ok2)
			}
		}
	}
}
