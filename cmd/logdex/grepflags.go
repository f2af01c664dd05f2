package main

import "flag"

// grepLongNames are GNU grep's long names of the flags search takes by
// their short names: the same flags under both (--count is -c).
var grepLongNames = []grepLongName{
	{"fixed-strings", "F"}, {"extended-regexp", "E"}, {"basic-regexp", "G"},
	{"ignore-case", "i"}, {"count", "c"}, {"regexp", "e"},
	{"invert-match", "v"}, {"only-matching", "o"}, {"word-regexp", "w"}, {"line-regexp", "x"},
	{"max-count", "m"}, {"files-with-matches", "l"}, {"files-without-match", "L"},
	{"quiet", "q"}, {"silent", "q"}, {"no-messages", "s"},
	{"with-filename", "H"}, {"no-filename", "h"},
	{"recursive", "r"}, {"dereference-recursive", "R"}, {"line-number", "n"},
	{"after-context", "A"}, {"before-context", "B"}, {"context", "C"}, {"null", "Z"}, {"byte-offset", "b"},
}

type grepLongName struct{ long, short string }

// addGrepLongNames defines grepLongNames on fs, each as its short flag.
func addGrepLongNames(fs *flag.FlagSet) {
	for _, n := range grepLongNames {
		fs.Var(fs.Lookup(n.short).Value, n.long, "same as -"+n.short)
	}
}

// shortName is the short name of a flag given by grep's long name, else
// name.
func shortName(name string) string {
	for _, n := range grepLongNames {
		if n.long == name {
			return n.short
		}
	}
	return name
}
