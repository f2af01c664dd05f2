// Search results: paging through /api/search with cursors, the hit model,
// selection, and rendering through the virtual list.
//
// Live (live.js) adds a section after the search's pages: a separator
// row, then the matches that arrive, in the same rows. Pages of the search
// that come later go in before the separator (the list splices them in,
// keeping what is on screen still), the oldest live rows can be dropped
// to bound memory, and a line shown once is not shown again (a page may
// hold a line that arrived live, and the other way round).
//
// The first page is small so the first hits show fast; later pages are
// larger and are fetched as the user scrolls near the end of what is
// loaded (or moves the selection there with j). In path order (grep's)
// a file header row is inserted whenever the path changes; in time order
// files interleave, so each row names its file instead. Rows show each
// hit's time when any hit has one.

import { h, clear, fmtInt, fmtMs, splitPath } from './dom.js';
import * as api from './api.js';
import { lineOf, render as renderText, firstMatch } from './text.js';
import { VirtualList } from './vlist.js';
import { hitTime, fmtClock } from './time.js';

const FIRST_PAGE = 100;
const NEXT_PAGE = 500;
const PREFETCH_ROWS = 120; // fetch the next page when this close to the end
const ROW_H = 24; // must match .hit's height in style.css
const HEAD_H = 34; // must match .file-head's height
const LIVE_H = 30; // must match .live-sep's height
const HEIGHTS = { file: HEAD_H, hit: ROW_H, live: LIVE_H };

export class Results {
  // els: {scroller, footer, summary, empty}; cb: {onOpen(hit), onError(err),
  // onRecover(): a request of the search worked after one failed,
  // onPage(), onView(first, last): the rows on screen}
  constructor(els, cb) {
    this.els = els;
    this.cb = cb;
    this.gen = 0;
    this.charW = 0;
    this.cols = 80;
    this.vlist = new VirtualList(els.scroller, {
      estimate: (i) => HEIGHTS[this.items[i].kind],
      render: (i) => this.renderItem(i),
      onRendered: (rows) => this.markOverflow(rows),
      onRange: (first, last) => this.onRange(first, last),
    });
    this.clearModel();
    els.scroller.addEventListener('click', (ev) => this.clicked(ev));
    new ResizeObserver(() => this.measureCols()).observe(els.scroller);
    this.state = 'idle';
    this.renderChrome();
  }

  clearModel() {
    this.params = null;
    // Rows: {kind:'file', path, fileId} | {kind:'hit', hit} | {kind:'live'}
    // (the live separator). hits are the API's hit objects in list order,
    // each with .n (its place in hits) and .item (its row).
    this.items = [];
    this.hits = [];
    this.histItems = 0; // rows of the search's pages: the live section follows them
    this.histHits = 0;
    this.live = null; // the live section: {since, lastFile}
    this.byFile = new Map(); // file_id -> Map(line -> hit)
    this.total = 0;
    this.totalExact = true;
    this.counting = false;
    this.took = 0;
    this.warnings = [];
    this.cursor = null;
    this.done = true;
    this.failed = null; // the error of a later page that did not load
    this.loading = false;
    this.busy = '';
    this.sel = -1;
    this.lastFile = null;
    this.timed = false; // some hit has a time: rows get a time column
    this.els.scroller.classList.remove('timed');
  }

  // start runs a new search (params: {q, mode, case, from, to, untimed,
  // order, log}); resolves when the first page is in. before(), asked
  // once the caller's current task is done, may return a promise that
  // holds the first request back until it settles (Live opens its stream
  // first, so that the two meet without a gap).
  start(params, { before } = {}) {
    this.abort?.abort();
    this.abort = new AbortController();
    this.gen++;
    this.erred = false;
    this.clearModel();
    this.vlist.reset();
    this.els.scroller.removeAttribute('aria-activedescendant');
    this.params = params;
    this.byTime = params.order === 'newest' || params.order === 'oldest';
    this.els.scroller.classList.toggle('by-time', this.byTime);
    this.measureCols();
    this.done = false;
    this.state = 'loading';
    this.renderChrome();
    return this.page(FIRST_PAGE, before);
  }

