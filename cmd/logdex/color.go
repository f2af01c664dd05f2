package main

import (
	"fmt"
	"os"
	"strings"
)

// colorFlag is --color[=WHEN], as grep reads it: never, always or auto
// (and grep's synonyms); --color alone is auto. The value is checked after
// parsing (check), so that a bad one is not called a bad boolean.
type colorFlag struct{ when string }

func (c *colorFlag) String() string     { return c.when }
func (c *colorFlag) IsBoolFlag() bool   { return true } // --color alone, without =WHEN
func (c *colorFlag) Set(v string) error { c.when = v; return nil }

// check normalises grep's synonyms; an unknown WHEN is an error.
func (c *colorFlag) check() error {
	switch c.when {
	case "", "never", "no", "none":
		c.when = "never"
	case "always", "yes", "force":
		c.when = "always"
	case "auto", "tty", "if-tty", "true": // "true": --color alone
		c.when = "auto"
	default:
		return fmt.Errorf("invalid argument %q for --color (valid: always, never, auto)", c.when)
	}
	return nil
}

// on tells whether output is coloured: always, or auto on a terminal
// whose TERM is not "dumb" (grep's test).
func (c *colorFlag) on(stdoutIsTerminal bool) bool {
	switch c.when {
	case "always":
		return true
	case "auto":
		return stdoutIsTerminal && os.Getenv("TERM") != "dumb"
	}
	return false
}

// palette holds the SGR sequences grep colours its output with: its
// defaults, changed by GREP_COLORS as grep reads it (ms, mc, mt, fn, ln,
// se, ne; sl, cx, rv and bn are not used by logdex and are ignored).
type palette struct {
	match, contextMatch string // ms, mc: matched text of selected and of context lines
	file, lineNo, sep   string // fn, ln, se
	el                  string // "\x1b[K" (erase to end of line) unless ne
}

func newPalette(grepColors string) *palette {
	p := &palette{match: "01;31", contextMatch: "01;31", file: "35", lineNo: "32", sep: "36", el: "\x1b[K"}
	for _, cap := range strings.Split(grepColors, ":") {
		name, val, hasVal := strings.Cut(cap, "=")
		if hasVal && !validSGR(val) {
			continue // grep ignores a capability it cannot use
		}
		switch {
		case name == "ne" && !hasVal:
			p.el = ""
		case !hasVal:
		case name == "mt":
			p.match, p.contextMatch = val, val
		case name == "ms":
			p.match = val
		case name == "mc":
			p.contextMatch = val
		case name == "fn":
			p.file = val
		case name == "ln":
			p.lineNo = val
		case name == "se":
			p.sep = val
		}
	}
	return p
}

// validSGR reports whether v is a list of SGR parameters (digits and ';'):
// anything else would write arbitrary bytes to the terminal.
func validSGR(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c != ';' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// paint appends s in the colour sgr (s alone when sgr is empty, as grep).
func (p *palette) paint(dst []byte, sgr string, s []byte) []byte {
	if sgr == "" {
		return append(dst, s...)
	}
	dst = append(append(append(append(dst, "\x1b["...), sgr...), 'm'), p.el...)
	dst = append(dst, s...)
	return append(append(dst, "\x1b[m"...), p.el...)
}
