// The app: URL state, the search form, keyboard shortcuts, and the wiring
// between results, viewer, files page and status.
//
// The URL is the single source of truth for what is shown
// (/?q=…&mode=…&case=…&from=…&to=…&untimed=exclude&order=newest&log=NAME&live=1&file=ID&line=N,
// or /files?…; defaults are left out), so reload, shared links and
// back/forward all reproduce a view: user actions build a new state, push
// it to history, then apply it; popstate applies the URL.

import { h, $, clear, fmtInt, fmtBytes, isTyping } from './dom.js';
import * as api from './api.js';
import { Results } from './results.js';
import { Viewer } from './viewer.js';
import { FilesPage } from './files.js';
import { Status } from './status.js';
import { Histogram } from './histogram.js';
import { TimeBar, ORDERS } from './timebar.js';
import { rangeName } from './time.js';
import { Catalog, groupLogs, exactLog } from './catalog.js';
import { LiveView, liveConfig } from './live.js';
import { tailConfig } from './tail.js';

// bre and re2, the API's other pattern syntaxes, have no button of their
// own: a link that asks for one shows it, beside the others, while it is
// the search's.
const MODES = ['query', 'literal', 'regex', 'bre', 're2'];
const defaultCase = (mode) => (mode === 'query' ? 'insensitive' : 'sensitive');

const form = $('#search-form');
const input = $('#q');
const caseBox = $('#case');
const errBox = $('#q-error');
const resultsEl = $('#results');
const liveBox = $('#live');
const logSelect = $('#log');

const ALL_TIME = { from: '', to: '', untimed: 'include', order: 'path' };
let state = { page: 'search', q: '', mode: 'query', case: 'insensitive', ...ALL_TIME, log: '', live: false, file: null, line: 1 };
let searchKey = null; // the search on screen, to run each search once
let histKey = null; // the histogram on screen (the same lines in any order)

// --- URL state ---

function parseURL() {
  const u = new URL(location.href);
  const sp = u.searchParams;
  const page = u.pathname.replace(/\/+$/, '') === '/files' ? 'files' : 'search';
  // The API's other name for grep -E (in a link made for the API) is the
  // UI's regex.
  const m = sp.get('mode') === 'ere' ? 'regex' : sp.get('mode');
  const mode = MODES.includes(m) ? m : 'query';
  const cs = ['sensitive', 'insensitive'].includes(sp.get('case')) ? sp.get('case') : defaultCase(mode);
  const f = sp.get('file');
  const file = f !== null && /^\d+$/.test(f) ? Number(f) : null;
  const line = Math.max(1, parseInt(sp.get('line'), 10) || 1);
  const time = {
    from: (sp.get('from') || '').trim(), to: (sp.get('to') || '').trim(),
    untimed: sp.get('untimed') === 'exclude' ? 'exclude' : 'include',
    order: ORDERS.includes(sp.get('order')) ? sp.get('order') : 'path',
  };
  return { page, q: sp.get('q') || '', mode, case: cs, ...time, log: sp.get('log') || '', live: sp.get('live') === '1', file, line };
}

// liveBlock says why Live cannot follow a state ('' when it can): the
// stream adds new matches at the end, in file order, whatever their time.
function liveBlock(s) {
  if (s.order !== 'path') return 'Live adds new matches at the end, in file order: choose "By file" to use it';
  if (s.to) return 'This range ends before new matches: Live needs a range open to now (no "To")';
  return '';
}
const LIVE_TITLE = 'Live: add new matches as they are indexed';
const LIVE_TITLE_RANGE = `${LIVE_TITLE} (whatever their time: the range applies to the search above them)`;

