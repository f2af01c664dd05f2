package mmapstore

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/RoaringBitmap/roaring/v2"
)

// Index is an open, consistent snapshot of an index directory: one manifest
// and the segments it lists, mapped. Readers bracket their work with
// Acquire/Release; Close waits for them before unmapping, so no reader ever
// touches an unmapped page (Prometheus' Block does the same).
type Index struct {
	dir      string
	manifest *Manifest
	segments []*Segment
	// damaged lists segments that could not be opened; queries answer
	// their files (damagedFiles) by reading them whole until the indexer
	// rebuilds them.
	damaged      []error
	damagedFiles map[uint64]bool

	files IDIndex           // file id -> index into Manifest.Files
	live  []*roaring.Bitmap // per segment: lines of live files; nil when all are live

	mu      sync.Mutex
	readers int
	closing bool
	drained *sync.Cond

	shadowOnce  sync.Once
	shadowBytes int64 // the seekable copies of the manifest's files (Stats)
}

// Open reads dir's manifest and maps its segments. A manifest that names a
// segment which vanished meanwhile (an indexer published and collected in
// between) is read again.
func Open(dir string) (*Index, error) { return OpenFrom(dir, nil) }

// OpenFrom is Open reusing prev's segments (an earlier snapshot of the same
// directory): segments are immutable, so one named by both is shared, with
// what was verified and warmed of it, instead of mapped again. Each index
// closes independently; a shared segment is unmapped by the last.
func OpenFrom(dir string, prev *Index) (*Index, error) { return openRetrying(dir, prev, false) }

// OpenCold is Open for a process that will serve many searches from an
// index that may not be in memory (a server's first open): every
// segment's first and last pages are asked for together before the
// segments are opened one by one (prefetchHeads). A short search process
// does not pay those system calls.
func OpenCold(dir string) (*Index, error) { return openRetrying(dir, nil, true) }

func openRetrying(dir string, prev *Index, prefetch bool) (*Index, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		ix, err := open(dir, prev, prefetch)
		if err == nil {
			return ix, nil
		}
		if !errors.Is(err, os.ErrNotExist) || errors.Is(err, ErrNoIndex) {
			return nil, err
		}
		lastErr = err
	}
	return nil, lastErr
}

func open(dir string, prev *Index, prefetch bool) (*Index, error) {
	reuse := map[string]*Segment{}
	if prev != nil && prev.dir == dir {
		for _, s := range prev.segments {
			if s.Damage() == nil {
				reuse[filepath.Base(s.Name())] = s
			}
		}
	}
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if prefetch {
		prefetchHeads(dir, m.Segments)
	}
	opened := make([]*Segment, len(m.Segments))
	errs := make([]error, len(m.Segments))
	for i, ref := range m.Segments {
		if r := reuse[ref.Name]; r != nil && r.retain() {
			opened[i] = r // its quarantine hook is the earlier index's: the same directory
			continue
		}
		opened[i], errs[i] = OpenSegment(filepath.Join(dir, ref.Name))
		if errors.Is(errs[i], os.ErrNotExist) {
			for _, s := range opened {
				if s != nil {
					s.Close()
				}
			}
			return nil, errs[i]
		}
	}
	// A segment that does not match the manifest is damaged, never used.
	for i, err := range CheckSegments(m, opened) {
		if errs[i] == nil {
			errs[i] = err
		}
	}
	return NewIndex(dir, m, opened, errs), nil
}

// NewIndex is the index of dir's manifest m, read and checked by the
// caller: segs[i] is m.Segments[i] opened, errs[i] why it could not be
// opened or does not match the manifest (CheckSegments), and then segs[i]
// is closed here and its files' lines are read from the logs. It lets an
// indexing run that changed nothing hand the manifest it read and the
// segments it checked to the search that follows (the CLI's default),
// which then reads and checks none of them again.
func NewIndex(dir string, m *Manifest, segs []*Segment, errs []error) *Index {
	ix := &Index{dir: dir, manifest: m, damagedFiles: map[uint64]bool{}}
	ix.files = NewIDIndex(len(m.Files), func(i int) uint64 { return m.Files[i].ID })
	ix.drained = sync.NewCond(&ix.mu)
	for i, s := range segs {
		if errs[i] != nil {
			if s != nil {
				s.Close()
			}
			ix.damaged = append(ix.damaged, errs[i])
			for _, id := range m.Segments[i].FileIDs {
				ix.damagedFiles[id] = true
			}
			continue
		}
		if s.onDamage == nil {
			s.onDamage = ix.quarantine
		}
		ix.segments = append(ix.segments, s)
	}
	ix.live = make([]*roaring.Bitmap, len(ix.segments))
	for i, s := range ix.segments {
		ix.live[i] = ix.liveLines(s)
	}
	return ix
}

