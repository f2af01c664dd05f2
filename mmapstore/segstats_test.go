package mmapstore

// Measuring tools for the dictionary blocks and their trigram filters
// (run by hand on a real index, skipped otherwise); NOTES-filters.md has
// their figures. Long because each tool carries its own sampling.

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestSegmentStats is a measuring tool, not a check: with
// LOGDEX_SEGSTATS=DIR (an index directory) it prints the size of every
// section kind over the segments, the trigram filters' fill rates and, for
// each needle of LOGDEX_NEEDLES (comma separated), how many dictionary
// blocks its filters admit and how many of those hold a match.
func TestSegmentStats(t *testing.T) {
	dir := os.Getenv("LOGDEX_SEGSTATS")
	if dir == "" {
		t.Skip("set LOGDEX_SEGSTATS=DIR to measure an index")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	sizes := map[uint32]int64{}
	var total, raw int64
	var nblocks, nterms, singles int
	var dk dictKindStats
	var fills []float64
	type needleStat struct{ cands, hits, blocks int }
	var needles []string
	if s := os.Getenv("LOGDEX_NEEDLES"); s != "" {
		needles = strings.Split(s, ",")
	}
	ns := make([]needleStat, len(needles))
	for _, p := range paths {
		s, err := OpenSegment(p)
		if err != nil {
			t.Fatal(err)
		}
		total += s.Size()
		raw += s.RawBytes()
		for _, e := range s.Sections() {
			sizes[e.Kind] += int64(e.Length)
		}
		nblocks += s.nblocks
		nterms += int(s.terms)
		if err := dk.add(s); err != nil {
			t.Fatal(err)
		}
		fills = append(fills, s.filterFills()...)
		if err := s.rangeTerms(nil, nil, func(_ []byte, ref uint64) bool {
			if ref&1 != 0 {
				singles++
			}
			return true
		}); err != nil {
			t.Fatal(err)
		}
		for i, n := range needles {
			bs, err := s.BlockCandidates([]byte(n), false, false)
			if err != nil {
				t.Fatal(err)
			}
			ns[i].cands += len(bs)
			ns[i].blocks += s.nblocks
			for _, b := range bs {
				hit := false
				s.BlockTerms(int(b), func(term []byte, _ uint64) bool {
					hit = strings.Contains(string(term), n)
					return !hit
				})
				if hit {
					ns[i].hits++
				}
			}
		}
		s.Close()
	}
	kinds := make([]uint32, 0, len(sizes))
	for k := range sizes {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return sizes[kinds[i]] > sizes[kinds[j]] })
	fmt.Printf("%d segments, %d raw bytes, index %d bytes (%.1f%%), %d terms (%d on one line), %d blocks\n",
		len(paths), raw, total, 100*float64(total)/float64(raw), nterms, singles, nblocks)
	for _, k := range kinds {
		fmt.Printf("  %-20s %12d  %5.1f%% of index  %5.2f%% of raw\n", SectionName(k), sizes[k],
			100*float64(sizes[k])/float64(total), 100*float64(sizes[k])/float64(raw))
	}
	fmt.Printf("dictionary: %d FST-kind blocks (%d terms) in %d FSTs, %d bytes; %d packed blocks (%d terms), %d bytes\n",
		dk.fstBlocks, dk.fstTerms, dk.groups, dk.fstBytes, nblocks-dk.fstBlocks, nterms-dk.fstTerms, dk.packedBytes)
	slices.Sort(fills)
	if len(fills) > 0 {
		q := func(f float64) float64 { return fills[min(len(fills)-1, int(f*float64(len(fills))))] }
		fmt.Printf("filter fill (bits set): p10 %.2f  p50 %.2f  p90 %.2f  max %.2f\n", q(0.1), q(0.5), q(0.9), fills[len(fills)-1])
	}
	for i, n := range needles {
		fmt.Printf("needle %-24q admitted %6d of %7d blocks (%.2f%%), %d hold it\n", n, ns[i].cands, ns[i].blocks,
			100*float64(ns[i].cands)/float64(max(ns[i].blocks, 1)), ns[i].hits)
	}
}

