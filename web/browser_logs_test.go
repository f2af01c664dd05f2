package web_test

// The browser tests of logs (subtests of TestBrowser, which lends them its
// browser): the files page groups each log's files (the live file, then
// its rotations into the past, compressed ones marked), a log's "Search
// log" and the search form's log filter narrow the search to that log's
// history, and the filter lives in the URL.

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// shownGroup is one log of the files page: its name, its files' ids in
// the order shown, and its head row's text ("" for a log of one file).
type shownGroup struct {
	Log   string   `json:"log"`
	IDs   []uint64 `json:"ids"`
	Head  string   `json:"head"`
	Marks []string `json:"marks"` // the rows' badges, "id:text"
}

func readGroups(tb *tab) []shownGroup {
	tb.t.Helper()
	var gs []shownGroup
	tb.eval(`[...document.querySelectorAll('.files-table tbody[data-log]')].map((b) => ({ log: b.dataset.log,
		ids: [...b.querySelectorAll('tr[data-id]')].map((r) => +r.dataset.id),
		head: b.querySelector('.log-head')?.textContent || '',
		marks: [...b.querySelectorAll('tr[data-id] .badge')].map((x) => x.closest('tr').dataset.id + ':' + x.textContent) }))`, &gs)
	return gs
}

// wantGroups is the API's files by log, each in rotation order.
func wantGroups(files []apiFile) map[string][]apiFile {
	by := map[string][]apiFile{}
	for _, f := range files {
		by[f.Log] = append(by[f.Log], f)
	}
	for _, fs := range by {
		slices.SortFunc(fs, func(a, b apiFile) int {
			if a.Rotation != b.Rotation {
				return a.Rotation - b.Rotation
			}
			return strings.Compare(a.Path, b.Path)
		})
	}
	return by
}

// checkGroups checks that the files page shows every file once, grouped
// by log in rotation order, the logs ordered by their total size as
// ordered says (a before b).
func checkGroups(t *testing.T, tb *tab, files []apiFile, ordered func(a, b int64) bool) []shownGroup {
	t.Helper()
	shown := readGroups(tb)
	want := wantGroups(files)
	if len(shown) != len(want) {
		t.Errorf("%d logs shown, the API has %d", len(shown), len(want))
	}
	var prev int64 = -1
	for i, g := range shown {
		var ids []uint64
		var size int64
		for _, f := range want[g.Log] {
			ids = append(ids, f.ID)
			size += f.Size
		}
		if !slices.Equal(g.IDs, ids) {
			t.Errorf("log %s shows files %v, want %v (rotation order)", g.Log, g.IDs, ids)
		}
		if (len(ids) > 1) != (g.Head != "") {
			t.Errorf("log %s of %d files: head row %q", g.Log, len(ids), g.Head)
		}
		if i > 0 && !ordered(prev, size) {
			t.Errorf("log %s (%d bytes) after one of %d bytes", g.Log, size, prev)
		}
		prev = size
	}
	return shown
}

