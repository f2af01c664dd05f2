// Package logtime owns logdex's reading of time from log lines: it detects
// the timestamp format of a file from its lines, then gives every line an
// instant (unix nanoseconds) at a fixed position with allocation-free digit
// parsing. The indexer uses it to build a file's time index and the query
// engine to timestamp lines appended since, so both read time the same way.
// It also parses the times users type (ParseUserTime) and owns the policy
// for lines without a timestamp (Fill, Carry).
//
// Detection scans a line's candidate positions (the line start, after a
// space and after one of `[("'=,;|<`) from left to right, within the first
// maxScanBytes bytes and maxScanFields fields, and takes the first position
// where a known format matches (the longest match there; see formats). The
// result, a layout, is the format plus its position as (whitespace-separated
// field, byte offset in that field), so a varying prefix like BGL's "-" or
// "APPREAD" does not move it. JSON lines (starting with '{') are read from
// their "@timestamp", "timestamp", "time" or "ts" field instead.
//
// Format names (Parser.Format): rfc3339; iso8601 (ISO 8601 that is not
// strict RFC 3339: a space separator, no seconds or no zone — Hadoop,
// Zookeeper, OpenStack, Windows CBS); syslog-rfc5424; syslog-rfc3164;
// apache-access; ctime (Apache error logs); hdfs; spark; logcat; healthapp;
// db2; epoch (BGL, HPC, Thunderbird); proxifier; go-log; klog; dd-mon-yyyy;
// json:<key>.
package logtime

import "time"

// Options configure a Parser.
type Options struct {
	// Location is the zone of timestamps that do not write one; nil is UTC.
	Location *time.Location
	// ModTime is the file's modification time. Formats without a year
	// (syslog, logcat, klog, Proxifier) take the mtime's year, or the year
	// before when that would put the line more than a day after the mtime
	// (a December line in a file last written in January). Zero means the
	// time NewParser is called.
	ModTime time.Time
}

// Detection bounds. A layout found beyond them would be a time in a message
// (a date in an exception text), not the line's own time.
const (
	maxScanBytes  = 200
	maxScanFields = 8
	maxLayouts    = 4    // layouts kept per file, for files that mix a few
	eagerLines    = 64   // lines detected one by one before any layout is found
	maxBackoff    = 1024 // lines between detection runs in a timestamp-less stretch
	confirmLines  = 4    // a layout on probation must match twice within this many lines
	jsonScanBytes = 4096 // JSON keys are searched this far into the line
)

// layout is a detected format and where in a line it is.
type layout struct {
	f        *format // nil for a JSON epoch number
	field    int     // whitespace-separated field index (ignored for JSON)
	off      int     // byte offset within that field
	jsonKey  []byte  // `"ts"`: the JSON key, quoted; nil for text lines
	jsonHint int     // where the key was last found
	hits     int

	// A layout found by re-detection in a file that already has one is on
	// probation until it matches again within confirmLines lines: a single
	// line with a time at a new position is more likely a date in a
	// message (an exception text) than a new format.
	probation bool
	probeLine int // the line of its last unconfirmed match
}

// atStart reports whether l reads the line's own place for a time: its
// start, or a JSON line's time field. A layout found there by
// re-detection (the file's format changed) is taken at once; one further
// in is more likely a date in a message, and goes on probation.
func (l *layout) atStart() bool { return l.jsonKey != nil || l.field == 0 && l.off == 0 }

func (l *layout) same(o *layout) bool {
	return l.f == o.f && l.field == o.field && l.off == o.off && string(l.jsonKey) == string(o.jsonKey)
}

func (l *layout) name() string {
	if l.jsonKey != nil {
		return "json:" + string(l.jsonKey[1:len(l.jsonKey)-1])
	}
	return l.f.name
}

