package logtime

import (
	"fmt"
	"strings"
	"time"
)

// ParseUserTime reads a time a user typed on the command line or sent to
// the API:
//
//   - RFC 3339 / ISO 8601: "2026-11-29T14:02:05Z", "2026-11-29T14:02:05.5+01:00";
//   - a local date and time to the minute or second, in loc (nil is UTC):
//     "2026-11-29 14:02", "2026-11-29 14:02:05", "2026-11-29T14:02", or a
//     date alone, "2026-11-29" (midnight);
//   - epoch milliseconds: "1795960920000";
//   - a duration before now: "15s", "30m", "2h", "7d", "1w", or a sum of them
//     like "1h30m"; "now" is now.
//
// Local times in a DST gap or overlap follow the package's rule (see
// zoneResolver): a gap time moves forward, an overlap time is the earlier.
func ParseUserTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if loc == nil {
		loc = time.UTC
	}
	switch {
	case s == "":
		return time.Time{}, fmt.Errorf("logtime: empty time")
	case s == "now":
		return now, nil
	case isAllDigits(s):
		if len(s) > 15 {
			return time.Time{}, fmt.Errorf("logtime: epoch milliseconds %q out of range", s)
		}
		var ms int64
		for i := 0; i < len(s); i++ {
			ms = ms*10 + int64(s[i]-'0')
		}
		return time.UnixMilli(ms).In(loc), nil
	case s[len(s)-1] >= 'a' && isDigit(s[0]) && !strings.ContainsAny(s, "-:"):
		d, err := parseAgo(s)
		if err != nil {
			return time.Time{}, err
		}
		return now.Add(-d), nil
	}
	b := []byte(s)
	if len(b) == 10 {
		b = append(b, " 00:00"...)
	}
	st, n, ok := parseISO(b)
	if ok && n == len(b) {
		z := newZoneResolver(loc)
		if ns, ok := z.unixNano(&st); ok {
			return time.Unix(0, ns).In(loc), nil
		}
		if st.year < 1678 || st.year > 2262 { // (times are int64 nanoseconds)
			return time.Time{}, fmt.Errorf("logtime: time %q out of range: years 1678 to 2262 can be given", s)
		}
	}
	return time.Time{}, fmt.Errorf("logtime: cannot read time %q: want RFC 3339, "+
		"\"YYYY-MM-DD HH:MM[:SS]\", epoch milliseconds, or a duration ago like 30m, 2h, 7d", s)
}

func isAllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// agoUnits extends time.ParseDuration's units with days and weeks, the
// usual spans for looking back over logs.
var agoUnits = map[string]time.Duration{
	"s": time.Second, "m": time.Minute, "h": time.Hour,
	"d": 24 * time.Hour, "w": 7 * 24 * time.Hour,
}

// parseAgo reads a sum of <integer><unit> terms, e.g. "1d12h".
func parseAgo(s string) (time.Duration, error) {
	var total time.Duration
	for rest := s; rest != ""; {
		i := 0
		for i < len(rest) && isDigit(rest[i]) {
			i++
		}
		j := i
		for j < len(rest) && !isDigit(rest[j]) {
			j++
		}
		unit, ok := agoUnits[rest[i:j]]
		if i == 0 || i > 9 || !ok {
			return 0, fmt.Errorf("logtime: cannot read duration %q: want terms like 15s, 30m, 2h, 7d, 1w", s)
		}
		var v time.Duration
		for _, c := range rest[:i] {
			v = v*10 + time.Duration(c-'0')
		}
		if v > (1<<62)/unit {
			return 0, fmt.Errorf("logtime: duration %q too long", s)
		}
		total += v * unit
		if total > 1<<62 {
			return 0, fmt.Errorf("logtime: duration %q too long", s)
		}
		rest = rest[j:]
	}
	return total, nil
}