  // idle shows the start screen (no query).
  idle() {
    this.abort?.abort();
    this.gen++;
    this.clearModel();
    this.vlist.reset();
    this.state = 'idle';
    this.renderChrome();
  }

  // countAll asks for the exact number of matches (total=exact, no
  // hits), when the first page gave a lower bound.
  async countAll() {
    if (this.counting || this.totalExact || !this.params) return;
    const gen = this.gen;
    this.counting = true;
    this.busy = 'Counting…';
    this.renderChrome();
    try {
      const r = await api.search(this.params, { limit: 0, total: 'exact', signal: this.abort.signal });
      if (gen !== this.gen) return;
      this.total = r.total;
      this.totalExact = true;
      this.busy = '';
      this.recovered();
      this.cb.onPage?.();
    } catch (err) {
      if (gen !== this.gen || err.name === 'AbortError') return;
      this.busy = '';
      this.reportError(err);
    } finally {
      if (gen === this.gen) {
        this.counting = false;
        this.renderChrome();
      }
    }
  }

  loadMore() {
    if (this.loading || this.done || this.failed || !this.params) return;
    this.page(NEXT_PAGE);
  }

  async page(limit, before) {
    const gen = this.gen, first = this.histHits === 0;
    this.loading = true;
    this.renderChrome();
    if (before) {
      await null; // the caller's task ends first (it starts Live after this)
      await before();
      if (gen !== this.gen) return;
    }
    let attempt = 0;
    for (;;) {
      try {
        const r = await api.search(this.params, { cursor: this.cursor, limit, signal: this.abort.signal });
        if (gen !== this.gen) return;
        if (first) {
          this.total = r.total;
          // A lower bound when counting would have cost more than the
          // page: "at least", and a button that counts them all.
          this.totalExact = r.total_exact !== false;
          this.took = r.took_ms;
          this.warnings = r.warnings || [];
        }
        this.append(r.hits);
        this.cursor = r.next_cursor;
        this.done = !r.next_cursor;
        if (this.done && !this.totalExact) {
          // Every page loaded: their hits are the exact total.
          this.total = Math.max(this.total, this.histHits);
          this.totalExact = true;
        }
        this.state = 'done';
        this.busy = '';
        this.failed = null;
        this.recovered();
        break;
      } catch (err) {
        if (err.name === 'AbortError' || gen !== this.gen) return;
        // Overloaded: wait as told and retry a few times before giving up.
        if (err.status === 503 && err.retryAfter && attempt < 3) {
          attempt++;
          this.busy = `Server busy — retrying (${attempt}/3)…`;
          this.renderChrome();
          await new Promise((r) => setTimeout(r, Math.min(5, err.retryAfter) * 1000));
          if (gen !== this.gen) return;
          continue;
        }
        this.busy = '';
        if (first) {
          this.state = 'error';
          this.done = true;
        } else {
          // A later page failed: not the end of the results. The footer
          // says so and offers to try again; scrolling does not retry.
          this.failed = err;
        }
        this.reportError(err);
        break;
      }
    }
    this.loading = false;
    this.renderChrome();
    this.cb.onPage?.();
  }

  // reportError says what went wrong with a request of this search; a
  // later one that works takes the message back (recovered): the server
  // is back, and "Offline" must not stay above a full list of results.
  reportError(err) {
    this.erred = true;
    this.cb.onError?.(err);
  }

  recovered() {
    if (this.erred) {
      this.erred = false;
      this.cb.onRecover?.();
    }
  }

  // append adds a page of the search (before the live section).
  append(hits) {
    const items = [], added = [];
    for (const hit of hits) {
      if (this.has(hit)) continue; // arrived live already
      if (!this.byTime && hit.file_id !== this.lastFile) {
        items.push({ kind: 'file', path: hit.path, fileId: hit.file_id });
        this.lastFile = hit.file_id;
      }
      items.push({ kind: 'hit', hit });
      added.push(hit);
    }
    this.splice(this.histItems, 0, items, this.histHits, 0, added);
    this.histItems += items.length;
    this.histHits += added.length;
  }

