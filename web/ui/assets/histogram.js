// The histogram above the results: how many lines of the current search
// fall in each time bucket (/api/histogram: exact counts, round bucket
// widths), drawn as plain DOM bars. Hovering a bar shows its span and
// count; dragging across bars, clicking one, or picking them with the
// arrow keys and Enter on the focused chart narrows the range to them (the
// app then re-runs the search and this histogram for that range).

import { h, clear, fmtInt } from './dom.js';
import * as api from './api.js';
import { parseTime, absTime, fmtRFC3339, fmtSpan, fmtStep, ticks } from './time.js';

const BAR_PX = 10; // the narrowest a bar (with its gap) may get
const MAX_BUCKETS = 120;
const DRAG_PX = 4; // a press that moves less is a click on one bar
const TICK_PX = 120; // room per axis label

const matches = (n) => `${fmtInt(n)} ${n === 1 ? 'match' : 'matches'}`;

export class Histogram {
  // root: the histogram's section; cb: {onRange(from, to) with RFC 3339
  // times ('' and '' for all time), onUntimed(exclude)}
  constructor(root, cb) {
    this.root = root;
    this.cb = cb;
    const $ = (sel) => root.querySelector(sel);
    this.plot = $('.hist-plot');
    this.barsEl = $('.hist-bars');
    this.brush = $('.hist-brush');
    this.tip = $('.hist-tip');
    this.msg = $('.hist-msg');
    this.axis = $('.hist-axis');
    this.info = $('.hist-info');
    this.live = $('.hist-live');
    this.resetBtn = $('.hist-reset');
    this.untimedWrap = $('.hist-untimed');
    this.untimedBox = $('.hist-untimed input');
    this.untimedText = $('.hist-untimed span');
    this.gen = 0;
    this.clearModel();
    this.plot.addEventListener('pointerdown', (ev) => this.pointerDown(ev));
    this.plot.addEventListener('pointermove', (ev) => this.pointerMove(ev));
    this.plot.addEventListener('pointerup', (ev) => this.pointerUp(ev));
    this.plot.addEventListener('pointercancel', () => this.endDrag());
    this.plot.addEventListener('pointerleave', () => { if (!this.drag) this.hideTip(); });
    this.plot.addEventListener('keydown', (ev) => this.keyDown(ev));
    this.plot.addEventListener('blur', () => this.setCursor(-1, -1));
    this.resetBtn.addEventListener('click', () => this.cb.onRange('', ''));
    this.untimedBox.addEventListener('change', () => this.cb.onUntimed(this.untimedBox.checked));
    // Bars stretch with the chart; the axis gets as many labels as fit.
    new ResizeObserver(() => { if (this.counts.length) this.renderAxis(); }).observe(this.plot);
  }

  clearModel() {
    this.params = null;
    this.data = null;
    this.err = null;
    this.counts = [];
    this.drag = null;
    this.cursor = -1;
    this.anchor = -1;
  }

  // start counts the matches of params ({q, mode, case, from, to,
  // untimed}) per bucket; the number of buckets follows the chart's width.
  async start(params) {
    this.abort?.abort();
    this.abort = new AbortController();
    const gen = ++this.gen;
    this.clearModel();
    this.params = params;
    this.root.hidden = false;
    this.root.classList.add('is-loading');
    this.renderHead();
    // (A chart not on screen, as under the files page, gets the API's 60.)
    this.buckets = Math.max(10, Math.min(MAX_BUCKETS, Math.floor((this.plot.clientWidth || 600) / BAR_PX)));
    this.requestedAt = Date.now();
    try {
      const d = await api.histogram(params, { buckets: this.buckets, signal: this.abort.signal });
      if (gen === this.gen) this.setData(d, null);
    } catch (err) {
      if (err.name !== 'AbortError' && gen === this.gen) this.setData(null, err);
    }
  }

  // idle hides the chart (no search).
  idle() {
    this.abort?.abort();
    this.gen++;
    this.clearModel();
    this.root.hidden = true;
    this.root.classList.remove('is-loading');
  }

  // untimed is the number of matches shown without a time (null while
  // unknown).
  untimed() {
    if (!this.data || this.params.untimed === 'exclude') return null;
    // The histogram's own count (exact, and counted with its buckets), not
    // the search's total less the buckets': that total may be a lower
    // bound, or counted at another moment of a live log.
    return this.data.untimed;
  }

