package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/logdex/logdex/query"
	"github.com/logdex/logdex/query/live"
)

// fileJSON is one entry of /api/files.
type fileJSON struct {
	ID           uint64    `json:"id"`
	Path         string    `json:"path"`
	PathB64      string    `json:"path_b64,omitempty"` // the exact bytes, when not valid UTF-8
	Size         int64     `json:"size"`               // when last indexed
	Lines        int64     `json:"lines"`              // complete lines indexed
	IndexedBytes int64     `json:"indexed_bytes"`      // prefix covered by the index
	MTime        time.Time `json:"mtime"`
	// Times: the format detected and the range of the indexed lines'
	// times; a file without timestamps has timed false and none.
	Timed      bool   `json:"timed"`
	TimeFormat string `json:"time_format,omitempty"`
	FirstTime  string `json:"first_time,omitempty"`
	LastTime   string `json:"last_time,omitempty"`
	// Log is the log the file is part of (a log and its rotations share
	// it: search it with log=), Rotation its place in that log's history
	// (0 the live file). Compression names a compressed file's format
	// (Size is the compressed file's; its lines, indexed bytes and
	// content are the decompressed ones); Damage says where decompressing
	// it failed, if it did.
	Log         string `json:"log"`
	Rotation    int    `json:"rotation"`
	Compression string `json:"compression,omitempty"`
	Damage      string `json:"damage,omitempty"`
}

func (s *Server) handleFiles(w http.ResponseWriter, r *http.Request) {
	sn := s.acquire()
	if sn == nil {
		unavailable(w, 5, "index not ready")
		return
	}
	defer sn.unref()
	files := sn.s.Files()
	out := struct {
		Files []fileJSON `json:"files"`
	}{Files: make([]fileJSON, 0, len(files))}
	loc := sn.s.Location()
	for _, f := range files {
		rec := f.Record()
		fj := fileJSON{
			ID: f.ID, Path: f.Path, PathB64: pathB64(f.Path), Size: rec.Size, Lines: rec.Lines, IndexedBytes: rec.Indexed,
			MTime: time.Unix(0, rec.MTime).In(loc), Timed: rec.Timed, TimeFormat: rec.TimeFormat,
			Log: f.Log(), Rotation: f.Rotation(), Compression: rec.Compression, Damage: rec.Damage,
		}
		if lo, hi, ok := f.TimeRange(); ok {
			fj.FirstTime = time.Unix(0, lo).In(loc).Format(time.RFC3339Nano)
			fj.LastTime = time.Unix(0, hi).In(loc).Format(time.RFC3339Nano)
		}
		out.Files = append(out.Files, fj)
	}
	writeJSON(w, http.StatusOK, out)
}

// fileByParam resolves {id}. Files are addressed only by their id in the
// index's file table; nothing in the request is ever used as a path.
func fileByParam(sn *snapshot, r *http.Request) (*query.File, *statusError) {
	param := chi.URLParam(r, "id")
	id, err := strconv.ParseUint(param, 10, 64)
	if err != nil || strconv.FormatUint(id, 10) != param {
		// One spelling per file ("01" is not 1): caches and logs see one URL.
		return nil, notFound("no such file id")
	}
	f, ok := sn.s.FileByID(id)
	switch {
	case ok:
		return f, nil
	case id > 0 && id < sn.ix.NextFileID():
		// Ids are never given twice: this one named a file that was
		// rotated, replaced or deleted since (its lines, if still there,
		// have a new id).
		return nil, &statusError{code: http.StatusGone, msg: "file no longer indexed under this id (rotated, replaced or deleted since); search again"}
	}
	return nil, notFound("no such file id")
}

// openError answers a file that cannot be opened without telling where it
// is or why in detail (the log has that).
func (s *Server) openError(w http.ResponseWriter, r *http.Request, f *query.File, err error) {
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, live.ErrDeleted) {
		writeError(w, http.StatusGone, "file deleted since indexing")
		return
	}
	s.log.Warn().Err(err).Str("rid", requestID(r.Context())).Uint64("file_id", f.ID).Msg("cannot open log file")
	writeError(w, http.StatusForbidden, "file cannot be opened")
}