  has(hit) { return !!this.byFile.get(hit.file_id)?.has(hit.line); }

  // splice replaces del rows at row `at` by items, and delHits hits at
  // hit atHit by hits, keeping every hit's .n and .item, the selection and
  // the index by file right, and the list on screen where it was.
  splice(at, del, items, atHit, delHits, hits) {
    const end = at === this.items.length && del === 0;
    for (const hit of this.hits.slice(atHit, atHit + delHits)) this.byFile.get(hit.file_id)?.delete(hit.line);
    if (end) {
      for (const it of items) this.items.push(it);
      for (const hit of hits) this.hits.push(hit);
    } else {
      this.items = this.items.slice(0, at).concat(items, this.items.slice(at + del));
      this.hits = this.hits.slice(0, atHit).concat(hits, this.hits.slice(atHit + delHits));
    }
    for (let k = atHit; k < this.hits.length; k++) this.hits[k].n = k;
    for (let i = at; i < this.items.length; i++) if (this.items[i].kind === 'hit') this.items[i].hit.item = i;
    let timed = false;
    for (const hit of hits) {
      let m = this.byFile.get(hit.file_id);
      if (!m) this.byFile.set(hit.file_id, (m = new Map()));
      m.set(hit.line, hit);
      timed ||= !!hit.time;
    }
    if (this.sel >= atHit && (delHits || hits.length)) {
      this.sel = this.sel < atHit + delHits ? -1 : this.sel + hits.length - delHits;
      if (this.sel < 0) this.els.scroller.removeAttribute('aria-activedescendant');
      else this.els.scroller.setAttribute('aria-activedescendant', `hit-${this.sel}`);
    }
    if (end) this.vlist.setCount(this.items.length);
    else this.vlist.splice(at, del, items.length);
    if (timed && !this.timed) {
      this.timed = true;
      this.els.scroller.classList.add('timed');
      this.measureCols();
    }
  }

  // --- the live section ---

  // liveBegin adds the live section (the separator row) if there is none.
  liveBegin(since) {
    if (this.live) return;
    this.live = { since, lastFile: null };
    this.splice(this.items.length, 0, [{ kind: 'live' }], this.hits.length, 0, []);
    this.renderChrome();
  }

  get liveCount() { return this.live ? this.hits.length - this.histHits : 0; }

  // liveAppend adds matches that arrived at the end (those shown already
  // are left out); it returns the hits added.
  liveAppend(hits) {
    const items = [], added = [], seen = new Set();
    for (const hit of hits) {
      const key = `${hit.file_id}:${hit.line}`;
      if (this.has(hit) || seen.has(key)) continue;
      seen.add(key);
      if (hit.file_id !== this.live.lastFile) {
        items.push({ kind: 'file', path: hit.path, fileId: hit.file_id });
        this.live.lastFile = hit.file_id;
      }
      items.push({ kind: 'hit', hit });
      added.push(hit);
    }
    this.splice(this.items.length, 0, items, this.hits.length, 0, added);
    this.renderChrome();
    return added;
  }

  // liveDrop removes the k oldest live matches (and file headers left
  // without hits; the first match kept gets its file's header).
  liveDrop(k) {
    k = Math.min(k, this.liveCount);
    if (k <= 0) return;
    const keep = this.hits[this.histHits + k];
    const from = this.histItems + 1;
    let to = this.items.length, head = [];
    if (keep) {
      to = this.items[keep.item - 1].kind === 'file' ? keep.item - 1 : keep.item;
      if (to === keep.item) head = [{ kind: 'file', path: keep.path, fileId: keep.file_id }];
    } else {
      this.live.lastFile = null;
    }
    for (const hit of this.hits.slice(this.histHits, this.histHits + k)) hit.dropped = true;
    this.splice(from, to - from, head, this.histHits, k, []);
  }

