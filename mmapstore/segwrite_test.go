package mmapstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/cespare/xxhash/v2"
)

// testTerms is a TermSource over plain slices.
type testTerms struct {
	terms [][]byte
	ids   [][]uint32
}

func (t *testTerms) Len() int { return len(t.terms) }
func (t *testTerms) Term(i int) ([]byte, uint32, uint32, []byte) {
	ids := t.ids[i]
	var gaps []byte
	for k := 1; k < len(ids); k++ {
		gaps = binary.AppendUvarint(gaps, uint64(ids[k]-ids[k-1]))
	}
	return t.terms[i], uint32(len(ids)), ids[0], gaps
}

// segmentCase is a generated segment and what each section must give back.
type segmentCase struct {
	in    *SegmentInput
	files []SegFile
	spans []Span
	locs  []LineLoc // per line id
	times []int64   // per line id, in timed spans
	terms *testTerms
}

// genSegment builds random input: a few files in several spans each (the
// same file may come back after another), lines of varied lengths (some
// over 127 and 16383 bytes, to take multi-byte lengths), terms with lists
// from one line to every line (inline, packed, varint and roaring
// encodings).
func genSegment(r *rand.Rand, force string) *segmentCase {
	c := &segmentCase{in: &SegmentInput{Lines: NewLineTable(), Postings: force}}
	lt := c.in.Lines
	nfiles := 1 + r.IntN(4)
	offs := make([]int64, nfiles)
	linenos := make([]int64, nfiles)
	for i := range linenos {
		linenos[i] = 1 + int64(r.IntN(1000))
		offs[i] = int64(r.IntN(1 << 20))
	}
	for range 1 + r.IntN(6) {
		fi := r.IntN(nfiles)
		f := SegFile{ID: uint64(10 + fi), Root: fi % 2, Path: fmt.Sprintf("dir/f%d.log", fi), Size: 1 << 30, MTime: int64(r.Uint32()),
			Dev: uint64(r.Uint32()), Ino: uint64(r.Uint32()), FPLen: 1024, FP: r.Uint64()}
		lt.BeginSpan(f, offs[fi], linenos[fi])
		// Times in a unit of its own per span (ns to s), moving forward
		// mostly, sometimes back (interleaved writers), sometimes none.
		timed := r.IntN(3) > 0
		unit := []int64{1, 1e3, 1e6, 1e9}[r.IntN(4)]
		now := int64(1.7e18) + r.Int64N(1e15)
		for range r.IntN(300) {
			n := int64(1 + r.IntN(200))
			switch r.IntN(50) {
			case 0:
				n = 20000
			case 1:
				n = 1
			}
			id := lt.AddLine(n)
			c.locs = append(c.locs, LineLoc{Span: len(lt.spans) - 1, Offset: offs[fi], Length: n})
			c.times = append(c.times, 0)
			if timed {
				now += (r.Int64N(2000) - 100) * unit
				if r.IntN(20) == 0 {
					now += (r.Int64N(1<<22) - 1<<20) * unit // deltas of 3 and 4 varint bytes
				}
				if unit == 1 && r.IntN(100) == 0 {
					now += 1<<57 + r.Int64N(1<<40) // a clock set: a delta of 2^56 units and more
				}
				lt.SetTime(id, now)
				c.times[id] = now
			}
			if int(id) != len(c.locs)-1 {
				panic("line ids not consecutive")
			}
			offs[fi] += n
			linenos[fi]++
		}
		lt.EndSpan()
	}
	c.files, c.spans = slices.Clone(lt.files), slices.Clone(lt.spans)
	lines := lt.NumLines()
	// Spans may have been dropped (no lines): recompute each line's span.
	for si, sp := range c.spans {
		for id := sp.FirstLine; id < sp.FirstLine+sp.NumLines; id++ {
			c.locs[id].Span = si
		}
	}
	c.terms = &testTerms{}
	seen := map[string]bool{}
	for range r.IntN(400) {
		t := make([]byte, 1+r.IntN(12))
		for k := range t {
			t[k] = "abcdefghij0123456789._"[r.IntN(22)]
		}
		if r.IntN(2) == 0 {
			// An id: its blocks are stored packed, the others' in FSTs.
			t = append([]byte("id"), t...)
			for k := 2; k < len(t); k++ {
				t[k] = hexDigits[r.IntN(16)]
			}
		}
		if seen[string(t)] || lines == 0 {
			continue
		}
		seen[string(t)] = true
		var ids []uint32
		switch r.IntN(5) {
		case 0:
			ids = []uint32{uint32(r.IntN(int(lines)))}
		case 2:
			// Two or three lines: packed in the reference when they fit.
			set := map[uint32]bool{}
			for range 2 + r.IntN(2) {
				set[uint32(r.IntN(int(lines)))] = true
			}
			for id := range set {
				ids = append(ids, id)
			}
			slices.Sort(ids)
		case 1:
			for id := range lines {
				ids = append(ids, id)
			}
		default:
			p := r.Float64()
			for id := range lines {
				if r.Float64() < p {
					ids = append(ids, id)
				}
			}
		}
		if len(ids) == 0 {
			continue
		}
		c.terms.terms = append(c.terms.terms, t)
		c.terms.ids = append(c.terms.ids, ids)
	}
	idx := make([]int, len(c.terms.terms))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return bytes.Compare(c.terms.terms[a], c.terms.terms[b]) })
	sorted := &testTerms{}
	for _, i := range idx {
		sorted.terms = append(sorted.terms, c.terms.terms[i])
		sorted.ids = append(sorted.ids, c.terms.ids[i])
	}
	c.terms = sorted
	c.in.Terms = sorted
	for id := range lines {
		if r.IntN(40) == 0 {
			c.in.Unindexed = append(c.in.Unindexed, id)
		}
	}
	if r.IntN(2) == 0 {
		c.in.Checkpoints = map[uint64][]byte{}
		for range 1 + r.IntN(3) {
			t := make([]byte, r.IntN(9000))
			for k := range t {
				t[k] = byte(r.Uint32())
			}
			c.in.Checkpoints[uint64(10+r.IntN(6))] = t
		}
	}
	return c
}

