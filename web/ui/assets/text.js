// Log text and highlights.
//
// The API gives a line as JSON `text` and, when the line is not valid
// UTF-8, its exact bytes as `text_b64`; `highlights` are [start, end) BYTE
// offsets into those raw bytes. JS strings are UTF-16, so this module
// decodes the bytes itself, the way Go does (each byte that is not part of
// a valid UTF-8 sequence becomes one U+FFFD, exactly as the server's
// `text`), while recording where every byte lands in the string. Byte
// ranges then map to string ranges exactly; nothing is ever re-matched in
// JS.

import { h } from './dom.js';

const enc = new TextEncoder();
const ASCII = /^[\x00-\x7f]*$/;

function b64bytes(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

// seqLen returns the length of the valid UTF-8 sequence at b[i], or 0 when
// b[i] starts none (same rules as Go's utf8.DecodeRune: no overlongs, no
// surrogates, nothing above U+10FFFF).
function seqLen(b, i) {
  const c = b[i], n = b.length;
  const cont = (j, lo = 0x80, hi = 0xbf) => j < n && b[j] >= lo && b[j] <= hi;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(i + 1) ? 2 : 0;
  if (c === 0xe0) return cont(i + 1, 0xa0) && cont(i + 2) ? 3 : 0;
  if ((c >= 0xe1 && c <= 0xec) || c === 0xee || c === 0xef) return cont(i + 1) && cont(i + 2) ? 3 : 0;
  if (c === 0xed) return cont(i + 1, 0x80, 0x9f) && cont(i + 2) ? 3 : 0;
  if (c === 0xf0) return cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c >= 0xf1 && c <= 0xf3) return cont(i + 1) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  if (c === 0xf4) return cont(i + 1, 0x80, 0x8f) && cont(i + 2) && cont(i + 3) ? 4 : 0;
  return 0;
}

// decode turns raw line bytes into {str, start, end}: start[b] is the
// string index of the character holding byte b, end[b] the index where a
// range ending at byte b ends (rounded out to whole characters).
export function decode(bytes) {
  const n = bytes.length;
  const start = new Uint32Array(n + 1), end = new Uint32Array(n + 1);
  const parts = [];
  let u = 0;
  for (let i = 0; i < n;) {
    let k = seqLen(bytes, i), s;
    if (k === 0) { k = 1; s = '\ufffd'; }
    else if (k === 1) s = String.fromCharCode(bytes[i]);
    else {
      let cp = bytes[i] & (0xff >> (k + 1));
      for (let j = 1; j < k; j++) cp = (cp << 6) | (bytes[i + j] & 0x3f);
      s = String.fromCodePoint(cp);
    }
    parts.push(s);
    start[i] = u; end[i] = u;
    for (let j = 1; j < k; j++) { start[i + j] = u; end[i + j] = u + s.length; }
    u += s.length;
    i += k;
  }
  start[n] = u; end[n] = u;
  return { str: parts.join(''), start, end };
}

// lineOf returns the display string of an API line object ({text,
// text_b64}) and a function mapping a byte range to a string range.
export function lineOf(l) {
  if (!l.text_b64 && ASCII.test(l.text)) {
    const len = l.text.length;
    return { str: l.text, map: (a, b) => [Math.min(a, len), Math.min(b, len)] };
  }
  const d = decode(l.text_b64 ? b64bytes(l.text_b64) : enc.encode(l.text));
  const n = d.start.length - 1;
  return { str: d.str, map: (a, b) => [d.start[Math.min(a, n)], d.end[Math.min(b, n)]] };
}

// ranges converts byte highlights to sorted, merged string ranges.
export function ranges(line, highlights) {
  const out = [];
  for (const [a, b] of (highlights || []).map(([a, b]) => line.map(a, b)).sort((x, y) => x[0] - y[0])) {
    if (b <= a) continue;
    const last = out[out.length - 1];
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

// render appends the line's text to parent as text nodes and <mark>s.
// from > 0 starts the text there (after an ellipsis) so that a match far
// right in a long line stays visible in a one-line row.
export function render(parent, line, highlights, from = 0) {
  const str = line.str;
  let pos = 0;
  if (from > 0) {
    // Do not split a surrogate pair.
    if (from < str.length && str.charCodeAt(from) >= 0xdc00 && str.charCodeAt(from) <= 0xdfff) from--;
    parent.append(h('span', { class: 'elide', 'aria-hidden': 'true', text: '…' }));
    pos = from;
  }
  for (const [a0, b] of ranges(line, highlights)) {
    if (b <= pos) continue;
    const a = Math.max(a0, pos);
    if (a > pos) parent.append(str.slice(pos, a));
    parent.append(h('mark', { text: str.slice(a, b) }));
    pos = b;
  }
  if (pos < str.length) parent.append(str.slice(pos));
}

// firstMatch is the string range of the first highlight ([-1, -1] if none).
export function firstMatch(line, highlights) {
  const r = ranges(line, highlights);
  return r.length ? r[0] : [-1, -1];
}

// showPath is how a path from the API is shown: `path`, or, when the
// name is not valid UTF-8 (`path_b64` holds its bytes), the bytes with
// each invalid one as \xNN, so that names JSON would turn into the same
// U+FFFD string stay apart.
export function showPath(x) {
  if (!x.path_b64) return x.path;
  const b = b64bytes(x.path_b64);
  const parts = [];
  for (let i = 0; i < b.length;) {
    const k = seqLen(b, i);
    if (k === 0) {
      parts.push(`\\x${b[i].toString(16).toUpperCase().padStart(2, '0')}`);
      i++;
    } else {
      parts.push(decode(b.subarray(i, i + k)).str);
      i += k;
    }
  }
  return parts.join('');
}

// byteLength of a line as the file stores it (for Range requests).
export function byteLength(l) {
  if (l.text_b64) return atob(l.text_b64).length;
  return ASCII.test(l.text) ? l.text.length : enc.encode(l.text).length;
}
