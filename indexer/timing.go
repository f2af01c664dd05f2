package indexer

// Giving every line a time. The format is detected per part (package
// logtime); a line without a timestamp (a stack trace, a continuation)
// takes the previous line's time, lines before a file's first timestamp
// take that first one's, and a part of a file already indexed starts from
// the time of the file's last indexed line. A file with no timestamp at all
// stays untimed.

import (
	"bytes"
	"io"
	"time"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logtime"
)

// lineTimer times the lines of one part as they are added.
type lineTimer struct {
	p       *logtime.Parser
	lt      *mmapstore.LineTable
	carry   int64 // the previous line's time
	have    bool
	pending []uint32 // lines before the first time, waiting for it
	first   int64    // first and last time of the part
	any     bool
}

func newLineTimer(lt *mmapstore.LineTable, loc *time.Location, mtime int64, carry int64, haveCarry bool) *lineTimer {
	return &lineTimer{
		p:     logtime.NewParser(logtime.Options{Location: loc, ModTime: time.Unix(0, mtime)}),
		lt:    lt,
		carry: carry, have: haveCarry,
	}
}

// line times line id with the given text (nil for a line too long to read,
// which takes the previous line's time).
func (t *lineTimer) line(id uint32, text []byte) {
	if text != nil {
		if ts, ok := t.p.Parse(text); ok {
			for _, p := range t.pending {
				t.lt.SetTime(p, ts)
			}
			t.pending = t.pending[:0]
			t.lt.SetTime(id, ts)
			t.carry, t.have = ts, true
			if !t.any {
				t.first, t.any = ts, true
			}
			return
		}
	}
	if t.have {
		t.lt.SetTime(id, t.carry)
		return
	}
	t.pending = append(t.pending, id)
}

// timedCut moves a cut between two parts of a file forward to the first
// line with a timestamp (at most cutSearch bytes on): the lines at the
// start of a part take the first time found in it, which is only right for
// the lines at the start of a file; where the part starts at a timestamp,
// the continuation lines before it stay with the previous part, whose last
// time they carry. It returns the new cut and the lines it moved past.
func (u *update) timedCut(f io.ReaderAt, rec *mmapstore.FileRecord, cut, end int64) (int64, int64) {
	const sample, cutSearch = 64 << 10, 1 << 20
	from := max(cut-sample, 0)
	buf := make([]byte, min(end, cut+cutSearch)-from)
	n, _ := f.ReadAt(buf, from)
	buf = buf[:n]
	if int64(len(buf)) <= cut-from {
		return cut, 0
	}
	p := logtime.NewParser(logtime.Options{Location: u.opt.Location, ModTime: time.Unix(0, rec.MTime)})
	// Learn the format from the lines before the cut (whole lines only).
	before := buf[:cut-from]
	if i := bytes.IndexByte(before, '\n'); i >= 0 && from > 0 {
		before = before[i+1:]
	}
	p.Detect(bytes.Split(bytes.TrimSuffix(before, []byte{'\n'}), []byte{'\n'}))
	if p.Format() == "" {
		return cut, 0 // no timestamps here: any cut is as good
	}
	rest := buf[cut-from:]
	var moved int64
	for off := 0; off < len(rest); moved++ {
		j := bytes.IndexByte(rest[off:], '\n')
		if j < 0 {
			break // the line may go on past what was read
		}
		if _, ok := p.Parse(rest[off : off+j]); ok {
			return cut + int64(off), moved
		}
		off += j + 1
	}
	return cut, 0
}
