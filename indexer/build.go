package indexer

import (
	"bytes"
	"io"
	"sync"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/logdex/logdex/mmapstore/token"
)

const (
	// maxIndexedLine: longer lines are located but not tokenized; queries
	// verify them by reading (they are listed in the unindexed section), so
	// answers stay exact while a 100 MiB line costs no more than its read.
	maxIndexedLine = mmapstore.MaxIndexedLine
	// maxTermLen: longer tokens (base64 blobs, hex dumps) would bloat the
	// dictionary (which holds no longer term); their lines are marked
	// unindexed instead.
	maxTermLen = mmapstore.MaxTermLen
	readBlock  = 4 << 20
)

// readBufs recycles the readBlock buffers: serve's live runs come several
// a second, and a fresh 4 MiB per worker and run (and merge) made the
// garbage collector, whose work slows the searches running beside it, run
// more often.
var readBufs = sync.Pool{New: func() any { b := make([]byte, readBlock); return &b }}

func getReadBuf() *[]byte  { return readBufs.Get().(*[]byte) }
func putReadBuf(b *[]byte) { readBufs.Put(b) }

// builder holds one segment in memory while its lines are read: the
// offset index (in mmapstore's LineTable) and the terms of every line.
type builder struct {
	terms     *termTable
	lines     *mmapstore.LineTable
	unindexed []uint32
	nPostings uint64
	sc        token.Scanner
	batch     termBatch
	// addCompound indexes a dotted number for the line being indexed
	// (made once: a closure per line would allocate).
	addCompound func([]byte)
	curID       uint32
	complete    bool
	postings    string            // mmapstore.PostingsAuto, PostingsVarint or PostingsRoaring
	timer       *lineTimer        // the current part's
	checkpoints map[uint64][]byte // compressed files ending in this segment: their tables
}

// newBuilder returns a builder whose term table is terms, emptied, or a
// new table when terms is nil (a worker passes the table of its previous
// segment: termTable.reset).
func newBuilder(terms *termTable) *builder {
	if terms == nil {
		terms = newTermTable()
	} else {
		terms.reset()
	}
	b := &builder{terms: terms, lines: mmapstore.NewLineTable()}
	b.addCompound = func(c []byte) {
		if len(c) > maxTermLen {
			b.complete = false
			return
		}
		b.batch.pushCopy(b.terms, c)
		b.flushFull(b.curID)
	}
	return b
}

// flushFull adds the batch to the table when it is full.
func (b *builder) flushFull(id uint32) {
	if b.batch.full() {
		b.nPostings += b.terms.addBatch(&b.batch, id)
	}
}

// addLine records one complete line: text excludes the '\n', length
// includes it. indexable is false for lines too long to tokenize.
func (b *builder) addLine(text []byte, length int64, indexable bool) {
	id := b.lines.AddLine(length)
	if !indexable || !b.index(text, id) {
		b.unindexed = append(b.unindexed, id)
	}
	if indexable {
		b.timer.line(id, text)
	} else {
		b.timer.line(id, nil)
	}
}

// index adds the line's terms (words and dotted numbers); false if some
// term was too long to index.
func (b *builder) index(text []byte, id uint32) bool {
	complete := true
	sc := &b.sc
	sc.Reset(text)
	b.batch.line = text
	for sc.Next() {
		t := sc.Term()
		if len(t) > maxTermLen {
			complete = false
			continue
		}
		// A folded term is in the scanner's buffer, which the next
		// folded term overwrites.
		if start, end := sc.Span(); &t[0] == &text[start] {
			b.batch.pushLine(b.terms, start, end)
		} else {
			b.batch.pushCopy(b.terms, t)
		}
		b.flushFull(id)
	}
	b.curID, b.complete = id, true
	token.Compounds(text, b.addCompound)
	b.nPostings += b.terms.addBatch(&b.batch, id)
	return complete && b.complete
}

// readPart reads [start, end) of f, adding every complete line (a NUL
// byte ends a line too: logfile.EndLinesAtNUL). It returns the offset just
// past the last complete line, the number of lines and the offset of the
// first NUL byte read (-1 when none). Reads are large and sequential; lines
// longer than maxIndexedLine are counted without being held in memory.
// A limit > 0 ends the part at the first line end past start+limit.
func (b *builder) readPart(f io.ReaderAt, rec mmapstore.SegFile, start, end, lineNo int64, timer *lineTimer, buf []byte, progress func(int64), limit int64) (complete, lines, nulAt int64, err error) {
	b.lines.BeginSpan(rec, start, lineNo)
	defer b.lines.EndSpan()
	b.timer = timer
	var (
		pos     = start // file offset of buf[0]
		have    = 0     // valid bytes in buf
		hugeLen int64   // > 0 while skipping through an over-long line
	)
	complete, nulAt = start, -1 // complete: offset past the last complete line
	for pos+int64(have) < end {
		n := min(int64(len(buf)-have), end-pos-int64(have))
		m, err := f.ReadAt(buf[have:have+int(n)], pos+int64(have))
		if m == 0 && err != nil {
			if err == io.EOF { // truncated meanwhile: index what was there
				break
			}
			return complete, lines, nulAt, err
		}
		progress(int64(m))
		if k := logfile.EndLinesAtNUL(buf[have : have+m]); k >= 0 && nulAt < 0 {
			nulAt = pos + int64(have+k)
		}
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
			if b.lines.Full() || limit > 0 && complete-start >= limit {
				return complete, lines, nulAt, nil
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
	return complete, lines, nulAt, nil
}

// write sorts the dictionary and writes the segment file at path.
func (b *builder) write(path string) (mmapstore.SegmentInfo, error) {
	return mmapstore.WriteSegment(path, &mmapstore.SegmentInput{
		Lines:       b.lines,
		Unindexed:   b.unindexed,
		Terms:       b.terms.sorted(),
		NumPostings: b.nPostings,
		Postings:    b.postings,
		Checkpoints: b.checkpoints,
	})
}