// handleContent serves a file's bytes (whole, or the Range asked) with
// http.ServeContent on the *os.File, which reaches sendfile for one range;
// or, with ?line=N, the lines around N as JSON.
func (s *Server) handleContent(w http.ResponseWriter, r *http.Request) {
	sn := s.acquire()
	if sn == nil {
		unavailable(w, 5, "index not ready")
		return
	}
	release := sync.OnceFunc(sn.unref)
	defer release()
	f, e := fileByParam(sn, r)
	if e != nil {
		writeStatusError(w, e)
		return
	}
	if v := r.URL.Query(); v.Has("line") {
		s.fileLines(w, r, sn, f)
		return
	} else if v.Has("before") || v.Has("after") {
		writeError(w, http.StatusBadRequest, "before and after need line (the lines around it)")
		return
	}
	leave, ok := s.openStream(w, r)
	if !ok {
		return
	}
	defer leave()
	if f.Record().Compression != "" {
		s.compressedContent(w, r, sn, f)
		return
	}
	fh, err := sn.s.OpenFile(f)
	if err != nil {
		s.openError(w, r, f, err)
		return
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		s.openError(w, r, f, err)
		return
	}
	if !servableRange(w, r, st.Size()) {
		return
	}
	h := logHeaders(w, path.Base(f.Path))
	h.Set("ETag", etag(st))
	// The open file is all a download needs: a client that reads slowly
	// holds no index snapshot (its mappings, the segments a merge
	// removed). (A compressed file's reader needs its segment's
	// restart points: it keeps the snapshot.)
	release()
	http.ServeContent(w, r, "", st.ModTime(), fh)
}

// logHeaders sets the headers of a log file's bytes sent as they are, named
// filename. Logs hold whatever was logged (<script> included): never let a
// browser run or sniff them.
func logHeaders(w http.ResponseWriter, filename string) http.Header {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	// (A name that is not UTF-8 would go out as filename*=utf-8''…
	// holding bytes that are not: its bad bytes become U+FFFD.)
	h.Set("Content-Disposition", mime.FormatMediaType("inline", map[string]string{"filename": strings.ToValidUTF8(filename, "\uFFFD")}))
	return h
}

// compressedContent serves a compressed file's decompressed content, Range
// included, read through its restart points. A client that takes gzip (or
// zstd) and asks for the whole of a gzip (or zstd) file gets the stored
// bytes with sendfile and that Content-Encoding.
func (s *Server) compressedContent(w http.ResponseWriter, r *http.Request, sn *snapshot, f *query.File) {
	dec, fh, _, size, err := sn.s.ReadCompressed(f)
	if err != nil {
		s.openError(w, r, f, err)
		return
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		s.openError(w, r, f, err)
		return
	}
	if !servableRange(w, r, size) {
		return
	}
	name := path.Base(f.Path)
	if ext := path.Ext(name); compressedExts[ext] {
		name = strings.TrimSuffix(name, ext)
	}
	h := logHeaders(w, name)
	h.Set("Vary", "Accept-Encoding")
	rec := f.Record()
	if enc := storedEncoding(r, rec.Compression, rec.Damage, fh); enc != "" {
		// The stored bytes, by sendfile. ServeContent leaves out the
		// length of a response with a Content-Encoding (for handlers that
		// compress on the fly): without it the answer went out chunked,
		// through a copy loop. A damaged file (indexed up to the damage)
		// is sent decompressed, as far as it was indexed. No Last-Modified:
		// the decompressed content has the same, and a download resumed
		// with If-Range: <that date> would get decompressed bytes to splice
		// onto gzip ones (its ETag differs).
		h.Set("Content-Encoding", enc)
		h.Set("ETag", strings.TrimSuffix(etag(st), `"`)+"-"+enc+`"`) // (inside the quotes: `"…"-gzip` reads as the other's)
		h.Set("Content-Length", strconv.FormatInt(st.Size(), 10))
		http.ServeContent(w, r, "", time.Time{}, fh)
		return
	}
	h.Set("ETag", etag(st))
	if strings.Contains(r.Header.Get("Range"), ",") {
		// One range at most: ranges going backwards each decompress from
		// a restart point before them (from the start, for a file with
		// one), and a header holds hundreds. The whole content instead
		// (RFC 9110 lets a server ignore Range).
		r.Header.Del("Range")
	}
	http.ServeContent(w, r, "", st.ModTime(), io.NewSectionReader(dec, 0, size))
}

// compressedExts are the extensions a compressed file's name loses when
// its decompressed content is served (one recognised by its bytes alone
// keeps its name).
var compressedExts = map[string]bool{".gz": true, ".zst": true, ".zstd": true, ".bz2": true, ".xz": true}