  // onRange loads the next page when the end of the search's rows comes
  // near the screen from above (not when it lies above the screen: the
  // user is reading live rows below it).
  onRange(first, last) {
    const end = this.histItems;
    if (last >= 0 && first <= end && last >= end - PREFETCH_ROWS) this.loadMore();
    this.cb.onView?.(first, last);
  }

  hitsIn(fileId) { return this.byFile.get(fileId) || null; }

  find(fileId, line) {
    const hit = this.byFile.get(fileId)?.get(line);
    return hit ? hit.n : -1;
  }

  // --- rendering ---

  // measureCols finds how many characters a collapsed row shows (when the
  // list's width or its columns change).
  measureCols() {
    const sc = this.els.scroller;
    if (!this.charW) {
      const probe = h('span', { class: 'mono-probe', text: 'x'.repeat(100) });
      sc.append(probe);
      this.charW = probe.getBoundingClientRect().width / 100 || 7.8;
      probe.remove();
    }
    if (!sc.clientWidth) return; // hidden: measured when it shows
    // Width left for text: the text cell of an empty row.
    const probe = h('div', { class: 'hit', 'aria-hidden': 'true' }, this.byTime ? null : h('span', { class: 'ln' }),
      h('span', { class: 'time' }), this.byTime ? h('span', { class: 'src' }) : null, h('span', { class: 'txt' }));
    probe.style.visibility = 'hidden';
    this.vlist.inner.append(probe);
    const width = probe.querySelector('.txt').clientWidth;
    probe.remove();
    const cols = Math.max(20, Math.floor(width / this.charW));
    if (cols !== this.cols) {
      this.cols = cols;
      this.vlist.rerender();
    }
  }

  renderItem(i) {
    const it = this.items[i];
    if (it.kind === 'live') return this.renderLive();
    if (it.kind === 'file') {
      const [dir, base] = splitPath(it.path);
      return h('div', { class: 'file-head', 'aria-hidden': 'true', title: it.path },
        h('span', { class: 'file-icon' }),
        h('span', { class: 'dir', text: dir }),
        h('span', { class: 'base', text: base }));
    }
    const hit = it.hit, n = hit.n;
    const line = hit.view || (hit.view = lineOf(hit));
    const expanded = !!hit.expanded;
    const t = hitTime(hit.time);
    const txt = h('span', { class: 'txt' }, h('span', { class: 'sr-only', text: `${hit.path} line ${hit.line}${t ? `, ${t.date} ${t.clock}` : ''}: ` }));
    // Keep the first match in sight in a one-line row: start a little
    // before it when it lies past most of the visible width.
    const [fa, fb] = firstMatch(line, hit.highlights);
    const from = !expanded && fb > this.cols - 2 ? Math.max(0, fa - Math.min(24, Math.floor(this.cols / 4))) : 0;
    renderText(txt, line, hit.highlights, from);
    if (line.str.length === 0) txt.append(h('span', { class: 'note', text: '(empty line)' }));
    if (hit.truncated) txt.append(h('span', { class: 'note', text: ` … cut at 64 KiB of ${fmtInt(hit.length)} bytes` }));
    if (hit.binary) txt.append(h('span', { class: 'note', text: ' (binary file: grep prints "binary file matches" instead)' }));
    const sel = n === this.sel;
    return h('div', {
      class: `hit${sel ? ' is-selected' : ''}${expanded ? ' is-expanded can-expand' : ''}${from ? ' can-expand' : ''}`,
      role: 'option', id: `hit-${n}`, 'aria-selected': String(sel),
      'aria-posinset': n + 1, 'aria-setsize': (this.total || this.histHits) + this.liveCount,
      dataset: { n, file: hit.file_id, line: hit.line },
    },
    this.byTime ? null : h('span', { class: 'ln', 'aria-hidden': 'true', text: String(hit.line) }),
    h('span', { class: 'time', 'aria-hidden': 'true', title: hit.time || '' },
      t ? [h('span', { class: 'date', text: `${t.date} ` }), t.clock] : null),
    this.byTime ? h('span', { class: 'src', 'aria-hidden': 'true', title: `${hit.path}:${hit.line}` },
      h('span', { class: 'f', text: splitPath(hit.path)[1] }), h('span', { class: 'l', text: `:${hit.line}` })) : null,
    txt,
    h('button', {
      type: 'button', class: 'expand', tabIndex: -1, 'aria-hidden': 'true',
      'aria-label': expanded ? 'Collapse line' : 'Show whole line',
      'aria-expanded': String(expanded), title: expanded ? 'Collapse' : 'Show whole line',
    }));
  }

