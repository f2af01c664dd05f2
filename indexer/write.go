package indexer

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cespare/xxhash/v2"
	"github.com/logdex/logdex/mmapstore"
)

// sectionWriter streams a segment file: header, 8-byte aligned sections with
// a running checksum each, then the table of contents and footer. It keeps
// the first error, like zoekt's section writer, so callers check once.
type sectionWriter struct {
	f    *os.File
	bw   *bufio.Writer
	off  uint64
	toc  []mmapstore.TOCEntry
	cur  *mmapstore.TOCEntry
	hash *xxhash.Digest
	err  error
}

func newSectionWriter(f *os.File) *sectionWriter {
	w := &sectionWriter{f: f, bw: bufio.NewWriterSize(f, 1<<20), hash: xxhash.New()}
	var hdr [mmapstore.HeaderSize]byte
	copy(hdr[:], mmapstore.SegmentMagic)
	binary.LittleEndian.PutUint32(hdr[8:], mmapstore.SegmentVersion)
	w.raw(hdr[:])
	return w
}

func (w *sectionWriter) raw(p []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(p)
	w.off += uint64(n)
	w.err = err
}

// Write appends to the current section.
func (w *sectionWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.hash.Write(p)
	w.raw(p)
	return len(p), w.err
}

func (w *sectionWriter) pad() {
	var zero [8]byte
	if p := (8 - w.off%8) % 8; p > 0 {
		w.raw(zero[:p])
	}
}

// padSection pads the current section so the next byte is 8-byte aligned in
// the file (roaring bitmaps are read in place and must be aligned).
func (w *sectionWriter) padSection() {
	var zero [8]byte
	if p := (8 - w.off%8) % 8; p > 0 {
		w.Write(zero[:p])
	}
}

func (w *sectionWriter) begin(kind uint32) {
	w.pad()
	w.toc = append(w.toc, mmapstore.TOCEntry{Kind: kind, Offset: w.off})
	w.cur = &w.toc[len(w.toc)-1]
	w.hash.Reset()
}

func (w *sectionWriter) end() {
	w.cur.Length = w.off - w.cur.Offset
	w.cur.Sum = w.hash.Sum64()
	w.cur = nil
}

// section writes a whole section from a byte slice.
func (w *sectionWriter) section(kind uint32, p []byte) {
	w.begin(kind)
	w.Write(p)
	w.end()
}

// finish writes the table of contents and footer, then flushes and fsyncs.
func (w *sectionWriter) finish() error {
	w.pad()
	tocOff := w.off
	toc := make([]byte, 0, len(w.toc)*mmapstore.TOCEntrySize)
	for _, e := range w.toc {
		toc = binary.LittleEndian.AppendUint32(toc, e.Kind)
		toc = binary.LittleEndian.AppendUint32(toc, 0)
		toc = binary.LittleEndian.AppendUint64(toc, e.Offset)
		toc = binary.LittleEndian.AppendUint64(toc, e.Length)
		toc = binary.LittleEndian.AppendUint64(toc, e.Sum)
	}
	w.raw(toc)
	var foot [mmapstore.FooterSize]byte
	binary.LittleEndian.PutUint64(foot[0:], tocOff)
	binary.LittleEndian.PutUint32(foot[8:], uint32(len(w.toc)))
	binary.LittleEndian.PutUint32(foot[12:], mmapstore.SegmentVersion)
	binary.LittleEndian.PutUint64(foot[16:], xxhash.Sum64(toc))
	copy(foot[24:], mmapstore.SegmentMagic)
	w.raw(foot[:])
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	return w.f.Sync()
}

// writeFileAtomic publishes data at path: temp file, fsync, rename, fsync
// of the directory (VictoriaMetrics' MustWriteAtomic, without the Must).
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
