// Search results: paging through /api/search with cursors, the hit model,
// selection, and rendering through the virtual list.
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
import { hitTime } from './time.js';

const FIRST_PAGE = 100;
const NEXT_PAGE = 500;
const PREFETCH_ROWS = 120; // fetch the next page when this close to the end
const ROW_H = 24; // must match .hit's height in style.css
const HEAD_H = 34; // must match .file-head's height

export class Results {
  // els: {scroller, footer, summary, empty}; cb: {onOpen(hit), onError(err),
  // onPage()}
  constructor(els, cb) {
    this.els = els;
    this.cb = cb;
    this.gen = 0;
    this.charW = 0;
    this.cols = 80;
    this.vlist = new VirtualList(els.scroller, {
      estimate: (i) => (this.items[i].kind === 'file' ? HEAD_H : ROW_H),
      render: (i) => this.renderItem(i),
      onRendered: (rows) => this.markOverflow(rows),
      onRange: (first, last) => this.onRange(last),
    });
    this.clearModel();
    els.scroller.addEventListener('click', (ev) => this.clicked(ev));
    new ResizeObserver(() => this.measureCols()).observe(els.scroller);
    this.state = 'idle';
    this.renderChrome();
  }

  clearModel() {
    this.params = null;
    this.items = []; // {kind:'file', path} | {kind:'hit', n}
    this.hits = []; // API hit objects, each with .item (its row)
    this.byFile = new Map(); // file_id -> Map(line -> hit)
    this.expanded = new Set();
    this.total = 0;
    this.took = 0;
    this.warnings = [];
    this.cursor = null;
    this.done = true;
    this.loading = false;
    this.busy = '';
    this.sel = -1;
    this.lastFile = null;
    this.timed = false; // some hit has a time: rows get a time column
    this.els.scroller.classList.remove('timed');
  }

  // start runs a new search (params: {q, mode, case, from, to, untimed,
  // order}); resolves when the first page is in.
  start(params) {
    this.abort?.abort();
    this.abort = new AbortController();
    this.gen++;
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
    return this.page(FIRST_PAGE);
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

  loadMore() {
    if (this.loading || this.done || !this.params) return;
    this.page(NEXT_PAGE);
  }

  async page(limit) {
    const gen = this.gen, first = this.hits.length === 0;
    this.loading = true;
    this.renderChrome();
    let attempt = 0;
    for (;;) {
      try {
        const r = await api.search(this.params, { cursor: this.cursor, limit, signal: this.abort.signal });
        if (gen !== this.gen) return;
        if (first) {
          this.total = r.total;
          this.took = r.took_ms;
          this.warnings = r.warnings || [];
        }
        this.append(r.hits);
        this.cursor = r.next_cursor;
        this.done = !r.next_cursor;
        this.state = 'done';
        this.busy = '';
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
        if (first) this.state = 'error';
        this.done = true;
        this.cb.onError?.(err);
        break;
      }
    }
    this.loading = false;
    this.renderChrome();
    this.cb.onPage?.();
  }

  append(hits) {
    for (const hit of hits) {
      if (!this.byTime && hit.file_id !== this.lastFile) {
        this.items.push({ kind: 'file', path: hit.path, fileId: hit.file_id });
        this.lastFile = hit.file_id;
      }
      const n = this.hits.length;
      hit.item = this.items.length;
      this.items.push({ kind: 'hit', n });
      this.hits.push(hit);
      let m = this.byFile.get(hit.file_id);
      if (!m) this.byFile.set(hit.file_id, (m = new Map()));
      m.set(hit.line, hit);
      if (hit.time && !this.timed) {
        this.timed = true;
        this.els.scroller.classList.add('timed');
        this.measureCols();
      }
    }
    this.vlist.setCount(this.items.length);
  }

  onRange(last) {
    if (last >= 0 && last >= this.items.length - PREFETCH_ROWS) this.loadMore();
  }

  hitsIn(fileId) { return this.byFile.get(fileId) || null; }

  find(fileId, line) {
    const hit = this.byFile.get(fileId)?.get(line);
    return hit ? this.hits.indexOf(hit) : -1;
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
    if (it.kind === 'file') {
      const [dir, base] = splitPath(it.path);
      return h('div', { class: 'file-head', 'aria-hidden': 'true', title: it.path },
        h('span', { class: 'file-icon' }),
        h('span', { class: 'dir', text: dir }),
        h('span', { class: 'base', text: base }));
    }
    const n = it.n, hit = this.hits[n];
    const line = hit.view || (hit.view = lineOf(hit));
    const expanded = this.expanded.has(n);
    const t = hitTime(hit.time);
    const txt = h('span', { class: 'txt' }, h('span', { class: 'sr-only', text: `${hit.path} line ${hit.line}${t ? `, ${t.date} ${t.clock}` : ''}: ` }));
    // Keep the first match in sight in a one-line row: start a little
    // before it when it lies past most of the visible width.
    const [fa, fb] = firstMatch(line, hit.highlights);
    const from = !expanded && fb > this.cols - 2 ? Math.max(0, fa - Math.min(24, Math.floor(this.cols / 4))) : 0;
    renderText(txt, line, hit.highlights, from);
    if (line.str.length === 0) txt.append(h('span', { class: 'note', text: '(empty line)' }));
    if (hit.truncated) txt.append(h('span', { class: 'note', text: ` … cut at 64 KiB of ${fmtInt(hit.length)} bytes` }));
    const sel = n === this.sel;
    return h('div', {
      class: `hit${sel ? ' is-selected' : ''}${expanded ? ' is-expanded can-expand' : ''}${from ? ' can-expand' : ''}`,
      role: 'option', id: `hit-${n}`, 'aria-selected': String(sel),
      'aria-posinset': n + 1, 'aria-setsize': this.total || this.hits.length,
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
    if (this.expanded.has(n)) this.expanded.delete(n); else this.expanded.add(n);
    this.vlist.rerender(this.hits[n].item);
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
    if (n >= this.hits.length - 20) this.loadMore();
  }

  move(delta) {
    if (!this.hits.length) return null;
    this.select(this.sel < 0 ? 0 : this.sel + delta);
    return this.hits[this.sel];
  }

  selected() { return this.sel >= 0 ? this.hits[this.sel] : null; }

  // --- summary, footer, empty states ---

  renderChrome() {
    const { summary, footer, empty, scroller } = this.els;
    document.body.classList.toggle('searching', this.loading);
    clear(summary);
    const p = this.params;
    if (this.state === 'loading' && !this.hits.length) {
      summary.append(h('span', { class: 'spinner', 'aria-hidden': 'true' }), this.busy || 'Searching…');
    } else if (this.state === 'done') {
      summary.append(
        h('span', { class: 'count' }, h('strong', { text: fmtInt(this.total) }), this.total === 1 ? ' match' : ' matches'),
        h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }),
        h('span', { class: 'took', text: fmtMs(this.took) }),
      );
      if (this.hits.length < this.total) {
        summary.append(h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }),
          h('span', { class: 'loaded', text: `${fmtInt(this.hits.length)} loaded` }));
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
    summary.classList.toggle('is-empty', summary.childNodes.length === 0);

    clear(footer);
    if (this.hits.length) {
      if (this.loading) footer.append(h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Loading more…');
      else if (!this.done) footer.append('Scroll for more');
      else footer.append(`End of results · ${fmtInt(this.hits.length)} ${this.hits.length === 1 ? 'match' : 'matches'}`);
    }

    // Empty states replace the list.
    const showList = this.hits.length > 0;
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
