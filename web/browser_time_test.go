package web_test

// The browser tests of time (subtests of TestBrowser, which lends them its
// server and browser): the histogram against /api/histogram, narrowing
// the range by dragging or with the keyboard, presets, custom ranges,
// time order, the URL round trip and the files page's time columns.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

type apiBucket struct {
	Start string `json:"start"`
	End   string `json:"end"`
	Count int    `json:"count"`
}

type apiHistogram struct {
	From    string      `json:"from"`
	To      string      `json:"to"`
	StepMS  int64       `json:"step_ms"`
	Buckets []apiBucket `json:"buckets"`
	Total   int         `json:"total"`
}

func apiHist(t *testing.T, base string, params url.Values) apiHistogram {
	t.Helper()
	var h apiHistogram
	if code := getJSON(t, base+"/api/histogram?"+params.Encode(), &h); code != 200 {
		t.Fatalf("histogram %v: %d", params, code)
	}
	return h
}

// shownHist is the histogram on the page: the number of buckets it asked
// for and its bars.
type shownHist struct {
	Buckets int         `json:"buckets"`
	Bars    []apiBucket `json:"bars"`
}

// readHist waits for the histogram of the range from..to and reads it.
func readHist(tb *tab, from, to string) shownHist {
	tb.t.Helper()
	tb.wait("histogram of "+from+".."+to, fmt.Sprintf(`(() => { const h = logdex.histogram;
		return h.params?.from === %s && h.params?.to === %s && (h.data || h.err) && !document.querySelector('#hist').classList.contains('is-loading'); })()`,
		jsString(from), jsString(to)))
	var s shownHist
	tb.eval(`({ buckets: logdex.histogram.buckets, bars: [...document.querySelectorAll('#hist .hist-bar')].map((b) =>
		({ start: b.dataset.start, end: b.dataset.end, count: +b.dataset.count })) })`, &s)
	return s
}

// checkHist compares the page's histogram with the API's for the same
// search and checks that its counts add up to the search's total without
// untimed lines.
func checkHist(t *testing.T, tb *tab, base string, search url.Values) shownHist {
	t.Helper()
	shown := readHist(tb, search.Get("from"), search.Get("to"))
	p := maps.Clone(search)
	p.Set("buckets", fmt.Sprint(shown.Buckets))
	want := apiHist(t, base, p)
	if !slices.Equal(shown.Bars, want.Buckets) || len(want.Buckets) == 0 {
		t.Fatalf("histogram bars %v, API %v", shown.Bars, want.Buckets)
	}
	sum := 0
	for _, b := range shown.Bars {
		sum += b.Count
	}
	p = maps.Clone(search)
	p.Set("untimed", "exclude")
	if timed := apiSearchAll(t, base, p).Total; sum != timed || want.Total != timed {
		t.Errorf("histogram sums to %d (API total %d); the search without untimed lines finds %d", sum, want.Total, timed)
	}
	return shown
}

// mouse sends mouse events (viewport coordinates) as a pointer does.
func (tb *tab) mouse(evs ...input.DispatchMouseEventParams) {
	tb.t.Helper()
	tb.do("mouse", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, ev := range evs {
			if _, err := cdp.Call(ctx, t, input.DispatchMouseEvent, ev); err != nil {
				return err
			}
		}
		return nil
	}))
}

// drag presses the left button at (x1, y), moves to (x2, y) in steps and
// releases it there.
func (tb *tab) drag(x1, x2, y float64) {
	tb.t.Helper()
	evs := []input.DispatchMouseEventParams{
		{Type: input.DispatchMouseEventTypeMouseMoved, X: x1, Y: y},
		{Type: input.DispatchMouseEventTypeMousePressed, X: x1, Y: y, Button: input.MouseButtonLeft, Buttons: 1, ClickCount: 1},
	}
	for i := 1; i <= 5; i++ {
		evs = append(evs, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x1 + (x2-x1)*float64(i)/5, Y: y, Button: input.MouseButtonLeft, Buttons: 1})
	}
	tb.mouse(append(evs, input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseReleased, X: x2, Y: y, Button: input.MouseButtonLeft, ClickCount: 1})...)
}

// barAt is the middle of histogram bar i, in viewport coordinates.
func barAt(tb *tab, i int) (x, y float64) {
	tb.t.Helper()
	var p struct{ X, Y float64 }
	tb.eval(fmt.Sprintf(`(() => { const r = document.querySelectorAll('#hist .hist-bar')[%d].getBoundingClientRect();
		return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`, i), &p)
	return p.X, p.Y
}

