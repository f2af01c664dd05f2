package logtime

// Byte-level readers the formats are built from. Each takes the bytes and
// an index and checks its bounds, so a format never reads past its input.

func isDigit(c byte) bool { return c-'0' <= 9 }

func isAlnum(c byte) bool {
	return c-'0' <= 9 || (c|0x20)-'a' <= 'z'-'a'
}

// ends reports whether a timestamp may end before b[i].
func ends(b []byte, i int) bool { return i >= len(b) || !isAlnum(b[i]) }

// d2 reads two ASCII digits; -1 if either is not one.
func d2(a, b byte) int {
	x, y := a-'0', b-'0'
	if x > 9 || y > 9 {
		return -1
	}
	return int(x)*10 + int(y)
}

func d4(a, b, c, d byte) int {
	x, y := d2(a, b), d2(c, d)
	if x < 0 || y < 0 {
		return -1
	}
	return x*100 + y
}

// clock reads "HH:MM:SS" from b[0:8] into s.
func clock(b []byte, s *stamp) bool {
	if len(b) < 8 || b[2] != ':' || b[5] != ':' {
		return false
	}
	s.hour, s.min, s.sec = d2(b[0], b[1]), d2(b[3], b[4]), d2(b[6], b[7])
	return validClock(s)
}

func validClock(s *stamp) bool {
	return uint(s.hour) <= 23 && uint(s.min) <= 59 && uint(s.sec) <= 60
}

func validDate(s *stamp) bool {
	return uint(s.month-1) <= 11 && uint(s.day-1) <= 30
}

// fraction reads "[.,]digits" at b[i:], keeping nanosecond precision (later
// digits are read and dropped). It returns i unchanged when there is none.
func fraction(b []byte, i int, s *stamp) int {
	if i+1 >= len(b) || (b[i] != '.' && b[i] != ',') || !isDigit(b[i+1]) {
		return i
	}
	return digitsFraction(b, i+1, s)
}

func digitsFraction(b []byte, i int, s *stamp) int {
	ns, scale := 0, 100000000
	for ; i < len(b) && isDigit(b[i]); i++ {
		ns += int(b[i]-'0') * scale
		scale /= 10
	}
	s.nsec = ns
	return i
}

// zone reads an optional zone at b[i:]: "Z", "±hh:mm", "±hhmm", "±hh",
// "UTC" or "GMT", directly or after one space. No zone is fine (zoneLocal);
// a malformed one is not an error either, it simply is not part of the
// timestamp (which then must end before it).
func zone(b []byte, i int, s *stamp) int {
	j := i
	if j < len(b) && b[j] == ' ' {
		j++
	}
	if j >= len(b) {
		return i
	}
	switch c := b[j]; {
	case (c == 'Z' || c == 'z') && j == i && ends(b, j+1):
		s.zone, s.offset = zoneOffset, 0
		return j + 1
	case c == '+' || c == '-':
		if j+3 > len(b) {
			return i
		}
		h := d2(b[j+1], b[j+2])
		if h < 0 || h > 23 {
			return i
		}
		k, m := j+3, 0
		switch {
		case k+3 <= len(b) && b[k] == ':':
			m = d2(b[k+1], b[k+2])
			k += 3
		case k+2 <= len(b) && isDigit(b[k]):
			m = d2(b[k], b[k+1])
			k += 2
		case j > i: // after a space only "±hhmm" and "±hh:mm" count
			return i
		}
		if m < 0 || m > 59 || !ends(b, k) {
			return i
		}
		s.offset = h*3600 + m*60
		if c == '-' {
			s.offset = -s.offset
		}
		s.zone = zoneOffset
		return k
	case c == 'U' || c == 'G':
		if j+3 <= len(b) && (string(b[j:j+3]) == "UTC" || string(b[j:j+3]) == "GMT") && ends(b, j+3) {
			s.zone, s.offset = zoneOffset, 0
			return j + 3
		}
	}
	return i
}

// month3 maps an English month abbreviation in any case to 1–12, else 0.
func month3(a, b, c byte) int {
	switch uint32(a|0x20)<<16 | uint32(b|0x20)<<8 | uint32(c|0x20) {
	case 'j'<<16 | 'a'<<8 | 'n':
		return 1
	case 'f'<<16 | 'e'<<8 | 'b':
		return 2
	case 'm'<<16 | 'a'<<8 | 'r':
		return 3
	case 'a'<<16 | 'p'<<8 | 'r':
		return 4
	case 'm'<<16 | 'a'<<8 | 'y':
		return 5
	case 'j'<<16 | 'u'<<8 | 'n':
		return 6
	case 'j'<<16 | 'u'<<8 | 'l':
		return 7
	case 'a'<<16 | 'u'<<8 | 'g':
		return 8
	case 's'<<16 | 'e'<<8 | 'p':
		return 9
	case 'o'<<16 | 'c'<<8 | 't':
		return 10
	case 'n'<<16 | 'o'<<8 | 'v':
		return 11
	case 'd'<<16 | 'e'<<8 | 'c':
		return 12
	}
	return 0
}

func isWeekday3(a, b, c byte) bool {
	switch uint32(a|0x20)<<16 | uint32(b|0x20)<<8 | uint32(c|0x20) {
	case 'm'<<16 | 'o'<<8 | 'n', 't'<<16 | 'u'<<8 | 'e', 'w'<<16 | 'e'<<8 | 'd',
		't'<<16 | 'h'<<8 | 'u', 'f'<<16 | 'r'<<8 | 'i', 's'<<16 | 'a'<<8 | 't',
		's'<<16 | 'u'<<8 | 'n':
		return true
	}
	return false
}

// day12 reads a day of one or two digits, or a space-padded one (" 4"), at
// b[i:], returning the index after it.
func day12(b []byte, i int, s *stamp) (int, bool) {
	if i < len(b) && b[i] == ' ' {
		i++
	}
	if i >= len(b) || !isDigit(b[i]) {
		return i, false
	}
	s.day = int(b[i] - '0')
	i++
	if i < len(b) && isDigit(b[i]) {
		s.day = s.day*10 + int(b[i]-'0')
		i++
	}
	return i, true
}

// upTo reads one to max digits at b[i:], returning -1 and i when there is
// none. A negative i (a failed expect) passes through.
func upTo(b []byte, i, max int) (v, j int) {
	if i < 0 {
		return -1, i
	}
	for j = i; j < len(b) && j-i < max && isDigit(b[j]); j++ {
		v = v*10 + int(b[j]-'0')
	}
	if j == i {
		return -1, i
	}
	return v, j
}

// expect returns the index after byte c at b[i], or -1.
func expect(b []byte, i int, c byte) int {
	if i < 0 || i >= len(b) || b[i] != c {
		return -1
	}
	return i + 1
}

// twoDigitYear applies POSIX strptime's %y pivot: 69–99 are 19xx.
func twoDigitYear(y int) int {
	if y >= 69 {
		return 1900 + y
	}
	return 2000 + y
}
