package main

// A copy of a corpus whose timestamps no longer read as times, for the
// time section's indexing comparison, and a helper that works on every
// file of a corpus in parallel (also used to write compressed copies).

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// stripTimestamps maps to letters (0→a … 9→j) the digits of every time of
// day (hh:mm:ss and its fraction), of the date just before it (up to 12
// bytes of digits, letters, '-', '/', ':' and spaces) and of HDFS's
// "yymmdd hhmmss" at line starts: the same length, the same tokens one for
// one (digits and letters are both token bytes), and no recognisable time.
// Hand-written rather than a regexp's ReplaceAll, which is ~10× slower.
func stripTimestamps(data []byte) []byte {
	out := bytes.Clone(data)
	for i := 0; i < len(out); {
		j := bytes.IndexByte(out[i:], ':')
		if j < 0 {
			break
		}
		c := i + j
		if c < 2 || c+6 > len(out) || !isDigits(out[c-2:c]) || !isDigits(out[c+1:c+3]) || out[c+3] != ':' || !isDigits(out[c+4:c+6]) {
			i = c + 1
			continue
		}
		end := c + 6
		if end+1 < len(out) && (out[end] == '.' || out[end] == ',') && isDigits(out[end+1:end+2]) {
			for end++; end < len(out) && isDigits(out[end:end+1]); end++ {
			}
		}
		start := c - 2
		for k := 0; k < 12 && start > 0; k++ {
			ch := out[start-1]
			if !(ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch == '-' || ch == '/' || ch == ':' || ch == ' ') {
				break
			}
			start--
		}
		mapDigits(out[start:end])
		i = end
	}
	for i := 0; i < len(out); {
		if i+13 <= len(out) && isDigits(out[i:i+6]) && out[i+6] == ' ' && isDigits(out[i+7:i+13]) {
			mapDigits(out[i : i+13])
		}
		j := bytes.IndexByte(out[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return out
}

func isDigits(b []byte) bool {
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return false
		}
	}
	return true
}

func mapDigits(b []byte) {
	for i, ch := range b {
		if ch >= '0' && ch <= '9' {
			b[i] = 'a' + ch - '0'
		}
	}
}

// strippedCorpus is c with stripTimestamps applied to every file, cached
// beside it.
func (b *bench) strippedCorpus(c *corpus) (*corpus, error) {
	dir := c.Dir + "-notime-v3" // -vN: the version of stripTimestamps
	nc := &corpus{Profile: c.Profile, Dir: dir, MB: c.MB, Seed: c.Seed}
	if _, err := os.Stat(dir); err != nil {
		b.logf("time: writing %s (timestamps made unrecognisable)", dir)
		tmp := dir + ".tmp"
		os.RemoveAll(tmp)
		err := parallelFiles(c, func(p string) error {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out := filepath.Join(tmp, relPath(p, c.Dir))
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			return os.WriteFile(out, stripTimestamps(data), 0o644)
		})
		if err == nil {
			err = os.Rename(tmp, dir)
		}
		if err != nil {
			return nil, err
		}
	}
	return nc, b.measure(nc)
}

// parallelFiles runs fn on every file of c, one goroutine per CPU.
func parallelFiles(c *corpus, fn func(path string) error) error {
	ch := make(chan string)
	var mu sync.Mutex
	var first error
	var wg sync.WaitGroup
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range ch {
				if err := fn(p); err != nil {
					mu.Lock()
					first = cmp.Or(first, err)
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range c.paths {
		ch <- p
	}
	close(ch)
	wg.Wait()
	return first
}