// dictKindStats counts the dictionary's blocks, terms and bytes by kind.
type dictKindStats struct{ fstBlocks, fstTerms, groups, fstBytes, packedBytes int }

func (k *dictKindStats) add(s *Segment) error {
	lastFST, packed := int64(-1), 0
	for b := range s.nblocks {
		ent, next, err := s.dictEntry(b)
		if err != nil {
			return err
		}
		if ent&fstBlock == 0 {
			packed += int(next&^fstBlock - ent)
			continue
		}
		k.fstBlocks++
		if err := s.BlockTerms(b, func([]byte, uint64) bool { k.fstTerms++; return true }); err != nil {
			return err
		}
		if off := int64(ent &^ fstBlock); off != lastFST {
			k.groups++
			lastFST = off
		}
	}
	k.packedBytes += packed
	k.fstBytes += len(s.dict.data) - packed // the FSTs are the rest of the section
	return nil
}

// filterFills returns the fraction of filter bits set, per block that has
// a filter.
func (s *Segment) filterFills() []float64 {
	counts := make([]int, s.nblocks)
	w := s.sliceWords
	for j := 0; j < BloomBits; j++ {
		for wi := 0; wi < w; wi++ {
			x := uint64(s.trigrams.data[(j*w+wi)*8]) | uint64(s.trigrams.data[(j*w+wi)*8+1])<<8 |
				uint64(s.trigrams.data[(j*w+wi)*8+2])<<16 | uint64(s.trigrams.data[(j*w+wi)*8+3])<<24 |
				uint64(s.trigrams.data[(j*w+wi)*8+4])<<32 | uint64(s.trigrams.data[(j*w+wi)*8+5])<<40 |
				uint64(s.trigrams.data[(j*w+wi)*8+6])<<48 | uint64(s.trigrams.data[(j*w+wi)*8+7])<<56
			for x != 0 {
				counts[wi*64+bits.TrailingZeros64(x)]++
				x &= x - 1
			}
		}
	}
	out := make([]float64, len(counts))
	for i, c := range counts {
		out[i] = float64(c) / BloomBits
	}
	return out
}