// liveLines returns the lines of s that belong to files still in the
// manifest, or nil when all of them do.
func (ix *Index) liveLines(s *Segment) *roaring.Bitmap {
	var live *roaring.Bitmap
	for i, sp := range s.Spans() {
		if _, ok := ix.files.Find(s.Files()[sp.File].ID); ok {
			if live != nil {
				live.AddRange(uint64(sp.FirstLine), uint64(sp.FirstLine)+uint64(sp.NumLines))
			}
			continue
		}
		if live == nil {
			live = roaring.New()
			for _, prev := range s.Spans()[:i] {
				live.AddRange(uint64(prev.FirstLine), uint64(prev.FirstLine)+uint64(prev.NumLines))
			}
		}
	}
	return live
}

// LiveLines is the set of lines of segment i still backed by a live file,
// or nil when every line is.
func (ix *Index) LiveLines(i int) *roaring.Bitmap { return ix.live[i] }

// File returns the manifest record of a file id.
func (ix *Index) File(id uint64) (FileRecord, bool) {
	i, ok := ix.files.Find(id)
	if !ok {
		return FileRecord{}, false
	}
	return ix.manifest.Files[i], true
}

// Dir is the index directory.
func (ix *Index) Dir() string { return ix.dir }

// Generation is the manifest's generation: every published run bumps it.
func (ix *Index) Generation() uint64 { return ix.manifest.Generation }

// NextFileID is the id the index's next new file gets: it only grows,
// until the index is built anew.
func (ix *Index) NextFileID() uint64 { return ix.manifest.NextFileID }

// OpenedFrom reports whether m is the manifest ix was opened from: the same
// generation naming the same segments and files. The generation alone does
// not tell: an index rebuilt from scratch (its manifest damaged, another
// format version) counts again from 1.
func (ix *Index) OpenedFrom(m *Manifest) bool {
	a, b := ix.manifest, m
	if a.Generation != b.Generation || len(a.Segments) != len(b.Segments) || len(a.Files) != len(b.Files) {
		return false
	}
	for i := range a.Segments {
		if a.Segments[i].Name != b.Segments[i].Name {
			return false
		}
	}
	return true
}

// Roots lists the PATHs the index was built for (a copy).
func (ix *Index) Roots() []Root { return slices.Clone(ix.manifest.Roots) }

// Files lists the records of the indexed files (a copy).
func (ix *Index) Files() []FileRecord { return slices.Clone(ix.manifest.Files) }

// FileRecords is Files without the copy, for readers of every record (a
// search over 100,000 files): the records are shared and must not be
// modified.
func (ix *Index) FileRecords() []FileRecord { return ix.manifest.Files }

// Skipped lists the files the indexer saw and left out (a copy).
func (ix *Index) Skipped() []Skipped { return slices.Clone(ix.manifest.Skipped) }

// Segments lists the open segments (a copy of the list; the segments are
// shared and valid while the index is).
func (ix *Index) Segments() []*Segment { return slices.Clone(ix.segments) }

// Damaged lists the damage found in the index: segments named by the
// manifest that could not be opened, and segments found damaged since
// (checksum mismatches on read). Queries answer what they held from the
// log files until the indexer rebuilds them.
func (ix *Index) Damaged() []error {
	out := slices.Clone(ix.damaged)
	for _, s := range ix.segments {
		if err := s.Damage(); err != nil {
			out = append(out, err)
		}
	}
	return out
}

// DamagedFiles reports the files with lines in a segment that could not be
// opened: queries read them whole (a copy).
func (ix *Index) DamagedFiles() map[uint64]bool { return maps.Clone(ix.damagedFiles) }

// QuarantineName is the file in an index directory that lists segments
// found damaged after they were opened, for the next indexing run to
// rebuild.
const QuarantineName = "QUARANTINE"