// Parser reads timestamps of one file. It is not safe for concurrent use.
type Parser struct {
	zone      zoneResolver
	mtimeNs   int64
	mtimeYear int

	layouts [maxLayouts]layout
	n       int // layouts in use
	cur     int // the layout tried first

	lines       int // lines seen by Parse
	sinceDetect int // lines since the last detection run
	backoff     int // lines to wait, counted by sinceDetect, before the next run
	detectRuns  int // detection runs by Parse, for tests of the backoff
}

// NewParser returns a Parser that has detected nothing yet.
func NewParser(opt Options) *Parser {
	mt := opt.ModTime
	if mt.IsZero() {
		mt = time.Now()
	}
	loc := opt.Location
	if loc == nil {
		loc = time.UTC
	}
	return &Parser{
		zone:      newZoneResolver(loc),
		mtimeNs:   mt.UnixNano(),
		mtimeYear: mt.In(loc).Year(),
	}
}

// Format names the detected format ("rfc3339", "syslog-rfc3164", "hdfs",
// "json:ts", …): of the layouts seen, the one that matched most lines. It is
// "" until a timestamp has been found.
func (p *Parser) Format() string {
	best := -1
	for i := 0; i < p.n; i++ {
		if best < 0 || p.layouts[i].hits > p.layouts[best].hits {
			best = i
		}
	}
	if best < 0 {
		return ""
	}
	return p.layouts[best].name()
}

// Detect picks the layouts from sample lines (typically the first few dozen
// of a file) by majority, replacing what the Parser had detected. It
// reports whether any line has a timestamp. Calling it is optional: Parse
// detects lazily, line by line.
func (p *Parser) Detect(sample [][]byte) bool {
	var found [maxLayouts * 4]layout
	nf := 0
	for _, line := range sample {
		l, _, ok := p.detectLine(line)
		if !ok {
			continue
		}
		i := 0
		for i < nf && !found[i].same(&l) {
			i++
		}
		if i == nf {
			if nf == len(found) {
				continue
			}
			found[nf] = l
			nf++
		}
		found[i].hits++
	}
	// Stable selection of the most frequent: earlier first on ties.
	p.n, p.cur = 0, 0
	for p.n < maxLayouts {
		best := -1
		for i := 0; i < nf; i++ {
			if found[i].hits > 0 && (best < 0 || found[i].hits > found[best].hits) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		p.layouts[p.n] = found[best]
		p.n++
		found[best].hits = 0
	}
	p.sinceDetect, p.backoff = 0, 1
	return p.n > 0
}

// Parse returns the instant of line's timestamp in unix nanoseconds, or
// ok=false for a line without one (a stack trace, a continuation). line
// should not include its '\n' ('\r' is fine).
//
// Parse tries the current layout, then the other layouts of this file; when
// all miss it re-runs detection on the line, but with exponential backoff
// (1, 2, 4 … maxBackoff lines between runs, reset when a run finds a new
// layout), so long timestamp-less stretches cost ~one scan per thousand
// lines. Lines starting with a space or tab are taken for continuations and
// not scanned once a layout is known. A layout found by such a run is on
// probation (see layout) unless it is at the line's start or a JSON time
// field (atStart): the line that revealed it, and any match not within
// confirmLines of the previous one, get ok=false, so a date inside a
// message is not the line's time, while a change of format at the line's
// start costs no line.
func (p *Parser) Parse(line []byte) (unixNano int64, ok bool) {
	p.lines++
	p.sinceDetect++
	if p.n > 0 {
		if ns, ok := p.parseLayout(&p.layouts[p.cur], line); ok {
			p.layouts[p.cur].hits++
			return ns, true
		}
		for i := 0; i < p.n; i++ {
			if i == p.cur {
				continue
			}
			l := &p.layouts[i]
			ns, ok := p.parseLayout(l, line)
			if !ok {
				continue
			}
			if l.probation {
				if p.lines-l.probeLine > confirmLines {
					l.probeLine = p.lines
					return 0, false
				}
				l.probation = false
			}
			l.hits++
			p.cur = i
			return ns, true
		}
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			return 0, false
		}
	}
	if p.sinceDetect < p.backoff {
		return 0, false
	}
	p.sinceDetect = 0
	p.detectRuns++
	l, ns, ok := p.detectLine(line)
	if !ok {
		if p.n > 0 || p.lines >= eagerLines {
			p.backoff = min(max(2*p.backoff, 1), maxBackoff)
		}
		return 0, false
	}
	p.backoff = 1
	if p.n > 0 && !l.atStart() {
		l.probation, l.probeLine = true, p.lines
		p.add(l)
		return 0, false
	}
	l.hits = 1
	p.cur = p.add(l)
	return ns, true
}

