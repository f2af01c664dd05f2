package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestUIFiles checks how the UI's files are served: index.html at / and
// at the client-side route /files, assets with a content ETag and
// revalidation (304), no directory listings, and no token needed.
func TestUIFiles(t *testing.T) {
	fx := newFixture(t)
	ui := map[string]string{"index.html": "<p>ui</p>", "assets/app.js": "console.log(1)", "assets/x/y.css": "p{}"}
	ts := newTestServer(t, fx, func(o *Options) {
		o.UI = mapFS(ui)
		o.AuthToken = "tok"
	})
	for _, p := range []string{"/", "/files", "/files?q=a&file=1&line=2"} {
		r := ts.get(t, p)
		if r.code != 200 || string(r.body) != ui["index.html"] || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %q %s", p, r.code, r.header.Get("Content-Type"), r.body)
		}
	}
	r := ts.get(t, "/assets/app.js")
	etag := r.header.Get("ETag")
	if r.code != 200 || string(r.body) != ui["assets/app.js"] || etag == "" || r.header.Get("Cache-Control") != "no-cache" ||
		!strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") || r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("asset: %d %v %s", r.code, r.header, r.body)
	}
	if r := ts.get(t, "/assets/app.js", "If-None-Match", etag); r.code != http.StatusNotModified {
		t.Errorf("revalidation: %d", r.code)
	}
	if r := ts.get(t, "/assets/x/y.css"); r.code != 200 || r.header.Get("ETag") == etag {
		t.Errorf("nested asset: %d %v", r.code, r.header)
	}
	for _, p := range []string{"/assets/", "/assets/x", "/assets/x/", "/assets/missing.js", "/assets/../index.html", "/files/x"} {
		if r := ts.get(t, p); r.code != http.StatusNotFound && r.code != http.StatusUnauthorized {
			t.Errorf("%s: %d %s", p, r.code, r.body)
		}
	}
	if r := ts.get(t, "/api/files"); r.code != http.StatusUnauthorized {
		t.Errorf("/api/files without token: %d", r.code)
	}
}
