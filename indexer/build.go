package indexer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/blevesearch/vellum"
	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/token"
)

const (
	// maxIndexedLine: longer lines are located but not tokenized; queries
	// verify them by reading (they are listed in the unindexed section), so
	// answers stay exact while a 100 MiB line costs no more than its read.
	maxIndexedLine = 1 << 20
	// maxTermLen: longer tokens (base64 blobs, hex dumps) would bloat the
	// dictionary; their lines are marked unindexed instead.
	maxTermLen = 255
	readBlock  = 4 << 20
)

// posting accumulates one term's line ids: the first inline, the rest as
// uvarint gaps (the encoding most lists are written in anyway).
type posting struct {
	first, last, n uint32
	rest           []byte
}

type spanRec struct {
	file        int
	firstLine   uint32
	numLines    uint32
	start, end  int64
	startLineNo int64
	firstGroup  uint32
}

// builder holds one segment in memory while its lines are read.
type builder struct {
	terms     map[string]uint32
	posts     []posting
	lines     uint32
	lens      []byte
	groups    []byte
	spans     []spanRec
	files     []mmapstore.SegFile
	unindexed []uint32
	nPostings uint64
	rawBytes  int64
	maxLine   int64
	sc        token.Scanner
	cur       *spanRec
	curOff    int64
}

func newBuilder() *builder {
	return &builder{terms: make(map[string]uint32, 1<<16)}
}

// beginSpan starts a run of lines of file f at byte offset off, line lineNo.
func (b *builder) beginSpan(f mmapstore.SegFile, off, lineNo int64) {
	fi := len(b.files)
	if n := len(b.files); n > 0 && b.files[n-1].ID == f.ID {
		fi = n - 1
	} else {
		b.files = append(b.files, f)
	}
	b.spans = append(b.spans, spanRec{file: fi, firstLine: b.lines, start: off, end: off, startLineNo: lineNo, firstGroup: uint32(len(b.groups) / mmapstore.LineGroupSize)})
	b.cur = &b.spans[len(b.spans)-1]
	b.curOff = off
}

// endSpan drops the current span if it got no lines.
func (b *builder) endSpan() {
	if b.cur != nil && b.cur.numLines == 0 {
		b.spans = b.spans[:len(b.spans)-1]
		if f := b.cur.file; f == len(b.files)-1 && !b.fileUsed(f) {
			b.files = b.files[:f]
		}
	}
	b.cur = nil
}

func (b *builder) fileUsed(fi int) bool {
	for _, sp := range b.spans {
		if sp.file == fi {
			return true
		}
	}
	return false
}

// addLine records one complete line: text excludes the '\n', length
// includes it. indexable is false for lines too long to tokenize.
func (b *builder) addLine(text []byte, length int64, indexable bool) {
	id := b.lines
	sp := b.cur
	if (id-sp.firstLine)%mmapstore.GroupSize == 0 {
		b.groups = binary.LittleEndian.AppendUint64(b.groups, uint64(b.curOff))
		b.groups = binary.LittleEndian.AppendUint32(b.groups, uint32(len(b.lens)))
		b.groups = binary.LittleEndian.AppendUint32(b.groups, 0)
	}
	b.lens = binary.AppendUvarint(b.lens, uint64(length))
	b.curOff += length
	sp.numLines++
	sp.end = b.curOff
	b.files[sp.file].Lines++
	b.rawBytes += length
	b.maxLine = max(b.maxLine, length)
	if !indexable || !b.index(text, id) {
		b.unindexed = append(b.unindexed, id)
	}
	b.lines++
}

// index adds the line's terms; false if some term was too long to index.
func (b *builder) index(text []byte, id uint32) bool {
	complete := true
	sc := &b.sc
	sc.Reset(text)
	for sc.Next() {
		t := sc.Term()
		if len(t) > maxTermLen {
			complete = false
			continue
		}
		i, ok := b.terms[string(t)]
		if !ok {
			b.terms[string(t)] = uint32(len(b.posts))
			b.posts = append(b.posts, posting{first: id, last: id, n: 1})
			b.nPostings++
			continue
		}
		p := &b.posts[i]
		if p.last == id {
			continue
		}
		p.rest = binary.AppendUvarint(p.rest, uint64(id-p.last))
		p.last = id
		p.n++
		b.nPostings++
	}
	return complete
}

