package query

import "testing"

func TestSplitRotation(t *testing.T) {
	for _, c := range []struct {
		path, log string
		n         int
		date      string
	}{
		{"logs/app.log", "logs/app.log", -1, ""},
		{"logs/app.log.1", "logs/app.log", 1, ""},
		{"logs/app.log.0", "logs/app.log", 0, ""},
		{"logs/dmesg.0", "logs/dmesg", 0, ""},
		{"logs/app.log.2.gz", "logs/app.log", 2, ""},
		{"logs/syslog.7.gz", "logs/syslog", 7, ""},
		{"logs/app.log-20261129", "logs/app.log", -1, "20261129"},
		{"logs/app.log-20261129.zst", "logs/app.log", -1, "20261129"},
		{"logs/app.log.2026-11-29", "logs/app.log", -1, "20261129"},
		{"logs/app.log-2026112913", "logs/app.log", -1, "2026112913"},
		{"logs/app.log-20261129-1764374400", "logs/app.log", -1, "202611291764374400"}, // dateformat -%Y%m%d-%s
		{"logs/app.log-20261129-1764374400.gz", "logs/app.log", -1, "202611291764374400"},
		{"logs/app.log-202611", "logs/app.log", -1, "202611"}, // monthly
		{"logs/app.log-2026-11", "logs/app.log", -1, "202611"},
		{"logs/app.log.2025", "logs/app.log", -1, "2025"}, // a year, not rotation 2025
		{"logs/app.log.2025.gz", "logs/app.log", -1, "2025"},
		{"logs/build-123456", "logs/build-123456", -1, ""}, // no month 34
		{"logs/messages.xz", "logs/messages", -1, ""},
		{"logs/v1.2", "logs/v1.2", -1, ""},         // numbered itself, not a rotation
		{"logs/10.0.0.1", "logs/10.0.0.1", -1, ""}, // per-host files stay apart
		{"logs/10.0.0.2.gz", "logs/10.0.0.2", -1, ""},
		{"logs/20261129", "logs/20261129", -1, ""},
		{"logs/app.log.12345", "logs/app.log.12345", -1, ""}, // five digits: not a rotation number
		{"logs/app.log.9999", "logs/app.log", 9999, ""},
		{"logs/app.1x", "logs/app.1x", -1, ""},
		{"logs/app.", "logs/app.", -1, ""},
		{".3", ".3", -1, ""},
	} {
		log, n, date := splitRotation(c.path)
		if log != c.log || n != c.n || date != c.date {
			t.Errorf("splitRotation(%q) = %q %d %q, want %q %d %q", c.path, log, n, date, c.log, c.n, c.date)
		}
	}
	for _, c := range []struct {
		paths []string
		logs  []string
		want  []int
	}{
		{
			[]string{"a.log", "a.log.1", "a.log.2.gz", "a.log-20261128.gz", "a.log-20261129.gz", "b.log"},
			[]string{"a.log", "a.log", "a.log", "a.log", "a.log", "b.log"},
			[]int{0, 1, 2, 4, 3, 0},
		},
		{ // savelog, logrotate's start 0: .0 is the newest rotation
			[]string{"dmesg", "dmesg.0", "dmesg.1.gz", "dmesg.2.gz", "x.log.1"},
			[]string{"dmesg", "dmesg", "dmesg", "dmesg", "x.log"},
			[]int{0, 1, 2, 3, 1},
		},
		{ // rotated more than once a day, and yearly
			[]string{"a.log", "a.log-20261129-1764374400.gz", "a.log-20261129-1764417600", "y.log.2025.gz", "y.log.2026", "y.log"},
			[]string{"a.log", "a.log", "a.log", "y.log", "y.log", "y.log"},
			[]int{0, 2, 1, 2, 1, 0},
		},
	} {
		files := make([]*File, len(c.paths))
		for i, p := range c.paths {
			files[i] = &File{Path: p}
		}
		assignRotations(files)
		for i, f := range files {
			if f.Log() != c.logs[i] || f.Rotation() != c.want[i] {
				t.Errorf("%s: log %q rotation %d, want %q %d", f.Path, f.Log(), f.Rotation(), c.logs[i], c.want[i])
			}
		}
	}
}