function buildURL(s) {
  const sp = new URLSearchParams();
  if (s.q) { sp.set('q', s.q); sp.set('mode', s.mode); sp.set('case', s.case); }
  if (s.from) sp.set('from', s.from);
  if (s.to) sp.set('to', s.to);
  if (s.untimed === 'exclude') sp.set('untimed', 'exclude');
  if (s.order !== 'path') sp.set('order', s.order);
  if (s.log) sp.set('log', s.log);
  if (s.live && !liveBlock(s)) sp.set('live', '1');
  if (s.file !== null) { sp.set('file', String(s.file)); sp.set('line', String(s.line)); }
  const qs = sp.toString();
  return (s.page === 'files' ? '/files' : '/') + (qs ? `?${qs}` : '');
}

// go applies state s and records it in history ('push', 'replace' or
// 'none' when it came from the URL).
function go(s, how = 'push', opts = {}) {
  const url = buildURL(s);
  if (how === 'push' && url !== location.pathname + location.search) history.pushState(null, '', url);
  else if (how === 'replace') history.replaceState(null, '', url);
  apply(s, opts);
}

function apply(s, { focusViewer = false, fromURL = false } = {}) {
  const block = liveBlock(s);
  if (block) s = { ...s, live: false };
  state = s;
  if (fromURL) syncForm();
  showPage(s.page);
  timeBar.set(s);
  showLive(s, block);
  showLog(s.log);
  const params = { q: s.q, mode: s.mode, case: s.case, from: s.from, to: s.to, untimed: s.untimed, order: s.order, log: s.log };
  const hkey = s.q ? [s.mode, s.case, s.q, s.from, s.to, s.untimed, s.log].join('\u0000') : '';
  const key = s.q ? `${hkey}\u0000${s.order}` : '';
  if (key !== searchKey) {
    searchKey = key;
    hideError();
    if (s.q) results.start(params, { before: () => live.opened });
    else results.idle();
    showRangeNote(s);
  }
  live.set(s.live && s.q ? params : null);
  if (hkey !== histKey) {
    histKey = hkey;
    if (s.q) histogram.start(params);
    else histogram.idle();
  }
  if (s.file !== null) {
    const hit = results.hitsIn(s.file)?.get(s.line);
    viewer.open({ fileId: s.file, line: s.line, path: hit?.path, focus: focusViewer });
  } else if (viewer.isOpen) {
    viewer.close();
  }
  document.title = s.page === 'files' ? 'Files · logdex' : s.q ? `${s.q} · logdex` : 'logdex';
}

function showLive(s, block) {
  liveBox.checked = s.live;
  liveBox.disabled = !!block;
  // The label's title is the tooltip; the box's, its accessible description.
  liveBox.title = liveBox.closest('label').title = block || (s.from ? LIVE_TITLE_RANGE : LIVE_TITLE);
}

// showLog shows the log filter; a log the file list does not have (yet)
// gets an option of its own.
function showLog(log) {
  if (log && ![...logSelect.options].some((o) => o.value === log)) {
    logSelect.append(h('option', { value: log, text: catalog.files ? `${log} (not indexed)` : log }));
  }
  logSelect.value = log;
  logSelect.closest('label').classList.toggle('is-set', !!log);
}

function fillLogs(files) {
  const opts = [h('option', { value: '', text: 'All logs' })];
  for (const g of groupLogs(files).sort((a, b) => a.log.localeCompare(b.log))) {
    opts.push(h('option', { value: g.log, disabled: !exactLog(g),
      text: g.files.length > 1 ? `${g.log} (${g.files.length} files)` : g.log }));
  }
  logSelect.replaceChildren(...opts);
  showLog(state.log);
}

function syncForm() {
  input.value = state.q;
  for (const r of form.elements.mode) r.checked = r.value === state.mode;
  showLinkModes();
  caseBox.checked = state.case === 'sensitive';
  updatePlaceholder();
}

// showLinkModes shows a link-only mode's button while it is chosen.
function showLinkModes() {
  for (const l of form.querySelectorAll('[data-link-mode]')) l.hidden = !l.querySelector('input').checked;
}

function formState() {
  const mode = form.elements.mode.value || 'query';
  return {
    ...state, ...timeBar.pending(), page: 'search', q: input.value, mode,
    case: caseBox.checked ? 'sensitive' : 'insensitive', file: null, line: 1,
  };
}

