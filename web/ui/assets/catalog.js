// The indexed files (/api/files), loaded once and shared by the files
// page, the log filter of the search form and Live (which filters what
// it receives by log): one request, one list. groupLogs puts each log's
// files together — a log is a live file and its rotations, named by the
// path without rotation and compression suffixes (the server decides,
// server/API.md); its files come live first, then into the past.

import * as api from './api.js';

// groupLogs returns [{log, files, size, lines, first, last, mtime}]:
// files in rotation order (the live file first), with the totals of the
// group and its time range (first/last as the API's strings, or '').
export function groupLogs(files) {
  const by = new Map();
  for (const f of files) {
    const log = f.log || f.path;
    let g = by.get(log);
    if (!g) by.set(log, (g = { log, files: [], size: 0, lines: 0, first: '', last: '', firstMs: null, lastMs: null, mtime: '' }));
    g.files.push(f);
    g.size += f.size;
    g.lines += f.lines;
    if (!g.mtime || Date.parse(f.mtime) > Date.parse(g.mtime)) g.mtime = f.mtime;
    if (f.timed) {
      const a = Date.parse(f.first_time), b = Date.parse(f.last_time);
      if (g.firstMs === null || a < g.firstMs) [g.first, g.firstMs] = [f.first_time, a];
      if (g.lastMs === null || b > g.lastMs) [g.last, g.lastMs] = [f.last_time, b];
    }
  }
  const groups = [...by.values()];
  for (const g of groups) g.files.sort((a, b) => (a.rotation || 0) - (b.rotation || 0) || a.path.localeCompare(b.path));
  return groups;
}

// exactLog tells whether a log's name can be sent as log= as it is: a
// name that is not UTF-8 reaches the UI with U+FFFD in place of its bytes.
export const exactLog = (g) => g.files.every((f) => !f.path_b64);

export class Catalog {
  constructor() {
    this.files = null;
    this.byId = new Map();
    this.loading = null;
    this.listeners = [];
  }

  // onChange(fn) calls fn(files) after each load.
  onChange(fn) { this.listeners.push(fn); }

  // load fetches the list unless it is here already (fresh: fetch anyway;
  // loads asked for while one runs share it).
  load({ fresh = false } = {}) {
    // A fresh list asked for while one loads is the next one: the one
    // loading may have been asked for before the file that is new.
    if (this.loading && fresh) {
      this.next ||= this.loading.catch(() => {}).then(() => {
        this.next = null;
        return this.load({ fresh: true });
      });
      return this.next;
    }
    if (this.loading) return this.loading;
    if (this.files && !fresh) return Promise.resolve(this.files);
    this.loading = api.files().then((r) => {
      this.files = r.files;
      this.byId = new Map(r.files.map((f) => [f.id, f]));
      for (const fn of this.listeners) fn(this.files);
      return this.files;
    }).finally(() => { this.loading = null; });
    return this.loading;
  }

  // logOf is the log of file id, or undefined when the list does not
  // have it (yet).
  logOf(id) {
    const f = this.byId.get(id);
    return f ? f.log || f.path : undefined;
  }
}