// TestFilterDesigns is a measuring tool: with LOGDEX_SEGSTATS=DIR it
// rebuilds the trigram filters of the index's blocks under other designs
// (bits per block, hashes, sized to the block's trigrams) and prints their
// bytes and the blocks they admit for substrings sampled from the
// dictionary: 8 and 6 characters of long hex ids, the middle of dotted
// numbers, the end of a UUID's first group.
func TestFilterDesigns(t *testing.T) {
	dir := os.Getenv("LOGDEX_SEGSTATS")
	if dir == "" {
		t.Skip("set LOGDEX_SEGSTATS=DIR to measure an index")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	if len(paths) > 2 {
		paths = paths[:2]
	}
	type block struct{ grams []uint32 }
	var blocks []block
	var hexTerms, dotted, uuid8 [][]byte
	var dfHist [7]int
	classLen := map[string][2]int{}
	for _, p := range paths {
		s, err := OpenSegment(p)
		if err != nil {
			t.Fatal(err)
		}
		for b := 0; b < s.nblocks; b++ {
			set := map[uint32]bool{}
			s.BlockTerms(b, func(term []byte, ref uint64) bool {
				g := uint32(term[0])
				for k := 1; k <= len(term); k++ {
					var c uint32
					if k < len(term) {
						c = uint32(term[k])
					}
					g = (g<<8 | c) & 0xFFFFFF
					set[g] = true
				}
				set[uint32(term[0])<<8|uint32(term[1%len(term)])] = true
				cls := termClass(term)
				cl := classLen[cls]
				classLen[cls] = [2]int{cl[0] + 1, cl[1] + len(term)}
				switch {
				case cls == "hex" && len(term) >= 16:
					hexTerms = append(hexTerms, slices.Clone(term))
				case cls == "dotted":
					dotted = append(dotted, slices.Clone(term))
				case cls == "hex" && len(term) == 8:
					uuid8 = append(uuid8, slices.Clone(term))
				}
				df := 1
				if ref&1 == 0 {
					df, _ = s.DocFreq(ref)
				}
				i := 0
				for _, lim := range []int{1, 2, 3, 8, 64, 4096} {
					if df > lim {
						i++
					}
				}
				dfHist[i]++
				return true
			})
			var gs []uint32
			for g := range set {
				gs = append(gs, g)
			}
			blocks = append(blocks, block{gs})
		}
		s.Close()
	}
	fmt.Printf("%d blocks\n", len(blocks))
	for c, v := range classLen {
		fmt.Printf("  class %-8s %8d terms, %10d bytes, avg %.1f\n", c, v[0], v[1], float64(v[1])/float64(v[0]))
	}
	fmt.Printf("  terms by lines holding them (1, 2, 3, 4-8, 9-64, 65-4096, more): %v\n", dfHist)
	rng := uint64(12345)
	next := func(n int) int { rng = rng*6364136223846793005 + 1442695040888963407; return int(rng>>33) % n }
	type needleKind struct {
		name string
		list [][]byte
	}
	var kinds []needleKind
	var k8, k6, kd, ku [][]byte
	for i := 0; i < 200 && len(hexTerms) > 0; i++ {
		h := hexTerms[next(len(hexTerms))]
		o := next(len(h) - 7)
		k8 = append(k8, h[o:o+8])
		o = next(len(h) - 5)
		k6 = append(k6, h[o:o+6])
	}
	for i := 0; i < 200 && len(dotted) > 0; i++ {
		d := dotted[next(len(dotted))]
		if len(d) >= 7 {
			kd = append(kd, d[2:len(d)-1])
		}
	}
	for i := 0; i < 200 && len(uuid8) > 0; i++ {
		u := uuid8[next(len(uuid8))]
		ku = append(ku, u[2:])
	}
	kinds = append(kinds, needleKind{"hex8", k8}, needleKind{"hex6", k6}, needleKind{"ipmid", kd}, needleKind{"uuid6", ku})
	type design struct {
		name     string
		perGram  float64 // bits per distinct trigram (0: fixed)
		fixed, k int
	}
	designs := []design{
		{"2048/k2", 0, 2048, 2}, {"1024/k2", 0, 1024, 2}, {"1024/k1", 0, 1024, 1}, {"512/k2", 0, 512, 2}, {"512/k1", 0, 512, 1},
		{"sized3/k2", 3, 0, 2}, {"sized4/k2", 4, 0, 2}, {"sized2/k1", 2, 0, 1}, {"sized3/k1", 3, 0, 1}, {"sized4/k1", 4, 0, 1},
	}
	for _, d := range designs {
		var totalBits int64
		filters := make([][]uint64, len(blocks))
		for bi, b := range blocks {
			m := d.fixed
			if m == 0 {
				m = 64
				for float64(m) < d.perGram*float64(len(b.grams)) && m < 4096 {
					m *= 2
				}
			}
			totalBits += int64(m)
			f := make([]uint64, m/64)
			for _, g := range b.grams {
				for _, h := range designHashes(g, m, d.k) {
					f[h/64] |= 1 << (h % 64)
				}
			}
			filters[bi] = f
		}
		fmt.Printf("%-10s %9d bytes:", d.name, totalBits/8)
		for _, nk := range kinds {
			var cands int
			for _, n := range nk.list {
				for _, f := range filters {
					m := len(f) * 64
					ok := true
					for i := 0; i+3 <= len(n) && ok; i++ {
						g := uint32(n[i])<<16 | uint32(n[i+1])<<8 | uint32(n[i+2])
						for _, h := range designHashes(g, m, d.k) {
							if f[h/64]&(1<<(h%64)) == 0 {
								ok = false
							}
						}
					}
					if ok {
						cands++
					}
				}
			}
			fmt.Printf("  %s %.1f", nk.name, float64(cands)/float64(max(len(nk.list), 1)))
		}
		fmt.Println()
	}
}

func designHashes(g uint32, m, k int) []uint32 {
	shift := 32 - bits.Len(uint(m-1))
	h := []uint32{(g * 0x9E3779B1) >> shift, ((g ^ 0x5bd1e995) * 0x85EBCA77) >> shift}
	return h[:k]
}

func termClass(t []byte) string {
	digits, hexl, other, dots := 0, 0, 0, 0
	for _, c := range t {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'f':
			hexl++
		case c == '.':
			dots++
		default:
			other++
		}
	}
	switch {
	case dots > 0:
		return "dotted"
	case other == 0 && hexl == 0:
		return "number"
	case other == 0 && digits > 0:
		return "hex"
	case digits > 0:
		return "alnum"
	}
	return "word"
}