function showPage(page) {
  $('#page-search').hidden = page !== 'search';
  $('#page-files').hidden = page !== 'files';
  for (const a of document.querySelectorAll('.tabs a')) {
    if (a.dataset.nav === page) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  if (page === 'files' && !files.files) files.load();
}

// --- search form ---

const PLACEHOLDERS = {
  query: ['Search logs — error, "connection reset", timeout OR refused, /blk_[0-9]+/', 'Search logs'],
  literal: ['Exact text, like grep -F — e.g. rhost=10.0.', 'Exact text (grep -F)'],
  regex: ['Regular expression, as grep -E reads it — e.g. blk_-?[0-9]+', 'Regex (grep -E)'],
  bre: ['Regular expression, as grep -G reads it — e.g. blk_[0-9]\\{6,\\}', 'Regex (grep -G)'],
  re2: ["Regular expression, in Go's RE2 syntax — e.g. blk_\\d+", 'Regex (RE2)'],
};
const narrow = matchMedia('(max-width: 640px)');
function updatePlaceholder() {
  const p = PLACEHOLDERS[form.elements.mode.value] || PLACEHOLDERS.query;
  input.placeholder = p[narrow.matches ? 1 : 0];
}
narrow.addEventListener('change', updatePlaceholder);

form.addEventListener('submit', (ev) => {
  ev.preventDefault();
  tokenDeclined = false; // a search asked for: the token too, if needed
  searchKey = histKey = null; // Enter on the same query searches again
  go(formState());
});
form.addEventListener('change', (ev) => {
  if (ev.target.name === 'mode') {
    updatePlaceholder();
    showLinkModes();
  }
  // Changing mode or case re-runs a search that is on screen.
  if ((ev.target.name === 'mode' || ev.target === caseBox) && input.value) go(formState());
});
input.addEventListener('input', () => input.removeAttribute('aria-invalid'));
// Live is a way of showing the search, not a new one: no history entry.
liveBox.addEventListener('change', () => go({ ...state, live: liveBox.checked }, 'replace'));
logSelect.addEventListener('change', () => go({ ...formState(), log: logSelect.value }));

for (const b of document.querySelectorAll('[data-example]')) {
  b.addEventListener('click', () => {
    input.value = b.dataset.example;
    for (const r of form.elements.mode) r.checked = r.value === (b.dataset.mode || 'query');
    caseBox.checked = false;
    updatePlaceholder();
    go(formState());
  });
}

// --- errors next to the search box ---

function hideError() {
  errBox.hidden = true;
  input.removeAttribute('aria-invalid');
  timeBar.markInvalid(null);
}

// rangeError tells which time field a 400 is about ('from', 'to', 'both')
// or null when it is not about the range.
function rangeError(err) {
  if (err.status !== 400) return null;
  if (/^from must be before to/.test(err.message)) return 'both';
  const m = /^(from|to)\b/.exec(err.message);
  return m ? m[1] : null;
}

function showError(err) {
  const msg = $('.q-error-msg', errBox), mirror = $('.q-mirror', errBox);
  clear(msg);
  clear(mirror);
  mirror.hidden = true;
  if (err.status === 400 && err.position !== null) {
    // position counts characters (code points); JS strings count UTF-16.
    const chars = Array.from(state.q);
    const p = Math.min(err.position, chars.length);
    msg.append(h('strong', { text: 'Invalid query: ' }), err.message, h('span', { class: 'muted', text: ` (at character ${p + 1})` }));
    mirror.append(chars.slice(0, p).join(''),
      h('mark', { class: 'err-at', text: p < chars.length ? chars[p] : ' ' }),
      chars.slice(p + 1).join(''));
    mirror.hidden = false;
    input.setAttribute('aria-invalid', 'true');
    // Put the caret where the problem is.
    const at = chars.slice(0, p).join('').length;
    if (document.activeElement === input) input.setSelectionRange(at, at + (chars[p] || '').length);
  } else if (rangeError(err)) {
    msg.append(h('strong', { text: 'Invalid time range: ' }), err.message.replace(/^(from|to): logtime: /, '$1: '));
    timeBar.markInvalid(rangeError(err));
  } else if (err.status === 503) {
    msg.append(h('strong', { text: 'Server busy: ' }), err.message, '. Try again in a moment.');
  } else if (err.status === 0) {
    msg.append(h('strong', { text: 'Offline: ' }), err.message, '.');
  } else {
    msg.append(h('strong', { text: `Error ${err.status}: ` }), err.message);
  }
  errBox.hidden = false;
}

// --- results, viewer, files, status ---

const catalog = new Catalog();
catalog.onChange(fillLogs);
let live = null; // the LiveView; made once the results exist

const results = new Results({
  scroller: resultsEl,
  footer: $('.results-foot', resultsEl),
  summary: $('#summary'),
  empty: $('#empty'),
}, {
  onOpen: (hit, { focus }) => openHit(hit, 'push', focus),
  onError: showError,
  onRecover: () => { if (!errBox.hidden) hideError(); },
  onPage: () => {
    viewer.refreshMatches();
    // A permalink's hit: select it once its page is in.
    if (state.file !== null && results.sel < 0) {
      const i = results.find(state.file, state.line);
      if (i >= 0) results.select(i);
    }
  },
  onView: (first, last) => live?.viewed(first, last),
  zoneOffset: () => histogram.zoneOffset(),
});

live = new LiveView({ status: $('#live-status'), pill: $('#live-pill') }, results, catalog, {
  onAppend: () => viewer.refreshMatches(),
});

// The time controls and the histogram narrow the range or change the
// order of the search on screen: a new history entry each time.
const setTime = (t) => go({ ...state, page: 'search', ...t, file: null, line: 1 });
const timeBar = new TimeBar($('#time-form'), {
  onRange: (from, to) => setTime({ from, to }),
  onOrder: (order) => setTime({ order }),
});
const histogram = new Histogram($('#hist'), {
  onRange: (from, to) => setTime({ from, to }),
  onUntimed: (exclude) => setTime({ untimed: exclude ? 'exclude' : 'include' }),
});
$('#empty [data-act=all-time]').addEventListener('click', () => setTime({ from: '', to: '' }));

// showRangeNote says, under "no matches", which range was searched.
function showRangeNote(s) {
  const note = $('#empty .range-note');
  note.hidden = !s.from && !s.to;
  $('.range-name', note).textContent = rangeName(s.from, s.to);
}

function openHit(hit, how = 'push', focus = false) {
  go({ ...state, page: 'search', file: hit.file_id, line: hit.line }, how, { focusViewer: focus });
}

const viewer = new Viewer($('#viewer'), {
  onClose: () => closeViewer(),
  onAnchor: (line) => go({ ...state, line }, 'replace'),
  matches: (fileId) => results.hitsIn(fileId),
  permalink: (fileId, line) => buildURL({ ...state, file: fileId, line }),
});

function closeViewer() {
  if (!viewer.isOpen) return;
  go({ ...state, file: null, line: 1 });
  if (state.page === 'search' && results.hits.length) resultsEl.focus({ preventScroll: true });
}

const files = new FilesPage($('#page-files'), catalog, {
  href: (f) => buildURL({ ...state, page: 'files', file: f.id, line: 1 }),
  onOpen: (f) => go({ ...state, page: 'files', file: f.id, line: 1 }, 'push', { focusViewer: true }),
  // A log's history on its own: the search on screen, in that log.
  onSearchLog: (log) => {
    go({ ...state, page: 'search', log, file: null, line: 1 });
    syncForm();
    if (!state.q) input.focus();
  },
});

const status = new Status($('#status-chip'), $('#status-panel'), {
  onStatus: (st) => {
    const el = $('.welcome-stats');
    if (el && st?.index) {
      el.textContent = `${fmtInt(st.index.files)} files · ${fmtInt(st.index.lines)} lines · ${fmtBytes(st.index.bytes)} indexed`;
    }
  },
});

// Tabs and the brand link navigate inside the app.
for (const a of document.querySelectorAll('[data-nav]')) {
  a.addEventListener('click', (ev) => {
    if (ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.button !== 0) return;
    ev.preventDefault();
    const page = a.dataset.nav;
    if (a.classList.contains('brand')) go({ ...state, ...ALL_TIME, page, q: '', log: '', live: false, file: null, line: 1 });
    else go({ ...state, page, file: null, line: 1 });
    if (page === 'search') syncForm();
  });
}

// --- keyboard ---

document.addEventListener('keydown', (ev) => {
  if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey || ev.isComposing) return;
  if (ev.key === 'Escape') {
    if (document.querySelector(':popover-open') || $('#token-dialog').open) return; // they close themselves
    if (viewer.isOpen) { ev.preventDefault(); closeViewer(); return; }
    if (ev.target === input) {
      ev.preventDefault();
      if (!errBox.hidden) hideError();
      input.blur();
      if (results.hits.length) resultsEl.focus({ preventScroll: true });
    }
    return;
  }
  if (isTyping(ev)) {
    // ArrowDown leaves the search box for the results.
    if (ev.target === input && ev.key === 'ArrowDown' && results.hits.length) {
      ev.preventDefault();
      resultsEl.focus({ preventScroll: true });
      if (results.sel < 0) results.select(0);
    }
    return;
  }
  const inList = ev.target === resultsEl;
  switch (ev.key) {
    case '/':
      ev.preventDefault();
      if (state.page !== 'search') go({ ...state, page: 'search', file: null, line: 1 });
      input.focus();
      input.select();
      break;
    case '?':
      ev.preventDefault();
      $('#help').togglePopover();
      break;
    case 'j': case 'k': case 'ArrowDown': case 'ArrowUp': {
      if (state.page !== 'search' || (ev.key.startsWith('Arrow') && !inList)) return;
      ev.preventDefault();
      const hit = results.move(ev.key === 'j' || ev.key === 'ArrowDown' ? 1 : -1);
      // With the viewer open, j/k preview each hit in it.
      if (hit && viewer.isOpen) openHit(hit, 'replace');
      break;
    }
    case 'Enter': {
      const t = ev.target;
      if (!(inList || t === document.body || t.closest?.('.viewer-body'))) return;
      const hit = results.selected();
      if (!hit || state.page !== 'search') return;
      ev.preventDefault();
      openHit(hit, 'push', true);
      break;
    }
    default:
  }
});