  // renderLive is the separator between the search's rows and the live
  // ones: what became of the search above, and since when Live adds.
  renderLive() {
    const above = this.failed ? 'Could not load more results'
      : !this.done ? (this.loading ? 'Loading more results…' : 'More results load here as you scroll')
        : this.histHits ? 'End of search results' : 'No matches in the index yet';
    // In the index's zone, as every other time on the page (the
    // browser's only when no time has told it).
    const off = this.cb.zoneOffset?.();
    const since = off == null ? this.live.since.toLocaleTimeString('en-GB', { hour12: false })
      : fmtClock(this.live.since.getTime(), off);
    // Hidden from the listbox (only options belong there): Live's status
    // line says the same.
    return h('div', { class: 'live-sep', 'aria-hidden': 'true' },
      h('span', { class: 'above', text: above }),
      h('span', { class: 'live-tag' }, h('span', { class: 'live-dot', 'aria-hidden': 'true' }), 'Live'),
      h('span', { class: 'since', text: `new matches from ${since}` }));
  }

  // markOverflow shows the expander on rows whose text does not fit
  // (measured in one batch of reads, then one batch of writes).
  markOverflow(rows) {
    const over = rows.map((r) => {
      const t = r.querySelector('.txt');
      return t && t.scrollWidth > t.clientWidth + 1;
    });
    rows.forEach((r, i) => { if (over[i]) r.classList.add('can-expand'); });
  }

  clicked(ev) {
    const row = ev.target.closest('.hit');
    if (!row) return;
    const n = Number(row.dataset.n);
    if (ev.target.closest('.expand')) {
      ev.stopPropagation();
      this.toggleExpanded(n);
      return;
    }
    // Let the user select text in a row without opening it.
    const s = window.getSelection();
    if (s && !s.isCollapsed && row.contains(s.anchorNode)) return;
    this.select(n, { scroll: false });
    this.cb.onOpen?.(this.hits[n], { focus: true });
  }

  toggleExpanded(n) {
    const hit = this.hits[n];
    hit.expanded = !hit.expanded;
    this.vlist.rerender(hit.item);
  }

  // --- selection (j/k) ---

  select(n, { scroll = true } = {}) {
    if (!this.hits.length) return;
    n = Math.max(0, Math.min(this.hits.length - 1, n));
    const old = this.sel;
    this.sel = n;
    for (const k of [old, n]) {
      if (k < 0) continue;
      const el = this.vlist.rowEl(this.hits[k].item);
      if (el) {
        el.classList.toggle('is-selected', k === n);
        el.setAttribute('aria-selected', String(k === n));
      }
    }
    if (scroll) {
      const item = this.hits[n].item;
      // Show the file header too when the hit is the first of its file.
      const head = this.items[item - 1]?.kind === 'file' ? item - 1 : item;
      this.vlist.scrollToRange(head, item);
    }
    this.els.scroller.setAttribute('aria-activedescendant', `hit-${n}`);
    if (n < this.histHits && n >= this.histHits - 20) this.loadMore();
  }

  move(delta) {
    if (!this.hits.length) return null;
    this.select(this.sel < 0 ? 0 : this.sel + delta);
    return this.hits[this.sel];
  }

