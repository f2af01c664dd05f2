package logtime

import (
	"math/rand/v2"
	"testing"
	"time"
)

func mustLoad(t testing.TB, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("zone %s: %v", name, err)
	}
	return loc
}

// DST edges in named zones, and written zones winning over the location.
func TestZones(t *testing.T) {
	tests := []struct {
		zone, line, want string
	}{
		{"America/New_York", "2024-07-01 12:00:00", "2024-07-01T16:00:00Z"},
		{"America/New_York", "2024-01-01 12:00:00", "2024-01-01T17:00:00Z"},
		// Spring forward: 02:00–03:00 does not exist on 2024-03-10; a time
		// in the gap is read with the offset before it (EST).
		{"America/New_York", "2024-03-10 01:59:59", "2024-03-10T06:59:59Z"},
		{"America/New_York", "2024-03-10 02:00:00", "2024-03-10T07:00:00Z"},
		{"America/New_York", "2024-03-10 02:30:00", "2024-03-10T07:30:00Z"},
		{"America/New_York", "2024-03-10 03:00:00", "2024-03-10T07:00:00Z"},
		// Fall back: 01:00–02:00 happens twice on 2024-11-03; the earlier
		// instant (EDT) is taken.
		{"America/New_York", "2024-11-03 00:59:59", "2024-11-03T04:59:59Z"},
		{"America/New_York", "2024-11-03 01:00:00", "2024-11-03T05:00:00Z"},
		{"America/New_York", "2024-11-03 01:59:59", "2024-11-03T05:59:59Z"},
		{"America/New_York", "2024-11-03 02:00:00", "2024-11-03T07:00:00Z"},
		{"America/New_York", "2024-03-10T02:30:00Z", "2024-03-10T02:30:00Z"},
		{"America/New_York", "2024-03-10T02:30:00+01:00", "2024-03-10T01:30:00Z"},
		{"America/New_York", "1286536308.779 epoch", "2010-10-08T11:11:48.779Z"},
		// Southern hemisphere: Sydney falls back on 2024-04-07 03:00 AEDT.
		{"Australia/Sydney", "2024-04-07 02:30:00", "2024-04-06T15:30:00Z"},
		{"Australia/Sydney", "2024-10-06 02:30:00", "2024-10-05T16:30:00Z"},
		// Lord Howe moves by 30 minutes: 02:00 → 02:30 on 2024-10-06.
		{"Australia/Lord_Howe", "2024-10-06 02:15:00", "2024-10-05T15:45:00Z"},
		{"Australia/Lord_Howe", "2024-10-06 02:45:00", "2024-10-05T15:45:00Z"},
		{"Asia/Kolkata", "2024-01-01 05:30:00", "2024-01-01T00:00:00Z"},
	}
	for _, tt := range tests {
		p := NewParser(Options{Location: mustLoad(t, tt.zone), ModTime: time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC)})
		ns, ok := p.Parse([]byte(tt.line))
		if got := rfc(ns); !ok || got != tt.want {
			t.Errorf("%s %q: got %s ok=%v, want %s", tt.zone, tt.line, got, ok, tt.want)
		}
	}
}

