package logtime

import "time"

// stamp is what a format reads from a line: a civil date and time plus the
// zone if the line writes one, or an instant if the line writes that directly
// (epoch numbers). Formats are pure functions of the bytes; the Parser turns a
// stamp into an instant with its location and the file's mtime.
type stamp struct {
	year, month, day int
	hour, min, sec   int
	nsec             int
	offset           int // seconds east of UTC, when zone == zoneOffset
	zone             zoneKind
	noYear           bool  // year-less format: the year comes from the file's mtime
	unixNano         int64 // when zone == zoneInstant
}

type zoneKind uint8

const (
	zoneLocal   zoneKind = iota // no zone written: the configured location applies
	zoneOffset                  // a UTC offset is written
	zoneInstant                 // an epoch number: unixNano is the instant
)

// The instants representable as int64 unix nanoseconds (years 1678 to 2262).
const (
	minUnixSec = -9223372036
	maxUnixSec = 9223372035
)

// daysFromCivil returns the days since 1970-01-01 of a proleptic Gregorian
// date (Howard Hinnant's algorithm): a handful of integer operations, where
// time.Date normalises every field and looks up the zone.
func daysFromCivil(y, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y
	if era < 0 {
		era -= 399
	}
	era /= 400
	yoe := y - era*400
	mp := (m + 9) % 12 // March = 0
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

var monthDays = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func daysIn(y, m int) int {
	if m == 2 && isLeap(y) {
		return 29
	}
	return monthDays[m]
}

// wallSeconds is the stamp's civil time as seconds since the epoch as if it
// were UTC; ok is false for a day the month does not have.
func (s *stamp) wallSeconds() (int64, bool) {
	if s.month < 1 || s.month > 12 || s.day < 1 || s.day > daysIn(s.year, s.month) {
		return 0, false
	}
	return daysFromCivil(s.year, s.month, s.day)*86400 +
		int64(s.hour*3600+s.min*60+s.sec), true
}

// unixNano joins seconds and nanoseconds, refusing instants int64 cannot hold.
func unixNano(sec int64, nsec int) (int64, bool) {
	if sec < minUnixSec || sec > maxUnixSec {
		return 0, false
	}
	return sec*1e9 + int64(nsec), true
}

// zoneResolver maps a wall-clock time in a location to its UTC offset.
//
// Rule for the two DST edges (the same as java.time's and Python's fold=0):
//   - a wall time in a spring-forward gap (02:30 on the day New York skips
//     02:00–03:00) is read with the offset in force before the gap, so it
//     lands after the gap (02:30 EST = 03:30 EDT);
//   - a wall time in a fall-back overlap (01:30 when New York repeats
//     01:00–02:00) is the earlier of the two instants (01:30 EDT).
//
// Looking an offset up in a *time.Location costs ~100 ns, so the offset of
// the last wall-clock hour is cached: logs are mostly in time order, and
// zones change offset on whole hours (an hour that does not resolve to one
// offset throughout is not cached).
type zoneResolver struct {
	loc      *time.Location
	fixed    bool
	fixedOff int64
	hourOK   bool
	hour     int64 // wall seconds / 3600 of the cached hour
	hourOff  int64
}

func newZoneResolver(loc *time.Location) zoneResolver {
	if loc == nil || loc == time.UTC {
		return zoneResolver{loc: time.UTC, fixed: true}
	}
	return zoneResolver{loc: loc}
}

// offset returns the UTC offset (seconds east) that applies to wall, a civil
// time written as seconds since the epoch as if it were UTC.
func (z *zoneResolver) offset(wall int64) int64 {
	if z.fixed {
		return z.fixedOff
	}
	h := wall / 3600
	if wall%3600 < 0 {
		h--
	}
	if z.hourOK && h == z.hour {
		return z.hourOff
	}
	off := z.resolve(wall)
	start := h * 3600
	if z.resolve(start) == z.resolve(start+3599) {
		z.hourOK, z.hour, z.hourOff = true, h, z.resolve(start)
	}
	return off
}

// resolve applies the gap/overlap rule without the cache. Transitions are
// assumed to be more than a day apart, which every zone in the tz database
// satisfies for the instants int64 nanoseconds can hold.
func (z *zoneResolver) resolve(wall int64) int64 {
	before := z.offsetAt(wall - 86400)
	after := z.offsetAt(wall + 86400)
	okBefore := z.offsetAt(wall-before) == before
	if before == after {
		if okBefore {
			return before
		}
		return z.offsetAt(wall - before)
	}
	okAfter := z.offsetAt(wall-after) == after
	switch {
	case okBefore && okAfter: // overlap: the earlier instant has the larger offset
		return max(before, after)
	case okAfter:
		return after
	default: // valid before the transition, or in the gap
		return before
	}
}

// unixNano is the instant of a stamp with a year: at its written offset,
// else at the offset its wall time has in the location.
func (z *zoneResolver) unixNano(s *stamp) (int64, bool) {
	wall, ok := s.wallSeconds()
	if !ok {
		return 0, false
	}
	if s.zone == zoneOffset {
		return unixNano(wall-int64(s.offset), s.nsec)
	}
	return unixNano(wall-z.offset(wall), s.nsec)
}

func (z *zoneResolver) offsetAt(unix int64) int64 {
	_, off := time.Unix(unix, 0).In(z.loc).Zone()
	return int64(off)
}
