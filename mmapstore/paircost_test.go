package mmapstore

import (
	"bufio"
	"encoding/binary"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/logdex/logdex/mmapstore/token"
)

// TestPairTermsCost measures what answering two-word phrases from the
// index would cost in index size: every adjacent pair of words, each on
// at least T lines of its segment, kept as a term of its own beside the
// words (so "connection reset" would be one list, as a word is), encoded
// by this package's own segment writer. It reads the log tree named by
// LOGDEX_PAIRCOST (a benchmark corpus, say; files are read as stored, so
// a tree of plain logs) in path order, cuts it into
// segments of 128 MiB of raw logs as `logdex index` does by default, and
// writes each twice: with the words alone, then with words and pairs.
//
//	LOGDEX_PAIRCOST=~/.cache/logdex-bench/corpus-highcard-1024mb-seed1 \
//	  go test ./mmapstore -run TestPairTermsCost -v -timeout 1h
func TestPairTermsCost(t *testing.T) {
	root := os.Getenv("LOGDEX_PAIRCOST")
	if root == "" {
		t.Skip("LOGDEX_PAIRCOST not set")
	}
	thresholds := []int{16, 64, 1024}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	var raw, words int64
	pairs := make([]int64, len(thresholds))
	var lines [][]string // the current segment's lines' terms
	var segRaw int64
	lt := NewLineTable()
	flush := func() {
		lt.EndSpan()
		if lt.NumLines() == 0 {
			return
		}
		df := map[string][]uint32{}
		for id, terms := range lines {
			for _, term := range terms {
				if l := df[term]; len(l) == 0 || l[len(l)-1] != uint32(id) {
					df[term] = append(l, uint32(id))
				}
			}
		}
		w := encodedSize(t, lt, df)
		words += w
		for i, min := range thresholds {
			all := maps.Clone(df)
			for id, terms := range lines {
				for j := 0; j+1 < len(terms); j++ {
					a, b := terms[j], terms[j+1]
					if len(df[a]) < min || len(df[b]) < min || isCompound(a) || isCompound(b) {
						continue
					}
					// A byte no term holds keeps pairs apart from words.
					k := a + "\x00" + b
					if l := all[k]; len(l) == 0 || l[len(l)-1] != uint32(id) {
						all[k] = append(l, uint32(id))
					}
				}
			}
			pairs[i] += encodedSize(t, lt, all) - w
		}
		lines, segRaw = lines[:0], 0
		lt = NewLineTable()
	}
	for fi, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<30)
		var off, lineNo int64
		lt.BeginSpan(SegFile{ID: uint64(fi + 1), Path: name}, 0, 1)
		for sc.Scan() {
			line := sc.Bytes()
			lineNo++
			lt.AddLine(int64(len(line)) + 1)
			lines = append(lines, lineTerms(line))
			off += int64(len(line)) + 1
			raw += int64(len(line)) + 1
			if segRaw += int64(len(line)) + 1; segRaw >= 128<<20 {
				flush()
				lt.BeginSpan(SegFile{ID: uint64(fi + 1), Path: name}, off, lineNo+1)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		lt.EndSpan()
	}
	flush()
	t.Logf("%s: %.1f MB of logs; segments of their words %.1f MB (%.1f%% of the logs; an index adds its time tables and manifest)", root, float64(raw)/1e6, float64(words)/1e6, 100*float64(words)/float64(raw))
	for i, min := range thresholds {
		t.Logf("pairs of words each on >= %d lines of a segment: +%.1f MB (+%.1f%% of the logs)", min, float64(pairs[i])/1e6, 100*float64(pairs[i])/float64(raw))
	}
}

// lineTerms is what the indexer puts in the dictionary for a line: its
// tokens (at most MaxTermLen bytes) and dotted numbers, in line order.
func lineTerms(line []byte) []string {
	if len(line) > MaxIndexedLine {
		return nil
	}
	out := slices.DeleteFunc(token.Terms(line), func(t string) bool { return len(t) > MaxTermLen })
	token.Compounds(line, func(c []byte) {
		if len(c) <= MaxTermLen {
			out = append(out, string(c))
		}
	})
	return out
}

// isCompound reports whether term is a dotted number (no word holds a
// dot): a pair of those is no phrase of the query language.
func isCompound(term string) bool { return strings.IndexByte(term, '.') >= 0 }

// encodedSize is the size of the segment of lt's lines with these terms.
func encodedSize(t *testing.T, lt *LineTable, terms map[string][]uint32) int64 {
	src := &mapTerms{m: terms}
	for k := range terms {
		src.keys = append(src.keys, k)
	}
	slices.Sort(src.keys)
	var n uint64
	for _, l := range terms {
		n += uint64(len(l))
	}
	data, err := EncodeSegment(&SegmentInput{Lines: lt, Terms: src, NumPostings: n})
	if err != nil {
		t.Fatal(err)
	}
	return int64(len(data))
}

// mapTerms is a TermSource over a map of sorted line lists.
type mapTerms struct {
	m    map[string][]uint32
	keys []string
}

func (s *mapTerms) Len() int { return len(s.keys) }

func (s *mapTerms) Term(i int) ([]byte, uint32, uint32, []byte) {
	ids := s.m[s.keys[i]]
	var gaps []byte
	for j := 1; j < len(ids); j++ {
		gaps = binary.AppendUvarint(gaps, uint64(ids[j]-ids[j-1]))
	}
	return []byte(s.keys[i]), uint32(len(ids)), ids[0], gaps
}
