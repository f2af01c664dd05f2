// Status area: polls /api/status (every few seconds; faster while the
// index is not ready or warming up; paused while the tab is hidden) and
// shows the index at a glance in the top bar, with details and warm-up
// progress in a popover.

import { h, clear, fmtInt, fmtBytes, fmtMs, pct } from './dom.js';
import * as api from './api.js';

const SLOW = 5000;
const FAST = 1500;

export class Status {
  // chip: the button in the top bar; panel: the popover with details.
  constructor(chip, panel, cb = {}) {
    this.chip = chip;
    this.panel = panel;
    this.cb = cb;
    this.last = null;
    this.timer = 0;
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden) this.poll();
    });
  }

  start() { this.poll(); }

  async poll() {
    clearTimeout(this.timer);
    let st = null, err = null;
    try { st = await api.status(); } catch (e) { err = e; }
    this.last = st;
    this.render(st, err);
    this.cb.onStatus?.(st);
    const busy = !st || !st.ready || warming(st.warmup) || st.reindex?.running;
    if (!document.hidden) this.timer = setTimeout(() => this.poll(), busy ? FAST : SLOW);
  }

  render(st, err) {
    const chip = clear(this.chip);
    const ix = st?.index;
    const w = st?.warmup;
    let state = 'ok';
    if (err) state = 'down';
    else if (!st.ready) state = 'wait';
    else if (warming(w)) state = 'warm';
    else if (ix?.damaged?.length) state = 'warn';
    chip.dataset.state = state;
    chip.append(h('span', { class: 'dot', 'aria-hidden': 'true' }));
    if (err) chip.append(h('span', { class: 'chip-text', text: 'Server unreachable' }));
    else if (!st.ready) chip.append(h('span', { class: 'chip-text', text: st.reindex?.running ? 'Indexing…' : 'Starting…' }));
    else {
      chip.append(h('span', { class: 'chip-text' },
        h('span', { class: 'chip-files', text: `${fmtInt(ix.files)} files` }),
        h('span', { class: 'chip-more' },
          h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }), `${fmtInt(ix.lines)} lines`,
          h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }), fmtBytes(ix.bytes))));
      if (warming(w)) {
        const p = pct(w.resident_bytes, w.mapped_bytes);
        chip.append(h('span', { class: 'chip-warm' }, `warming ${Math.floor(p)}%`,
          h('span', { class: 'meter', role: 'progressbar', 'aria-label': 'Warm-up', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': Math.floor(p) },
            meterFill(p))));
      }
    }
    chip.title = err ? err.message : 'Index status';
    this.renderPanel(st, err);
  }

  renderPanel(st, err) {
    const body = clear(this.panel.querySelector('.panel-body'));
    if (err || !st) { body.append(h('p', { text: `Cannot reach the server: ${err?.message || 'no answer'}` })); return; }
    const ix = st.index;
    const dl = h('dl', { class: 'kv' });
    const row = (k, ...v) => dl.append(h('dt', { text: k }), h('dd', null, ...v));
    if (!ix) row('Index', st.reindex?.running ? 'being built…' : 'not open yet');
    else {
      row('Roots', ix.roots.join(', ') || '–');
      row('Files', fmtInt(ix.files));
      row('Lines', fmtInt(ix.lines));
      row('Log data', fmtBytes(ix.bytes));
      row('Index size', `${fmtBytes(ix.index_bytes)} in ${fmtInt(ix.segments)} segment${ix.segments === 1 ? '' : 's'}`);
      if (!st.warmup) row('In memory', `${Math.round(pct(ix.resident_bytes, ix.index_bytes))}% resident (${fmtBytes(ix.resident_bytes)})`);
      if (ix.damaged?.length) row('Damaged', h('span', { class: 'bad', text: ix.damaged.join('; ') }));
    }
    const w = st.warmup;
    if (w) {
      const p = pct(w.resident_bytes, w.mapped_bytes);
      row('Warm-up', `${w.mode || '–'} · ${w.state || '–'}${w.stage ? ` (${w.stage})` : ''}`);
      row('In memory', h('span', { class: 'meter wide', role: 'progressbar', 'aria-label': 'Resident in memory', 'aria-valuemin': 0, 'aria-valuemax': 100, 'aria-valuenow': Math.floor(p) }, meterFill(p)),
        `${Math.floor(p)}% of ${fmtBytes(w.mapped_bytes)} resident`);
      dl.lastElementChild.classList.add('nowrap');
      if (w.rate_mb_s) row('Read rate', `${w.rate_mb_s.toFixed(0)} MB/s`);
      if (w.error) row('Error', h('span', { class: 'bad', text: w.error }));
    }
    const last = st.reindex?.last;
    if (last) {
      row('Last re-index', `${last.result}${last.duration_ms != null ? ` in ${fmtMs(last.duration_ms)}` : ''}`);
      if (last.summary) row('', h('span', { class: 'muted small', text: last.summary }));
    }
    if (st.searches) row('Searches', `${st.searches.active} running of ${st.searches.max}`);
    if (st.build?.version) row('Build', h('span', { class: 'muted small', text: buildText(st.build) }));
    body.append(dl);
  }
}

// buildText is the server's build in one line, as `logdex status` prints
// it (Build.Summary): the commit is named when the version does not hold it.
function buildText(b) {
  let s = b.version;
  const rev = (b.revision || '').slice(0, 12);
  if (rev && !s.includes(rev)) s += ` commit ${rev}${b.modified ? '+dirty' : ''}`;
  return `${s}, ${b.go} ${b.platform}`;
}

function warming(w) {
  return Boolean(w) && (w.state === 'running' || w.state === 'pending');
}

function meterFill(p) {
  const fill = h('span', { class: 'meter-fill' });
  fill.style.width = `${p}%`;
  return fill;
}
