package query

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/logdex/logdex/mmapstore"
	"github.com/logdex/logdex/mmapstore/logfile"
	"github.com/logdex/logdex/query/live"
)

// Line is one line of a log file read by number.
type Line struct {
	No     int64
	Offset int64
	Text   []byte // without '\n'; valid during the callback
	Length int64  // the line's length (Text may hold only its start)
}

// ReadLines calls fn for lines from..to (1-based, inclusive) of f as it is
// now, finding the first through the offset index and reading on from
// there. A file replaced since indexing is read from its start.
func (s *Searcher) ReadLines(ctx context.Context, f *File, from, to int64, fn func(Line) error) error {
	return s.ReadLinesMax(ctx, f, from, to, 0, fn)
}

// ReadLinesMax is ReadLines with each line's Text cut at maxText bytes (0: no
// limit): a reader that sends only a line's start holds no more of a huge
// line than that.
func (s *Searcher) ReadLinesMax(ctx context.Context, f *File, from, to int64, maxText int, fn func(Line) error) error {
	if err := s.ix.Acquire(); err != nil {
		return err
	}
	defer s.ix.Release()
	if from < 1 {
		from = 1
	}
	if to < from {
		return nil
	}
	var h *live.Handle
	var err error
	if f.atPathNow {
		h, err = s.logs.Check(f.lf) // the file its path holds now, whatever it is
	} else {
		h, err = s.logs.Stat(f.lf, true)
	}
	if err != nil {
		return err
	}
	defer h.Close()
	if h.File() == nil {
		return h.Stale()
	}
	indexed := h.Stale() == nil && !f.atPathNow // the offset index applies
	if !indexed && f.Record().Compression != "" {
		return cmp.Or(h.Stale(), live.ErrReplaced) // its restart points are of the file indexed
	}
	src, err := s.source(f, h)
	if err != nil {
		return err
	}
	off, no := int64(0), int64(1)
	if indexed && !s.damagedFiles[f.ID] {
		off, no, err = s.seek(f, from)
		if errors.Is(err, mmapstore.ErrCorrupt) {
			off, no, err = 0, 1, nil // a damaged offset index: read from the start
		}
		if err != nil {
			return err
		}
	}
	buf := make([]byte, 64<<10)
	// A line longer than a read continues in the next ones: its bytes are
	// kept in carry (only when it is passed on) and only the new bytes
	// are searched for its end, so a long line costs its length once.
	var carry []byte
	inLine := false // the last read ended inside line no
	var carryStart, carryLen int64
	// keepText appends to carry what maxText lets it hold of a line.
	keepText := func(b []byte) {
		carryLen += int64(len(b))
		if maxText > 0 {
			b = b[:min(len(b), max(0, maxText-len(carry)))]
		}
		carry = append(carry, b...)
	}
	clip := func(b []byte) []byte {
		if maxText > 0 && len(b) > maxText {
			return b[:maxText]
		}
		return b
	}
	for no <= to {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m, rerr := src.ReadAt(buf, off)
		data := buf[:m]
		logfile.EndLinesAtNUL(data) // lines are numbered as the index numbers them
		chunkStart := off
		off += int64(m)
		eof := rerr != nil
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return rerr
		}
		i := 0
		if inLine {
			j := bytes.IndexByte(data, '\n')
			keep := no >= from
			if j < 0 && !eof {
				if keep {
					keepText(data)
				}
				continue
			}
			end := len(data)
			if j >= 0 {
				end = j
			}
			if keep {
				keepText(data[:end])
				if err := fn(Line{No: no, Offset: carryStart, Text: carry, Length: carryLen}); err != nil {
					return err
				}
			}
			carry, carryLen, inLine = carry[:0], 0, false
			no++
			if j < 0 {
				break
			}
			i = j + 1
		}
		for no <= to {
			j := bytes.IndexByte(data[i:], '\n')
			if j < 0 {
				if i < len(data) {
					if eof { // unterminated last line
						if no >= from {
							if err := fn(Line{No: no, Offset: chunkStart + int64(i), Text: clip(data[i:]), Length: int64(len(data) - i)}); err != nil {
								return err
							}
						}
						no++
					} else {
						inLine, carryStart = true, chunkStart+int64(i)
						if no >= from {
							carry, carryLen = carry[:0], 0
							keepText(data[i:])
						}
					}
				}
				break
			}
			if no >= from {
				if err := fn(Line{No: no, Offset: chunkStart + int64(i), Text: clip(data[i : i+j]), Length: int64(j)}); err != nil {
					return err
				}
			}
			no++
			i += j + 1
		}
		if eof {
			break
		}
	}
	return nil
}

// seek returns the offset of line no (or of the nearest indexed line before
// it) and that line's number.
func (s *Searcher) seek(f *File, no int64) (_, _ int64, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: offset index: %v", mmapstore.ErrCorrupt, r)
		}
	}()
	off, at := int64(0), int64(1)
	for _, sr := range f.spans {
		seg := s.segs[sr.seg]
		sp := seg.Spans()[sr.span]
		if sp.StartLineNo > no {
			break
		}
		if no < sp.StartLineNo+int64(sp.NumLines) {
			loc, err := seg.Locate(sp.FirstLine + uint32(no-sp.StartLineNo))
			if err != nil {
				return 0, 0, err
			}
			return loc.Offset, no, nil
		}
		off, at = sp.EndOffset, sp.StartLineNo+int64(sp.NumLines)
	}
	return off, at, nil
}
