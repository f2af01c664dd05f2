// Client of logdex's JSON API (server/API.md). One place builds URLs,
// attaches the bearer token when the server wants one, and turns error
// bodies ({"error", "position"}) into APIError, so the views only deal
// with data or a typed error.

import { showPath } from './text.js';

const TOKEN_KEY = 'logdex.token';

// APIError carries the HTTP status, the server's message, the character
// position in the query for a malformed one, and Retry-After for 503.
export class APIError extends Error {
  constructor(status, message, { position = null, retryAfter = 0 } = {}) {
    super(message);
    this.name = 'APIError';
    this.status = status;
    this.position = position;
    this.retryAfter = retryAfter;
  }
}

let askToken = null; // set by the app: () => Promise<string|null>

// onAuthRequired registers what to do on a 401: ask the user for the
// token (the UI itself is public; the API is not, off loopback).
export function onAuthRequired(fn) { askToken = fn; }

function token() {
  try { return sessionStorage.getItem(TOKEN_KEY) || ''; } catch { return ''; }
}

function headers(extra) {
  const h = new Headers(extra);
  const t = token();
  if (t) h.set('Authorization', `Bearer ${t}`);
  return h;
}

export function url(path, params) {
  const u = new URL(path, location.origin);
  if (params) {
    for (const [k, v] of Object.entries(params)) {
      if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, String(v));
    }
  }
  return u.pathname + u.search;
}

// request fetches and retries once after a 401 if the user gives a token.
async function request(path, params, { signal, headers: extra } = {}, retried = false) {
  let res;
  try {
    res = await fetch(url(path, params), { signal, headers: headers(extra) });
  } catch (err) {
    if (err.name === 'AbortError') throw err;
    throw new APIError(0, 'cannot reach the logdex server');
  }
  if (res.status === 401 && !retried && askToken) {
    const t = await askToken();
    if (t) {
      try { sessionStorage.setItem(TOKEN_KEY, t); } catch { /* private mode */ }
      return request(path, params, { signal, headers: extra }, true);
    }
  }
  if (!res.ok) {
    let body = {};
    try { body = await res.json(); } catch { /* not JSON */ }
    throw new APIError(res.status, body.error || `${res.status} ${res.statusText}`, {
      position: typeof body.position === 'number' ? body.position : null,
      retryAfter: Number(res.headers.get('Retry-After')) || 0,
    });
  }
  return res;
}

async function getJSON(path, params, opts) {
  const res = await request(path, params, opts);
  return res.json();
}

// shown replaces each object's path by the form the UI shows (showPath:
// exact even for a name that is not UTF-8).
function shown(xs) {
  for (const x of xs) x.path = showPath(x);
  return xs;
}

// searchParams are a search's parameters as the API names them. p: {q,
// mode, case, from, to, untimed, order, log}; defaults are left out (every
// line of every log, in path order).
const searchParams = (p) => ({
  q: p.q, mode: p.mode, case: p.case, from: p.from, to: p.to,
  untimed: p.untimed === 'exclude' ? p.untimed : '', order: p.order === 'path' ? '' : p.order, log: p.log,
});

// search runs one page of /api/search; cursor and limit page through the
// hits.
export async function search(p, { cursor, limit, total, signal } = {}) {
  const r = await getJSON('/api/search', { ...searchParams(p), cursor, limit, total }, { signal });
  shown(r.hits || []);
  return r;
}

// tail opens /api/tail (Server-Sent Events of newly indexed matches of q,
// mode and case; lastId resumes after that event). It resolves to the
// streaming response once its headers are in.
export function tail(p, lastId, { signal } = {}) {
  const hdrs = { Accept: 'text/event-stream' };
  if (lastId) hdrs['Last-Event-ID'] = lastId;
  return request('/api/tail', { q: p.q, mode: p.mode, case: p.case }, { signal, headers: hdrs });
}

// shownHit gives a hit that came from elsewhere than search (a live one)
// the path the UI shows.
export function shownHit(hit) {
  hit.path = showPath(hit);
  return hit;
}

// histogram counts the search's matching lines in at most `buckets` round
// time buckets (/api/histogram).
export function histogram(p, { buckets, signal } = {}) {
  return getJSON('/api/histogram', { ...searchParams(p), order: '', buckets }, { signal });
}

// fileLines reads lines line-before..line+after of a file through the index.
export async function fileLines(id, line, before, after, { signal } = {}) {
  const r = await getJSON(`/api/files/${encodeURIComponent(id)}/content`, { line, before, after }, { signal });
  shown([r]);
  return r;
}

export const files = async (opts) => {
  const r = await getJSON('/api/files', null, opts);
  shown(r.files || []);
  return r;
};
export const status = (opts) => getJSON('/api/status', null, opts);

// rawSearchURL is every matching line as text/plain (for "open raw").
export const rawSearchURL = (p) => url('/api/search/raw', searchParams(p));

// rawFileURL is the file's bytes (text/plain, nosniff, sandboxed).
export const rawFileURL = (id) => url(`/api/files/${encodeURIComponent(id)}/content`);

// openText opens a text/plain answer of the API (raw matches, a file's
// bytes) in a new tab. A plain link does, unless the API wants a token: a
// link cannot carry the Authorization header (it would get 401), so then
// the click fetches the body with the header and shows it as a text/plain
// blob in a tab opened at the click (a tab opened after the fetch would be
// blocked as a popup), or downloads it when no tab could be opened.
// onError gets what went wrong.
export function openText(ev, path, name, onError) {
  if (!token()) return; // the link works as it is
  ev.preventDefault();
  const win = window.open('', '_blank');
  if (win) win.opener = null;
  request(path).then((res) => res.blob()).then((body) => {
    const blob = new Blob([body], { type: 'text/plain;charset=utf-8' }); // never rendered as anything else
    const href = URL.createObjectURL(blob);
    if (win) win.location.href = href;
    else {
      const a = document.createElement('a');
      Object.assign(a, { href, download: name });
      a.click();
    }
    setTimeout(() => URL.revokeObjectURL(href), 60_000);
  }).catch((err) => {
    win?.close();
    onError?.(err);
  });
}

// fileRange fetches bytes [start, end] (inclusive) of a file with a Range
// request, for downloading exactly the lines on screen.
export async function fileRange(id, start, end) {
  const res = await request(rawFileURL(id), null, { headers: { Range: `bytes=${start}-${end}` } });
  return res.blob();
}
