// File viewer: a window of a file's lines around one line, read through
// /api/files/{id}/content?line=N&before=B&after=A (the offset index, so it
// is as fast at line 9,000,000 as at line 1). Scrolling near either end
// loads the next chunk; at most MAX_LINES stay in the DOM (the far end is
// dropped and re-fetched if the user scrolls back), so a long session
// cannot grow the page without bound. Lines that are hits of the current
// search carry their highlights; the opened line is marked.

import { h, clear, fmtInt, splitPath } from './dom.js';
import * as api from './api.js';
import { lineOf, render as renderText, byteLength } from './text.js';

const AROUND = 100; // lines before and after the opened one
const CHUNK = 200; // lines per load when scrolling
const MAX_LINES = 3000;
const NEAR_PX = 600; // load when an edge is this close to the viewport

export class Viewer {
  // cb: {onClose(), onAnchor(line), matches(fileId) -> Map(line -> hit),
  // permalink(fileId, line) -> URL string}
  constructor(root, cb) {
    this.root = root;
    this.cb = cb;
    this.body = root.querySelector('.viewer-body');
    this.linesEl = root.querySelector('.vlines');
    this.topEdge = root.querySelector('.edge.top');
    this.bottomEdge = root.querySelector('.edge.bottom');
    this.pathEl = root.querySelector('.viewer-path');
    this.metaEl = root.querySelector('.viewer-meta');
    this.rawEl = root.querySelector('[data-act="raw"]');
    this.wrapBtn = root.querySelector('[data-act="wrap"]');
    this.gen = 0;
    this.fileId = null;
    this.lines = [];
    root.addEventListener('click', (ev) => this.clicked(ev));
    let wrap = true;
    try { wrap = localStorage.getItem('logdex.wrap') !== 'off'; } catch { /* no storage */ }
    this.setWrap(wrap);
    const io = new IntersectionObserver((entries) => {
      for (const e of entries) {
        if (!e.isIntersecting) continue;
        if (e.target === this.topEdge) this.loadBefore(); else this.loadAfter();
      }
    }, { root: this.body, rootMargin: `${NEAR_PX}px 0px` });
    io.observe(this.topEdge);
    io.observe(this.bottomEdge);
    // The observer fires only when an edge comes into reach between two
    // drawn frames: an edge whose load failed, still in reach, is retried
    // when the user scrolls again, and a jump to the top before the first
    // frame with lines was drawn (Home at once) finds the top edge where
    // the frame before the lines came had it, in reach: no change, so no
    // load, and no way to scroll further up. Every scroll looks.
    this.body.addEventListener('scroll', () => this.checkEdges(), { passive: true });
  }

  get isOpen() { return !this.root.hidden; }

  // open shows fileId at line (fetching unless that line is loaded).
  async open({ fileId, line, path, focus = false }) {
    line = Math.max(1, line | 0);
    this.root.hidden = false;
    document.body.classList.add('viewer-open');
    if (fileId === this.fileId && this.lines.length && line >= this.first && line <= this.last) {
      this.setTarget(line);
      this.scrollToLine(line);
      if (focus) this.body.focus({ preventScroll: true });
      return;
    }
    const gen = ++this.gen;
    this.abort?.abort();
    this.abort = new AbortController();
    Object.assign(this, {
      fileId, target: line, path: path || '', lines: [], first: 0, last: 0, total: null,
      atEnd: false, loadingTop: false, loadingBottom: false, matchMap: this.cb.matches(fileId),
    });
    clear(this.linesEl);
    this.renderHead();
    this.setEdge(this.topEdge, 'loading');
    this.setEdge(this.bottomEdge, '');
    this.rawEl.href = api.rawFileURL(fileId);
    if (focus) this.body.focus({ preventScroll: true });
    let r;
    try {
      r = await api.fileLines(fileId, line, AROUND, AROUND, { signal: this.abort.signal });
      if (!r.lines.length && r.total_lines && line > r.total_lines) {
        r = await api.fileLines(fileId, r.total_lines, 2 * AROUND, 0, { signal: this.abort.signal });
      }
    } catch (err) {
      if (err.name === 'AbortError' || gen !== this.gen) return;
      this.setEdge(this.topEdge, 'error', err.message);
      return;
    }
    if (gen !== this.gen) return;
    this.path = r.path;
    this.total = r.total_lines ?? null;
    this.lines = r.lines;
    this.first = r.first || 0;
    this.last = r.last || 0;
    this.atEnd = !r.lines.length || (this.total !== null && this.last >= this.total);
    this.renderHead();
    this.linesEl.append(...r.lines.map((l) => this.lineEl(l)));
    this.setGutter();
    this.updateEdges();
    this.scrollToLine(line);
    this.checkEdges();
  }

  close() {
    if (!this.isOpen) return;
    this.gen++;
    this.abort?.abort();
    this.root.hidden = true;
    this.fileId = null;
    this.lines = [];
    clear(this.linesEl);
    document.body.classList.remove('viewer-open');
  }

