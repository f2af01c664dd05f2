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

// SetMergeHook makes Merge call f once it picked its merge sets
// ("chosen") and between rewriting each set and publishing it
// ("rewritten"), until restore is called.
func SetMergeHook(f func(phase string)) (restore func()) {
	old := mergeHook
	mergeHook = f
	return func() { mergeHook = old }
}

// SetAfterDiff makes each attempt of Update call f once it has compared
// the files with the index and before it reads them, until restore.
func SetAfterDiff(f func()) (restore func()) {
	old := afterDiff
	afterDiff = f
	return func() { afterDiff = old }
}

// SetBeforeJob makes each worker call f with the path of a segment job's
// first file before it reads the job's files, until restore.
func SetBeforeJob(f func(path string)) (restore func()) {
	old := beforeJob
	beforeJob = f
	return func() { beforeJob = old }
}

// SetAfterPart makes each worker call f with a file's path after reading a
// part of it, until restore.
func SetAfterPart(f func(path string)) (restore func()) {
	old := afterPart
	afterPart = f
	return func() { afterPart = old }
}