  // zoneOffset is the index's zone offset (minutes east of UTC) at the
  // end of the last histogram's range, the time it gave nearest to now
  // (a zone with summer time has two); null when it gave none.
  zoneOffset() {
    const t = this.data && (parseTime(this.data.to) || parseTime(this.data.from));
    return t ? t.off : null;
  }

  setData(d, err) {
    this.root.classList.remove('is-loading');
    this.root.classList.toggle('is-failed', Boolean(err));
    this.data = d;
    this.err = err;
    this.counts = d ? d.buckets.map((b) => b.count) : [];
    const t = d && parseTime(d.from);
    this.from = t ? t.ms : 0;
    this.off = t ? t.off : 0;
    this.to = d ? parseTime(d.to)?.ms ?? 0 : 0;
    this.step = d ? d.step_ms : 0;
    this.render();
    this.renderHead();
  }

  // --- drawing ---

  render() {
    clear(this.barsEl);
    clear(this.axis);
    this.brush.hidden = true;
    this.hideTip();
    const n = this.counts.length;
    this.plot.classList.toggle('is-empty', n === 0);
    if (!n) {
      const u = this.untimed();
      this.msg.textContent = this.err
        ? (this.err.status === 400 ? '' : `No histogram: ${this.err.message}`)
        : `No lines with a time in this range${u ? ` (the ${matches(u)} below ${u === 1 ? 'has' : 'have'} no time)` : ''}`;
      this.plot.setAttribute('aria-label', `Matches over time: ${this.msg.textContent || 'none'}`);
      return;
    }
    this.msg.textContent = '';
    const peak = Math.max(1, ...this.counts);
    this.barsEl.append(...this.data.buckets.map((b, i) => {
      const fill = h('span', { class: 'hist-fill' });
      fill.style.height = b.count ? `max(2px, ${((100 * b.count) / peak).toFixed(2)}%)` : '0';
      return h('div', { class: `hist-bar${b.count ? '' : ' is-zero'}`, dataset: { i, count: b.count, start: b.start, end: b.end } }, fill);
    }));
    this.renderAxis();
    this.plot.setAttribute('aria-label', `Matches over time: ${n} bars of ${fmtStep(this.step)}, ` +
      `${fmtSpan(this.from, this.to, this.off, this.step)}, at most ${matches(peak)} a bar. ` +
      'Arrow keys pick a bar (with Shift, several); Enter narrows the time range to them.');
  }

  renderAxis() {
    const n = Math.max(2, Math.floor(this.plot.clientWidth / TICK_PX));
    if (n === this.axisN && this.axis.childElementCount) return;
    this.axisN = n;
    clear(this.axis);
    const span = this.to - this.from;
    for (const t of ticks(this.from, this.to, this.off, n)) {
      const pct = (100 * (t.ms - this.from)) / span;
      const el = h('span', { class: `hist-tick${pct < 4 ? ' at-start' : pct > 96 ? ' at-end' : ''}`, text: t.label });
      el.style.left = `${pct}%`;
      this.axis.append(el);
    }
  }

  renderHead() {
    const p = this.params, d = this.data;
    clear(this.info);
    if (d && d.buckets.length) {
      this.info.append(h('strong', { text: fmtInt(d.total) }), ` with a time · ${fmtStep(this.step)} per bar`);
    } else {
      this.info.append(this.err ? '' : 'Matches over time');
    }
    const u = this.untimed();
    const exclude = p?.untimed === 'exclude';
    this.untimedWrap.hidden = !exclude && !u;
    this.untimedBox.checked = exclude;
    // "Hide 4 matches without a time" ("matches" left out on narrow screens).
    if (exclude) this.untimedText.textContent = 'Hide lines without a time';
    else {
      clear(this.untimedText).append(`Hide ${fmtInt(u || 0)}`,
        h('span', { class: 'wide', text: u === 1 ? ' match' : ' matches' }), ' without a time');
    }
    this.resetBtn.hidden = !(p?.from || p?.to);
  }

  // --- picking buckets ---

  indexAt(clientX) {
    const r = this.barsEl.getBoundingClientRect(), n = this.counts.length;
    return Math.max(0, Math.min(n - 1, Math.floor(((clientX - r.left) / r.width) * n)));
  }

  showBrush(a, b) {
    const n = this.counts.length, lo = Math.min(a, b), hi = Math.max(a, b);
    this.brush.style.left = `${(100 * lo) / n}%`;
    this.brush.style.width = `${(100 * (hi - lo + 1)) / n}%`;
    this.brush.hidden = false;
  }

