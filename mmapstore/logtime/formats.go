package logtime

// The format table. Each format reads a timestamp at the start of b with
// fixed-layout digit reads (no allocation, no time.Parse): it returns the
// stamp, the number of bytes it spans, and ok. A timestamp must end at a
// byte that is not a letter or digit, so "0811091" is not an HDFS date.
//
// Why hand-written: time.Parse and a strptime library (timefmt-go) cost
// 2–5 times more per line even when handed the exact timestamp bytes
// (bench_test.go has the figures), cannot read HealthApp's unpadded clock
// and milliseconds, and would still need this package's position finding,
// mtime year rule and DST rule around them.

type format struct {
	name string
	// example documents the layout and seeds the tests and fuzz corpus.
	example string
	// first lists the bytes the format can start with, so detection tries
	// at each position only the formats that can match there.
	first string
	parse func(b []byte) (s stamp, n int, ok bool)
	// detect, when set, is the stricter test a line must pass for
	// detection to pick this format; parse is used afterwards. It lets
	// "rfc3339" and "iso8601" share one lenient parser.
	detect func(b []byte) (s stamp, n int, ok bool)
}

const (
	digits    = "0123456789"
	monthInit = "JFMASONDjfmasond" // first letters of month names
	dayInit   = "MTWFSmtwfs"       // first letters of weekday names
)

// formats is in priority order: at one position the longest match wins and
// ties go to the earlier entry.
var formats = []*format{
	{name: "rfc3339", example: "2024-01-02T03:04:05.123456Z", first: digits, parse: parseISO, detect: parseRFC3339},
	{name: "iso8601", example: "2015-07-29 17:41:44,747", first: digits, parse: parseISO},
	{name: "syslog-rfc5424", example: "<34>1 2003-10-11T22:14:15.003Z", first: "<", parse: parseRFC5424},
	{name: "syslog-rfc3164", example: "Jun 14 15:16:01", first: monthInit, parse: parseRFC3164},
	{name: "apache-access", example: "10/Oct/2000:13:55:36 -0700", first: digits, parse: parseAccess},
	{name: "ctime", example: "Sun Dec 04 04:47:44 2005", first: dayInit, parse: parseCtime},
	{name: "hdfs", example: "081109 203615", first: digits, parse: parseHDFS},
	{name: "spark", example: "17/06/09 20:10:40", first: digits, parse: parseSpark},
	{name: "logcat", example: "03-17 16:13:38.811", first: digits, parse: parseLogcat},
	{name: "healthapp", example: "20171223-22:15:29:606", first: digits, parse: parseHealthApp},
	{name: "db2", example: "2005-06-03-15.42.50.675872", first: digits, parse: parseDB2},
	{name: "epoch", example: "1117838570", first: digits, parse: parseEpoch},
	{name: "proxifier", example: "10.30 16:49:06", first: digits, parse: parseProxifier},
	{name: "go-log", example: "2009/01/23 01:23:23.123", first: digits, parse: parseSlashYMD},
	{name: "klog", example: "I0102 15:04:05.123456", first: "IWEFD", parse: parseKlog},
	{name: "dd-mon-yyyy", example: "02-Jan-2006 15:04:05.000", first: digits, parse: parseDayMonYear},
}

// byFirst[c] lists, in priority order, the formats that can start with c.
var byFirst [256][]*format

func init() {
	for _, f := range formats {
		for i := 0; i < len(f.first); i++ {
			byFirst[f.first[i]] = append(byFirst[f.first[i]], f)
		}
	}
}

func formatByName(name string) *format {
	for _, f := range formats {
		if f.name == name {
			return f
		}
	}
	return nil
}

// parseISO reads ISO 8601 / RFC 3339 leniently: "YYYY-MM-DD", 'T' or space,
// "hh:mm", optional ":ss", optional fraction after '.' or ',', optional zone.
func parseISO(b []byte) (s stamp, n int, ok bool) {
	if len(b) < 16 || b[4] != '-' || b[7] != '-' || b[13] != ':' {
		return
	}
	if c := b[10]; c != 'T' && c != 't' && c != ' ' {
		return
	}
	s.year = d4(b[0], b[1], b[2], b[3])
	s.month, s.day = d2(b[5], b[6]), d2(b[8], b[9])
	s.hour, s.min = d2(b[11], b[12]), d2(b[14], b[15])
	i := 16
	if len(b) >= 19 && b[16] == ':' {
		s.sec = d2(b[17], b[18])
		i = fraction(b, 19, &s)
	}
	if s.year < 0 || !validDate(&s) || !validClock(&s) {
		return
	}
	i = zone(b, i, &s)
	return s, i, ends(b, i)
}

// parseRFC3339 is the strict subset: 'T', seconds and a zone.
func parseRFC3339(b []byte) (s stamp, n int, ok bool) {
	s, n, ok = parseISO(b)
	if !ok || n < 19 || b[10] == ' ' || b[16] != ':' || s.zone != zoneOffset {
		return stamp{}, 0, false
	}
	return
}