// --- token prompt (the API needs one when served off loopback) ---

let tokenAsk = null;
// tokenDeclined: the dialog was cancelled. Background requests (the status
// poll every few seconds) do not ask again; the next search the user runs
// does.
let tokenDeclined = false;
$('#token-dialog [data-act=cancel]').addEventListener('click', () => $('#token-dialog').close('cancel'));
api.onAuthRequired(() => {
  if (tokenAsk) return tokenAsk;
  if (tokenDeclined) return Promise.resolve(null);
  const dlg = $('#token-dialog'), ti = $('#token-input');
  tokenAsk = new Promise((resolve) => {
    dlg.addEventListener('close', () => {
      tokenAsk = null;
      const t = dlg.returnValue === 'ok' ? ti.value.trim() : null;
      tokenDeclined = !t;
      resolve(t);
    }, { once: true });
    ti.value = '';
    dlg.showModal();
  });
  return tokenAsk;
});

// --- start ---

// A handle for tests and for poking at the UI from the console.
window.logdex = { results, viewer, files, status, histogram, timeBar, live, catalog, liveConfig, tailConfig };

window.addEventListener('popstate', () => apply(parseURL(), { fromURL: true }));
apply(parseURL(), { fromURL: true });
status.start();
catalog.load().catch(() => {}); // for the log filter; the files page says when it fails
if (!state.q && state.page === 'search' && state.file === null) input.focus();
