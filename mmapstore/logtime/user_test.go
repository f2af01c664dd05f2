package logtime

import (
	"strings"
	"testing"
	"time"
)

func TestParseUserTime(t *testing.T) {
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	ny := mustLoad(t, "America/New_York")
	tests := []struct {
		in   string
		loc  *time.Location
		want string // RFC 3339 in UTC, or "error: <substring>"
	}{
		{"2026-11-29T14:02:05Z", nil, "2026-11-29T14:02:05Z"},
		{"2026-11-29T14:02:05.5+01:00", nil, "2026-11-29T13:02:05.5Z"},
		{"2026-11-29T14:02:05Z", ny, "2026-11-29T14:02:05Z"},
		{"2026-11-29 14:02", nil, "2026-11-29T14:02:00Z"},
		{"2026-11-29 14:02", ny, "2026-11-29T19:02:00Z"},
		{" 2026-11-29 14:02:07 ", ny, "2026-11-29T19:02:07Z"},
		{"2026-11-29T14:02", nil, "2026-11-29T14:02:00Z"},
		{"2026-11-29", ny, "2026-11-29T05:00:00Z"},
		{"2026-03-08 02:30", ny, "2026-03-08T07:30:00Z"}, // in the DST gap
		{"1795960920000", nil, "2026-11-29T14:02:00Z"},
		{"0", nil, "1970-01-01T00:00:00Z"},
		{"now", nil, "2026-11-29T15:00:00Z"},
		{"2h", nil, "2026-11-29T13:00:00Z"},
		{"30m", nil, "2026-11-29T14:30:00Z"},
		{"15s", nil, "2026-11-29T14:59:45Z"},
		{"7d", nil, "2026-11-22T15:00:00Z"},
		{"1w", nil, "2026-11-22T15:00:00Z"},
		{"1h30m", nil, "2026-11-29T13:30:00Z"},
		{"", nil, "error: empty"},
		{"2x", nil, "error: duration"},
		{"h", nil, "error: cannot read"},
		{"99999999999999999d", nil, "error: duration"},
		{"1000000d", nil, "error: too long"},
		{"2026-11-31 10:00", nil, "error: cannot read"},
		{"2026-11-29 10:00 junk", nil, "error: cannot read"},
		{"1234567890123456789", nil, "error: out of range"},
		{"yesterday", nil, "error: cannot read"},
		{"3000-01-01", nil, "error: out of range"},
		{"2263-01-01 00:00", nil, "error: out of range"},
		{"1600-01-01T00:00:00Z", nil, "error: out of range"},
	}
	for _, tt := range tests {
		got, err := ParseUserTime(tt.in, now, tt.loc)
		if msg, isErr := strings.CutPrefix(tt.want, "error: "); isErr {
			if err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("%q: got %v, %v; want an error with %q", tt.in, got, err, msg)
			}
			continue
		}
		if err != nil || got.UTC().Format(time.RFC3339Nano) != tt.want {
			t.Errorf("%q: got %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}
