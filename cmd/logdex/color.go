package main

import (
	"fmt"
	"strings"
)

// colorFlag is --color[=WHEN], as grep reads it: never, always or auto
// (and grep's synonyms, in any case); --color alone is auto. The value is
// checked after parsing (check), so that a bad one is not called a bad
// boolean.
type colorFlag struct {
	when string
	set  bool
}

func (c *colorFlag) String() string { return c.when }

// IsBoolFlag lets --color go without =WHEN (the flag package then sets
// "true", which check reads as auto).
func (c *colorFlag) IsBoolFlag() bool   { return true }
func (c *colorFlag) Set(v string) error { c.when, c.set = v, true; return nil }

// check normalises grep's synonyms; an unknown WHEN is an error.
func (c *colorFlag) check() error {
	switch strings.ToLower(c.when) {
	case "never", "no", "none":
		c.when = "never"
	case "always", "yes", "force":
		c.when = "always"
	case "auto", "tty", "if-tty", "true":
		c.when = "auto"
	default:
		if !c.set {
			c.when = "never" // grep's default
			return nil
		}
		return fmt.Errorf("invalid argument %q for --color (valid: always, never, auto)", c.when)
	}
	return nil
}

// on tells whether output is coloured: always, or auto on a terminal
// whose TERM is set and not "dumb" (grep's test).
func (c *colorFlag) on(stdoutIsTerminal bool, term string, termSet bool) bool {
	switch c.when {
	case "always":
		return true
	case "auto":
		return stdoutIsTerminal && termSet && term != "dumb"
	}
	return false
}

// palette holds the SGR sequences grep colours its output with: its
// defaults, then GREP_COLOR (deprecated, still applied by grep 3.8), then
// GREP_COLORS (all of its capabilities).
type palette struct {
	match, contextMatch string // ms, mc: matched text of selected and of context lines
	selected, context   string // sl, cx: the rest of selected and of context lines
	swapLines           bool   // rv: with -v, sl colours context lines and cx selected ones
	file, lineNo, sep   string // fn, ln, se
	offset              string // bn: -b's byte offsets
	eraseLine           string // "\x1b[K" after each sequence, unless ne
	// legacy: the deprecated GREP_COLOR still colours matches (grep
	// warns then).
	legacy string
}

func newPalette(grepColor, grepColors string) *palette {
	p := &palette{match: "01;31", contextMatch: "01;31", file: "35", lineNo: "32", offset: "32", sep: "36", eraseLine: "\x1b[K"}
	if grepColor != "" && isSGR(grepColor) {
		p.match, p.contextMatch = grepColor, grepColor
	}
	p.parseGrepColors(grepColors)
	if grepColor != "" && (p.match == grepColor || p.contextMatch == grepColor) && isSGR(grepColor) {
		p.legacy = grepColor
	}
	return p
}

// parseGrepColors reads GREP_COLORS as grep does: name=value entries
// separated by ':', a value of digits and ';' only; at the first entry
// it cannot read, grep stops and keeps the entries before it.
func (p *palette) parseGrepColors(s string) {
	if s == "" {
		return
	}
	colors := map[string]*string{"mt": &p.match, "ms": &p.match, "mc": &p.contextMatch, "sl": &p.selected, "cx": &p.context,
		"fn": &p.file, "ln": &p.lineNo, "bn": &p.offset, "se": &p.sep}
	for _, entry := range strings.Split(s, ":") {
		name, val, hasVal := strings.Cut(entry, "=")
		if hasVal && (name == "" || strings.Contains(val, "=") || !isSGR(val)) {
			return
		}
		if v := colors[name]; v != nil && hasVal {
			*v = val
		}
		// What a capability does besides setting its colour, value or
		// not (grep calls it either way).
		switch name {
		case "mt":
			p.contextMatch = p.match
		case "ne":
			p.eraseLine = ""
		case "rv":
			p.swapLines = true
		}
	}
}

// isSGR reports whether v is a list of SGR parameters (digits and ';'):
// grep takes nothing else, which could write any bytes to the terminal.
func isSGR(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != ';' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// paint appends s in the colour sgr (s alone when sgr is empty, as grep).
func paint[T string | []byte](p *palette, dst []byte, sgr string, s T) []byte {
	if sgr == "" {
		return append(dst, s...)
	}
	dst = append(p.start(dst, sgr), s...)
	return append(append(dst, "\x1b[m"...), p.eraseLine...)
}

// start appends the sequence that starts colour sgr (nothing when empty).
func (p *palette) start(dst []byte, sgr string) []byte {
	if sgr == "" {
		return dst
	}
	return append(append(append(append(dst, "\x1b["...), sgr...), 'm'), p.eraseLine...)
}