// full reports whether the segment should be closed before more lines are
// added: line ids are 32-bit.
func (b *builder) full() bool { return b.lines >= 1<<32-2 }

// readPart reads [start, end) of f, adding every complete line. It returns
// the offset just past the last complete line and the number of lines.
// Reads are large and sequential; lines longer than maxIndexedLine are
// counted without being held in memory.
func (b *builder) readPart(f io.ReaderAt, rec mmapstore.SegFile, start, end, lineNo int64, buf []byte, progress func(int64)) (int64, int64, error) {
	b.beginSpan(rec, start, lineNo)
	defer b.endSpan()
	var (
		pos      = start // file offset of buf[0]
		have     = 0     // valid bytes in buf
		hugeLen  int64   // > 0 while skipping through an over-long line
		lines    int64
		complete = start // offset past the last complete line
	)
	for pos+int64(have) < end {
		n := min(int64(len(buf)-have), end-pos-int64(have))
		m, err := f.ReadAt(buf[have:have+int(n)], pos+int64(have))
		if m == 0 && err != nil {
			if err == io.EOF { // truncated meanwhile: index what was there
				break
			}
			return complete, lines, err
		}
		progress(int64(m))
		data := buf[:have+m]
		i := 0
		for {
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				break
			}
			if hugeLen > 0 {
				b.addLine(nil, hugeLen+int64(j)+1, false)
				hugeLen = 0
			} else {
				b.addLine(data[i:i+j], int64(j)+1, j <= maxIndexedLine)
			}
			i += j + 1
			lines++
			complete = pos + int64(i)
			if b.full() {
				return complete, lines, nil
			}
		}
		rest := len(data) - i
		if hugeLen > 0 || rest > maxIndexedLine {
			// Over-long line: remember its length so far, keep nothing.
			hugeLen += int64(rest)
			pos += int64(len(data))
			have = 0
			continue
		}
		copy(buf, data[i:])
		pos += int64(i)
		have = rest
	}
	return complete, lines, nil
}

// segmentStats is what writing a segment reports.
type segmentStats struct {
	Lines    uint32
	Terms    int
	RawBytes int64
	Size     int64
}

