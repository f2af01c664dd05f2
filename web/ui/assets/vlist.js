// A virtualized list: only the rows in and around the viewport exist in
// the DOM, so a result list with 10,000+ hits scrolls and selects as fast
// as one with 100 (the browser test measures it). Rows are absolutely
// positioned inside a spacer as tall as the whole list. Heights start from
// an estimate (CSS fixes the height of collapsed rows, so it is exact);
// a ResizeObserver measures rows that differ (an expanded long line) and
// the offsets below them follow.

import { h } from './dom.js';

export class VirtualList {
  // scroller: the overflow:auto element; opts.render(i) builds row i;
  // opts.estimate(i) its height; opts.onRange(first, last) gets the
  // visible range after each update; opts.onRendered(rows) gets the rows
  // just added (to measure them in one batch).
  constructor(scroller, opts) {
    this.scroller = scroller;
    this.opts = { overscan: 480, ...opts };
    this.inner = h('div', { class: 'vlist' });
    scroller.prepend(this.inner);
    this.count = 0;
    this.heights = new Float64Array(256);
    this.offsets = new Float64Array(257);
    this.valid = 0; // offsets[0..valid] are up to date
    this.rows = new Map(); // index -> element
    this.raf = 0;
    this.ro = new ResizeObserver((entries) => this.resized(entries));
    scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
    new ResizeObserver(() => this.schedule()).observe(scroller);
  }

  // setCount grows (or resets) the list; new rows get estimated heights.
  setCount(n) {
    if (n < this.count) { this.reset(); }
    this.grow(n);
    for (let i = this.count; i < n; i++) this.heights[i] = this.opts.estimate(i);
    this.valid = Math.min(this.valid, this.count);
    this.count = n;
    this.schedule();
  }

  // splice replaces rows at..at+del-1 by add new rows (the caller has
  // changed its model already; the new rows get estimated heights and the
  // rows after them keep their measured ones). Rows on screen from `at` on
  // are rebuilt, since their indexes moved. When the change lies above the
  // first row on screen (rows removed before it, or rows inserted before
  // it, not at it), the scroll position moves with it, so that what is on
  // screen stays still; rows inserted at the first row on screen show.
  splice(at, del, add) {
    if (del === 0 && add === 0) return;
    this.layout();
    const n = this.count - del + add;
    this.grow(n);
    const base = this.inner.offsetTop;
    const first = this.count ? this.indexAt(Math.max(0, this.scroller.scrollTop - base)) : 0;
    const above = del ? at + del <= first : at < first;
    const removed = this.offsets[Math.min(at + del, this.count)] - this.offsets[at];
    this.heights.copyWithin(at + add, at + del, this.count);
    let added = 0;
    for (let i = at; i < at + add; i++) added += (this.heights[i] = this.opts.estimate(i));
    for (const [i, el] of this.rows) {
      if (i < at) continue;
      this.ro.unobserve(el);
      el.remove();
      this.rows.delete(i);
    }
    this.count = n;
    this.valid = Math.min(this.valid, at);
    const total = this.layout();
    this.inner.style.height = `${total}px`;
    if (above && added !== removed) this.scroller.scrollTop += added - removed;
    this.update();
  }

  grow(n) {
    if (n + 1 <= this.offsets.length) return;
    let cap = this.offsets.length;
    while (cap < n + 1) cap *= 2;
    const hs = new Float64Array(cap); hs.set(this.heights); this.heights = hs;
    const os = new Float64Array(cap + 1); os.set(this.offsets); this.offsets = os;
  }

  // atEnd tells whether the list is scrolled to its bottom (within a few
  // pixels).
  atEnd() {
    const sc = this.scroller;
    return sc.scrollTop + sc.clientHeight >= sc.scrollHeight - 4;
  }

  reset() {
    for (const el of this.rows.values()) this.ro.unobserve(el);
    this.rows.clear();
    this.inner.replaceChildren();
    this.count = 0;
    this.valid = 0;
    this.inner.style.height = '0px';
    this.scroller.scrollTop = 0;
  }

  // rerender rebuilds the rows on screen (after a width change, or when a
  // row's content changes).
  rerender(i) {
    const drop = i === undefined ? [...this.rows.keys()] : [i];
    for (const k of drop) {
      const el = this.rows.get(k);
      if (!el) continue;
      this.ro.unobserve(el);
      el.remove();
      this.rows.delete(k);
    }
    this.update();
  }