// storedEncoding is the Content-Encoding under which a compressed file's
// stored bytes answer r, or "" when the decompressed content must: r asks
// for the whole file, the file is whole (not indexed up to damage), and r
// accepts the file's format, gzip, or zstd when the file's first frame
// needs a window of at most zstdWindowMax (what browsers decode).
func storedEncoding(r *http.Request, compression, damage string, f io.ReaderAt) string {
	if damage != "" || r.Header.Get("Range") != "" {
		return ""
	}
	switch {
	case compression == "gzip" && accepts(r, "gzip"):
		return "gzip"
	case compression == "zstd" && accepts(r, "zstd") && zstdWindowFits(f):
		return "zstd"
	}
	return ""
}

// zstdWindowMax is the largest zstd window a client is taken to decode as
// a Content-Encoding: RFC 9659 has decoders refuse more than 8 MiB (zstd
// up to level 19; --long and --ultra levels need more).
const zstdWindowMax = 8 << 20

// zstdWindowFits reports whether the zstd file's first frame asks for a
// window of at most zstdWindowMax.
func zstdWindowFits(f io.ReaderAt) bool {
	w, err := query.ZstdWindow(f)
	return err == nil && w <= zstdWindowMax
}

// accepts reports whether the request's Accept-Encoding allows enc: named
// with a q-value above zero.
func accepts(r *http.Request, name string) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if !strings.EqualFold(strings.TrimSpace(enc), name) {
			continue
		}
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				var err error
				if q, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
					q = 0
				}
			}
		}
		return q > 0
	}
	return false
}

// etag names the file's current version: device, inode, size and mtime.
func etag(st os.FileInfo) string {
	var dev, ino uint64
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		dev, ino = uint64(sys.Dev), sys.Ino
	}
	return fmt.Sprintf(`"%x-%x-%x-%x"`, dev, ino, st.Size(), st.ModTime().UnixNano())
}

// fileLines answers ?line=N&before=B&after=A through the offset index.
func (s *Server) fileLines(w http.ResponseWriter, r *http.Request, sn *snapshot, f *query.File) {
	v := r.URL.Query()
	line, err := strconv.ParseInt(v.Get("line"), 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "line: not a number")
		return
	}
	if line < 1 {
		writeError(w, http.StatusUnprocessableEntity, "line must be at least 1")
		return
	}
	before, e := intParam(v, "before", 0, 0, maxLinesAround)
	if e != nil {
		writeStatusError(w, e)
		return
	}
	after, e := intParam(v, "after", 0, 0, maxLinesAround)
	if e != nil {
		writeStatusError(w, e)
		return
	}
	out := struct {
		FileID     uint64     `json:"file_id"`
		Path       string     `json:"path"`
		PathB64    string     `json:"path_b64,omitempty"`
		Lines      []lineJSON `json:"lines"`
		First      int64      `json:"first,omitempty"`
		Last       int64      `json:"last,omitempty"`
		TotalLines *int64     `json:"total_lines,omitempty"`
	}{FileID: f.ID, Path: f.Path, PathB64: pathB64(f.Path), Lines: []lineJSON{}}
	// Open first: a deleted or escaping file is answered as such, and the
	// line count is known when the file is exactly what was indexed.
	fh, err := sn.s.OpenFile(f)
	if err != nil {
		s.openError(w, r, f, err)
		return
	}
	if st, err := fh.Stat(); err == nil && st.Size() == f.Record().Indexed && st.Size() == f.Record().Size {
		n := f.Record().Lines
		out.TotalLines = &n
	}
	fh.Close()
	// Reading lines is a search's work (a file replaced since indexing is
	// read from its start): it takes a slot and has the same time.
	slot, ok := s.admit(w, r)
	if !ok {
		return
	}
	defer slot.finish()
	ctx, cancel := context.WithTimeout(r.Context(), s.opt.SearchTimeout)
	defer cancel()
	// Past maxLinesBytes the lines furthest from line go: before it, the
	// first ones (a client paging up goes on from "first", with no gap);
	// from it on, the rest.
	var textBytes int
	var lens []int // the bytes of each line's text read
	err = sn.s.ReadLinesMax(ctx, f, line-int64(before), line+int64(after), maxLineBytes, func(l query.Line) error {
		if l.No > line && textBytes >= maxLinesBytes {
			return errEnough
		}
		off := l.Offset
		lj := lineJSON{Line: l.No, Offset: &off}
		lj.Text, lj.TextB64, _ = lineText(l.Text)
		if l.Length > maxLineBytes {
			lj.Truncated, lj.Length = true, l.Length
		}
		out.Lines, lens = append(out.Lines, lj), append(lens, len(l.Text))
		textBytes += len(l.Text)
		for textBytes > maxLinesBytes && len(out.Lines) > 1 && out.Lines[0].Line < line {
			textBytes -= lens[0]
			out.Lines, lens = out.Lines[1:], lens[1:]
		}
		return nil
	})
	slot.finish()
	switch {
	case errors.Is(err, errEnough):
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("reading the lines took longer than %v", s.opt.SearchTimeout))
		return
	case err != nil:
		if r.Context().Err() == nil {
			s.openError(w, r, f, err)
		}
		return
	}
	if n := len(out.Lines); n > 0 {
		out.First, out.Last = out.Lines[0].Line, out.Lines[n-1].Line
	}
	writeJSON(w, http.StatusOK, out)
}

