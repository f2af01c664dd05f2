// DOM and formatting helpers shared by every module.
//
// Every node of the UI is built here with createElement and textContent,
// never from an HTML string: log lines hold whatever was logged (<script>
// included) and must only ever be shown as text. The page's CSP requires
// Trusted Types, so an accidental innerHTML assignment throws instead of
// rendering.

// h builds an element. props: class, text, dataset, on (event map), attrs
// (set as attributes), any other key is set as an attribute too (aria-*,
// role, href...) unless it is a known DOM property (hidden, value,
// checked, tabIndex...). Children are nodes, strings (text) or
// null/false (skipped); arrays are flattened.
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      switch (k) {
        case 'class': el.className = v; break;
        case 'text': el.textContent = v; break;
        case 'dataset': Object.assign(el.dataset, v); break;
        case 'on':
          for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
          break;
        case 'hidden': case 'value': case 'checked': case 'tabIndex':
        case 'disabled': case 'title': case 'id': case 'type':
          el[k] = v; break;
        default: el.setAttribute(k, v === true ? '' : String(v));
      }
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// $ finds one element by selector (document by default).
export const $ = (sel, root = document) => root.querySelector(sel);

// clear removes all children (cheaper and safer than innerHTML = '').
export function clear(el) { el.replaceChildren(); return el; }

const intFmt = new Intl.NumberFormat('en-US');
export const fmtInt = (n) => intFmt.format(n);

// fmtBytes: 1.5 KB, 404 KB, 1.2 GB (decimal units, as `ls -h --si`).
export function fmtBytes(n) {
  if (n == null || Number.isNaN(n)) return '–';
  if (n < 1000) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB', 'PB'];
  let v = n, i = -1;
  do { v /= 1000; i++; } while (v >= 1000 && i < units.length - 1);
  return `${v >= 100 ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

// fmtMs: "0.65 ms", "12 ms", "1.4 s".
export function fmtMs(ms) {
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return `${(ms / 1000).toFixed(1)} s`;
}

// fmtDate: "2026-11-30 00:13", the wall time an RFC 3339 time holds, in
// its own offset (the API writes times in the index's zone, as the lines'
// times are shown; the browser's zone may be another).
export function fmtDate(iso) {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso || '');
  return m ? `${m[1]} ${m[2]}` : '–';
}

export function pct(part, whole) {
  if (!whole) return 0;
  return Math.max(0, Math.min(100, (100 * part) / whole));
}

// splitPath returns [dir with trailing slash, base] for showing a path
// with its file name emphasized.
export function splitPath(p) {
  const i = p.lastIndexOf('/');
  return i < 0 ? ['', p] : [p.slice(0, i + 1), p.slice(i + 1)];
}

// isTyping tells whether a key event comes from a text field, where
// single-key shortcuts must not fire.
export function isTyping(ev) {
  const t = ev.target;
  if (!(t instanceof Element)) return false;
  if (t.isContentEditable) return true;
  if (t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement) return true;
  if (t instanceof HTMLInputElement) {
    return !['checkbox', 'radio', 'button', 'submit', 'reset'].includes(t.type);
  }
  return false;
}
