package server

import (
	"encoding/base64"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/logdex/logdex/mmapstore/wordwise"
	"github.com/logdex/logdex/query"
)

// The search response is written by hand: encoding/json's reflection and
// the string copies it needs cost more than the search itself for a
// selective query. The output is byte-for-byte what json.Marshal of
// hitJSON gives (a test holds it to that).

const hexDigits = "0123456789abcdef"

// jsonSafe is 1 for the bytes that go into a JSON string as they are
// (printable ASCII but '"', '\\' and the HTML-unsafe '<', '>', '&'), 0 for
// the others: as integers, the fast path ANDs eight lookups with no branch
// between them.
var jsonSafe = func() (t [256]uint8) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		if b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
			t[b] = 1
		}
	}
	return t
}()

// appendJSONString appends s as a JSON string, escaped like encoding/json
// (HTML-safe, invalid UTF-8 as U+FFFD, U+2028/U+2029 escaped).
func appendJSONString[T string | []byte](dst []byte, s T) []byte {
	dst, _ = appendJSONStringValid(dst, s)
	return dst
}

// appendJSONStringValid is appendJSONString that also says whether s was
// valid UTF-8 (a line's text then needs no base64 copy), found in the same
// pass.
func appendJSONStringValid[T string | []byte](dst []byte, s T) (_ []byte, valid bool) {
	valid = true
	dst = append(dst, '"')
	start := 0 // s[start:i] is plain and not written yet
	for i := 0; i < len(s); {
		// Runs of plain bytes, 8 at a time (most of a plain log line).
		for i+8 <= len(s) && jsonSafe[s[i]]&jsonSafe[s[i+1]]&jsonSafe[s[i+2]]&jsonSafe[s[i+3]]&
			jsonSafe[s[i+4]]&jsonSafe[s[i+5]]&jsonSafe[s[i+6]]&jsonSafe[s[i+7]] != 0 {
			i += 8
		}
		if i == len(s) {
			break
		}
		if i+8 <= len(s) {
			// Eight bytes at a time: every byte to escape in the word is
			// handled from one mask (a JSON log line has a quote every few
			// bytes); a non-ASCII byte leaves the word to the rune path.
			w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
				uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
			m := jsonSpecial(w)
			next := i + 8
			for ; m != 0; m &= m - 1 {
				j := i + bits.TrailingZeros64(m)/8
				b := s[j]
				if b >= utf8.RuneSelf {
					next = j
					break
				}
				if jsonSafe[b] != 0 {
					continue // a false mark (above a true one)
				}
				dst = append(dst, s[start:j]...)
				dst = appendEscape(dst, b)
				start = j + 1
			}
			if i = next; i == len(s) || s[i] < utf8.RuneSelf {
				continue
			}
		} else if b := s[i]; b < utf8.RuneSelf {
			if jsonSafe[b] == 0 {
				dst = append(dst, s[start:i]...)
				dst = appendEscape(dst, b)
				start = i + 1
			}
			i++
			continue
		}
		var r rune
		var size int
		switch v := any(s).(type) {
		case string:
			r, size = utf8.DecodeRuneInString(v[i:])
		case []byte:
			r, size = utf8.DecodeRune(v[i:])
		}
		if r == utf8.RuneError && size == 1 {
			valid = false
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), valid
}

// appendEscape appends the escape of ASCII byte b, one that is not
// jsonSafe.
func appendEscape(dst []byte, b byte) []byte {
	switch b {
	case '"', '\\':
		return append(dst, '\\', b)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
}

// jsonSpecial marks the bytes of w that do not go into a JSON string as
// they are: control bytes, '"', '\\', '<', '>', '&' and non-ASCII bytes.
func jsonSpecial(w uint64) uint64 {
	const lsb, msb = wordwise.Lows, wordwise.Highs
	return (w-0x20*lsb)&^w&msb | w&msb | wordwise.Zeros(w^'"'*lsb) | wordwise.Zeros(w^'\\'*lsb) |
		wordwise.Zeros(w^'<'*lsb) | wordwise.Zeros(w^'>'*lsb) | wordwise.Zeros(w^'&'*lsb)
}

// clipLine cuts a line's bytes for JSON at maxLineBytes and says whether
// they must also travel as base64 (JSON would replace invalid UTF-8).
func clipLine(b []byte) (text []byte, needB64, truncated bool) {
	text, truncated = clip(b)
	return text, !utf8.Valid(text), truncated
}

// clip cuts a line's bytes for JSON at maxLineBytes.
func clip(b []byte) (text []byte, truncated bool) {
	if len(b) > maxLineBytes {
		return b[:maxLineBytes], true
	}
	return b, false
}

// clippedLen is the length of a line's text as clip cuts it.
func clippedLen(b []byte) int { return min(len(b), maxLineBytes) }

// appendLineFields appends "text", "text_b64" and "truncated" (the last
// two when set), each preceded by a comma.
func appendLineFields(dst, raw []byte) []byte {
	text, truncated := clip(raw)
	dst = append(dst, `,"text":`...)
	dst, valid := appendJSONStringValid(dst, text)
	if !valid {
		dst = append(dst, `,"text_b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, text)
		dst = append(dst, '"')
	}
	if truncated {
		dst = append(dst, `,"truncated":true`...)
	}
	return dst
}

// appendHit appends one hit of /api/search; hl are its highlights already
// clipped to the text sent.
func appendHit(dst []byte, h *query.Hit, hl [][2]int, before, after []query.Line, loc *time.Location) []byte {
	return appendHitRest(appendHitHead(dst, h.File), h, hl, before, after, loc)
}

// appendHitHead appends what begins every hit of file f: its id and path
// (a page renders it once per file and copies it to each hit).
func appendHitHead(dst []byte, f *query.File) []byte {
	dst = append(dst, `{"file_id":`...)
	dst = strconv.AppendUint(dst, f.ID, 10)
	dst = append(dst, `,"path":`...)
	dst, valid := appendJSONStringValid(dst, f.Path)
	if !valid {
		dst = append(dst, `,"path_b64":"`...)
		dst = base64.StdEncoding.AppendEncode(dst, []byte(f.Path))
		dst = append(dst, '"')
	}
	return dst
}

// appendHitRest appends the rest of hit h after appendHitHead.
func appendHitRest(dst []byte, h *query.Hit, hl [][2]int, before, after []query.Line, loc *time.Location) []byte {
	dst = append(dst, `,"line":`...)
	dst = strconv.AppendInt(dst, h.Line, 10)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, h.Offset, 10)
	dst = append(dst, `,"length":`...)
	dst = strconv.AppendInt(dst, h.Length, 10)
	if h.Binary {
		dst = append(dst, `,"binary":true`...)
	}
	if h.Timed {
		dst = append(dst, `,"time":"`...)
		dst = appendTime(dst, h.Time, loc)
		dst = append(dst, '"')
	}
	dst = appendLineFields(dst, h.Text)
	dst = append(dst, `,"highlights":`...)
	if hl == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, r := range hl {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, '[')
			dst = strconv.AppendInt(dst, int64(r[0]), 10)
			dst = append(dst, ',')
			dst = strconv.AppendInt(dst, int64(r[1]), 10)
			dst = append(dst, ']')
		}
		dst = append(dst, ']')
	}
	dst = appendContext(dst, `,"before":[`, before)
	dst = appendContext(dst, `,"after":[`, after)
	return append(dst, '}')
}

// appendTime appends unix time ns in loc as time.RFC3339Nano writes it.
// In UTC it is written digit by digit (AppendFormat's general layout
// walk cost as much as the rest of a hit's fields).
func appendTime(dst []byte, ns int64, loc *time.Location) []byte {
	if loc != time.UTC {
		return time.Unix(0, ns).In(loc).AppendFormat(dst, time.RFC3339Nano)
	}
	sec, frac := ns/1e9, ns%1e9
	if frac < 0 {
		sec, frac = sec-1, frac+1e9
	}
	days, rem := sec/86400, sec%86400
	if rem < 0 {
		days, rem = days-1, rem+86400
	}
	// The civil date of a day count (H. Hinnant's days_from_civil,
	// inverted); an int64 of nanoseconds spans years 1677 to 2262, so the
	// era is never negative.
	z := days + 719468
	era := z / 146097
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day := doy - (153*mp+2)/5 + 1
	month := mp + 3
	if mp >= 10 {
		month = mp - 9
	}
	year := yoe + era*400
	if month <= 2 {
		year++
	}
	dst = append(dst, byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+month/10), byte('0'+month%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+rem/36000), byte('0'+rem/3600%10), ':', byte('0'+rem/600%6), byte('0'+rem/60%10), ':',
		byte('0'+rem%60/10), byte('0'+rem%10))
	if frac != 0 {
		var digits [10]byte
		digits[0] = '.'
		for i := 9; i >= 1; i-- {
			digits[i] = byte('0' + frac%10)
			frac /= 10
		}
		n := 10
		for digits[n-1] == '0' {
			n--
		}
		dst = append(dst, digits[:n]...)
	}
	return append(dst, 'Z')
}

// appendContext appends a before/after list, omitted when empty.
func appendContext(dst []byte, key string, ls []query.Line) []byte {
	if len(ls) == 0 {
		return dst
	}
	dst = append(dst, key...)
	for i, l := range ls {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"line":`...)
		dst = strconv.AppendInt(dst, l.No, 10)
		dst = appendLineFields(dst, l.Text)
		dst = append(dst, '}')
	}
	return append(dst, ']')
}
