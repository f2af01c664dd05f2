package main

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/logdex/logdex/mmapstore"
)

// check verifies every checksum of every segment of an index (the large
// sections are not checked when a segment is opened, to keep start-up
// lazy) and prints a summary of the index. Exit status 0 when sound, 1 when
// damaged, 2 on error.
func (e *env) check(args []string) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	dir := fs.String("index", "", "index directory (default: the one for PATHs)")
	fs.Usage = func() {
		fmt.Fprintln(e.stderr, "Usage: logdex check [--index DIR] [PATH...]\n\nVerifies every section checksum of the index and prints what it holds.")
		fs.PrintDefaults()
	}
	paths, err := interspersed(fs, args)
	if err != nil {
		return 2
	}
	if len(paths) == 0 && *dir == "" {
		paths = []string{"."}
	}
	d, err := indexDir(*dir, paths)
	if err != nil {
		fmt.Fprintln(e.stderr, "logdex:", err)
		return 2
	}
	m, err := mmapstore.ReadManifest(d)
	if err != nil {
		fmt.Fprintln(e.stderr, "logdex:", err)
		return 2
	}
	t0 := time.Now()
	bad := 0
	var lines, raw, size int64
	segs := make([]*mmapstore.Segment, len(m.Segments))
	errs := make([]error, len(m.Segments))
	for i, ref := range m.Segments {
		s, err := mmapstore.OpenSegment(filepath.Join(d, ref.Name))
		if err == nil {
			if err = s.Verify(); err != nil {
				s.Close()
			} else {
				segs[i] = s
			}
		}
		errs[i] = err
	}
	// Sound segments must also be the ones the manifest describes.
	for i, err := range mmapstore.CheckSegments(m, segs) {
		if errs[i] == nil {
			errs[i] = err
		}
	}
	badCopies := 0
	for i, ref := range m.Segments {
		if s := segs[i]; s != nil {
			if errs[i] == nil {
				lines += int64(s.NumLines())
				raw += s.RawBytes()
				size += s.Size()
				// The seekable copies its compressed files' tables name.
				var se *mmapstore.ShadowError
				if err := s.VerifyShadows(d); errors.As(err, &se) {
					badCopies++
					fmt.Fprintf(e.stdout, "DAMAGED %s (seekable copy of %s): %v\n", se.Name, se.Path, se.Err)
				}
			}
			s.Close()
		}
		if errs[i] != nil {
			bad++
			fmt.Fprintf(e.stdout, "DAMAGED %s: %v\n", ref.Name, errs[i])
		}
	}
	var dead int
	live := map[uint64]bool{}
	for _, f := range m.Files {
		live[f.ID] = true
	}
	for _, ref := range m.Segments {
		for _, id := range ref.FileIDs {
			if !live[id] {
				dead++
			}
		}
	}
	fmt.Fprintf(e.stdout, "index %s: generation %d, %d roots, %d files (%d skipped), %d segments, %d lines, %s of logs, index %s; checked in %s\n",
		d, m.Generation, len(m.Roots), len(m.Files), len(m.Skipped), len(m.Segments), lines, mb(raw), mb(size), time.Since(t0).Round(time.Millisecond))
	if dead > 0 {
		fmt.Fprintf(e.stdout, "%d retired file spans (kept until every file of their segment is gone)\n", dead)
	}
	if badCopies > 0 {
		fmt.Fprintf(e.stdout, "%d damaged seekable copies: searches read those files by decompressing them from their start (correct, slower); run `logdex index --verify` on the same paths to rebuild them\n", badCopies)
	}
	if bad > 0 {
		fmt.Fprintf(e.stdout, "%d damaged segments: run `logdex index --verify` on the same paths to rebuild them\n", bad)
		return 1
	}
	if badCopies > 0 {
		return 1
	}
	return 0
}
