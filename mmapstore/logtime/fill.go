package logtime

// Fill applies logdex's policy for lines without a timestamp to one file's
// parse results, in place: a line whose ok is false takes the time of the
// nearest timestamped line before it, and lines before the first timestamp
// take the first one's. It returns false, leaving times alone, when no line
// has a timestamp.
func Fill(times []int64, ok []bool) bool {
	first := -1
	for i := range times {
		if ok[i] {
			first = i
			break
		}
	}
	if first < 0 {
		return false
	}
	last := times[first]
	for i := range times {
		if ok[i] {
			last = times[i]
		} else {
			times[i] = last
		}
	}
	return true
}

// Carry applies the same policy to a stream of lines, e.g. lines appended
// to a file after it was indexed, seeded with the time of the last indexed
// line. Before it has any time, Next returns ok=false and the caller gives
// those lines the first time Next returns.
type Carry struct {
	last int64
	have bool
}

// Seed sets the time carried forward, as if a line with that time preceded.
func (c *Carry) Seed(unixNano int64) { c.last, c.have = unixNano, true }

// Next takes a line's Parse result and returns the time the line gets.
func (c *Carry) Next(unixNano int64, ok bool) (int64, bool) {
	if ok {
		c.last, c.have = unixNano, true
	}
	return c.last, c.have
}
