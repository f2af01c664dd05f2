package indexer

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/logdex/logdex/mmapstore"
)

// Publishing a run: the new manifest, then collecting what it no longer
// names.

// removeTemps deletes the temporaries of a run that died before it
// published, and says whether a background merge's own (mergeTempPrefix)
// are there: those are removeStaleMerges' to judge, as that merge may
// still be running.
func removeTemps(dir string) (mergeTemps bool) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), mergeTempPrefix) {
			mergeTemps = true
			continue
		}
		if strings.HasSuffix(e.Name(), ".tmp") || strings.HasSuffix(e.Name(), ".part") {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	return mergeTemps
}

// publish writes the new manifest atomically and removes segment files no
// longer referenced. A crash before the manifest's rename leaves the old
// index intact; leftovers are collected by the next run.
func (u *update) publish() error {
	live := mmapstore.NewIDIndex(len(u.next.Files), func(i int) uint64 { return u.next.Files[i].ID })
	for _, s := range u.segments {
		keep := false
		for _, id := range s.FileIDs {
			if _, ok := live.Find(id); ok {
				keep = true
				break
			}
		}
		if keep {
			u.next.Segments = append(u.next.Segments, s)
		} else {
			u.changed = true
		}
	}
	sort.Slice(u.next.Segments, func(i, j int) bool { return u.next.Segments[i].Name < u.next.Segments[j].Name })
	if u.changed {
		if err := mmapstore.PublishManifest(u.opt.Dir, &u.next); err != nil {
			if errors.Is(err, mmapstore.ErrNotPublished) {
				// (a full disk, say: the segments written would stay
				// until a later run publishes, each failed run adding
				// its own)
				u.removeNew()
			}
			return err
		}
		collect(u.opt.Dir, &u.next)
		pruneQuarantine(u.opt.Dir, &u.next)
	} else {
		u.next = *u.old
	}
	u.res.Changed = u.changed
	u.res.Files = len(u.next.Files)
	u.res.Segments = len(u.next.Segments)
	for _, s := range u.next.Segments {
		u.res.IndexBytes += s.Size
	}
	if st, err := os.Stat(filepath.Join(u.opt.Dir, mmapstore.ManifestName)); err == nil {
		u.res.IndexBytes += st.Size()
	}
	u.res.IndexBytes += mmapstore.ShadowBytes(u.opt.Dir, &u.next)
	for _, f := range u.next.Files {
		u.res.RawBytes += f.Indexed
	}
	return nil
}

// collect deletes the segment files in dir that m, just published, does
// not list, and the seekable copies of files it no longer has.
func collect(dir string, m *mmapstore.Manifest) {
	keep := map[string]bool{}
	for _, s := range m.Segments {
		keep[s.Name] = true
	}
	files := mmapstore.NewIDIndex(len(m.Files), func(i int) uint64 { return m.Files[i].ID })
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "seg-") && strings.HasSuffix(n, ".ldx") && !keep[n] {
			os.Remove(filepath.Join(dir, n))
		}
		if id, ok := mmapstore.ParseShadowName(n); ok {
			if _, live := files.Find(id); !live {
				os.Remove(filepath.Join(dir, n))
			}
		}
	}
}

// removeNew deletes the segments this run wrote, when it fails.
func (u *update) removeNew() {
	for _, name := range u.newSegs {
		removeSegment(u.opt.Dir, name)
	}
}

func removeSegment(dir, name string) { os.Remove(filepath.Join(dir, name)) }

// pruneQuarantine drops from the quarantine list the segments m no longer
// has (this run rebuilt them) and keeps the others: a reader may have
// found one damaged while the run went on, after it read the list, and
// only the next run rebuilds that one. Names of segments gone are
// harmless (runs look only at the segments they have), so the list is
// pruned only once it is long: the list is renamed away first, so that
// what readers append meanwhile goes to a new one, which the live names
// then join (a reader writing to the old one in that instant is lost: it
// finds the damage again).
func pruneQuarantine(dir string, m *mmapstore.Manifest) {
	path := filepath.Join(dir, mmapstore.QuarantineName)
	if fi, err := os.Stat(path); err != nil || fi.Size() < maxQuarantine {
		return
	}
	taken := path + ".tmp"
	if err := os.Rename(path, taken); err != nil {
		return // none (or none to touch)
	}
	defer os.Remove(taken)
	live := map[string]bool{}
	for _, s := range m.Segments {
		live[s.Name] = true
	}
	var keep []byte
	for _, name := range mmapstore.ReadQuarantineFile(taken) {
		if live[name] {
			keep = append(append(keep, name...), '\n')
		}
	}
	if len(keep) == 0 {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	f.Write(keep)
	f.Close()
}

// maxQuarantine is the size past which the quarantine list is pruned.
const maxQuarantine = 64 << 10
