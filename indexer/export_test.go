package indexer

import (
	"io/fs"
	"os"
)

// SetOpenLog replaces how log files are opened until the returned restore
// is called: tests make files unreadable, which permissions cannot do for
// root.
func SetOpenLog(open func(dir *os.Root, name string, nofollow bool) (*os.File, fs.FileInfo, error)) (restore func()) {
	old := openLog
	openLog = open
	return func() { openLog = old }
}

// SetMergeRewritten makes Merge call f between rewriting a merge set and
// publishing it, until restore is called.
func SetMergeRewritten(f func()) (restore func()) {
	old := mergeRewritten
	mergeRewritten = f
	return func() { mergeRewritten = old }
}
