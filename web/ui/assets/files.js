// Files page: the indexed files from /api/files as a sortable, filterable
// table; each opens in the viewer. Sorting and filtering happen here (the
// list is one small JSON document, even for thousands of files). Each
// file shows the timestamp format found in it and the time range of its
// lines, or "no timestamps".

import { h, clear, fmtInt, fmtBytes, fmtDate, splitPath } from './dom.js';
import * as api from './api.js';
import { parseTime, fmtStamp } from './time.js';

const COLS = [
  { key: 'path', label: 'Path', cls: 'c-path' },
  { key: 'size', label: 'Size', cls: 'c-num' },
  { key: 'lines', label: 'Lines', cls: 'c-num' },
  { key: 'time_format', label: 'Time format', cls: 'c-fmt' },
  { key: 'first_time', label: 'Time range', cls: 'c-time' },
  { key: 'mtime', label: 'Modified', cls: 'c-date' },
];

// sortValue is what a column sorts by; files without timestamps sort
// after the others in the time columns (null).
function sortValue(f, key) {
  if (key === 'time_format') return f.timed ? f.time_format || '' : null;
  if (key === 'first_time') return f.timed ? parseTime(f.first_time)?.ms ?? null : null;
  return f[key];
}

// timeRange shows a file's first and last times ("2026-10-10 00:01 –
// 22:05", the date once when it is the same, seconds when both fall in
// one minute).
function timeRange(f) {
  if (!f.timed) return h('td', { class: 'c-time' }, h('span', { class: 'untimed', text: 'no timestamps' }));
  let a = fmtStamp(f.first_time), b = fmtStamp(f.last_time);
  if (a === b) [a, b] = [fmtStamp(f.first_time, true), fmtStamp(f.last_time, true)];
  const same = a.slice(0, 10) === b.slice(0, 10);
  return h('td', { class: 'c-time', title: `${f.first_time} – ${f.last_time}` },
    h('time', { datetime: f.first_time, text: a }), ' – ',
    h('time', { datetime: f.last_time, text: same ? b.slice(11) : b }));
}

export class FilesPage {
  // root holds .files-filter (input), .files-count, table.files-table;
  // cb: {onOpen(file), href(file)}
  constructor(root, cb) {
    this.root = root;
    this.cb = cb;
    this.files = null;
    this.sort = { key: 'path', dir: 1 };
    this.filter = root.querySelector('.files-filter');
    this.count = root.querySelector('.files-count');
    this.table = root.querySelector('table');
    this.filter.addEventListener('input', () => this.renderBody());
    this.table.addEventListener('click', (ev) => this.clicked(ev));
    this.renderHead();
  }

  async load() {
    if (this.loading) return this.loading;
    this.setMessage('Loading files…', true);
    this.loading = api.files().then((r) => {
      this.files = r.files;
      this.renderBody();
    }, (err) => {
      this.setMessage(`Could not load the file list: ${err.message}`);
    }).finally(() => { this.loading = null; });
    return this.loading;
  }

  setMessage(text, spin) {
    const tb = this.table.tBodies[0];
    clear(tb).append(h('tr', { class: 'msg' }, h('td', { colspan: COLS.length },
      spin ? h('span', { class: 'spinner', 'aria-hidden': 'true' }) : null, text)));
  }

  renderHead() {
    const tr = h('tr');
    for (const c of COLS) {
      const active = this.sort.key === c.key;
      tr.append(h('th', {
        scope: 'col', class: c.cls,
        'aria-sort': active ? (this.sort.dir > 0 ? 'ascending' : 'descending') : 'none',
      }, h('button', { type: 'button', class: 'sort', dataset: { sort: c.key } },
        c.label, h('span', { class: 'sort-ind', 'aria-hidden': 'true', text: active ? (this.sort.dir > 0 ? '▲' : '▼') : '' }))));
    }
    clear(this.table.tHead).append(tr);
  }

  renderBody() {
    if (!this.files) return;
    const f = this.filter.value.trim().toLowerCase();
    const { key, dir } = this.sort;
    const rows = this.files.filter((x) => !f || x.path.toLowerCase().includes(f));
    rows.sort((a, b) => {
      const va = sortValue(a, key), vb = sortValue(b, key);
      if ((va === null) !== (vb === null)) return va === null ? 1 : -1; // untimed last, either way
      const c = va === null ? 0 : typeof va === 'string' ? va.localeCompare(vb) : va - vb;
      return (c || a.path.localeCompare(b.path)) * dir;
    });
    const total = this.files.reduce((s, x) => s + x.size, 0);
    clear(this.count).append(
      f ? `${fmtInt(rows.length)} of ${fmtInt(this.files.length)} files` : `${fmtInt(this.files.length)} files`,
      h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }), fmtBytes(total));
    const tb = this.table.tBodies[0];
    if (!rows.length) {
      this.setMessage(this.files.length ? 'No file path contains that text.' : 'No files are indexed.');
      return;
    }
    clear(tb).append(...rows.map((x) => {
      const [d, base] = splitPath(x.path);
      return h('tr', { dataset: { id: x.id } },
        h('td', { class: 'c-path' }, h('a', { href: this.cb.href(x), dataset: { open: x.id }, title: x.path },
          h('span', { class: 'dir', text: d }), h('span', { class: 'base', text: base }))),
        h('td', { class: 'c-num', title: `${fmtInt(x.size)} bytes` }, fmtBytes(x.size)),
        h('td', { class: 'c-num' }, fmtInt(x.lines)),
        h('td', { class: 'c-fmt' }, x.timed ? x.time_format : h('span', { class: 'untimed', text: 'none' })),
        timeRange(x),
        h('td', { class: 'c-date' }, h('time', { datetime: x.mtime, text: fmtDate(x.mtime) })));
    }));
  }

  clicked(ev) {
    const s = ev.target.closest('button.sort');
    if (s) {
      const key = s.dataset.sort;
      this.sort = { key, dir: this.sort.key === key ? -this.sort.dir : key === 'path' || key === 'time_format' ? 1 : -1 };
      this.renderHead();
      this.renderBody();
      this.table.querySelector(`button.sort[data-sort="${key}"]`)?.focus();
      return;
    }
    const a = ev.target.closest('a[data-open]');
    if (a && !ev.ctrlKey && !ev.metaKey && !ev.shiftKey && ev.button === 0) {
      ev.preventDefault();
      const file = this.files.find((x) => String(x.id) === a.dataset.open);
      if (file) this.cb.onOpen(file);
    }
  }
}
