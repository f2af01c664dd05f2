package mmapstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotPublished marks a PublishManifest error from before the new
// manifest was renamed into place: the previous one is still the index,
// and the segments only the new one named can go.
var ErrNotPublished = errors.New("manifest not published")

// PublishManifest makes m the index in dir: the directory is fsynced first
// (so the segments m names are durable before it names them), then the
// manifest is written atomically.
func PublishManifest(dir string, m *Manifest) error {
	data, err := EncodeManifest(m)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotPublished, err)
	}
	if err := SyncDir(dir); err != nil {
		return fmt.Errorf("%w: %w", ErrNotPublished, err)
	}
	if err := WriteFileAtomic(filepath.Join(dir, ManifestName), data); err != nil {
		return fmt.Errorf("publish manifest: %w", err)
	}
	return nil
}

// WriteFileAtomic publishes data at path: temp file, fsync, rename, fsync
// of the directory (VictoriaMetrics' MustWriteAtomic, without the Must).
// An error before the rename is ErrNotPublished.
func WriteFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNotPublished, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: %w", ErrNotPublished, err)
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir fsyncs a directory, making renames in it durable.
func SyncDir(dir string) error {
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
