package mmapstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// decodeHead decodes a manifest's JSON head as json.Unmarshal into a
// manifestHead would for any head the writer produces (keys matched as the
// writer spells them, not case-folded; unknown keys ignored; null or
// missing values zero; a top-level null is an error), but from a generic
// decode (a field added to manifestHead needs its line here too;
// TestDecodeHeadEveryField catches one missing): in a
// fresh process encoding/json's reflection over the head's struct types
// costs about 75 µs, where the generic decode costs 20, and every CLI
// search opens the index in a fresh process.
func decodeHead(js []byte) (manifestHead, error) {
	var h manifestHead
	d := json.NewDecoder(bytes.NewReader(js))
	d.UseNumber()
	var top any
	if err := d.Decode(&top); err != nil {
		return h, err
	}
	if _, err := d.Token(); err != io.EOF {
		return h, errors.New("data after the JSON head")
	}
	var err error
	f := jsonFields{err: &err}
	if f.o, _ = top.(map[string]any); f.o == nil {
		return h, errors.New("the JSON head is not an object")
	}
	h.Generation = f.uint("generation")
	h.TZ = f.str("tz")
	for _, r := range f.objects("roots") {
		h.Roots = append(h.Roots, rootWire{
			Root:     Root{Given: r.str("given"), Abs: r.str("abs"), IsFile: r.bool("is_file")},
			GivenB64: r.str("given_b64"), AbsB64: r.str("abs_b64"),
		})
	}
	for _, s := range f.objects("skipped") {
		h.Skipped = append(h.Skipped, skippedWire{Skipped: Skipped{
			Root: int(s.int("root")), Path: s.str("path"), Reason: s.str("reason"), Unreadable: s.bool("unreadable"),
			Dev: s.uint("dev"), Ino: s.uint("ino"), Size: s.int("size"), MTime: s.int("mtime"),
		}, PathB64: s.str("path_b64")})
	}
	h.NextFileID = f.uint("next_file_id")
	h.NextSegmentID = f.uint("next_segment_id")
	return h, err
}

// jsonFields reads typed fields of a generically decoded JSON object; the
// first wrong type is kept in *err.
type jsonFields struct {
	o   map[string]any
	err *error
}

func (f jsonFields) value(key string) any { return f.o[key] }

func (f jsonFields) wrong(key, want string) {
	if *f.err == nil {
		*f.err = fmt.Errorf("%q: want %s, found %v", key, want, f.o[key])
	}
}

func (f jsonFields) str(key string) string {
	v := f.value(key)
	s, ok := v.(string)
	if !ok && v != nil {
		f.wrong(key, "a string")
	}
	return s
}

func (f jsonFields) bool(key string) bool {
	v := f.value(key)
	b, ok := v.(bool)
	if !ok && v != nil {
		f.wrong(key, "a boolean")
	}
	return b
}

func (f jsonFields) uint(key string) uint64 {
	v := f.value(key)
	if v == nil {
		return 0
	}
	n, ok := v.(json.Number)
	u, err := strconv.ParseUint(string(n), 10, 64)
	if !ok || err != nil {
		f.wrong(key, "an unsigned 64-bit integer")
	}
	return u
}

func (f jsonFields) int(key string) int64 {
	v := f.value(key)
	if v == nil {
		return 0
	}
	n, ok := v.(json.Number)
	i, err := strconv.ParseInt(string(n), 10, 64)
	if !ok || err != nil {
		f.wrong(key, "a 64-bit integer")
	}
	return i
}

func (f jsonFields) objects(key string) []jsonFields {
	v := f.value(key)
	a, ok := v.([]any)
	if !ok && v != nil {
		f.wrong(key, "an array")
	}
	out := make([]jsonFields, 0, len(a))
	for _, e := range a {
		o, ok := e.(map[string]any)
		if !ok && e != nil {
			f.wrong(key, "an array of objects")
		}
		out = append(out, jsonFields{o: o, err: f.err})
	}
	return out
}