func gzipped(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func testLogs(t *testing.T, browser context.Context) {
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	lines := func(tag string, n int) string {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "2026-10-10T12:%02d:00Z INFO zqxrot %s entry %d\n", i, tag, i)
		}
		return sb.String()
	}
	// A log with numbered rotations past 9 (path order would put .10
	// before .2) and compressed ones, another log, and a log of one file.
	for name, content := range map[string]string{
		"rot/app.log":      lines("live", 3),
		"rot/app.log.1":    lines("first", 4),
		"rot/app.log.2.gz": gzipped(t, lines("second", 5)),
		"rot/app.log.3.gz": gzipped(t, lines("third", 6)),
		"rot/app.log.10":   lines("tenth", 2),
		"rot/other.log":    lines("other", 7),
		"rot/other.log.1":  lines("other-old", 1),
		"solo/service.log": lines("solo", 8),
	} {
		p := filepath.Join(logs, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := startServer(t, logs)
	files := apiFiles(t, base)
	const appLog = "logs/rot/app.log"
	if g := wantGroups(files)[appLog]; len(g) != 5 || g[4].Path != appLog+".10" || g[2].Compression != "gzip" {
		t.Fatalf("the API groups %s as %+v", appLog, g)
	}

	t.Run("files page groups each log's files in rotation order", func(t *testing.T) {
		t.Parallel()
		tb := newTab(t, browser, base, desktop, false)
		tb.open("/files")
		tb.wait("files listed", fmt.Sprintf(`document.querySelectorAll('.files-table tbody tr[data-id]').length === %d`, len(files)))
		shown := checkGroups(t, tb, files, func(a, b int64) bool { return true })
		// Sorted by path: logs by name.
		var names []string
		for _, g := range shown {
			names = append(names, g.Log)
		}
		if !slices.IsSorted(names) {
			t.Errorf("logs not in name order: %q", names)
		}
		byPath := map[string]apiFile{}
		for _, f := range files {
			byPath[f.Path] = f
		}
		for _, g := range shown {
			if g.Log != appLog {
				continue
			}
			if !strings.Contains(g.Head, "5 files") {
				t.Errorf("head row %q", g.Head)
			}
			want := []string{}
			for _, p := range []string{"", ".1", ".2.gz", ".3.gz", ".10"} {
				f := byPath[appLog+p]
				switch {
				case f.Rotation == 0:
					want = append(want, fmt.Sprintf("%d:live", f.ID))
				default:
					want = append(want, fmt.Sprintf("%d:rotation %d", f.ID, f.Rotation))
				}
				if f.Compression != "" {
					want = append(want, fmt.Sprintf("%d:%s", f.ID, f.Compression))
				}
			}
			if !slices.Equal(g.Marks, want) {
				t.Errorf("badges %q, want %q", g.Marks, want)
			}
		}
		tb.shot("files-logs-" + desktop.name + "-light")
		tb.setViewport(phone, true)
		tb.shot("files-logs-" + phone.name + "-dark")
		tb.setViewport(desktop, false)

		// "Search log" on the group: the search page, filtered to it.
		tb.click(fmt.Sprintf(`.log-head button[data-search-log=%s]`, jsString(appLog)))
		tb.wait("search page with the log filter", fmt.Sprintf(`location.pathname === '/' && new URLSearchParams(location.search).get('log') === %s &&
			document.querySelector('#log').value === %s && document.activeElement === document.querySelector('#q')`, jsString(appLog), jsString(appLog)))
		all := apiSearchAll(t, base, url.Values{"q": {"zqxrot"}})
		inLog := apiSearchAll(t, base, url.Values{"q": {"zqxrot"}, "log": {appLog}})
		if inLog.Total != 3+4+5+6+2 || all.Total <= inLog.Total {
			t.Fatalf("API: %d in the log, %d in all", inLog.Total, all.Total)
		}
		tb.search("zqxrot")
		tb.waitResults("zqxrot", inLog.Total)
		tb.wait("rows", `document.querySelectorAll('#results .hit').length > 0`)
		checkScroll(t, tb, inLog.Hits)
		var u string
		tb.eval(`location.search`, &u)
		if !strings.Contains(u, "log="+url.QueryEscape(appLog)) {
			t.Errorf("URL %s lacks the log", u)
		}

		// The form's filter: all logs, then another log.
		pick := func(log string) {
			tb.eval(fmt.Sprintf(`(() => { const s = document.querySelector('#log'); s.value = %s; s.dispatchEvent(new Event('change', { bubbles: true })); return true; })()`, jsString(log)), nil)
		}
		pick("")
		tb.waitResults("zqxrot", all.Total)
		tb.wait("no log in the URL", `!location.search.includes('log=')`)
		other := apiSearchAll(t, base, url.Values{"q": {"zqxrot"}, "log": {"logs/rot/other.log"}})
		pick("logs/rot/other.log")
		tb.waitResults("zqxrot", other.Total)
		checkRows(t, tb, other.Hits)
		// Back returns to all logs; a reload keeps the filter.
		tb.do("back", chromedp.NavigateBack())
		tb.waitResults("zqxrot", all.Total)
		tb.wait("select shows all logs", `document.querySelector('#log').value === ''`)
		tb.open("/?q=zqxrot&log=" + url.QueryEscape(appLog))
		tb.waitResults("zqxrot", inLog.Total)
		tb.wait("select shows the log", fmt.Sprintf(`document.querySelector('#log').value === %s`, jsString(appLog)))
		var opts []string
		tb.eval(`[...document.querySelector('#log').options].map((o) => o.value)`, &opts)
		if want := []string{"", appLog, "logs/rot/other.log", "logs/solo/service.log"}; !slices.Equal(opts, want) {
			t.Errorf("log options %q, want %q", opts, want)
		}
	})
}