// parseRFC5424 reads a syslog RFC 5424 header's "<PRI>VERSION TIMESTAMP".
func parseRFC5424(b []byte) (s stamp, n int, ok bool) {
	if len(b) < 4 || b[0] != '<' {
		return
	}
	i := 1
	for i < len(b) && i <= 4 && isDigit(b[i]) {
		i++
	}
	if i == 1 || i >= len(b) || b[i] != '>' {
		return
	}
	j := i + 1
	for j < len(b) && j <= i+3 && isDigit(b[j]) {
		j++
	}
	if j == i+1 || j >= len(b) || b[j] != ' ' {
		return
	}
	s, n, ok = parseISO(b[j+1:])
	return s, j + 1 + n, ok
}

// parseRFC3164 reads the BSD syslog "Mmm dd hh:mm:ss" (day space-padded or
// not, optional fraction). The year is not written.
func parseRFC3164(b []byte) (s stamp, n int, ok bool) {
	i, ok := monDayClock(b, &s)
	s.noYear = true
	return s, i, ok && ends(b, i)
}

// parseCtime reads ctime/asctime as Apache error logs write it:
// "Sun Dec 04 04:47:44 2005", "Sun Dec  4 04:47:44.123456 2005".
func parseCtime(b []byte) (s stamp, n int, ok bool) {
	if len(b) < 23 || b[3] != ' ' || !isWeekday3(b[0], b[1], b[2]) {
		return
	}
	i, ok := monDayClock(b[4:], &s)
	i += 4
	if !ok || i+5 > len(b) || b[i] != ' ' {
		return stamp{}, 0, false
	}
	if s.year = d4(b[i+1], b[i+2], b[i+3], b[i+4]); s.year < 0 {
		return stamp{}, 0, false
	}
	return s, i + 5, ends(b, i+5)
}

// monDayClock reads "Mmm dd hh:mm:ss[.frac]" (the day space-padded or not)
// into s, returning the index after it.
func monDayClock(b []byte, s *stamp) (int, bool) {
	if len(b) < 14 || b[3] != ' ' {
		return 0, false
	}
	if s.month = month3(b[0], b[1], b[2]); s.month == 0 {
		return 0, false
	}
	i, ok := day12(b, 4, s)
	if !ok || i >= len(b) || b[i] != ' ' || !clock(b[i+1:], s) || !validDate(s) {
		return 0, false
	}
	return fraction(b, i+9, s), true
}

// parseHDFS reads "yyMMdd HHmmss".
func parseHDFS(b []byte) (s stamp, n int, ok bool) {
	if len(b) < 13 || b[6] != ' ' {
		return
	}
	y := d2(b[0], b[1])
	s.month, s.day = d2(b[2], b[3]), d2(b[4], b[5])
	s.hour, s.min, s.sec = d2(b[7], b[8]), d2(b[9], b[10]), d2(b[11], b[12])
	if y < 0 || !validDate(&s) || !validClock(&s) {
		return stamp{}, 0, false
	}
	s.year = twoDigitYear(y)
	return s, 13, ends(b, 13)
}

// parseSpark reads log4j's "yy/MM/dd HH:mm:ss" as Spark writes it.
func parseSpark(b []byte) (s stamp, n int, ok bool) {
	if len(b) < 17 || b[2] != '/' || b[5] != '/' || b[8] != ' ' {
		return
	}
	y := d2(b[0], b[1])
	s.month, s.day = d2(b[3], b[4]), d2(b[6], b[7])
	if y < 0 || !validDate(&s) || !clock(b[9:], &s) {
		return stamp{}, 0, false
	}
	s.year = twoDigitYear(y)
	i := fraction(b, 17, &s)
	return s, i, ends(b, i)
}

// parseHealthApp reads "yyyyMMdd-H:m:s:S": the clock's fields are not
// zero-padded ("22:16:0:119"), and neither are the milliseconds (":96" is
// 96 ms, between ":98" and ":104" in the file).
func parseHealthApp(b []byte) (s stamp, n int, ok bool) {
	if len(b) < 16 || b[8] != '-' {
		return
	}
	s.year = d4(b[0], b[1], b[2], b[3])
	s.month, s.day = d2(b[4], b[5]), d2(b[6], b[7])
	if s.year < 0 || !validDate(&s) {
		return
	}
	var ms int
	i := 9
	s.hour, i = upTo(b, i, 2)
	i = expect(b, i, ':')
	s.min, i = upTo(b, i, 2)
	i = expect(b, i, ':')
	s.sec, i = upTo(b, i, 2)
	i = expect(b, i, ':')
	ms, i = upTo(b, i, 3)
	if ms < 0 || i < 0 {
		return stamp{}, 0, false
	}
	if !validClock(&s) {
		return stamp{}, 0, false
	}
	s.nsec = ms * 1e6
	return s, i, ends(b, i)
}