// Year-less formats: the year is the mtime's unless that puts the line more
// than a day after the mtime; Feb 29 needs a leap year.
func TestYearless(t *testing.T) {
	tests := []struct {
		mtime, line, want string // want "" for no time
	}{
		{"2025-01-03T10:00:00Z", "Dec 31 23:59:59 host x", "2024-12-31T23:59:59Z"},
		{"2025-01-03T10:00:00Z", "Jan  2 10:00:00 host x", "2025-01-02T10:00:00Z"},
		{"2025-01-03T10:00:00Z", "Jan  4 10:00:00 host x", "2025-01-04T10:00:00Z"},
		{"2025-01-03T10:00:00Z", "Jan  4 10:00:01 host x", "2024-01-04T10:00:01Z"},
		{"2025-01-03T10:00:00Z", "12-31 23:00:00.000  1 2 D x", "2024-12-31T23:00:00Z"},
		{"2025-01-03T10:00:00Z", "[12.31 23:00:00] x", "2024-12-31T23:00:00Z"},
		{"2025-01-03T10:00:00Z", "I1231 23:00:00.5 1 x.go:1] x", "2024-12-31T23:00:00.5Z"},
		{"2024-03-01T00:00:00Z", "Feb 29 12:00:00 host leap", "2024-02-29T12:00:00Z"},
		{"2025-03-01T00:00:00Z", "Feb 29 12:00:00 host leap", "2024-02-29T12:00:00Z"},
		{"2026-03-01T00:00:00Z", "Feb 29 12:00:00 host leap", ""},
		{"2024-02-01T00:00:00Z", "Feb 29 12:00:00 host leap", ""},
	}
	for _, tt := range tests {
		mt, _ := time.Parse(time.RFC3339, tt.mtime)
		p := NewParser(Options{ModTime: mt})
		ns, ok := p.Parse([]byte(tt.line))
		if tt.want == "" {
			if ok {
				t.Errorf("mtime %s %q: got %s, want none", tt.mtime, tt.line, rfc(ns))
			}
			continue
		}
		if got := rfc(ns); !ok || got != tt.want {
			t.Errorf("mtime %s %q: got %s ok=%v, want %s", tt.mtime, tt.line, got, ok, tt.want)
		}
	}
	// The mtime's year is taken in the parser's location: 2025-01-01 01:00
	// UTC is still 2024 in New York.
	ny := mustLoad(t, "America/New_York")
	p := NewParser(Options{Location: ny, ModTime: time.Date(2025, 1, 1, 1, 0, 0, 0, time.UTC)})
	if ns, ok := p.Parse([]byte("Dec 31 19:00:00 host x")); !ok || rfc(ns) != "2025-01-01T00:00:00Z" {
		t.Errorf("year in location: got %s ok=%v", rfc(ns), ok)
	}
}

// wallString formats t's wall clock as the "YYYY-MM-DD hh:mm:ss" test lines use.
func wallString(t time.Time) string { return t.Format("2006-01-02 15:04:05") }

// Property: in zones with DST, every wall time that exists resolves to an
// instant showing that wall time (the earlier one when there are two), and
// a wall time in a gap resolves with the offset in force before the gap.
// Walking minute by minute through transition days also checks the hour
// cache against uncached resolution.
func TestZoneProperty(t *testing.T) {
	names := []string{"America/New_York", "Europe/London", "Australia/Sydney", "Australia/Lord_Howe", "America/Santiago", "Asia/Kolkata"}
	n := 1000
	if longRun() {
		n = 300000
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range names {
		loc := mustLoad(t, name)
		z := newZoneResolver(loc)
		for i := 0; i < n; i++ {
			var wall int64
			if i%2 == 0 { // minute walk around a random instant
				wall = 1.6e9 + int64(r.IntN(3e8))/60*60
			} else {
				wall = int64(r.IntN(4e9))
			}
			checkWall(t, &z, loc, wall)
			for k := int64(1); k < 8; k++ { // the hours after, through the cache
				checkWall(t, &z, loc, wall+k*1800)
			}
		}
	}
}

func checkWall(t *testing.T, z *zoneResolver, loc *time.Location, wall int64) {
	t.Helper()
	off := z.offset(wall)
	if raw := z.resolve(wall); raw != off {
		t.Fatalf("%s wall %d: cached offset %d, uncached %d", loc, wall, off, raw)
	}
	want := wallString(time.Unix(wall, 0).UTC())
	got := time.Unix(wall-off, 0).In(loc)
	if wallString(got) == want {
		// The earlier instant: no instant before it shows the same wall time.
		for _, d := range []int64{1800, 3600} {
			if wallString(time.Unix(wall-off-d, 0).In(loc)) == want && z.offsetAt(wall-off-d) != off {
				t.Fatalf("%s %s: took %s, not the earlier instant", loc, want, got)
			}
		}
		return
	}
	// A gap: the offset must be the one in force before it (a few hours
	// earlier), so the instant shows the wall time moved forward by the gap.
	before, after := z.offsetAt(wall-off-6*3600), z.offsetAt(wall-off+6*3600)
	moved := wallString(time.Unix(wall+after-before, 0).UTC())
	if off != before || after <= before || wallString(got) != moved {
		t.Fatalf("%s %s: resolved to %s (offset %d); offsets around: %d, %d", loc, want, got, off, before, after)
	}
}
