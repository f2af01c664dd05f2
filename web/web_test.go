package web_test

import (
	"io/fs"
	"path"
	"regexp"
	"strings"
	"testing"

	"github.com/logdex/logdex/web"
)

// TestFS checks the embedded UI without a browser: index.html at the
// root, every file it or a module references present, nothing loaded from
// another origin, and no HTML sinks in the JavaScript.
func TestFS(t *testing.T) {
	ui := web.FS()
	index, err := fs.ReadFile(ui, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(index), "require-trusted-types-for 'script'") || !strings.Contains(string(index), "default-src 'none'") {
		t.Error("index.html lacks its Content-Security-Policy")
	}
	// Every local reference resolves.
	refs := regexp.MustCompile(`(?:href|src)="(/[^"]*)"`).FindAllStringSubmatch(string(index), -1)
	if len(refs) < 3 {
		t.Fatalf("index.html references only %v", refs)
	}
	for _, m := range refs {
		p := strings.TrimPrefix(m[1], "/")
		if p == "" || p == "files" {
			continue // app routes
		}
		if _, err := fs.Stat(ui, p); err != nil {
			t.Errorf("index.html references %s: %v", m[1], err)
		}
	}
	imports := regexp.MustCompile(`(?m)^import .* from '(\./[^']+)';`)
	external := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}`)
	sinks := regexp.MustCompile(`innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|srcdoc`)
	n := 0
	err = fs.WalkDir(ui, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := fs.ReadFile(ui, p)
		if err != nil {
			return err
		}
		src := strings.ReplaceAll(string(b), "http://www.w3.org/2000/svg", "") // an XML namespace, not a fetch
		if m := external.FindString(src); m != "" {
			t.Errorf("%s refers to another origin: %s", p, m)
		}
		if strings.HasSuffix(p, ".js") {
			for _, m := range imports.FindAllStringSubmatch(src, -1) {
				if _, err := fs.Stat(ui, path.Join(path.Dir(p), m[1])); err != nil {
					t.Errorf("%s imports %s: %v", p, m[1], err)
				}
			}
			// Comments may name the sinks (to say they are not used).
			code := regexp.MustCompile(`(?m)^\s*//.*$`).ReplaceAllString(src, "")
			if m := sinks.FindString(code); m != "" {
				t.Errorf("%s uses %s: build DOM nodes with textContent instead", p, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 8 {
		t.Errorf("only %d files embedded", n)
	}
}