// write encodes the segment into w's file. The order of sections is chosen
// so that each can be streamed: postings before the FST that points into
// them.
func (b *builder) write(f *os.File) (segmentStats, error) {
	type termRef struct {
		term string
		idx  uint32
	}
	sorted := make([]termRef, 0, len(b.terms))
	for t, i := range b.terms {
		sorted = append(sorted, termRef{t, i})
	}
	slices.SortFunc(sorted, func(a, c termRef) int { return strings.Compare(a.term, c.term) })

	w := newSectionWriter(f)

	var meta []byte
	for _, kv := range [][2]uint64{
		{mmapstore.MetaLines, uint64(b.lines)},
		{mmapstore.MetaTerms, uint64(len(sorted))},
		{mmapstore.MetaRawBytes, uint64(b.rawBytes)},
		{mmapstore.MetaCreatedNs, uint64(time.Now().UnixNano())},
		{mmapstore.MetaPostings, b.nPostings},
		{mmapstore.MetaUnindexed, uint64(len(b.unindexed))},
		{mmapstore.MetaMaxLineLen, uint64(b.maxLine)},
	} {
		meta = binary.AppendUvarint(meta, kv[0])
		meta = binary.AppendUvarint(meta, kv[1])
	}
	w.section(mmapstore.SectionMeta, meta)

	var files []byte
	files = binary.AppendUvarint(files, uint64(len(b.files)))
	for _, fr := range b.files {
		files = binary.AppendUvarint(files, fr.ID)
		files = binary.AppendUvarint(files, uint64(fr.Root))
		files = binary.AppendUvarint(files, uint64(len(fr.Path)))
		files = append(files, fr.Path...)
		files = binary.AppendUvarint(files, uint64(fr.Size))
		files = binary.AppendUvarint(files, uint64(fr.MTime))
		files = binary.AppendUvarint(files, fr.Dev)
		files = binary.AppendUvarint(files, fr.Ino)
		files = binary.AppendUvarint(files, uint64(fr.FPLen))
		files = binary.LittleEndian.AppendUint64(files, fr.FP)
		files = binary.AppendUvarint(files, uint64(fr.Lines))
	}
	w.section(mmapstore.SectionFiles, files)

	var spans []byte
	spans = binary.AppendUvarint(spans, uint64(len(b.spans)))
	for _, sp := range b.spans {
		spans = binary.AppendUvarint(spans, uint64(sp.file))
		spans = binary.AppendUvarint(spans, uint64(sp.numLines))
		spans = binary.AppendUvarint(spans, uint64(sp.start))
		spans = binary.AppendUvarint(spans, uint64(sp.end-sp.start))
		spans = binary.AppendUvarint(spans, uint64(sp.startLineNo))
		spans = binary.AppendUvarint(spans, uint64(sp.firstGroup))
	}
	w.section(mmapstore.SectionSpans, spans)
	w.section(mmapstore.SectionLineGroups, b.groups)
	w.section(mmapstore.SectionLineLens, b.lens)

	var un []byte
	un = binary.AppendUvarint(un, uint64(len(b.unindexed)))
	prev := uint32(0)
	for i, id := range b.unindexed {
		if i == 0 {
			un = binary.AppendUvarint(un, uint64(id))
		} else {
			un = binary.AppendUvarint(un, uint64(id-prev))
		}
		prev = id
	}
	w.section(mmapstore.SectionUnindexed, un)

	// Postings. Lists dense enough for roaring's bitmap or run containers to
	// beat one uvarint per line are written as roaring; the rest as gaps.
	refs := make([]uint64, len(sorted))
	w.begin(mmapstore.SectionPostings)
	base := w.off
	var hdr []byte
	var ids []uint32
	for i, tr := range sorted {
		p := &b.posts[tr.idx]
		if p.n == 1 {
			refs[i] = uint64(p.first)<<1 | mmapstore.PostingsInline
			continue
		}
		refs[i] = (w.off - base) << 1
		varintSize := uint64(uvarintLen(uint64(p.first)) + len(p.rest))
		if uint64(p.n)*64 >= uint64(b.lines) && p.n >= 1024 {
			ids = decodePosting(ids[:0], p)
			bm := roaring.BitmapOf(ids...)
			bm.RunOptimize()
			if sz := bm.GetSerializedSizeInBytes(); sz+8 < varintSize {
				hdr = binary.AppendUvarint(hdr[:0], uint64(p.n)<<1|mmapstore.EncRoaring)
				hdr = binary.AppendUvarint(hdr, sz)
				w.Write(hdr)
				w.padSection()
				if _, err := bm.WriteTo(w); err != nil {
					return segmentStats{}, err
				}
				continue
			}
		}
		hdr = binary.AppendUvarint(hdr[:0], uint64(p.n)<<1|mmapstore.EncDeltaVarint)
		hdr = binary.AppendUvarint(hdr, uint64(p.first))
		w.Write(hdr)
		w.Write(p.rest)
	}
	w.end()

	w.begin(mmapstore.SectionFST)
	fb, err := vellum.New(w, nil)
	if err != nil {
		return segmentStats{}, err
	}
	var key []byte
	for i, tr := range sorted {
		key = append(key[:0], tr.term...)
		if err := fb.Insert(key, refs[i]); err != nil {
			return segmentStats{}, fmt.Errorf("term dictionary: %w", err)
		}
	}
	if err := fb.Close(); err != nil {
		return segmentStats{}, fmt.Errorf("term dictionary: %w", err)
	}
	w.end()

	w.begin(mmapstore.SectionTermList)
	bw := []byte{'\n'}
	for _, tr := range sorted {
		bw = append(bw, tr.term...)
		bw = append(bw, '\n')
		if len(bw) > 1<<16 {
			w.Write(bw)
			bw = bw[:0]
		}
	}
	w.Write(bw)
	w.end()

	if err := w.finish(); err != nil {
		return segmentStats{}, err
	}
	return segmentStats{Lines: b.lines, Terms: len(sorted), RawBytes: b.rawBytes, Size: int64(w.off)}, nil
}

func decodePosting(dst []uint32, p *posting) []uint32 {
	dst = append(dst, p.first)
	id := p.first
	for rest := p.rest; len(rest) > 0; {
		v, n := binary.Uvarint(rest)
		rest = rest[n:]
		id += uint32(v)
		dst = append(dst, id)
	}
	return dst
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