// urlRange is the range in the page's URL.
func urlRange(tb *tab) (from, to string) {
	tb.t.Helper()
	var r []string
	tb.eval(`(() => { const p = new URLSearchParams(location.search); return [p.get('from') || '', p.get('to') || '']; })()`, &r)
	return r[0], r[1]
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return tm
}

// checkInRange checks that the hits the page holds have times in
// [from, to) or, from files without timestamps, none.
func checkInRange(t *testing.T, tb *tab, from, to string, untimed map[string]bool) {
	t.Helper()
	var hits []struct{ Path, Time string }
	tb.eval(`logdex.results.hits.map((h) => ({ path: h.path, time: h.time || '' }))`, &hits)
	a, b := mustTime(t, from), mustTime(t, to)
	for _, h := range hits {
		if h.Time == "" && untimed[h.Path] {
			continue
		}
		if tm := mustTime(t, h.Time); tm.Before(a) || !tm.Before(b) {
			t.Errorf("hit of %s at %s outside [%s, %s)", h.Path, h.Time, from, to)
		}
	}
	if len(hits) == 0 {
		t.Error("no hits in the narrowed range")
	}
}

// matches is "1 match", "2 matches".
func matches(n int) string {
	if n == 1 {
		return "1 match"
	}
	return fmtInt(n) + " matches"
}

