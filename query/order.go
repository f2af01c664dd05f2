package query

// Hits in time order, across files: one timeline. The search runs in its
// usual path order, keeping each hit's position and time (and, with a
// limit, only the hits that can still make the page: a bounded heap), then
// the page is sorted and its lines read.

import (
	"container/heap"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/logdex/logdex/query/live"
)

// Order is the order hits are delivered in.
type Order uint8

const (
	OrderPath   Order = iota // by path, then line: grep's order
	OrderOldest              // by time, oldest first, across files
	OrderNewest              // by time, newest first
)

// ParseOrder reads an order as the API spells it.
func ParseOrder(s string) (Order, error) {
	switch s {
	case "", "path":
		return OrderPath, nil
	case "oldest", "time":
		return OrderOldest, nil
	case "newest":
		return OrderNewest, nil
	}
	return 0, fmt.Errorf("unknown order %q (want path, oldest or newest)", s)
}

func (o Order) String() string {
	switch o {
	case OrderOldest:
		return "oldest"
	case OrderNewest:
		return "newest"
	}
	return "path"
}

// timedHit is a hit's place in a time order.
type timedHit struct {
	f      *File
	line   int64
	off, n int64
	t      int64
	timed  bool
	binary bool
}

// before reports whether a comes before b in order o: timed lines by time
// (ties by path and line), then lines without a time by path and line.
func (o Order) before(a, b *timedHit) bool {
	if a.timed != b.timed {
		return a.timed
	}
	if a.timed && a.t != b.t {
		if o == OrderNewest {
			return a.t > b.t
		}
		return a.t < b.t
	}
	ka, nowA := orderKey(a.f)
	kb, nowB := orderKey(b.f)
	if ka != kb {
		return ka < kb
	}
	if nowA != nowB {
		return nowB // the indexed file, then the one its path holds now
	}
	return a.line < b.line
}

// orderKey is what ties between files are broken by: the path a file was
// indexed under (not the name a rotation gave it since: a page's cursor
// keeps its place when logrotate runs between pages), and whether the
// file stands for what that path holds now instead.
func orderKey(f *File) (path string, atPathNow bool) {
	if f.indexedPath != "" {
		return f.indexedPath, false
	}
	return f.Path, f.atPathNow
}

// afterCursor reports whether h comes after the cursor in order o.
func (o Order) afterCursor(h *timedHit, c *Cursor) bool {
	if c == nil {
		return true
	}
	at := &timedHit{f: &File{Path: c.Path, indexedPath: c.Indexed, atPathNow: c.AtPath}, line: c.Line, t: c.Time, timed: c.Timed}
	if same, _ := c.sameFile(h.f); same {
		at.f = h.f // renamed by a rotation since or not, ties with it go by line
	}
	return o.before(at, h)
}

// pageHeap keeps the hits that come first in an order, worst on top.
type pageHeap struct {
	o  Order
	hs []timedHit
}

func (p *pageHeap) Len() int           { return len(p.hs) }
func (p *pageHeap) Less(i, j int) bool { return p.o.before(&p.hs[j], &p.hs[i]) }
func (p *pageHeap) Swap(i, j int)      { p.hs[i], p.hs[j] = p.hs[j], p.hs[i] }
func (p *pageHeap) Push(x any)         { p.hs = append(p.hs, x.(timedHit)) }
func (p *pageHeap) Pop() any {
	h := p.hs[len(p.hs)-1]
	p.hs = p.hs[:len(p.hs)-1]
	return h
}

// searchOrdered is Search for the time orders.
func (s *Searcher) searchOrdered(ctx context.Context, q *Query, opt Options, fn func(*Hit) error) (*Stats, error) {
	inner := opt
	inner.Order, inner.Limit, inner.After, inner.Text, inner.Times, inner.PerFile = OrderPath, 0, nil, false, true, nil
	page := &pageHeap{o: opt.Order}
	var total int64
	st, err := s.Search(ctx, q, inner, func(h *Hit) error {
		th := timedHit{f: h.File, line: h.Line, off: h.Offset, n: h.Length, t: h.Time, timed: h.Timed, binary: h.Binary}
		if !opt.Order.afterCursor(&th, opt.After) {
			return nil
		}
		total++
		if fn == nil {
			return nil
		}
		if opt.Limit <= 0 || page.Len() < opt.Limit {
			heap.Push(page, th)
		} else if opt.Order.before(&th, &page.hs[0]) {
			page.hs[0] = th
			heap.Fix(page, 0)
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	st.Total = total
	st.Truncated = opt.Limit > 0 && total > int64(opt.Limit)
	hits := page.hs
	slices.SortFunc(hits, func(a, b timedHit) int {
		if opt.Order.before(&a, &b) {
			return -1
		}
		return 1
	})
	if fn == nil {
		return st, nil
	}
	r := newLineReader(s)
	defer r.close()
	var buf []byte
	for i := range hits {
		th := &hits[i]
		// The file is opened again (the path-order search closed it): its
		// handle lets the caller reopen it (Reopen: raw answers' byte
		// ranges) as it does in path order.
		src, err := r.handle(th.f)
		if err != nil {
			st.Warnings = append(st.Warnings, fmt.Sprintf("%s: %v; line %d left out", th.f.Path, err, th.line))
			continue
		}
		h := Hit{File: th.f, Line: th.line, Offset: th.off, Length: th.n, Time: th.t, Timed: th.timed, Binary: th.binary, src: src}
		if opt.Text {
			buf = grow(buf, int(th.n))
			text, err := r.read(th.f, th.off, buf)
			if err != nil {
				st.Warnings = append(st.Warnings, fmt.Sprintf("%s: %v; line %d left out", th.f.Path, err, th.line))
				continue
			}
			h.Text = text
		}
		if err := fn(&h); err != nil {
			return st, err
		}
	}
	return st, nil
}

// lineReader reads lines of many files by offset, keeping each file's
// handle until closed.
type lineReader struct {
	s    *Searcher
	hs   map[*File]*live.Handle
	srcs map[*File]io.ReaderAt
}

func newLineReader(s *Searcher) *lineReader {
	return &lineReader{s: s, hs: map[*File]*live.Handle{}, srcs: map[*File]io.ReaderAt{}}
}

// handle opens f as the search read it: its indexed file (renamed by a
// rotation, too), or, for a copy standing for the file its path holds now
// (atPathNow), that file.
func (r *lineReader) handle(f *File) (*live.Handle, error) {
	h, ok := r.hs[f]
	if !ok {
		var err error
		if f.atPathNow {
			h, err = r.s.logs.Check(f.lf)
		} else {
			h, err = r.s.logs.Stat(f.lf, true)
		}
		if err != nil {
			return nil, err
		}
		r.hs[f] = h
	}
	if h.File() == nil {
		return nil, h.Stale()
	}
	return h, nil
}

// read fills buf with the line at off of f; a line cut short by a file
// that shrank since the search is an error.
func (r *lineReader) read(f *File, off int64, buf []byte) ([]byte, error) {
	h, err := r.handle(f)
	if err != nil {
		return nil, err
	}
	src, ok := r.srcs[f]
	if !ok {
		var err error
		if src, err = r.s.source(f, h); err != nil {
			return nil, err
		}
		r.srcs[f] = src
	}
	n, err := src.ReadAt(buf, off)
	if n < len(buf) {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("truncated during the search")
		}
		return nil, err
	}
	return buf, nil
}

func (r *lineReader) close() {
	for _, h := range r.hs {
		h.Close()
	}
}
