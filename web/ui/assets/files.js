// Files page: the indexed files from /api/files as a sortable, filterable
// table, grouped by log: a log's live file first, then its rotations into
// the past (compressed ones say so), under a row with the log's totals.
// A log of one file is one row. Each file opens in the viewer; each log
// can be searched on its own ("Search log": the search's log filter).
// Sorting and filtering happen here (the list is one small JSON document,
// even for thousands of files); sorting orders the logs by their totals
// (sizes and lines summed, the earliest first line, the latest change)
// and keeps each log's files in rotation order. Each file shows the
// timestamp format found in it and the time range of its lines, or "no
// timestamps".

import { h, clear, fmtInt, fmtBytes, fmtDate, splitPath } from './dom.js';
import { parseTime, fmtStamp } from './time.js';
import { groupLogs, exactLog } from './catalog.js';

const COLS = [
  { key: 'path', label: 'Path', cls: 'c-path' },
  { key: 'size', label: 'Size', cls: 'c-num' },
  { key: 'lines', label: 'Lines', cls: 'c-num' },
  { key: 'time_format', label: 'Time format', cls: 'c-fmt' },
  { key: 'first_time', label: 'Time range', cls: 'c-time' },
  { key: 'mtime', label: 'Modified', cls: 'c-date' },
];

// sortValue is what a column sorts a log group by; logs without
// timestamps sort after the others in the time columns (null).
function sortValue(g, key) {
  const live = g.files[0];
  switch (key) {
    case 'path': return g.log;
    case 'time_format': return live.timed ? live.time_format || '' : null;
    case 'first_time': return g.firstMs;
    case 'mtime': return Date.parse(g.mtime);
    default: return g[key];
  }
}

// timeRange shows a time range ("2026-10-10 00:01 – 22:05", the date once
// when it is the same, seconds when both fall in one minute).
function timeRange(timed, first, last) {
  if (!timed) return h('td', { class: 'c-time' }, h('span', { class: 'untimed', text: 'no timestamps' }));
  let a = fmtStamp(first), b = fmtStamp(last);
  if (a === b) [a, b] = [fmtStamp(first, true), fmtStamp(last, true)];
  const same = a.slice(0, 10) === b.slice(0, 10);
  return h('td', { class: 'c-time', title: `${first} – ${last}` },
    h('time', { datetime: first, text: a }), ' – ',
    h('time', { datetime: last, text: same ? b.slice(11) : b }));
}

// rotationBadges name a file's place in its log and its compression.
function rotationBadges(f) {
  const out = [f.rotation ? h('span', { class: 'badge', title: `Rotation ${f.rotation}: ${f.rotation === 1 ? 'the most recent' : 'an older'} part of the log's past`, text: `rotation ${f.rotation}` })
    : h('span', { class: 'badge live', title: 'The live file, written to now', text: 'live' })];
  if (f.compression) out.push(h('span', { class: 'badge comp', title: `Compressed (${f.compression}); sizes and lines are the decompressed ones`, text: f.compression }));
  if (f.damage) out.push(h('span', { class: 'badge warn', title: f.damage, text: 'damaged' }));
  return out;
}

export class FilesPage {
  // root holds .files-filter (input), .files-count, table.files-table;
  // catalog: the shared file list; cb: {onOpen(file), href(file),
  // onSearchLog(log)}
  constructor(root, catalog, cb) {
    this.root = root;
    this.catalog = catalog;
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
    this.loading = this.catalog.load().then((files) => {
      this.files = files;
      this.renderBody();
    }, (err) => {
      this.setMessage(`Could not load the file list: ${err.message}`);
    }).finally(() => { this.loading = null; });
    return this.loading;
  }

