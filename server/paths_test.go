package server

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// TestNonUTF8Paths: a file name that is not valid UTF-8 comes with its
// exact bytes in path_b64 (hits, /api/files, file lines), two such names
// that JSON turns into the same string stay apart, paging through them
// neither repeats nor skips a hit, and the file's content is served.
func TestNonUTF8Paths(t *testing.T) {
	names := []string{"a\xfe.log", "a\xff.log", "caf\xe9.log"}
	files := map[string]string{}
	for _, n := range names {
		files[n] = "hit one\nhit two\n"
	}
	fx := newTinyFixture(t, files)
	ts := newTestServer(t, fx)
	exact := func(path, b64 string) string {
		if b64 == "" {
			return path
		}
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var got []string
	cursor := ""
	for page := 0; page < 10; page++ {
		sr := ts.search(t, "q=hit&limit=1"+cursor)
		for _, h := range sr.Hits {
			got = append(got, exact(h.Path, h.PathB64)+":"+strconv.FormatInt(h.Line, 10))
		}
		if sr.NextCursor == nil {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(*sr.NextCursor)
	}
	var want []string
	for _, n := range names {
		want = append(want, "logs/"+n+":1", "logs/"+n+":2")
	}
	if len(got) != len(want) {
		t.Fatalf("paged hits %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("paged hits %q, want %q", got, want)
		}
	}

	var fl struct {
		Files []fileJSON `json:"files"`
	}
	ts.get(t, "/api/files").json(t, &fl)
	if len(fl.Files) != len(names) {
		t.Fatalf("files %+v", fl.Files)
	}
	for i, f := range fl.Files {
		if p := exact(f.Path, f.PathB64); p != "logs/"+names[i] {
			t.Fatalf("file %d: %q, want %q", i, p, "logs/"+names[i])
		}
		id := strconv.FormatUint(f.ID, 10)
		if r := ts.get(t, "/api/files/"+id+"/content"); r.code != http.StatusOK || string(r.body) != files[names[i]] {
			t.Fatalf("content of %q: %d %q", names[i], r.code, r.body)
		}
		var lines struct {
			Path    string `json:"path"`
			PathB64 string `json:"path_b64"`
		}
		ts.get(t, "/api/files/"+id+"/content?line=1").json(t, &lines)
		if p := exact(lines.Path, lines.PathB64); p != "logs/"+names[i] {
			t.Fatalf("lines of file %d: path %q", i, p)
		}
	}
}
