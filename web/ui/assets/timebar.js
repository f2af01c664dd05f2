// The time controls under the search box: the range (presets, all time,
// or a custom from/to in any form the API reads) and the order of the
// hits (by file as grep prints them, newest or oldest first). They only
// report choices; the app puts them in the URL and runs the search.

import { PRESETS } from './time.js';

export const ORDERS = ['path', 'newest', 'oldest'];

// presetOf names the preset a range is ('all', '15m', ...), or 'custom'.
export function presetOf(from, to) {
  if (!from && !to) return 'all';
  return !to && PRESETS.some((p) => p.id === from) ? from : 'custom';
}

export class TimeBar {
  // form: the #time-form; cb: {onRange(from, to), onOrder(order)}
  constructor(form, cb) {
    this.form = form;
    this.cb = cb;
    this.custom = form.querySelector('.range-custom');
    this.fromIn = form.elements.from;
    this.toIn = form.elements.to;
    this.shown = null; // the {from, to, order} the controls show
    form.addEventListener('change', (ev) => this.changed(ev));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      this.cb.onRange(this.fromIn.value.trim(), this.toIn.value.trim());
    });
    for (const el of [this.fromIn, this.toIn]) el.addEventListener('input', () => el.removeAttribute('aria-invalid'));
  }

  changed(ev) {
    const t = ev.target;
    if (t.name === 'order') {
      this.cb.onOrder(t.value);
    } else if (t.name === 'range') {
      if (t.value === 'custom') {
        this.custom.hidden = false;
        this.fromIn.focus();
        this.fromIn.select();
      } else {
        this.cb.onRange(t.value === 'all' ? '' : t.value, '');
      }
    }
  }

  // set shows a state's range and order (leaving the user's edits alone
  // when they did not change).
  set({ from, to, order }) {
    const s = this.shown;
    if (s && s.from === from && s.to === to && s.order === order) return;
    this.shown = { from, to, order };
    const preset = presetOf(from, to);
    for (const r of this.form.elements.range) r.checked = r.value === preset;
    for (const r of this.form.elements.order) r.checked = r.value === order;
    this.custom.hidden = preset !== 'custom';
    this.fromIn.value = from;
    this.toIn.value = to;
    this.markInvalid(null);
  }

  // pending is a custom range typed but not applied yet ({} if none): a
  // search started from the search box takes it too.
  pending() {
    if (this.form.elements.range.value !== 'custom') return {};
    return { from: this.fromIn.value.trim(), to: this.toIn.value.trim() };
  }

  // markInvalid flags the field(s) a range error is about ('from', 'to',
  // 'both' or null to clear) and shows them.
  markInvalid(which) {
    for (const [name, el] of [['from', this.fromIn], ['to', this.toIn]]) {
      if (which === name || which === 'both') el.setAttribute('aria-invalid', 'true');
      else el.removeAttribute('aria-invalid');
    }
    if (which) {
      this.custom.hidden = false;
      for (const r of this.form.elements.range) r.checked = r.value === 'custom';
    }
  }
}