// maxLinesBytes bounds the line text of one ?line= answer (each line is
// cut at maxLineBytes too); past it the lines furthest from the one asked
// for are left out.
const maxLinesBytes = 8 << 20

// errEnough stops reading lines once an answer holds enough.
var errEnough = errors.New("enough lines")

// conditional reports whether r carries validators ServeContent checks.
func conditional(r *http.Request) bool {
	for _, h := range []string{"If-Range", "If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"} {
		if r.Header.Get(h) != "" {
			return true
		}
	}
	return false
}

// servableRange readies r's Range header for http.ServeContent over size
// bytes (normalRange) and answers 416 itself when no range of it is
// satisfiable, with a JSON error as every other (ServeContent's is plain
// text). A conditional request's validators decide first (a failed
// If-Range means the whole file, a matching If-None-Match 304): there the
// range is ignored, as a server may ignore Range.
func servableRange(w http.ResponseWriter, r *http.Request, size int64) bool {
	if normalRange(r, size) {
		return true
	}
	if conditional(r) {
		r.Header.Del("Range")
		return true
	}
	w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
	writeError(w, http.StatusRequestedRangeNotSatisfiable, "range not satisfiable")
	return false
}

// normalRange rewrites r's Range header as RFC 9110 reads it, for
// http.ServeContent, which answers 416 where the RFC asks for the header
// to be ignored, and 206 with "bytes 0--1/0" for an empty file: a header
// in another unit or of bad syntax (10-5, abc) is dropped (the whole
// content, 200), as is any over an empty content; positions too big for
// an int64 stand for the end; ranges that start past the end, and the
// empty suffix -0, are left out. It is false when a range set of good
// syntax has no range left: unsatisfiable.
func normalRange(r *http.Request, size int64) bool {
	h := r.Header.Get("Range")
	if h == "" {
		return true
	}
	unit, set, found := strings.Cut(h, "=")
	if !found || !strings.EqualFold(strings.TrimSpace(unit), "bytes") || size == 0 {
		r.Header.Del("Range")
		return true
	}
	var keep []string
	specs := 0
	for _, spec := range strings.Split(set, ",") {
		if spec = strings.TrimSpace(spec); spec == "" {
			continue // (empty list elements are allowed)
		}
		first, last, dash := strings.Cut(spec, "-")
		a, aok := rangePos(first)
		b, bok := rangePos(last)
		if !dash || !aok && first != "" || !bok && last != "" || first == "" && last == "" || aok && bok && b < a {
			r.Header.Del("Range") // not a range-set: ignored
			return true
		}
		specs++
		switch {
		case first == "": // the last b bytes
			if b > 0 {
				keep = append(keep, "-"+strconv.FormatInt(b, 10))
			}
		case a >= size:
		case last == "":
			keep = append(keep, strconv.FormatInt(a, 10)+"-")
		default:
			keep = append(keep, strconv.FormatInt(a, 10)+"-"+strconv.FormatInt(min(b, size-1), 10))
		}
	}
	if specs == 0 {
		r.Header.Del("Range")
		return true
	}
	if len(keep) == 0 {
		return false
	}
	r.Header.Set("Range", "bytes="+strings.Join(keep, ","))
	return true
}

// rangePos reads a byte position of a Range header: digits only, and a
// number too big for an int64 as the largest one.
func rangePos(s string) (int64, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return math.MaxInt64, true
	}
	return n, true
}