  rowEl(i) { return this.rows.get(i) || null; }

  layout() {
    const { offsets, heights } = this;
    for (let i = this.valid; i < this.count; i++) offsets[i + 1] = offsets[i] + heights[i];
    this.valid = this.count;
    return offsets[this.count];
  }

  // indexAt returns the row at y (px from the list's top).
  indexAt(y) {
    let lo = 0, hi = this.count - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.offsets[mid] <= y) lo = mid; else hi = mid - 1;
    }
    return Math.max(0, lo);
  }

  schedule() {
    if (!this.raf) this.raf = requestAnimationFrame(() => this.update());
  }

  update() {
    if (this.raf) { cancelAnimationFrame(this.raf); this.raf = 0; }
    const total = this.layout();
    this.inner.style.height = `${total}px`;
    if (this.count === 0) { this.opts.onRange?.(-1, -1); return; }
    const base = this.inner.offsetTop;
    const top = this.scroller.scrollTop - base, vh = this.scroller.clientHeight;
    const ov = this.opts.overscan;
    const first = this.indexAt(Math.max(0, top - ov));
    const last = this.indexAt(top + vh + ov);
    let changed = false;
    for (const [i, el] of this.rows) {
      if (i < first || i > last) {
        this.ro.unobserve(el);
        el.remove();
        this.rows.delete(i);
      }
    }
    // Insert new rows next to their neighbours, so that DOM order is list
    // order (screen readers, tab order) and rows already on screen are
    // not touched (scrolling a little re-lays out only the rows that
    // come into view).
    const added = [];
    let prev = null;
    for (let i = first; i <= last; i++) {
      let el = this.rows.get(i);
      if (!el) {
        el = this.opts.render(i);
        el.vIndex = i;
        this.rows.set(i, el);
        if (prev) prev.after(el); else this.inner.prepend(el);
        added.push(el);
        changed = true;
      }
      const y = this.offsets[i];
      if (el.vY !== y) { el.style.transform = `translateY(${y}px)`; el.vY = y; }
      prev = el;
    }
    if (changed) {
      for (const el of added) this.ro.observe(el);
      this.opts.onRendered?.(added);
    }
    this.opts.onRange?.(this.indexAt(Math.max(0, top)), this.indexAt(top + vh));
  }

  resized(entries) {
    let moved = 0, dirty = false;
    for (const e of entries) {
      const el = e.target, i = el.vIndex;
      if (this.rows.get(i) !== el) continue;
      const hgt = e.borderBoxSize?.[0]?.blockSize ?? el.offsetHeight;
      const d = hgt - this.heights[i];
      if (Math.abs(d) < 0.5) continue;
      this.heights[i] = hgt;
      this.valid = Math.min(this.valid, i);
      dirty = true;
      // A row above the viewport changed: keep what is on screen still.
      if (this.offsets[i] + this.heights[i] - d < this.scroller.scrollTop - this.inner.offsetTop) moved += d;
    }
    if (!dirty) return;
    if (moved) this.scroller.scrollTop += moved;
    this.update();
  }

  // scrollToRange scrolls the least needed to show rows a..b (a wins if
  // they do not fit), then renders at once so that row elements exist.
  scrollToRange(a, b = a, pad = 8) {
    if (a < 0 || a >= this.count) return;
    this.layout();
    const base = this.inner.offsetTop;
    const top = base + this.offsets[a];
    const bottom = base + this.offsets[Math.min(b, this.count - 1) + 1];
    const st = this.scroller.scrollTop, vh = this.scroller.clientHeight;
    if (top < st + pad) this.scroller.scrollTop = Math.max(0, top - pad);
    else if (bottom > st + vh - pad) this.scroller.scrollTop = Math.min(top - pad, bottom - vh + pad);
    this.update();
  }

  // scrollToStart scrolls row i to the top of the viewport (as far as the
  // list goes).
  scrollToStart(i) {
    if (i < 0 || i >= this.count) return;
    this.layout();
    this.scroller.scrollTop = this.inner.offsetTop + this.offsets[i];
    this.update();
  }

  // center scrolls row i to the middle of the viewport.
  center(i) {
    if (i < 0 || i >= this.count) return;
    this.layout();
    const base = this.inner.offsetTop;
    this.scroller.scrollTop = Math.max(0, base + this.offsets[i] - this.scroller.clientHeight / 2 + this.heights[i] / 2);
    this.update();
  }
}