// parseDB2 reads IBM's "yyyy-MM-dd-HH.mm.ss.ffffff" (BGL's second stamp).
func parseDB2(b []byte) (s stamp, n int, ok bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || b[10] != '-' || b[13] != '.' || b[16] != '.' {
		return
	}
	s.year = d4(b[0], b[1], b[2], b[3])
	s.month, s.day = d2(b[5], b[6]), d2(b[8], b[9])
	s.hour, s.min, s.sec = d2(b[11], b[12]), d2(b[14], b[15]), d2(b[17], b[18])
	if s.year < 0 || !validDate(&s) || !validClock(&s) {
		return stamp{}, 0, false
	}
	i := 19
	if i+1 < len(b) && b[i] == '.' && isDigit(b[i+1]) {
		i = digitsFraction(b, i+1, &s)
	}
	return s, i, ends(b, i)
}

// Epoch numbers in text are taken only as 10 digits of seconds or 13 of
// milliseconds (optionally with a fraction) between 2000 and 2100: other
// widths are far more often ids, sizes or counters.
const (
	epochMinSec = 946684800  // 2000-01-01
	epochMaxSec = 4102444800 // 2100-01-01
)

// parseEpoch reads "1117838570", "1117838570.123", "1286536308779".
func parseEpoch(b []byte) (s stamp, n int, ok bool) {
	i, v := 0, int64(0)
	for ; i < len(b) && i < 14 && isDigit(b[i]); i++ {
		v = v*10 + int64(b[i]-'0')
	}
	var unit int64
	switch i {
	case 10:
		unit = 1e9
	case 13:
		unit = 1e6
	default:
		return
	}
	if sec := v / (1e9 / unit); sec < epochMinSec || sec >= epochMaxSec {
		return
	}
	if i+1 < len(b) && b[i] == '.' && isDigit(b[i+1]) {
		i = digitsFraction(b, i+1, &s)
	}
	s.zone, s.unixNano = zoneInstant, v*unit+int64(s.nsec)*unit/1e9
	return s, i, ends(b, i)
}

// parseSlashYMD reads "yyyy/MM/dd HH:mm:ss[.frac]" as Go's log package and
// nginx's error log write it.
func parseSlashYMD(b []byte) (s stamp, n int, ok bool) {
	if len(b) < 19 || b[4] != '/' || b[7] != '/' || b[10] != ' ' {
		return
	}
	s.year = d4(b[0], b[1], b[2], b[3])
	s.month, s.day = d2(b[5], b[6]), d2(b[8], b[9])
	if s.year < 0 || !validDate(&s) || !clock(b[11:], &s) {
		return stamp{}, 0, false
	}
	i := zone(b, fraction(b, 19, &s), &s)
	return s, i, ends(b, i)
}

// parseAccess reads the Common Log Format's "dd/Mon/yyyy:hh:mm:ss -0700".
func parseAccess(b []byte) (stamp, int, bool) { return dayMonYear(b, '/', ':') }

// parseDayMonYear reads "dd-Mon-yyyy HH:mm:ss[.SSS]" (Tomcat, Oracle).
func parseDayMonYear(b []byte) (stamp, int, bool) { return dayMonYear(b, '-', ' ') }

// dayMonYear reads "dd<d>Mon<d>yyyy<t>hh:mm:ss", an optional fraction and
// an optional zone.
func dayMonYear(b []byte, d, t byte) (s stamp, n int, ok bool) {
	if len(b) < 20 || b[2] != d || b[6] != d || b[11] != t {
		return
	}
	s.day, s.month = d2(b[0], b[1]), month3(b[3], b[4], b[5])
	s.year = d4(b[7], b[8], b[9], b[10])
	if s.year < 0 || !validDate(&s) || !clock(b[12:], &s) {
		return stamp{}, 0, false
	}
	i := zone(b, fraction(b, 20, &s), &s)
	return s, i, ends(b, i)
}

// parseLogcat reads Android logcat's "MM-dd HH:mm:ss.SSS" (no year).
func parseLogcat(b []byte) (stamp, int, bool) { return monthDay(b, '-') }

// parseProxifier reads "MM.dd HH:mm:ss" (no year).
func parseProxifier(b []byte) (stamp, int, bool) { return monthDay(b, '.') }

// parseKlog reads the Kubernetes klog/glog header "Lmmdd hh:mm:ss.uuuuuu"
// where L is the level letter (no year).
func parseKlog(b []byte) (stamp, int, bool) {
	if len(b) == 0 || (b[0] != 'I' && b[0] != 'W' && b[0] != 'E' && b[0] != 'F' && b[0] != 'D') {
		return stamp{}, 0, false
	}
	s, n, ok := monthDay(b[1:], 0)
	if !ok {
		return stamp{}, 0, false
	}
	return s, n + 1, true
}

// monthDay reads the year-less "MM<sep>dd HH:mm:ss[.frac]"; sep 0 is none.
func monthDay(b []byte, sep byte) (s stamp, n int, ok bool) {
	i := 2
	if sep != 0 {
		if len(b) < 3 || b[2] != sep {
			return
		}
		i = 3
	}
	if len(b) < i+11 || b[i+2] != ' ' {
		return
	}
	s.month, s.day = d2(b[0], b[1]), d2(b[i], b[i+1])
	if !validDate(&s) || !clock(b[i+3:], &s) {
		return stamp{}, 0, false
	}
	s.noYear = true
	i = fraction(b, i+11, &s)
	return s, i, ends(b, i)
}
