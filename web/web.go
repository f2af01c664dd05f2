// Package web owns logdex's browser UI: the page (ui/index.html), its
// stylesheet and its JavaScript modules (ui/assets/), embedded into the
// binary and served by package server at /, /files and /assets/.
//
// The UI is hand-written, dependency-free ES modules and CSS with no build
// step: it loads nothing from outside the server (no CDNs, no web fonts),
// talks only to the JSON API described in server/API.md, and never turns
// log text into markup (DOM nodes are built with textContent; the page's
// Content-Security-Policy requires Trusted Types, so an innerHTML
// assignment would throw). The browser tests in this package drive it in
// headless Chromium against the real server.
package web

import (
	"embed"
	"io/fs"
)

//go:embed ui
var files embed.FS

// FS returns the UI's files: index.html at the root, assets/... below it.
func FS() fs.FS {
	sub, err := fs.Sub(files, "ui")
	if err != nil {
		panic(err) // "ui" is a valid, embedded path
	}
	return sub
}