// TestBlockScanCost is a measuring tool: with LOGDEX_SEGSTATS=DIR it
// profiles reading the candidate blocks of LOGDEX_NEEDLES in a fresh
// segment (as a one-off search does).
func TestBlockScanCost(t *testing.T) {
	dir := os.Getenv("LOGDEX_SEGSTATS")
	if dir == "" {
		t.Skip("set LOGDEX_SEGSTATS=DIR to measure an index")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	for _, n := range strings.Split(os.Getenv("LOGDEX_NEEDLES"), ",") {
		reps := 20
		if os.Getenv("LOGDEX_REPS") != "" {
			reps = 2000
		}
		var d, dc, warm time.Duration
		var nb int
		for rep := 0; rep < reps; rep++ {
			s, err := OpenSegment(paths[0])
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			bs, _ := s.BlockCandidates([]byte(n), false, false)
			t1 := time.Now()
			for _, b := range bs {
				s.BlockTerms(int(b), func([]byte, uint64) bool { return true })
			}
			d += time.Since(t1)
			dc += t1.Sub(t0)
			t2 := time.Now()
			for _, b := range bs {
				s.BlockTerms(int(b), func([]byte, uint64) bool { return true })
			}
			warm += time.Since(t2)
			nb = len(bs)
			s.Close()
		}
		fmt.Printf("%q: %d blocks, candidates %v, scan %v (%v a block; warm %v)\n", n, nb, dc/time.Duration(reps), d/time.Duration(reps), d/time.Duration(reps*max(nb, 1)), warm/time.Duration(reps*max(nb, 1)))
	}
}

// TestBlockCutDesigns is a measuring tool: with LOGDEX_SEGSTATS=DIR it
// re-cuts the first segment's dictionary into blocks under other rules
// (bytes and terms as now, or distinct trigrams) and filter sizes, and
// prints filter and block key bytes with, for sampled substrings, the
// blocks admitted and the terms those blocks make a search read.
func TestBlockCutDesigns(t *testing.T) {
	dir := os.Getenv("LOGDEX_SEGSTATS")
	if dir == "" {
		t.Skip("set LOGDEX_SEGSTATS=DIR to measure an index")
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "seg-*.ldx"))
	s, err := OpenSegment(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	var terms [][]byte
	s.rangeTerms(nil, nil, func(term []byte, _ uint64) bool { terms = append(terms, slices.Clone(term)); return true })
	s.Close()
	rng := uint64(12345)
	next := func(n int) int { rng = rng*6364136223846793005 + 1442695040888963407; return int(rng>>33) % n }
	var hex, dotted, u8 [][]byte
	for _, tm := range terms {
		switch c := termClass(tm); {
		case c == "hex" && len(tm) >= 16:
			hex = append(hex, tm)
		case c == "dotted" && len(tm) >= 7:
			dotted = append(dotted, tm)
		case c == "hex" && len(tm) == 8:
			u8 = append(u8, tm)
		}
	}
	sample := func(list [][]byte, f func([]byte) []byte) [][]byte {
		var out [][]byte
		for i := 0; i < 200 && len(list) > 0; i++ {
			out = append(out, f(list[next(len(list))]))
		}
		return out
	}
	needles := map[string][][]byte{
		"hex8":  sample(hex, func(h []byte) []byte { o := next(len(h) - 7); return h[o : o+8] }),
		"hex6":  sample(hex, func(h []byte) []byte { o := next(len(h) - 5); return h[o : o+6] }),
		"ipmid": sample(dotted, func(d []byte) []byte { return d[2 : len(d)-1] }),
		"uuid6": sample(u8, func(u []byte) []byte { return u[2:] }),
		"word5": sample(terms, func(w []byte) []byte {
			if len(w) < 5 {
				return w
			}
			o := next(len(w) - 4)
			return w[o : o+5]
		}),
	}
	names := []string{"hex8", "hex6", "ipmid", "uuid6", "word5"}
	grams := func(tm []byte, fn func(uint32)) {
		g := uint32(tm[0])
		for k := 1; k <= len(tm); k++ {
			var c uint32
			if k < len(tm) {
				c = uint32(tm[k])
			}
			g = (g<<8 | c) & 0xFFFFFF
			fn(g)
		}
	}
	type design struct {
		name                     string
		maxBytes, maxTerms, maxG int
		m, k                     int
		noPrefixPad              bool // leave out each term's 0-padded first trigram
	}
	designs := []design{
		{"noprefix 2048/k2", 512, 64, 0, 2048, 2, true},
		{"noprefix 1792/k2", 512, 64, 0, 1792, 2, true},
		{"noprefix 1536/k2", 512, 64, 0, 1536, 2, true},
		{"noprefix 1536/k3", 512, 64, 0, 1536, 3, true},
		{"1536/k2", 512, 64, 0, 1536, 2, false},
		{"now 512B/64t 2048/k2", 512, 64, 0, 2048, 2, false},
		{"512B/64t 1024/k2", 512, 64, 0, 1024, 2, false},
	}
	for _, d := range designs {
		var starts []int
		var filters [][]uint64
		var cur map[uint32]bool
		size := 0
		var f []uint64
		keyBytes := 0
		for i, tm := range terms {
			n := 0
			if cur != nil {
				grams(tm, func(g uint32) {
					if !cur[g] {
						n++
					}
				})
			}
			if i == 0 || size >= d.maxBytes || i-starts[len(starts)-1] >= d.maxTerms || d.maxG > 0 && len(cur)+n > d.maxG {
				starts = append(starts, i)
				keyBytes += 4 + len(tm)
				cur = map[uint32]bool{}
				size = 0
				f = make([]uint64, d.m/64)
				filters = append(filters, f)
			}
			size += len(tm)
			grams(tm, func(g uint32) {
				if d.noPrefixPad && g>>16 == 0 {
					return
				}
				cur[g] = true
				for _, h := range designHashesN(g, d.m, d.k) {
					f[h/64] |= 1 << (h % 64)
				}
			})
		}
		fmt.Printf("%-22s %6d blocks, filters %8d B, keys %7d B, %.1f terms/block:", d.name, len(starts), len(starts)*d.m/8, keyBytes, float64(len(terms))/float64(len(starts)))
		for _, name := range names {
			var cands, scanned int
			for _, nd := range needles[name] {
				for b, f := range filters {
					ok := true
					for i := 0; i+3 <= len(nd) && ok; i++ {
						g := uint32(nd[i])<<16 | uint32(nd[i+1])<<8 | uint32(nd[i+2])
						for _, h := range designHashesN(g, d.m, d.k) {
							if f[h/64]&(1<<(h%64)) == 0 {
								ok = false
							}
						}
					}
					if ok {
						cands++
						end := len(terms)
						if b+1 < len(starts) {
							end = starts[b+1]
						}
						scanned += end - starts[b]
					}
				}
			}
			k := float64(max(len(needles[name]), 1))
			fmt.Printf("  %s %.1f/%.0f", name, float64(cands)/k, float64(scanned)/k)
		}
		fmt.Println()
	}
}

// designHashesN spreads the two trigram hashes over m bits (any multiple
// of 64) by multiply-shift range reduction.
func designHashesN(g uint32, m, k int) []uint32 {
	h := []uint32{g * 0x9E3779B1, (g ^ 0x5bd1e995) * 0x85EBCA77, (g ^ 0x27d4eb2f) * 0x165667B1}
	for i := range h {
		h[i] = uint32(uint64(h[i]) * uint64(m) >> 32)
	}
	return h[:k]
}