  // describe is the span of bars a..b and its count.
  describe(a, b) {
    const lo = Math.min(a, b), hi = Math.max(a, b), bs = this.data.buckets;
    let sum = 0;
    for (let i = lo; i <= hi; i++) sum += this.counts[i];
    return { span: fmtSpan(parseTime(bs[lo].start).ms, parseTime(bs[hi].end).ms, this.off, this.step), sum, lo, hi };
  }

  showTip(a, b = a) {
    const { span, sum, lo, hi } = this.describe(a, b);
    clear(this.tip).append(h('span', { class: 'hist-tip-span', text: span }), h('strong', { text: matches(sum) }));
    for (const el of this.barsEl.querySelectorAll('.is-hot')) el.classList.remove('is-hot');
    for (let i = lo; i <= hi; i++) this.barsEl.children[i]?.classList.add('is-hot');
    this.tip.hidden = false;
    const n = this.counts.length, w = this.plot.clientWidth, tw = this.tip.offsetWidth;
    const x = (((lo + hi + 1) / 2) / n) * w;
    this.tip.style.left = `${Math.max(0, Math.min(w - tw, x - tw / 2))}px`;
  }

  hideTip() {
    this.tip.hidden = true;
    for (const el of this.barsEl.querySelectorAll('.is-hot')) el.classList.remove('is-hot');
  }

  pointerDown(ev) {
    if (!this.counts.length || ev.button !== 0) return;
    this.plot.setPointerCapture(ev.pointerId);
    const i = this.indexAt(ev.clientX);
    this.drag = { a: i, b: i, x: ev.clientX, moved: false };
    this.showBrush(i, i);
    this.showTip(i);
  }

  pointerMove(ev) {
    if (!this.counts.length) return;
    const i = this.indexAt(ev.clientX);
    if (!this.drag) { this.showTip(i); return; }
    if (Math.abs(ev.clientX - this.drag.x) > DRAG_PX) this.drag.moved = true;
    this.drag.b = i;
    this.showBrush(this.drag.a, i);
    this.showTip(this.drag.a, i);
  }

  pointerUp(ev) {
    const d = this.drag;
    if (!d) return;
    this.endDrag();
    const b = d.moved ? this.indexAt(ev.clientX) : d.a;
    this.narrow(Math.min(d.a, b), Math.max(d.a, b));
  }

  endDrag() {
    this.drag = null;
    if (this.cursor < 0) this.brush.hidden = true;
  }

  // narrow asks for the range of bars lo..hi, kept inside the range these
  // bars were counted for (the first and last buckets may reach outside it).
  narrow(lo, hi) {
    const bs = this.data.buckets;
    let from = parseTime(bs[lo].start).ms, to = parseTime(bs[hi].end).ms;
    const pf = absTime(this.params.from, this.requestedAt), pt = absTime(this.params.to, this.requestedAt);
    if (pf !== null) from = Math.max(from, Math.ceil(pf / 1000) * 1000);
    if (pt !== null) to = Math.min(to, pt);
    if (to > from) this.cb.onRange(fmtRFC3339(from, this.off), fmtRFC3339(to, this.off));
  }

  setCursor(cursor, anchor) {
    this.cursor = cursor;
    this.anchor = anchor;
    if (cursor < 0) {
      this.brush.hidden = true;
      this.hideTip();
      return;
    }
    this.showBrush(anchor, cursor);
    this.showTip(anchor, cursor);
    const { span, sum } = this.describe(anchor, cursor);
    this.live.textContent = `${span}: ${matches(sum)}`;
  }

  keyDown(ev) {
    const n = this.counts.length;
    if (!n || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    let c = this.cursor;
    switch (ev.key) {
      case 'ArrowLeft': c = c < 0 ? n - 1 : Math.max(0, c - 1); break;
      case 'ArrowRight': c = c < 0 ? 0 : Math.min(n - 1, c + 1); break;
      case 'Home': c = 0; break;
      case 'End': c = n - 1; break;
      case 'Enter':
        if (c < 0) return;
        ev.preventDefault();
        this.narrow(Math.min(this.anchor, c), Math.max(this.anchor, c));
        return;
      case 'Escape':
        if (c < 0) return;
        ev.preventDefault();
        this.setCursor(-1, -1);
        return;
      default:
        return;
    }
    ev.preventDefault();
    this.setCursor(c, ev.shiftKey && this.anchor >= 0 ? this.anchor : c);
  }
}