// add keeps l among the layouts, replacing the least used other than the
// current one when full, and returns its index.
func (p *Parser) add(l layout) int {
	if p.n < maxLayouts {
		p.layouts[p.n] = l
		p.n++
		return p.n - 1
	}
	least := -1
	for i := 0; i < p.n; i++ {
		if i != p.cur && (least < 0 || p.layouts[i].hits < p.layouts[least].hits) {
			least = i
		}
	}
	p.layouts[least] = l
	return least
}

// parseLayout reads line at l's position with l's format.
func (p *Parser) parseLayout(l *layout, line []byte) (int64, bool) {
	if l.jsonKey != nil {
		return p.parseJSON(l, line)
	}
	i := 0
	for k := l.field; k > 0; k-- {
		for i < len(line) && line[i] != ' ' && line[i] != '\t' {
			i++
		}
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
	}
	i += l.off
	if i >= len(line) {
		return 0, false
	}
	s, _, ok := l.f.parse(line[i:])
	if !ok {
		return 0, false
	}
	return p.instant(&s)
}

// instant turns a stamp into unix nanoseconds.
func (p *Parser) instant(s *stamp) (int64, bool) {
	switch {
	case s.zone == zoneInstant:
		return s.unixNano, true
	case s.noYear:
		s.year = p.mtimeYear
		if ns, ok := p.civil(s); ok && ns <= p.mtimeNs+24*int64(time.Hour) {
			return ns, true
		}
		s.year--
	}
	return p.civil(s)
}

func (p *Parser) civil(s *stamp) (int64, bool) { return p.zone.unixNano(s) }

// isScanStart reports whether a timestamp may start after byte c.
func isScanStart(c byte) bool {
	switch c {
	case ' ', '\t', '[', '(', '"', '\'', '=', ',', ';', '|', '<':
		return true
	}
	return false
}

// detectLine finds the first timestamp of line and the layout that reads
// it, with its instant.
func (p *Parser) detectLine(line []byte) (layout, int64, bool) {
	if j := skipSpace(line, 0); j < len(line) && line[j] == '{' {
		return p.detectJSON(line)
	}
	field, fieldStart := 0, 0
	limit := min(len(line), maxScanBytes)
	for i := 0; i < limit; i++ {
		if i > 0 {
			prev := line[i-1]
			if (prev == ' ' || prev == '\t') && line[i] != ' ' && line[i] != '\t' {
				field++
				fieldStart = i
				if field >= maxScanFields {
					break
				}
			}
			if !isScanStart(prev) {
				continue
			}
		}
		if f, s, ok := matchAt(line[i:]); ok {
			if ns, ok := p.instant(&s); ok {
				return layout{f: f, field: field, off: i - fieldStart}, ns, true
			}
		}
	}
	return layout{}, 0, false
}

// matchAt returns the format that reads the longest timestamp at b's start.
func matchAt(b []byte) (*format, stamp, bool) {
	var best *format
	var bestStamp stamp
	bestN := 0
	if len(b) == 0 {
		return nil, stamp{}, false
	}
	for _, f := range byFirst[b[0]] {
		test := f.detect
		if test == nil {
			test = f.parse
		}
		if s, n, ok := test(b); ok && n > bestN {
			best, bestStamp, bestN = f, s, n
		}
	}
	return best, bestStamp, best != nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}