// TestSectionRoundTrip writes generated segments and reads every section
// back: meta, files, spans, line groups and lengths, unindexed lines,
// postings in each encoding, the dictionary, term blocks and trigram
// filters.
func TestSectionRoundTrip(t *testing.T) {
	packed := 0
	for seed := range uint64(60) {
		force := []string{PostingsAuto, PostingsVarint, PostingsRoaring}[seed%3]
		c := genSegment(rand.New(rand.NewPCG(seed, 7)), force)
		data, err := EncodeSegment(c.in)
		if err != nil {
			t.Fatal(err)
		}
		s, err := ParseSegment("gen", data)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if err := s.Verify(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkSegment(t, fmt.Sprintf("seed %d (%q)", seed, force), s, c)
		for _, term := range c.terms.terms {
			if ref, _, _ := s.Lookup(term); ref&postingsTag == PostingsPacked {
				packed++
			}
		}
	}
	if packed == 0 {
		t.Fatal("no generated term got packed line ids")
	}
}

func checkSegment(t *testing.T, name string, s *Segment, c *segmentCase) {
	t.Helper()
	// meta
	if s.NumLines() != uint32(len(c.locs)) || s.NumTerms() != uint64(c.terms.Len()) || s.RawBytes() != c.in.Lines.rawBytes {
		t.Fatalf("%s: meta: %d lines, %d terms, %d bytes", name, s.NumLines(), s.NumTerms(), s.RawBytes())
	}
	// files and spans
	if !slices.Equal(s.Files(), c.files) {
		t.Fatalf("%s: files\n got %+v\nwant %+v", name, s.Files(), c.files)
	}
	if !slices.Equal(s.Spans(), c.spans) {
		t.Fatalf("%s: spans\n got %+v\nwant %+v", name, s.Spans(), c.spans)
	}
	// line groups and lengths, through every reader of them
	for id, want := range c.locs {
		got, err := s.Locate(uint32(id))
		if err != nil || got != want {
			t.Fatalf("%s: Locate(%d) = %+v, %v; want %+v", name, id, got, err, want)
		}
		if s.SpanOf(uint32(id)) != want.Span {
			t.Fatalf("%s: SpanOf(%d)", name, id)
		}
	}
	for si, sp := range c.spans {
		from := uint32(0)
		if sp.NumLines > 3 {
			from = sp.NumLines / 3
		}
		next := sp.FirstLine + from
		err := s.WalkLines(si, from, func(id uint32, off, n int64) bool {
			if id != next || off != c.locs[id].Offset || n != c.locs[id].Length {
				t.Fatalf("%s: WalkLines(%d) gave line %d at %d+%d", name, si, id, off, n)
			}
			next++
			return true
		})
		if err != nil || next != sp.FirstLine+sp.NumLines {
			t.Fatalf("%s: WalkLines(%d): %v, stopped at %d", name, si, err, next)
		}
		chunks, err := s.SpanChunks(si, 4096)
		if err != nil || chunks[0].Start != sp.StartOffset || chunks[len(chunks)-1].End != sp.EndOffset {
			t.Fatalf("%s: SpanChunks(%d) = %+v, %v", name, si, chunks, err)
		}
		for _, ch := range chunks {
			if c.locs[ch.FirstLine].Offset != ch.Start {
				t.Fatalf("%s: chunk starts at %d but line %d is at %d", name, ch.Start, ch.FirstLine, c.locs[ch.FirstLine].Offset)
			}
		}
	}
	// time index
	for si, sp := range c.spans {
		var lo, hi int64 = 1 << 62, -1 << 62
		err := s.WalkTimes(si, sp.NumLines/2, func(line uint32, ts int64) bool {
			if line < sp.FirstLine+sp.NumLines/2 || ts != c.times[line] {
				t.Fatalf("%s: WalkTimes(%d) gave line %d at %d, want %d", name, si, line, ts, c.times[line])
			}
			return true
		})
		if err != nil {
			t.Fatalf("%s: WalkTimes(%d): %v", name, si, err)
		}
		for id := sp.FirstLine; id < sp.FirstLine+sp.NumLines; id++ {
			ts, ok, err := s.LineTime(id)
			if err != nil || ok != sp.Timed || ok && ts != c.times[id] {
				t.Fatalf("%s: LineTime(%d) = %d %v %v, want %d (timed %v)", name, id, ts, ok, err, c.times[id], sp.Timed)
			}
			lo, hi = min(lo, c.times[id]), max(hi, c.times[id])
		}
		if sp.Timed && (sp.MinTime != lo || sp.MaxTime != hi) {
			t.Fatalf("%s: span %d range [%d, %d], want [%d, %d]", name, si, sp.MinTime, sp.MaxTime, lo, hi)
		}
		for g := sp.FirstGroup; g < sp.FirstGroup+(sp.NumLines+GroupSize-1)/GroupSize; g++ {
			tg, err := s.TimeGroupOf(g)
			if err != nil || tg.Timed != sp.Timed || tg.Timed && (tg.Min < lo || tg.Max > hi) {
				t.Fatalf("%s: TimeGroupOf(%d) = %+v, %v", name, g, tg, err)
			}
		}
	}
	// checkpoint tables
	for id := uint64(0); id < 20; id++ {
		want, has := c.in.Checkpoints[id]
		got, ok, err := s.Checkpoints(id)
		if err != nil || ok != has || !bytes.Equal(got, want) {
			t.Fatalf("%s: Checkpoints(%d) = %d bytes %v %v, want %d bytes %v", name, id, len(got), ok, err, len(want), has)
		}
	}
	// unindexed
	var un []uint32
	if bm := s.Unindexed(); bm != nil {
		un = bm.ToArray()
	}
	if !slices.Equal(un, c.in.Unindexed) {
		t.Fatalf("%s: unindexed %v, want %v", name, un, c.in.Unindexed)
	}
	// dictionary and postings
	for i, term := range c.terms.terms {
		ref, ok, err := s.Lookup(term)
		if err != nil || !ok {
			t.Fatalf("%s: Lookup(%q): %v %v", name, term, ok, err)
		}
		bm, err := s.Postings(ref)
		if err != nil || !slices.Equal(bm.ToArray(), c.terms.ids[i]) {
			t.Fatalf("%s: Postings(%q) = %v, %v; want %v", name, term, bm, err, c.terms.ids[i])
		}
		if n, err := s.DocFreq(ref); err != nil || n != len(c.terms.ids[i]) {
			t.Fatalf("%s: DocFreq(%q) = %d, %v", name, term, n, err)
		}
		with := bm.Clone()
		with.RemoveRange(0, uint64(s.NumLines()/2))
		and, err := s.PostingsAnd(ref, with)
		if err != nil || !and.Equals(with) {
			t.Fatalf("%s: PostingsAnd(%q)", name, term)
		}
		// A few ids spread over the list, and lines it lacks: the walk
		// skips from one to the next.
		sparse := roaring.New()
		for k, id := range c.terms.ids[i] {
			if k%7 == 3 {
				sparse.Add(id)
				sparse.Add(id + 1)
			}
		}
		sparse.Add(s.NumLines() - 1)
		if and, err := s.PostingsAnd(ref, sparse); err != nil || !and.Equals(roaring.And(bm, sparse)) {
			t.Fatalf("%s: PostingsAnd(%q, sparse) = %v, %v; want %v", name, term, and, err, roaring.And(bm, sparse))
		}
		checkPostingsIn(t, name, s, term, ref, bm)
	}
	if _, ok, _ := s.Lookup([]byte("not-a-term")); ok {
		t.Fatalf("%s: found a term never written", name)
	}
	var all [][]byte
	s.PrefixTerms(nil, func(term []byte, _ uint64) bool { all = append(all, bytes.Clone(term)); return true })
	if !slices.EqualFunc(all, c.terms.terms, bytes.Equal) {
		t.Fatalf("%s: PrefixTerms lists %d terms, want %d", name, len(all), c.terms.Len())
	}
	// term blocks: every term in exactly its block, blocks in order
	var inBlocks [][]byte
	for b := range s.NumBlocks() {
		s.BlockTerms(b, func(term []byte, _ uint64) bool { inBlocks = append(inBlocks, bytes.Clone(term)); return true })
	}
	if !slices.EqualFunc(inBlocks, c.terms.terms, bytes.Equal) {
		t.Fatalf("%s: blocks hold %d terms, want %d", name, len(inBlocks), c.terms.Len())
	}
	// trigram filters: a term's own substrings always admit its block
	blockOf := func(term []byte) int {
		for b := s.NumBlocks() - 1; b >= 0; b-- {
			if bytes.Compare(s.BlockKey(b), term) <= 0 {
				return b
			}
		}
		return -1
	}
	for _, term := range c.terms.terms {
		if len(term) < 3 {
			continue
		}
		cands, err := s.BlockCandidates(term[1:], false, true)
		if err != nil || !slices.Contains(cands, uint32(blockOf(term))) {
			t.Fatalf("%s: BlockCandidates(suffix %q) = %v, misses block %d", name, term[1:], cands, blockOf(term))
		}
	}
}

// fixChecksums recomputes every checksum the table of contents leads to
// (where the section lies inside the file): chunk sums, their page sums,
// whole-section sums and the table's own, so that mutated bytes reach the
// decoders behind the checksums.
func fixChecksums(b []byte) {
	if len(b) < HeaderSize+FooterSize {
		return
	}
	foot := b[len(b)-FooterSize:]
	tocOff := binary.LittleEndian.Uint64(foot)
	n := uint64(binary.LittleEndian.Uint32(foot[8:]))
	toc, ok := slice(b[:len(b)-FooterSize], tocOff, n*TOCEntrySize)
	if !ok || n > 64 {
		return
	}
	secOf := func(i uint64) ([]byte, bool) {
		e := toc[i*TOCEntrySize:]
		return slice(b[:tocOff], binary.LittleEndian.Uint64(e[8:]), binary.LittleEndian.Uint64(e[16:]))
	}
	kindOf := func(i uint64) uint32 { return binary.LittleEndian.Uint32(toc[i*TOCEntrySize:]) }
	var sums []byte
	for i := range n {
		sec, ok := secOf(i)
		if !ok || binary.LittleEndian.Uint32(toc[i*TOCEntrySize+4:])&TOCFlagChunked == 0 {
			continue
		}
		for c := 0; c < len(sec); c += ChunkSize {
			sums = binary.LittleEndian.AppendUint64(sums, xxhash.Sum64(sec[c:min(c+ChunkSize, len(sec))]))
		}
	}
	for i := range n {
		if sec, ok := secOf(i); ok && kindOf(i) == SectionChunkSums {
			copy(sec, sums)
		}
	}
	for i := range n {
		if sec, ok := secOf(i); ok && kindOf(i) == SectionSumPages {
			for p := 0; p*8 < len(sec) && p*SumPageChunks*8 < len(sums); p++ {
				binary.LittleEndian.PutUint64(sec[p*8:], xxhash.Sum64(sums[p*SumPageChunks*8:min((p+1)*SumPageChunks*8, len(sums))]))
			}
		}
	}
	for i := range n {
		if sec, ok := secOf(i); ok {
			binary.LittleEndian.PutUint64(toc[i*TOCEntrySize+24:], xxhash.Sum64(sec))
		}
	}
	binary.LittleEndian.PutUint64(foot[16:], xxhash.Sum64(toc))
}

// FuzzSegmentDecoders mutates a valid segment (bytes set at fuzzed
// positions, anywhere but the footer) and fixes up its checksums before
// parsing it, so that every decoder sees damaged bytes that pass the
// checksums: none may panic, loop or allocate without bound.
// checkPostingsIn compares PostingsIn with the whole list (all, from
// Postings) cut to the same ranges: none, all lines, ranges around and
// between its ids, ranges ending before its last id.
func checkPostingsIn(t *testing.T, name string, s *Segment, term []byte, ref uint64, all *roaring.Bitmap) {
	t.Helper()
	n := s.NumLines()
	ids := all.ToArray()
	cases := [][]LineRange{nil, {{0, n}}, {{0, 1}}, {{n - 1, n}}, {{n / 3, n / 2}}, {{0, n / 4}, {n / 2, n/2 + 1}, {3 * n / 4, n}}}
	if len(ids) > 2 {
		mid := ids[len(ids)/2]
		cases = append(cases, []LineRange{{ids[0], ids[0] + 1}, {mid, mid + 1}}, []LineRange{{ids[1], ids[len(ids)-1]}})
	}
	for _, ranges := range cases {
		got, err := s.PostingsIn(ref, ranges)
		want := roaring.And(all, RangesBitmap(ranges))
		if err != nil || !got.Equals(want) {
			t.Fatalf("%s: PostingsIn(%q, %v) = %v, %v; want %v", name, term, ranges, got, err, want)
		}
	}
}

func FuzzSegmentDecoders(f *testing.F) {
	var bases [4][]byte
	for i := range bases {
		var err error
		if bases[i], err = EncodeSegment(genSegment(rand.New(rand.NewPCG(uint64(i), 2)), PostingsAuto).in); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(uint32(100), byte(0xff), uint32(0), byte(0), uint8(1))
	f.Add(uint32(len(bases[0])/2), byte(0x80), uint32(len(bases[0])/3), byte(7), uint8(2))
	f.Fuzz(func(t *testing.T, p1 uint32, b1 byte, p2 uint32, b2 byte, seedNo uint8) {
		data := bytes.Clone(bases[seedNo%4])
		body := len(data) - FooterSize
		data[int(p1)%body] = b1
		data[int(p2)%body] = b2
		fixChecksums(data)
		s, err := ParseSegment("fuzz", data)
		if err != nil {
			return
		}
		exerciseAll(s)
	})
}

// exerciseAll calls every reader on a segment with bounded loops: errors
// are fine, panics are not.
func exerciseAll(s *Segment) {
	n := 0
	s.PrefixTerms(nil, func(term []byte, ref uint64) bool {
		if bm, err := s.Postings(ref); err == nil {
			s.PostingsAnd(ref, bm)
		}
		s.PostingsIn(ref, []LineRange{{1, 3}, {s.NumLines() / 2, s.NumLines()/2 + 40}})
		s.DocFreq(ref)
		s.Lookup(term)
		n++
		return n < 2000
	})
	for i := uint32(0); i < min(s.NumLines(), 2000); i++ {
		s.Locate(i)
		s.LineTime(i)
	}
	for si := range min(len(s.Spans()), 20) {
		k := 0
		s.WalkLines(si, 0, func(uint32, int64, int64) bool { k++; return k < 2000 })
		s.SpanChunks(si, 1<<10)
		s.PrefetchLines(si)
	}
	for id := range uint64(20) {
		s.Checkpoints(id)
	}
	for si := range min(len(s.Spans()), 5) {
		s.WalkTimes(si, 0, func(uint32, int64) bool { return true })
	}
	for _, needle := range []string{"abc", "0.1", "ghi"} {
		blocks, err := s.BlockCandidates([]byte(needle), false, false)
		if err != nil {
			continue
		}
		for i, b := range blocks {
			if i > 20 {
				break
			}
			k := 0
			s.BlockTerms(int(b), func([]byte, uint64) bool { k++; return k < 200 })
		}
		s.EstimatePrefixTerms([]byte(needle))
	}
}

// TestDecodersUnderFixedChecksums runs a deterministic slice of what
// FuzzSegmentDecoders explores, so the default test run covers it.
func TestDecodersUnderFixedChecksums(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 400
	if os.Getenv("LOGDEX_LONG") != "" {
		n = 20000
	}
	var bases [][]byte
	for i := range 8 {
		seg, err := EncodeSegment(genSegment(rand.New(rand.NewPCG(uint64(i), 9)), PostingsAuto).in)
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, seg)
	}
	for i := range n {
		seg := bytes.Clone(bases[i%len(bases)])
		for range 1 + r.IntN(3) {
			seg[r.IntN(len(seg)-FooterSize)] = byte(r.Uint32())
		}
		fixChecksums(seg)
		if s, err := ParseSegment("mutated", seg); err == nil {
			exerciseAll(s)
		}
	}
}

// TestVersions: a segment or manifest of a version outside
// MinFormatVersion..FormatVersion is a *VersionError matching ErrVersion,
// not a corruption error.
func TestVersions(t *testing.T) {
	seg, err := EncodeSegment(genSegment(rand.New(rand.NewPCG(5, 5)), PostingsAuto).in)
	if err != nil {
		t.Fatal(err)
	}
	man, err := EncodeManifest(&Manifest{Roots: []Root{{Given: "logs", Abs: "/logs"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []uint32{MinFormatVersion - 1, FormatVersion + 1} {
		s := bytes.Clone(seg)
		binary.LittleEndian.PutUint32(s[8:], v)
		binary.LittleEndian.PutUint32(s[len(s)-FooterSize+12:], v)
		_, err := ParseSegment("seg", s)
		var ve *VersionError
		if !errors.Is(err, ErrVersion) || !errors.As(err, &ve) || ve.Found != v || errors.Is(err, ErrCorrupt) {
			t.Fatalf("segment of version %d: %v", v, err)
		}
		m := bytes.Clone(man)
		binary.LittleEndian.PutUint32(m[8:], v)
		if _, err := DecodeManifest("m", m); !errors.As(err, &ve) || ve.Found != v {
			t.Fatalf("manifest of version %d: %v", v, err)
		}
	}
}

// BenchmarkLineTime times one line in a group picked at random, as a page
// of hits spread over a file does, its deltas in ms: "two-byte", lines
// 0.1-3 s apart (uvarint deltas of two bytes); "mixed", a third of them
// under 64 ms apart and the rest up to 8 s, shuffled, as in the benchmark
// corpus (40% of its delta bytes have the continuation bit).
func BenchmarkLineTime(b *testing.B) {
	for _, c := range []struct {
		name  string
		delta func(r *rand.Rand) int64
	}{
		{"two-byte", func(r *rand.Rand) int64 { return 100 + r.Int64N(2900) }},
		{"mixed", func(r *rand.Rand) int64 {
			if r.IntN(3) == 0 {
				return r.Int64N(64)
			}
			return 64 + r.Int64N(8000)
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			lt := NewLineTable()
			lt.BeginSpan(SegFile{ID: 1, Path: "app.log", Size: 1 << 30}, 0, 1)
			r := rand.New(rand.NewPCG(1, 2))
			now := int64(1.7e18)
			const lines = 1 << 16
			for range lines {
				id := lt.AddLine(100)
				now += c.delta(r) * 1e6
				lt.SetTime(id, now)
			}
			lt.EndSpan()
			data, err := EncodeSegment(&SegmentInput{Lines: lt, Terms: &testTerms{}})
			if err != nil {
				b.Fatal(err)
			}
			s, err := ParseSegment("bench", data)
			if err != nil {
				b.Fatal(err)
			}
			ids := make([]uint32, 1024)
			for i := range ids {
				ids[i] = uint32(r.IntN(lines))
			}
			i := 0
			for b.Loop() {
				if _, _, err := s.LineTime(ids[i%len(ids)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// oneFileLines is a line table of n lines of one file, in one span.
func oneFileLines(n int) *LineTable {
	lt := NewLineTable()
	lt.BeginSpan(SegFile{ID: 1, Path: "a.log", Size: 1 << 40, FPLen: 1}, 0, 1)
	for range n {
		lt.AddLine(10)
	}
	lt.EndSpan()
	return lt
}

// TestPostingsAndLongLists intersects uvarint lists many verification
// windows long, with gaps of one to three bytes, against candidate sets
// from dense to sparse: the merge decodes a window at a time and skips
// runs of short gaps below the next candidate.
func TestPostingsAndLongLists(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const lines = 300_000
	lt := oneFileLines(lines)
	terms := &testTerms{}
	for _, name := range []string{"dense", "mixed", "sparse", "wide"} { // (in order: a dictionary is sorted)
		var ids []uint32
		for id := uint32(r.IntN(50)); id < lines; {
			ids = append(ids, id)
			switch name {
			case "dense":
				id += 1 + uint32(r.IntN(3))
			case "wide": // one-byte gaps whose runs of 8 pass a wanted id
				id += 1 + uint32(r.IntN(127))
			case "mixed":
				id += []uint32{1, 2, 5, 100, 200, 20000}[r.IntN(6)]
			default:
				id += 100 + uint32(r.IntN(30000))
			}
		}
		terms.terms = append(terms.terms, []byte(name))
		terms.ids = append(terms.ids, ids)
	}
	data, err := EncodeSegment(&SegmentInput{Lines: lt, Terms: terms, Postings: PostingsVarint})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSegment("long", data)
	if err != nil {
		t.Fatal(err)
	}
	for i, term := range terms.terms {
		ref, ok, err := s.Lookup(term)
		if err != nil || !ok {
			t.Fatalf("Lookup(%q): %v %v", term, ok, err)
		}
		list := roaring.BitmapOf(terms.ids[i]...)
		withs := map[string]*roaring.Bitmap{"all lines": roaring.New(), "one past the end": roaring.BitmapOf(lines - 1)}
		withs["all lines"].AddRange(0, lines)
		for _, every := range []int{1, 2, 7, 1000} {
			w := roaring.New()
			for k, id := range terms.ids[i] {
				if k%every == every-1 {
					w.Add(id)
					w.Add(id + 1)
				}
			}
			withs[fmt.Sprintf("every %dth and its next line", every)] = w
		}
		for k := range 3 {
			w := roaring.New()
			for range 1 + r.IntN(5000) {
				w.Add(uint32(r.IntN(lines)))
			}
			withs[fmt.Sprintf("random %d", k)] = w
		}
		for wname, with := range withs {
			got, err := s.PostingsAnd(ref, with)
			if want := roaring.And(list, with); err != nil || !got.Equals(want) {
				t.Errorf("%s AND %s: %d ids, %v; want %d", term, wname, got.GetCardinality(), err, want.GetCardinality())
			}
		}
	}
}

// TestPostingsAndCountPastBody: a list whose header promises more ids than
// its bytes hold (one-byte gaps, skipped eight at a time toward a distant
// candidate) is a corruption error, never a read past the body.
func TestPostingsAndCountPastBody(t *testing.T) {
	const lines = 20_000
	lt := oneFileLines(lines)
	// A first id of three bytes leaves room for a count of two more ids
	// than there are (the reader checks count <= bytes first); bodies of
	// every length mod 8, so that some skip ends at the body's end.
	for n := 160; n < 168; n++ {
		var ids []uint32
		for k := range n {
			ids = append(ids, uint32(1<<14+5*k))
		}
		countPastBody(t, lt, lines, ids)
	}
}

func countPastBody(t *testing.T, lt *LineTable, lines uint32, ids []uint32) {
	t.Helper()
	terms := &testTerms{terms: [][]byte{[]byte("word")}, ids: [][]uint32{ids}}
	data, err := EncodeSegment(&SegmentInput{Lines: lt, Terms: terms, Postings: PostingsVarint})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSegment("good", data)
	if err != nil {
		t.Fatal(err)
	}
	ref, ok, err := s.Lookup([]byte("word"))
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	at := s.postings.off + ref>>2
	h, k := binary.Uvarint(data[at:])
	for extra := uint64(1); extra <= 2; extra++ {
		bad := bytes.Clone(data)
		if binary.PutUvarint(bad[at:], (h>>1+extra)<<1|h&1) != k {
			t.Fatal("header width changed")
		}
		fixChecksums(bad)
		s, err := ParseSegment("bad", bad)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.PostingsAnd(ref, roaring.BitmapOf(lines-1)); !errors.Is(err, ErrCorrupt) || strings.Contains(err.Error(), "runtime error") {
			t.Fatalf("count %d past the body: %v, want a corruption error", extra, err)
		}
	}
}
