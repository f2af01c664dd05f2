package indexer

import (
	"bytes"
	"os"
	"testing"

	"github.com/logdex/logdex/mmapstore/token"
)

// BenchmarkTermTable adds the tokens of 32 MiB of real-looking logs
// (LOGDEX_BENCH_LOG, e.g. a file of the generated corpus) to a term table.
func BenchmarkTermTable(b *testing.B) {
	data := benchLog(b, 32<<20)
	lines := bytes.Split(data, []byte("\n"))
	b.SetBytes(int64(len(data)))
	b.Run("tokenize", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var sc token.Scanner
		for b.Loop() {
			for _, l := range lines {
				sc.Reset(l)
				for sc.Next() {
				}
			}
		}
	})
	b.Run("table", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			bl := newBuilder(nil)
			for id, l := range lines {
				bl.index(l, uint32(id))
			}
		}
	})
	b.Run("gomap", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var sc token.Scanner
		for b.Loop() {
			m := map[string]*[3]uint32{}
			for id, l := range lines {
				sc.Reset(l)
				for sc.Next() {
					t := sc.Term()
					e := m[string(t)]
					if e == nil {
						m[string(t)] = &[3]uint32{uint32(id), uint32(id), 1}
						continue
					}
					if e[1] != uint32(id) {
						e[1] = uint32(id)
						e[2]++
					}
				}
			}
		}
	})
}

// benchLog returns the complete lines in the first limit bytes of the file
// LOGDEX_BENCH_LOG names, or skips the benchmark.
func benchLog(b *testing.B, limit int) []byte {
	path := os.Getenv("LOGDEX_BENCH_LOG")
	if path == "" {
		b.Skip("set LOGDEX_BENCH_LOG to a log file")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	data = data[:min(len(data), limit)]
	return data[:bytes.LastIndexByte(data, '\n')+1]
}