// quarantine records a segment found damaged while in use. Best effort: a
// reader may lack write access to the index, and then the damage is still
// reported (Damaged) and found again by the next reader.
func (ix *Index) quarantine(s *Segment) {
	f, err := os.OpenFile(filepath.Join(ix.dir, QuarantineName), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintln(f, filepath.Base(s.Name()))
	f.Close()
}

// ReadQuarantine lists the segments recorded as damaged in dir.
func ReadQuarantine(dir string) []string {
	return ReadQuarantineFile(filepath.Join(dir, QuarantineName))
}

// ReadQuarantineFile lists the segments a quarantine list names.
func ReadQuarantineFile(path string) []string {
	b, _ := os.ReadFile(path)
	return strings.Fields(string(b))
}

// Acquire registers a reader; it fails once Close has begun.
func (ix *Index) Acquire() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closing {
		return ErrClosed
	}
	ix.readers++
	return nil
}

// Release ends a reader's use.
func (ix *Index) Release() {
	ix.mu.Lock()
	ix.readers--
	if ix.readers == 0 {
		ix.drained.Broadcast()
	}
	ix.mu.Unlock()
}

// Close waits for readers to finish, then unmaps every segment.
func (ix *Index) Close() error {
	ix.mu.Lock()
	if ix.closing {
		ix.mu.Unlock()
		return nil
	}
	ix.closing = true
	for ix.readers > 0 {
		ix.drained.Wait()
	}
	ix.mu.Unlock()
	return ix.closeSegments()
}

func (ix *Index) closeSegments() error {
	var errs []error
	for _, s := range ix.segments {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

// Stats summarizes the index.
type Stats struct {
	Files      int
	Lines      int64
	RawBytes   int64
	Segments   int
	IndexBytes int64
}

// Stats sums the manifest, the mapped segments and the seekable copies of
// compressed files (looked for once per Index, on the first call).
func (ix *Index) Stats() Stats {
	st := Stats{Files: len(ix.manifest.Files), Segments: len(ix.segments)}
	for _, f := range ix.manifest.Files {
		st.Lines += f.Lines
		st.RawBytes += f.Indexed
	}
	for _, s := range ix.segments {
		st.IndexBytes += s.Size()
	}
	ix.shadowOnce.Do(func() { ix.shadowBytes = ShadowBytes(ix.dir, ix.manifest) })
	st.IndexBytes += ix.shadowBytes
	return st
}

// DisplayPath renders a file path the way grep -r prints it for the root as
// given on the command line.
func DisplayPath(root Root, rel string) string {
	switch {
	case root.IsFile || rel == "":
		return root.Given
	case root.Given == "": // no PATH operand: grep -r prints paths relative to "."
		return rel
	}
	return string(AppendDisplayPath(nil, root, rel))
}

// AppendDisplayPath appends DisplayPath(root, rel) to b.
func AppendDisplayPath(b []byte, root Root, rel string) []byte {
	if root.IsFile || rel == "" {
		return append(b, root.Given...)
	}
	if root.Given == "" {
		return append(b, rel...)
	}
	g := root.Given
	for len(g) > 1 && g[len(g)-1] == '/' {
		g = g[:len(g)-1]
	}
	if g != "/" {
		b = append(b, g...)
	}
	b = append(b, '/')
	return append(b, rel...)
}

// Path is a file's display path.
func (ix *Index) Path(f FileRecord) string {
	return DisplayPath(ix.manifest.Roots[f.Root], f.Path)
}

func (ix *Index) String() string {
	return fmt.Sprintf("index %s (generation %d, %d segments)", ix.dir, ix.manifest.Generation, len(ix.segments))
}

// SegmentResidency is how much of one mapped segment is in memory.
type SegmentResidency struct {
	Name     string
	Mapped   int64
	Resident int64
}

// Residency measures, with mincore(2), how many bytes of each mapped
// segment are resident in the page cache right now.
func (ix *Index) Residency() ([]SegmentResidency, error) {
	if err := ix.Acquire(); err != nil {
		return nil, err
	}
	defer ix.Release()
	out := make([]SegmentResidency, 0, len(ix.segments))
	for _, s := range ix.segments {
		r := SegmentResidency{Name: filepath.Base(s.Name()), Mapped: s.Size()}
		if m := s.Mapping(); m != nil {
			n, err := m.Resident(0, m.Size())
			if err != nil {
				return nil, err
			}
			r.Resident = n
		}
		out = append(out, r)
	}
	return out, nil
}
