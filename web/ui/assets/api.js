// Client of logdex's JSON API (server/API.md). One place builds URLs,
// attaches the bearer token when the server wants one, and turns error
// bodies ({"error", "position"}) into APIError, so the views only deal
// with data or a typed error.

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

// searchParams are a search's parameters as the API names them. p: {q,
// mode, case, from, to, untimed, order}; defaults are left out (every
// line, in path order).
const searchParams = (p) => ({
  q: p.q, mode: p.mode, case: p.case, from: p.from, to: p.to,
  untimed: p.untimed === 'exclude' ? p.untimed : '', order: p.order === 'path' ? '' : p.order,
});

// search runs one page of /api/search; cursor and limit page through the
// hits.
export function search(p, { cursor, limit, signal } = {}) {
  return getJSON('/api/search', { ...searchParams(p), cursor, limit }, { signal });
}

// histogram counts the search's matching lines in at most `buckets` round
// time buckets (/api/histogram).
export function histogram(p, { buckets, signal } = {}) {
  return getJSON('/api/histogram', { ...searchParams(p), order: '', buckets }, { signal });
}

// fileLines reads lines line-before..line+after of a file through the index.
export function fileLines(id, line, before, after, { signal } = {}) {
  return getJSON(`/api/files/${encodeURIComponent(id)}/content`, { line, before, after }, { signal });
}

export const files = (opts) => getJSON('/api/files', null, opts);
export const status = (opts) => getJSON('/api/status', null, opts);

// rawSearchURL is every matching line as text/plain (for "open raw").
export const rawSearchURL = (p) => url('/api/search/raw', searchParams(p));

// rawFileURL is the file's bytes (text/plain, nosniff, sandboxed).
export const rawFileURL = (id) => url(`/api/files/${encodeURIComponent(id)}/content`);

// fileRange fetches bytes [start, end] (inclusive) of a file with a Range
// request, for downloading exactly the lines on screen.
export async function fileRange(id, start, end) {
  const res = await request(rawFileURL(id), null, { headers: { Range: `bytes=${start}-${end}` } });
  return res.blob();
}
