package query

import "testing"

func TestSplitRotation(t *testing.T) {
	for _, c := range []struct {
		path, log string
		n         int
		date      string
	}{
		{"logs/app.log", "logs/app.log", 0, ""},
		{"logs/app.log.1", "logs/app.log", 1, ""},
		{"logs/app.log.2.gz", "logs/app.log", 2, ""},
		{"logs/syslog.7.gz", "logs/syslog", 7, ""},
		{"logs/app.log-20261129", "logs/app.log", 0, "20261129"},
		{"logs/app.log-20261129.zst", "logs/app.log", 0, "20261129"},
		{"logs/app.log.2026-11-29", "logs/app.log", 0, "20261129"},
		{"logs/app.log-2026112913", "logs/app.log", 0, "2026112913"},
		{"logs/messages.xz", "logs/messages", 0, ""},
		{"logs/v1.2", "logs/v1", 2, ""},
		{"logs/20261129", "logs/20261129", 0, ""},
		{"logs/app.log.12345", "logs/app.log.12345", 0, ""}, // five digits: not a rotation number
		{"logs/app.log.9999", "logs/app.log", 9999, ""},
		{"logs/app.1x", "logs/app.1x", 0, ""},
		{"logs/app.", "logs/app.", 0, ""},
		{".3", "", 3, ""},
	} {
		log, n, date := splitRotation(c.path)
		if log != c.log || n != c.n || date != c.date {
			t.Errorf("splitRotation(%q) = %q %d %q, want %q %d %q", c.path, log, n, date, c.log, c.n, c.date)
		}
	}
	files := []*File{{Path: "a.log"}, {Path: "a.log.1"}, {Path: "a.log.2.gz"}, {Path: "a.log-20261128.gz"}, {Path: "a.log-20261129.gz"}, {Path: "b.log"}}
	assignRotations(files)
	for i, want := range []int{0, 1, 2, 4, 3, 0} {
		if files[i].Log() != map[bool]string{true: "b.log", false: "a.log"}[i == 5] || files[i].Rotation() != want {
			t.Errorf("%s: log %q rotation %d, want %d", files[i].Path, files[i].Log(), files[i].Rotation(), want)
		}
	}
}
