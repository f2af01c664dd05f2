package logtime

import "bytes"

// JSON lines: the time is the value of the first of these keys that holds
// one, either a string in a known format or an epoch number whose unit
// (s, ms, µs, ns) follows from its magnitude. The key is found with a byte
// search rather than a JSON parse: structured loggers write flat objects
// with the time near the front, and a search costs a few ns per line.
var jsonKeys = [][]byte{[]byte(`"@timestamp"`), []byte(`"timestamp"`), []byte(`"time"`), []byte(`"ts"`)}

// jsonValue returns the index of key in line and of its value, or -1s. A
// key is the quoted name followed by ':' (so the same word as a string value
// does not count) and not preceded by a backslash (an escaped quote in a
// string). hint is where the key was on the previous line, tried first: a
// logger writes its fields in one order, and checking there is cheaper than
// searching JSON's many quotes.
func jsonValue(line, key []byte, hint int) (at, v int) {
	if v := valueAfter(line, key, hint); v >= 0 {
		return hint, v
	}
	lim := min(len(line), jsonScanBytes)
	for from := 0; from < lim; {
		j := bytes.Index(line[from:lim], key)
		if j < 0 {
			return -1, -1
		}
		j += from
		if v := valueAfter(line, key, j); v >= 0 {
			return j, v
		}
		from = j + 1
	}
	return -1, -1
}

// valueAfter returns the index of the value if key is a key at line[at:].
func valueAfter(line, key []byte, at int) int {
	if at < 0 || at+len(key) > len(line) || !bytes.Equal(line[at:at+len(key)], key) || (at > 0 && line[at-1] == '\\') {
		return -1
	}
	if k := skipSpace(line, at+len(key)); k < len(line) && line[k] == ':' {
		return skipSpace(line, k+1)
	}
	return -1
}

func (p *Parser) detectJSON(line []byte) (layout, int64, bool) {
	for _, key := range jsonKeys {
		at, v := jsonValue(line, key, -1)
		if v < 0 || v >= len(line) {
			continue
		}
		l := layout{jsonKey: key, jsonHint: at}
		if line[v] != '"' {
			if ns, ok := epochNumber(line[v:]); ok {
				return l, ns, true
			}
			continue
		}
		f, s, ok := matchAt(line[v+1:])
		if !ok {
			continue
		}
		if ns, ok := p.instant(&s); ok {
			l.f = f
			return l, ns, true
		}
	}
	return layout{}, 0, false
}

func (p *Parser) parseJSON(l *layout, line []byte) (int64, bool) {
	at, v := jsonValue(line, l.jsonKey, l.jsonHint)
	if v < 0 || v >= len(line) {
		return 0, false
	}
	l.jsonHint = at
	if l.f == nil {
		return epochNumber(line[v:])
	}
	if line[v] != '"' {
		return 0, false
	}
	s, _, ok := l.f.parse(line[v+1:])
	if !ok {
		return 0, false
	}
	return p.instant(&s)
}

// epochNumber reads a JSON number as an epoch time, its unit inferred from
// the integer part's magnitude: up to 11 digits seconds, 14 milliseconds,
// 17 microseconds, else nanoseconds. Like epoch numbers in text it must fall
// between 2000 and 2100, so a "time" field holding a duration is not read
// as a 1970 date. Exponent notation is not read (loggers do not write it).
func epochNumber(b []byte) (int64, bool) {
	i := 0
	var v uint64
	for ; i < len(b) && isDigit(b[i]); i++ {
		if i == 19 {
			return 0, false
		}
		v = v*10 + uint64(b[i]-'0')
	}
	digits := i
	var mul uint64
	switch {
	case digits == 0:
		return 0, false
	case digits <= 11:
		mul = 1e9
	case digits <= 14:
		mul = 1e6
	case digits <= 17:
		mul = 1e3
	default:
		mul = 1
	}
	if sec := v / (1e9 / mul); sec < epochMinSec || sec >= epochMaxSec {
		return 0, false
	}
	var frac, scale uint64 = 0, 1
	if i+1 < len(b) && b[i] == '.' && isDigit(b[i+1]) {
		for i++; i < len(b) && isDigit(b[i]); i++ {
			if scale < 1e9 {
				frac = frac*10 + uint64(b[i]-'0')
				scale *= 10
			}
		}
	}
	if !ends(b, i) {
		return 0, false
	}
	return int64(v*mul + frac*mul/scale), true
}
