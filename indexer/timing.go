package indexer

// Giving every line a time. The format is detected per part (package
// logtime); a line without a timestamp (a stack trace, a continuation)
// takes the previous line's time, lines before a file's first timestamp
// take that first one's, and a part of a file already indexed starts from
// the time of the file's last indexed line. A file with no timestamp at all
// stays untimed.

import (
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