  setMessage(text, spin) {
    const tb = this.table.tBodies[0];
    for (const b of [...this.table.tBodies].slice(1)) b.remove();
    clear(tb).append(h('tr', { class: 'msg' }, h('td', { colspan: COLS.length + 1 },
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
    tr.append(h('th', { scope: 'col', class: 'c-act' }, h('span', { class: 'sr-only', text: 'Actions' })));
    clear(this.table.tHead).append(tr);
  }

  renderBody() {
    if (!this.files) return;
    const f = this.filter.value.trim().toLowerCase();
    const { key, dir } = this.sort;
    const groups = groupLogs(this.files);
    const shown = [];
    for (const g of groups) {
      const files = f ? g.files.filter((x) => x.path.toLowerCase().includes(f)) : g.files;
      if (files.length) shown.push({ g, files });
    }
    shown.sort((a, b) => {
      const va = sortValue(a.g, key), vb = sortValue(b.g, key);
      if ((va === null) !== (vb === null)) return va === null ? 1 : -1; // untimed last, either way
      const c = va === null ? 0 : typeof va === 'string' ? va.localeCompare(vb) : va - vb;
      return (c || a.g.log.localeCompare(b.g.log)) * dir;
    });
    const total = this.files.reduce((s, x) => s + x.size, 0);
    const n = shown.reduce((s, x) => s + x.files.length, 0);
    clear(this.count).append(
      f ? `${fmtInt(n)} of ${fmtInt(this.files.length)} files` : `${fmtInt(this.files.length)} files`,
      h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }),
      `${fmtInt(groups.length)} ${groups.length === 1 ? 'log' : 'logs'}`,
      h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }), fmtBytes(total));
    if (!shown.length) {
      this.setMessage(this.files.length ? 'No file path contains that text.' : 'No files are indexed.');
      return;
    }
    // One tbody per log (a row group); a log of one file is its row.
    const bodies = shown.map(({ g, files }) => {
      const grouped = g.files.length > 1;
      return h('tbody', { class: grouped ? 'log-group' : 'log-single', dataset: { log: g.log } },
        grouped ? this.headRow(g) : null,
        files.map((x) => this.fileRow(x, grouped ? null : g)));
    });
    for (const b of [...this.table.tBodies]) b.remove();
    this.table.append(...bodies);
  }

  // headRow is a log's row: its name, number of files and totals.
  headRow(g) {
    const live = g.files[0];
    const [d, base] = splitPath(g.log);
    return h('tr', { class: 'log-head' },
      h('th', { scope: 'rowgroup', class: 'c-path', title: g.log },
        h('span', { class: 'log-icon', 'aria-hidden': 'true' }),
        h('span', { class: 'dir', text: d }), h('span', { class: 'base', text: base }),
        h('span', { class: 'badge count', text: `${g.files.length} files` })),
      h('td', { class: 'c-num', title: `${fmtInt(g.size)} bytes in all` }, fmtBytes(g.size)),
      h('td', { class: 'c-num' }, fmtInt(g.lines)),
      h('td', { class: 'c-fmt' }, live.timed ? live.time_format : h('span', { class: 'untimed', text: 'none' })),
      timeRange(g.firstMs !== null, g.first, g.last),
      h('td', { class: 'c-date' }, h('time', { datetime: g.mtime, text: fmtDate(g.mtime) })),
      this.actionCell(g));
  }

  // fileRow is a file's row; g is its log when the row stands for the
  // whole log (a log of one file), which then gets the log's action.
  fileRow(x, g) {
    const [d, base] = splitPath(x.path);
    return h('tr', { class: g ? 'file-row' : 'file-row in-log', dataset: { id: x.id, rotation: x.rotation || 0 } },
      h('td', { class: 'c-path' }, h('a', { href: this.cb.href(x), dataset: { open: x.id }, title: x.path },
        h('span', { class: 'dir', text: d }), h('span', { class: 'base', text: base })),
      !g || x.rotation || x.compression || x.damage ? rotationBadges(x) : null),
      h('td', { class: 'c-num', title: `${fmtInt(x.size)} bytes` }, fmtBytes(x.size)),
      h('td', { class: 'c-num' }, fmtInt(x.lines)),
      h('td', { class: 'c-fmt' }, x.timed ? x.time_format : h('span', { class: 'untimed', text: 'none' })),
      timeRange(x.timed, x.first_time, x.last_time),
      h('td', { class: 'c-date' }, h('time', { datetime: x.mtime, text: fmtDate(x.mtime) })),
      g ? this.actionCell(g) : h('td', { class: 'c-act' }));
  }

  actionCell(g) {
    const ok = exactLog(g);
    return h('td', { class: 'c-act' }, h('button', {
      type: 'button', class: 'btn small', dataset: { searchLog: g.log }, disabled: !ok,
      title: ok ? `Search ${g.log} and its rotations only` : 'This name is not UTF-8: the log filter cannot name it',
      'aria-label': `Search log ${g.log}`,
    }, 'Search log'));
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
    const sl = ev.target.closest('button[data-search-log]');
    if (sl) {
      this.cb.onSearchLog(sl.dataset.searchLog);
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