  selected() { return this.sel >= 0 ? this.hits[this.sel] : null; }

  // --- summary, footer, empty states ---

  renderChrome() {
    const { summary: shown, footer, empty, scroller } = this.els;
    document.body.classList.toggle('searching', this.loading);
    // Built aside and put in place only when it changed: the summary is a
    // live region, and Live renders on every batch (a screen reader read
    // the same summary out again each time).
    const summary = document.createElement('div');
    const p = this.params;
    if (this.state === 'loading' && !this.hits.length) {
      summary.append(h('span', { class: 'spinner', 'aria-hidden': 'true' }), this.busy || 'Searching…');
    } else if (this.state === 'done') {
      const count = h('span', { class: 'count' });
      if (!this.totalExact) count.append('at least ');
      count.append(h('strong', { text: fmtInt(this.total) }), this.total === 1 ? ' match' : ' matches');
      summary.append(count);
      if (!this.totalExact) {
        const all = h('button', { type: 'button', class: 'link count-all', title: 'Count every match (reads every candidate line)' }, 'count all');
        all.addEventListener('click', () => this.countAll());
        summary.append(' ', all);
      }
      summary.append(
        h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }),
        h('span', { class: 'took', text: fmtMs(this.took) }),
      );
      if (this.histHits < this.total) {
        summary.append(h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }),
          h('span', { class: 'loaded', text: `${fmtInt(this.histHits)} loaded` }));
      }
      if (this.warnings.length) {
        summary.append(h('span', { class: 'warn', title: this.warnings.join('\n'),
          text: `⚠ ${this.warnings.length} warning${this.warnings.length > 1 ? 's' : ''}` }));
      }
      if (this.total > 0) {
        const raw = h('a', { class: 'raw-link', href: api.rawSearchURL(p), target: '_blank', rel: 'noopener',
          title: 'Every matching line as plain text (like grep)' }, 'Raw ↗');
        raw.addEventListener('click', (ev) => api.openText(ev, api.rawSearchURL(p), 'matches.txt', (err) => this.cb.onError?.(err)));
        summary.append(raw);
      }
    }
    if (this.busy && this.hits.length) summary.append(h('span', { class: 'warn', text: this.busy }));
    const same = summary.childNodes.length === shown.childNodes.length
      && [...summary.childNodes].every((n, i) => n.isEqualNode(shown.childNodes[i]));
    if (!same) shown.replaceChildren(...summary.childNodes);
    shown.classList.toggle('is-empty', shown.childNodes.length === 0);

    clear(footer);
    if (this.live) {
      // The separator row tells how the search ended; Live's state is in
      // the bar above the list.
      if (this.vlist.count > this.histItems) this.vlist.rerender(this.histItems);
    } else if (this.hits.length) {
      if (this.loading) footer.append(h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Loading more…');
      else if (this.failed) {
        const retry = h('button', { type: 'button', class: 'link retry' }, 'try again');
        retry.addEventListener('click', () => { this.failed = null; this.page(NEXT_PAGE); });
        footer.append(`Could not load more: ${this.failed.message || 'request failed'} · `, retry);
      } else if (!this.done) footer.append('Scroll for more');
      else footer.append(`End of results · ${fmtInt(this.hits.length)} ${this.hits.length === 1 ? 'match' : 'matches'}`);
    }

    // Empty states replace the list.
    const showList = this.hits.length > 0 || (!!this.live && this.state !== 'error');
    scroller.hidden = !showList;
    for (const el of empty.children) el.hidden = true;
    empty.hidden = showList;
    if (!showList) {
      const which = this.state === 'idle' ? 'welcome'
        : this.state === 'loading' ? 'loading'
          : this.state === 'done' ? 'nomatch' : 'failed';
      const panel = empty.querySelector(`[data-empty="${which}"]`);
      if (panel) {
        panel.hidden = false;
        const q = panel.querySelector('.q');
        if (q && p) q.textContent = p.q;
      }
    }
  }
}
