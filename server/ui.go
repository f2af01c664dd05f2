package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

// uiFiles serves the web UI's static files from an fs.FS. Asset URLs are
// not content-hashed (there is no build step), so every file is sent with
// "Cache-Control: no-cache" and a strong ETag of its content: browsers
// revalidate and get a 304 while the binary is the same, and never run a
// stale module after an upgrade. Directories are not listed.
type uiFiles struct {
	fsys fs.FS
	mu   sync.Mutex
	tags map[string]string // ETags of embedded files, by name
}

func newUIFiles(fsys fs.FS) *uiFiles { return &uiFiles{fsys: fsys, tags: map[string]string{}} }

// serve sends the file name (a valid fs path) or 404.
func (u *uiFiles) serve(w http.ResponseWriter, r *http.Request, name string) {
	if !fs.ValidPath(name) {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	b, st, err := u.read(name)
	if err != nil {
		writeError(w, http.StatusNotFound, "not found")
		return
	}
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", u.etag(name, st, b))
	if strings.HasSuffix(name, ".html") {
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
	}
	http.ServeContent(w, r, path.Base(name), time.Time{}, bytes.NewReader(b))
}

func (u *uiFiles) read(name string) ([]byte, fs.FileInfo, error) {
	st, err := fs.Stat(u.fsys, name)
	if err != nil {
		return nil, nil, err
	}
	if st.IsDir() {
		return nil, nil, fs.ErrNotExist
	}
	b, err := fs.ReadFile(u.fsys, name)
	return b, st, err
}

// etag is a hash of the content, remembered for embedded files (they
// have no modification time and cannot change while the process runs).
func (u *uiFiles) etag(name string, st fs.FileInfo, b []byte) string {
	immutable := st.ModTime().IsZero()
	if immutable {
		u.mu.Lock()
		t, ok := u.tags[name]
		u.mu.Unlock()
		if ok {
			return t
		}
	}
	sum := sha256.Sum256(b)
	t := `"` + hex.EncodeToString(sum[:12]) + `"`
	if immutable {
		u.mu.Lock()
		u.tags[name] = t
		u.mu.Unlock()
	}
	return t
}