func searchParams(q string, kv ...string) url.Values {
	v := url.Values{"q": {q}, "mode": {"query"}, "case": {"insensitive"}}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// testTime runs the subtests of time in the UI.
func testTime(t *testing.T, browser context.Context, base string, files []apiFile) {
	untimed := map[string]bool{}
	for _, f := range files {
		if !f.Timed {
			untimed[f.Path] = true
		}
	}
	const dayFrom, dayTo = "2026-10-10T00:00:00Z", "2026-10-11T00:00:00Z"
	daySearch := searchParams("error", "from", dayFrom, "to", dayTo)

	t.Run("time.js reads and writes times in their own zone", func(t *testing.T) {
		t.Parallel()
		tb := newTab(t, browser, base, desktop, false)
		tb.open("/")
		const now = 1_800_000_000_000
		ms := func(s string) string { return fmt.Sprint(mustTime(t, s).UnixMilli()) }
		for _, c := range []struct{ js, want string }{
			{`m.parseTime('2026-10-10T04:23:27.304+02:00')`, `{"ms":` + ms("2026-10-10T02:23:27.304Z") + `,"off":120}`},
			{`m.parseTime('2026-10-10T04:23:27.123456789-05:30')`, `{"ms":` + ms("2026-10-10T09:53:27.123Z") + `,"off":-330}`},
			{`m.parseTime('2026-10-10 04:23')`, `null`},
			{`m.hitTime('2026-10-09T04:23:27.304+02:00')`, `{"date":"Oct 9","clock":"04:23:27"}`},
			{`m.hitTime(undefined)`, `null`},
			{`m.fmtRFC3339(T('2026-10-10T02:23:27.304Z'), 120)`, `"2026-10-10T04:23:27.304+02:00"`},
			{`m.fmtRFC3339(T('2026-10-10T02:23:27Z'), -330)`, `"2026-10-09T20:53:27-05:30"`},
			{`m.fmtRFC3339(T('2026-10-10T02:23:27+02:00'), 0)`, `"2026-10-10T00:23:27Z"`},
			{`m.absTime('2026-11-29 14:02')`, ms("2026-11-29T14:02:00Z")},
			{`m.absTime('2026-11-29 14:02:05')`, ms("2026-11-29T14:02:05Z")},
			{`m.absTime('1791651830000')`, `1791651830000`},
			{`m.absTime('2h', NOW)`, fmt.Sprint(now - 2*3600_000)},
			{`m.absTime('7d', NOW)`, fmt.Sprint(now - 7*86400_000)},
			{`m.absTime('yesterday')`, `null`},
			{`m.fmtSpan(T('2026-10-10T04:00:00Z'), T('2026-10-10T05:00:00Z'), 0, 3600e3)`, `"Oct 10 04:00 – 05:00"`},
			{`m.fmtSpan(T('2026-10-10T23:00:00Z'), T('2026-10-11T00:00:00Z'), 0, 3600e3)`, `"Oct 10 23:00 – 00:00"`},
			{`m.fmtSpan(T('2026-10-10T22:00:00Z'), T('2026-10-11T02:00:00Z'), 0, 3600e3)`, `"Oct 10 22:00 – Oct 11 02:00"`},
			{`m.fmtSpan(T('2026-10-10T04:00:00Z'), T('2026-10-10T04:00:30Z'), 0, 30e3)`, `"Oct 10 04:00:00 – 04:00:30"`},
			{`m.fmtSpan(T('2026-10-10T00:00:00+02:00'), T('2026-10-11T00:00:00+02:00'), 120, 86400e3)`, `"Oct 10"`},
			{`m.fmtSpan(T('2026-10-10T00:00:00Z'), T('2026-10-12T00:00:00Z'), 0, 86400e3)`, `"Oct 10 – Oct 11"`},
			{`m.fmtStep(900e3) + ', ' + m.fmtStep(7200e3) + ', ' + m.fmtStep(86400e3) + ', ' + m.fmtStep(5e3)`, `"15 min, 2 h, 1 d, 5 s"`},
			{`m.ticks(T('2026-10-10T00:00:00Z'), T('2026-10-11T00:00:00Z'), 0, 4).map((t) => t.label)`, `["Oct 10 00:00","06:00","12:00","18:00","Oct 11 00:00"]`},
			{`m.ticks(T('2026-10-10T01:00:00+02:00'), T('2026-10-10T03:00:00+02:00'), 120, 2).map((t) => t.label)`, `["Oct 10 01:00","02:00","03:00"]`},
			{`m.rangeName('1h', '') + '; ' + m.rangeName('', '') + '; ' + m.rangeName('2h', '1h')`, `"the last hour; all time; 2h – 1h"`},
		} {
			var got, want any
			tb.eval(fmt.Sprintf(`import('/assets/time.js').then((m) => { const T = (s) => m.parseTime(s).ms, NOW = %d; return %s; })`, now, c.js), &got)
			if err := json.Unmarshal([]byte(c.want), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s = %v, want %s", c.js, got, c.want)
			}
		}
	})

	t.Run("histogram counts match the API", func(t *testing.T) {
		t.Parallel()
		tb := newTab(t, browser, base, desktop, false)
		want := apiSearchAll(t, base, maps.Clone(daySearch))
		tb.open("/?" + daySearch.Encode())
		tb.waitResults("error", want.Total)
		shown := checkHist(t, tb, base, daySearch)
		// The matches of files without timestamps are counted apart.
		p := maps.Clone(daySearch)
		p.Set("untimed", "exclude")
		if u := want.Total - apiSearchAll(t, base, p).Total; u > 0 {
			tb.wait("untimed count", fmt.Sprintf(`document.querySelector('.hist-untimed:not([hidden])')?.textContent === 'Hide %s without a time'`, matches(u)))
		}
		// Hovering the tallest bar shows its span and count.
		top := 0
		for i, b := range shown.Bars {
			if b.Count > shown.Bars[top].Count {
				top = i
			}
		}
		x, y := barAt(tb, top)
		tb.mouse(input.DispatchMouseEventParams{Type: input.DispatchMouseEventTypeMouseMoved, X: x, Y: y})
		b := shown.Bars[top]
		tip := fmt.Sprintf("%s – %s%s", mustTime(t, b.Start).Format("Jan 2 15:04"), mustTime(t, b.End).Format("15:04"), matches(b.Count))
		tb.wait("tooltip "+tip, fmt.Sprintf(`!document.querySelector('.hist-tip').hidden && document.querySelector('.hist-tip').textContent === %s`, jsString(tip)))
		tb.shot("histogram-" + desktop.name + "-light")
		// Each hit shows its time (checkRows compares text and title).
		checkRows(t, tb, want.Hits)
		var shownTime string
		tb.eval(`document.querySelector('#results .hit .time').textContent`, &shownTime)
		if shownTime == "" {
			t.Error("the first hit shows no time")
		}
	})

	t.Run("dragging the histogram narrows the range", func(t *testing.T) {
		t.Parallel()
		tb := newTab(t, browser, base, desktop, false)
		tb.open("/?" + daySearch.Encode())
		shown := checkHist(t, tb, base, daySearch)
		// From the first bar with matches across a third of the chart.
		i := slices.IndexFunc(shown.Bars, func(b apiBucket) bool { return b.Count > 0 })
		j := min(len(shown.Bars)-1, i+len(shown.Bars)/3)
		x1, y := barAt(tb, i)
		x2, _ := barAt(tb, j)
		tb.drag(x1, x2, y)
		from, to := shown.Bars[i].Start, shown.Bars[j].End
		tb.wait("narrowed URL", fmt.Sprintf(`(() => { const p = new URLSearchParams(location.search); return p.get('from') === %s && p.get('to') === %s; })()`, jsString(from), jsString(to)))
		narrow := searchParams("error", "from", from, "to", to)
		want := apiSearchAll(t, base, maps.Clone(narrow))
		tb.waitResults("error", want.Total)
		checkRows(t, tb, want.Hits)
		checkInRange(t, tb, from, to, untimed)
		shown = checkHist(t, tb, base, narrow)
		var controls struct{ Range, From, To string }
		tb.eval(`({ range: document.querySelector('#time-form [name=range]:checked').value,
			from: document.querySelector('#time-form [name=from]').value, to: document.querySelector('#time-form [name=to]').value })`, &controls)
		if controls.Range != "custom" || controls.From != from || controls.To != to {
			t.Errorf("time controls show %+v after the drag", controls)
		}
		tb.shot("histogram-narrowed-" + desktop.name + "-light")

		// The keyboard does the same: arrows pick a bar, Enter narrows.
		tb.eval(`document.querySelector('.hist-plot').focus()`, nil)
		tb.key(kb.ArrowRight + kb.ArrowRight)
		tb.wait("bar 1 picked", `!document.querySelector('.hist-brush').hidden && /matches?$/.test(document.querySelector('.hist-live').textContent)`)
		tb.key(kb.Enter)
		b := shown.Bars[1]
		tb.wait("range of bar 1", fmt.Sprintf(`new URLSearchParams(location.search).get('from') !== %s`, jsString(from)))
		kFrom, kTo := urlRange(tb)
		if a, z := mustTime(t, kFrom), mustTime(t, kTo); a.Before(mustTime(t, b.Start)) || z.After(mustTime(t, b.End)) || a.Before(mustTime(t, from)) || !a.Before(z) {
			t.Errorf("keyboard narrowed to [%s, %s), want bar 1 [%s, %s) inside [%s, %s)", kFrom, kTo, b.Start, b.End, from, to)
		}
		want = apiSearchAll(t, base, searchParams("error", "from", kFrom, "to", kTo))
		tb.waitResults("error", want.Total)
		checkHist(t, tb, base, searchParams("error", "from", kFrom, "to", kTo))

		// Reset goes back to all time; back returns to the narrowed range.
		all := apiSearchAll(t, base, searchParams("error"))
		tb.click(".hist-reset")
		tb.wait("all time", `location.search === '?q=error&mode=query&case=insensitive' && document.querySelector('#time-form [name=range]:checked').value === 'all'`)
		tb.waitResults("error", all.Total)
		tb.do("back", chromedp.NavigateBack())
		tb.waitResults("error", want.Total)
		if f, z := urlRange(tb); f != kFrom || z != kTo {
			t.Errorf("back: range %s..%s, want %s..%s", f, z, kFrom, kTo)
		}
	})

	t.Run("a preset sets the range", func(t *testing.T) {
		t.Parallel()
		tb := newTab(t, browser, base, desktop, false)
		all := apiSearchAll(t, base, searchParams("upstream"))
		tb.open("/?q=upstream")
		tb.waitResults("upstream", all.Total)
		tb.click(`.range-seg input[value="1h"] + span`)
		tb.wait("last hour in the URL", `new URLSearchParams(location.search).get('from') === '1h' && logdex.results.params.from === '1h'`)
		// The fixtures' logs are older than an hour: nothing, said so.
		if n := apiSearchAll(t, base, searchParams("upstream", "from", "1h")).Total; n != 0 {
			t.Fatalf("%d matches in the last hour, want none", n)
		}
		tb.waitResults("upstream", 0)
		tb.wait("empty state names the range", `!document.querySelector('[data-empty=nomatch]').hidden && !document.querySelector('.range-note').hidden &&
			document.querySelector('.range-note .range-name').textContent === 'the last hour'`)
		readHist(tb, "1h", "")
		tb.wait("empty histogram", `document.querySelector('.hist-plot.is-empty') && document.querySelector('.hist-msg').textContent.startsWith('No lines with a time in this range')`)
		tb.shot("range-empty-" + desktop.name + "-light")
		tb.click(`.range-note [data-act=all-time]`)
		tb.waitResults("upstream", all.Total)
		tb.wait("all time", `!new URLSearchParams(location.search).has('from') && document.querySelector('#time-form [name=range]:checked').value === 'all'`)
		// A preset keeps the matches of files without timestamps (as the
		// API does) and the histogram says how many there are.
		tb.search("error")
		tb.waitResults("error", apiSearchAll(t, base, searchParams("error")).Total)
		tb.click(`.range-seg input[value="24h"] + span`)
		want := apiSearchAll(t, base, searchParams("error", "from", "24h"))
		if want.Total == 0 || slices.ContainsFunc(want.Hits, func(h apiHit) bool { return !untimed[h.Path] }) {
			t.Fatalf("want only matches without a time in the last 24 hours, got %d", want.Total)
		}
		tb.wait("24h", `logdex.results.params.from === '24h'`)
		tb.waitResults("error", want.Total)
		readHist(tb, "24h", "")
		tb.wait("histogram counts the matches without a time", fmt.Sprintf(`document.querySelector('.hist-msg').textContent.endsWith('(the %s below have no time)')`, matches(want.Total)))
		checkRows(t, tb, want.Hits)
	})

	t.Run("newest first orders hits by time", func(t *testing.T) {
		t.Parallel()
		tb := newTab(t, browser, base, desktop, false)
		want := apiSearchAll(t, base, searchParams("INFO", "order", "newest"))
		if want.Total <= 600 {
			t.Fatalf("want a query with several pages, INFO has %d", want.Total)
		}
		for i := 1; i < len(want.Hits); i++ {
			a, b := want.Hits[i-1], want.Hits[i]
			if b.Time != "" && (a.Time == "" || mustTime(t, a.Time).Before(mustTime(t, b.Time))) {
				t.Fatalf("API hits %d, %d not newest first: %q, %q", i-1, i, a.Time, b.Time)
			}
		}
		tb.open("/?q=INFO")
		tb.click(`.order-seg input[value=newest] + span`)
		tb.wait("newest first", `new URLSearchParams(location.search).get('order') === 'newest' && logdex.results.params.order === 'newest'`)
		tb.waitResults("INFO", want.Total)
		checkRows(t, tb, want.Hits)
		tb.wait("no file headers in time order", `document.querySelectorAll('#results .file-head').length === 0 && document.querySelector('#results .hit .src')`)
		tb.shot("newest-" + desktop.name + "-light")
		tb.setViewport(phone, true)
		tb.shot("newest-" + phone.name + "-dark")
		tb.setViewport(desktop, false)
		checkScroll(t, tb, want.Hits)
		checkRows(t, tb, want.Hits)
		// Oldest first: the API's first hit comes first.
		old := apiSearchAll(t, base, searchParams("INFO", "order", "oldest"))
		tb.click(`.order-seg input[value=oldest] + span`)
		tb.wait("oldest first", `logdex.results.params.order === 'oldest'`)
		tb.waitResults("INFO", old.Total)
		checkRows(t, tb, old.Hits)
	})

	t.Run("range and order live in the URL", func(t *testing.T) {
		t.Parallel()
		tb := newTab(t, browser, base, desktop, false)
		tb.allow("status of 400")
		const from, to = "2026-10-10T06:00:00Z", "2026-10-10T18:00:00Z"
		p := searchParams("error", "from", from, "to", to, "untimed", "exclude", "order", "oldest")
		want := apiSearchAll(t, base, maps.Clone(p))
		link := "/?q=error&mode=query&case=insensitive&from=" + url.QueryEscape(from) + "&to=" + url.QueryEscape(to) + "&untimed=exclude&order=oldest"
		type controls struct {
			Range, From, To, Order, URL string
			Untimed                     bool
		}
		read := func() controls {
			var c controls
			tb.eval(`(() => { const f = document.querySelector('#time-form');
				return { range: f.querySelector('[name=range]:checked').value, from: f.elements.from.value, to: f.elements.to.value,
					order: f.querySelector('[name=order]:checked').value, untimed: document.querySelector('.hist-untimed input').checked,
					url: location.pathname + location.search }; })()`, &c)
			return c
		}
		wantC := controls{Range: "custom", From: from, To: to, Order: "oldest", URL: link, Untimed: true}
		tb.open(link)
		tb.waitResults("error", want.Total)
		readHist(tb, from, to)
		if c := read(); c != wantC {
			t.Errorf("opened %s: controls %+v", link, c)
		}
		checkRows(t, tb, want.Hits)
		tb.setViewport(phone, false)
		tb.shot("range-custom-" + phone.name + "-light")
		tb.setViewport(desktop, false)
		tb.do("reload", chromedp.Reload())
		tb.wait("app started", `window.logdex && ['ok', 'warm'].includes(document.querySelector('#status-chip').dataset.state)`)
		tb.waitResults("error", want.Total)
		readHist(tb, from, to)
		if c := read(); c != wantC {
			t.Errorf("after reload: controls %+v, want %+v", c, wantC)
		}
		// A custom range typed in the API's plain form.
		setFrom := func(v string) {
			tb.eval(`(() => { const i = document.querySelector('#time-form [name=from]'); i.value = ''; i.focus(); return true; })()`, nil)
			tb.typeText(v)
			tb.key(kb.Enter)
		}
		setFrom("2026-10-10 08:00")
		want = apiSearchAll(t, base, searchParams("error", "from", "2026-10-10 08:00", "to", to, "untimed", "exclude", "order", "oldest"))
		tb.wait("typed range", `logdex.results.params.from === '2026-10-10 08:00'`)
		tb.waitResults("error", want.Total)
		// A range the API cannot read is shown as an error at the field.
		setFrom("yesterday")
		tb.wait("range error", `!document.querySelector('#q-error').hidden && document.querySelector('.q-error-msg').textContent.startsWith('Invalid time range: from:') &&
			document.querySelector('#time-form [name=from]').getAttribute('aria-invalid') === 'true'`)
		tb.shot("range-error-" + desktop.name + "-light")
		tb.do("back", chromedp.NavigateBack())
		tb.waitResults("error", want.Total)
		tb.wait("error gone", `document.querySelector('#q-error').hidden && document.querySelector('#time-form [name=from]').value === '2026-10-10 08:00' &&
			!document.querySelector('#time-form [name=from]').hasAttribute('aria-invalid')`)
	})

	t.Run("files page shows time formats and ranges", func(t *testing.T) {
		t.Parallel()
		tb := newTab(t, browser, base, desktop, false)
		tb.open("/files")
		tb.wait("files listed", fmt.Sprintf(`document.querySelectorAll('.files-table tbody tr[data-id]').length === %d`, len(files)))
		var rows []struct {
			ID                   uint64
			Format, Range, Title string
		}
		tb.eval(`[...document.querySelectorAll('.files-table tbody tr[data-id]')].map((r) => ({ id: +r.dataset.id,
			format: r.querySelector('.c-fmt').textContent, range: r.querySelector('.c-time').textContent, title: r.querySelector('.c-time').title }))`, &rows)
		byID := map[uint64]apiFile{}
		for _, f := range files {
			byID[f.ID] = f
		}
		for _, r := range rows {
			f := byID[r.ID]
			wantFmt, wantRange, wantTitle := "none", "no timestamps", ""
			if f.Timed {
				a, b := mustTime(t, f.FirstTime), mustTime(t, f.LastTime)
				day, clock := "2006-01-02 ", "15:04"
				if a.Format(day+clock) == b.Format(day+clock) {
					clock = "15:04:05" // within a minute: seconds
				}
				last := b.Format(day + clock)
				if a.Format(day) == b.Format(day) {
					last = b.Format(clock)
				}
				wantFmt, wantRange, wantTitle = f.TimeFormat, a.Format(day+clock)+" – "+last, f.FirstTime+" – "+f.LastTime
			}
			if r.Format != wantFmt || r.Range != wantRange || r.Title != wantTitle {
				t.Errorf("%s: format %q, range %q (%q); want %q, %q (%q)", f.Path, r.Format, r.Range, r.Title, wantFmt, wantRange, wantTitle)
			}
		}
		if len(untimed) == 0 || len(untimed) == len(files) {
			t.Fatalf("want timed and untimed files in the fixtures, %d of %d untimed", len(untimed), len(files))
		}
		// Sorted by time, newest first; files without timestamps last.
		tb.click(`button.sort[data-sort=first_time]`)
		tb.wait("sorted by time", `document.querySelector('th[aria-sort=descending] .sort')?.dataset.sort === 'first_time'`)
		var paths []string
		tb.eval(`[...document.querySelectorAll('.files-table tbody tr .c-path a')].map((a) => a.title)`, &paths)
		for i, p := range paths {
			if untimed[p] != (i >= len(paths)-len(untimed)) {
				t.Errorf("sorted by time: %s at %d of %d", p, i, len(paths))
			}
		}
		if len(paths) != len(files) {
			t.Errorf("%d rows after sorting, want %d", len(paths), len(files))
		}
		tb.shot("files-time-" + desktop.name + "-light")
	})
}