  // refreshMatches re-renders after more search hits arrived.
  refreshMatches() {
    if (!this.isOpen || this.fileId === null) return;
    const m = this.cb.matches(this.fileId);
    if (m === this.matchMap && m === null) return;
    this.matchMap = m;
    for (const el of this.linesEl.children) {
      const n = Number(el.dataset.line);
      const l = this.lines[n - this.first];
      if (l && Boolean(m?.get(n)) !== el.classList.contains('is-match')) el.replaceWith(this.lineEl(l));
    }
  }

  renderHead() {
    const [dir, base] = splitPath(this.path || '');
    clear(this.pathEl).append(h('span', { class: 'dir', text: dir }), h('span', { class: 'base', text: base || 'Loading…' }));
    this.pathEl.title = this.path;
    // A link to a line the file no longer has (truncated, rotated) shows
    // the file's end, and says so.
    const past = this.total !== null && this.target > this.total;
    clear(this.metaEl).append(past ? `Line ${fmtInt(this.target)} is past the end: ${fmtInt(this.total)} lines`
      : `Line ${fmtInt(this.target)}${this.total !== null ? ` of ${fmtInt(this.total)}` : ''}`);
    if (this.lines.length) {
      this.metaEl.append(h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }),
        `showing ${fmtInt(this.first)}–${fmtInt(this.last)}`);
    }
  }

  lineEl(l) {
    const m = this.matchMap?.get(l.line);
    const t = l.line === this.target;
    const txt = h('span', { class: 'txt' });
    renderText(txt, lineOf(l), m ? m.highlights : null);
    if (l.truncated) txt.append(h('span', { class: 'note', text: ' … cut at 64 KiB' }));
    return h('div', { class: `vline${t ? ' is-target' : ''}${m ? ' is-match' : ''}`, dataset: { line: l.line } },
      h('a', { class: 'ln', href: this.cb.permalink(this.fileId, l.line), 'aria-label': `Line ${l.line}`, text: String(l.line) }),
      txt);
  }

  setGutter() {
    const digits = String(this.last || this.target).length;
    this.linesEl.style.setProperty('--gutter', `${Math.max(3, digits) + 1}ch`);
  }

  setTarget(line) {
    this.linesEl.querySelector('.vline.is-target')?.classList.remove('is-target');
    this.target = line;
    this.linesEl.querySelector(`.vline[data-line="${line}"]`)?.classList.add('is-target');
    this.renderHead();
  }

  scrollToLine(line) {
    const el = this.linesEl.querySelector(`.vline[data-line="${line}"]`);
    if (!el) return;
    const b = this.body;
    b.scrollTop = Math.max(0, el.offsetTop - b.clientHeight / 3);
  }

  setEdge(el, state, msg) {
    el.dataset.state = state;
    const text = { loading: 'Loading…', start: 'Start of file', end: 'End of file', error: msg || 'Failed to load', more: '' }[state] || '';
    clear(el);
    if (state === 'loading') el.append(h('span', { class: 'spinner', 'aria-hidden': 'true' }));
    if (text) el.append(text);
    if (state === 'error') el.append(h('button', { class: 'btn small edge-retry', type: 'button', 'data-act': 'retry', text: 'Retry' }));
  }

  updateEdges() {
    if (!this.loadingTop) this.setEdge(this.topEdge, this.first <= 1 ? 'start' : 'more');
    if (!this.loadingBottom) this.setEdge(this.bottomEdge, this.atEnd ? 'end' : 'more');
  }

  // checkEdges loads more when an edge is still near the viewport after a
  // load (the observer only fires on changes).
  checkEdges() {
    const b = this.body, top = b.scrollTop, bottom = top + b.clientHeight;
    if (this.topEdge.offsetTop + this.topEdge.offsetHeight > top - NEAR_PX) this.loadBefore();
    if (this.bottomEdge.offsetTop < bottom + NEAR_PX) this.loadAfter();
  }

  async loadBefore() {
    if (this.loadingTop || !this.lines.length || this.first <= 1) return;
    const gen = this.gen, from = this.first - 1;
    this.loadingTop = true;
    this.setEdge(this.topEdge, 'loading');
    try {
      const r = await api.fileLines(this.fileId, from, Math.min(CHUNK - 1, from - 1), 0, { signal: this.abort.signal });
      if (gen !== this.gen) return;
      const lines = r.lines.filter((l) => l.line < this.first);
      if (lines.length) {
        const b = this.body, prevH = b.scrollHeight, prevTop = b.scrollTop;
        this.linesEl.prepend(...lines.map((l) => this.lineEl(l)));
        b.scrollTop = prevTop + (b.scrollHeight - prevH);
        this.lines = lines.concat(this.lines);
        this.first = lines[0].line;
        this.trim('bottom');
      } else {
        this.first = 1;
      }
    } catch (err) {
      if (err.name === 'AbortError' || gen !== this.gen) return;
      this.loadingTop = false;
      this.setEdge(this.topEdge, 'error', err.message);
      return;
    }
    this.loadingTop = false;
    this.renderHead();
    this.updateEdges();
    requestAnimationFrame(() => { if (gen === this.gen) this.checkEdges(); });
  }

  async loadAfter() {
    if (this.loadingBottom || !this.lines.length || this.atEnd) return;
    const gen = this.gen;
    this.loadingBottom = true;
    this.setEdge(this.bottomEdge, 'loading');
    try {
      const r = await api.fileLines(this.fileId, this.last + 1, 0, CHUNK - 1, { signal: this.abort.signal });
      if (gen !== this.gen) return;
      const lines = r.lines.filter((l) => l.line > this.last);
      if (r.total_lines !== undefined) this.total = r.total_lines;
      if (lines.length) {
        this.linesEl.append(...lines.map((l) => this.lineEl(l)));
        this.lines = this.lines.concat(lines);
        this.last = lines[lines.length - 1].line;
        this.setGutter();
        this.trim('top');
      }
      this.atEnd = !lines.length || (this.total !== null && this.last >= this.total);
    } catch (err) {
      if (err.name === 'AbortError' || gen !== this.gen) return;
      this.loadingBottom = false;
      this.setEdge(this.bottomEdge, 'error', err.message);
      return;
    }
    this.loadingBottom = false;
    this.renderHead();
    this.updateEdges();
    requestAnimationFrame(() => { if (gen === this.gen) this.checkEdges(); });
  }

  // trim drops lines from one end once more than MAX_LINES are loaded.
  trim(end) {
    const extra = this.lines.length - MAX_LINES;
    if (extra <= 0) return;
    const els = this.linesEl.children;
    if (end === 'bottom') {
      for (let i = 0; i < extra; i++) this.linesEl.lastElementChild.remove();
      this.lines.length = MAX_LINES;
      this.last = this.lines[this.lines.length - 1].line;
      this.atEnd = false;
    } else {
      const shift = els[extra].offsetTop - els[0].offsetTop;
      for (let i = 0; i < extra; i++) this.linesEl.firstElementChild.remove();
      this.body.scrollTop -= shift;
      this.lines = this.lines.slice(extra);
      this.first = this.lines[0].line;
    }
  }

  setWrap(on) {
    this.body.classList.toggle('nowrap', !on);
    this.wrapBtn.setAttribute('aria-pressed', String(on));
    try { localStorage.setItem('logdex.wrap', on ? 'on' : 'off'); } catch { /* no storage */ }
  }

  clicked(ev) {
    const ln = ev.target.closest('a.ln');
    if (ln && !ev.ctrlKey && !ev.metaKey && !ev.shiftKey && ev.button === 0) {
      // Re-anchor the permalink on this line instead of navigating.
      ev.preventDefault();
      const line = Number(ln.closest('.vline').dataset.line);
      this.setTarget(line);
      this.cb.onAnchor(line);
      return;
    }
    const act = ev.target.closest('[data-act]')?.dataset.act;
    if (act === 'close') this.cb.onClose();
    else if (act === 'retry') {
      if (this.lines.length) this.checkEdges();
      else this.open({ fileId: this.fileId, line: this.target, path: this.path }); // the first load failed
    }
    else if (act === 'wrap') this.setWrap(this.body.classList.contains('nowrap'));
    else if (act === 'copy') this.copyLink(ev.target.closest('button'));
    else if (act === 'download') this.download(ev.target.closest('button'));
    else if (act === 'raw') {
      const [, base] = splitPath(this.path || '');
      api.openText(ev, api.rawFileURL(this.fileId), base || 'file.txt', (err) => flash(ev.target.closest('a'), err.message || 'Failed'));
    }
  }

  async copyLink(btn) {
    const link = new URL(this.cb.permalink(this.fileId, this.target), location.origin).href;
    let ok = false;
    try { await navigator.clipboard.writeText(link); ok = true; } catch { /* not allowed */ }
    flash(btn, ok ? 'Copied' : 'Copy failed');
  }

  // download saves exactly the loaded lines, fetched as one byte Range.
  async download(btn) {
    if (!this.lines.length) return;
    const a = this.lines[0], z = this.lines[this.lines.length - 1];
    // Through z's '\n' (the whole of a line cut for display, not the rest
    // of the file).
    const end = z.offset + (z.truncated ? z.length : byteLength(z));
    try {
      const blob = await api.fileRange(this.fileId, a.offset, end);
      const [, base] = splitPath(this.path);
      const link = h('a', { href: URL.createObjectURL(blob), download: `${base}.${a.line}-${z.line}.txt` });
      link.click();
      setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
      flash(btn, 'Downloaded');
    } catch (err) {
      flash(btn, err.message || 'Download failed');
    }
  }
}

// flash shows a short confirmation in a button, then restores it.
function flash(btn, text) {
  if (!btn) return;
  if (!btn.dataset.label) btn.dataset.label = btn.textContent;
  btn.textContent = text;
  clearTimeout(btn.flashTimer);
  btn.flashTimer = setTimeout(() => { btn.textContent = btn.dataset.label; }, 1500);
}
