// Live: the search on screen keeps growing as new matching lines are
// indexed. A TailStream (tail.js) follows /api/tail; its hits go to the
// live section of the results (results.js), in the rows every search
// shows. The view stays where the user put it: scrolled to the bottom, it
// follows the new rows; scrolled away, it keeps still and a "N new
// matches" pill counts the rows below the screen (a click scrolls to the
// first of them). Memory stays bounded: the section keeps the newest
// liveConfig.cap matches and drops the oldest (it says so).
//
// /api/tail takes no log filter: with one set, hits of other logs are
// left out here, by each file's log in the file list (fetched again when
// a hit comes from a file it does not know yet: a new log or rotation).
//
// Turning Live off closes the stream and keeps the rows; turning it on
// again for the same search resumes from the last event received (what
// came meanwhile arrives then); a new search starts a new section.

import { h, clear, fmtInt } from './dom.js';
import { TailStream } from './tail.js';

export const liveConfig = { cap: 10_000 };

const keyOf = (p) => [p.q, p.mode, p.case, p.log || ''].join('\u0000');

export class LiveView {
  // els: {status (the line above the list), pill (the "new matches"
  // button)}; results: the Results; catalog: the file list; cb:
  // {onAppend(): rows were added}
  constructor(els, results, catalog, cb = {}) {
    this.els = els;
    this.results = results;
    this.catalog = catalog;
    this.cb = cb;
    this.stream = null;
    this.key = null;
    this.gen = -1;
    this.reset();
    els.pill.addEventListener('click', () => this.showUnseen());
    // A page leaving (or kept in the back/forward cache) holds no stream
    // open; shown again from the cache, it resumes.
    window.addEventListener('pagehide', () => {
      if (!this.stream) return;
      this.suspended = this.params;
      this.close();
    });
    window.addEventListener('pageshow', (ev) => {
      const p = this.suspended;
      this.suspended = null;
      if (ev.persisted && p) this.set(p);
    });
  }

  reset() {
    this.params = null;
    this.lastId = '';
    this.queue = [];
    this.unseen = null; // the first live hit below the screen the user has not seen
    this.state = 'off';
    this.detail = null;
    this.notice = '';
    this.dropped = 0;
    this.asked = new Set(); // file ids the file list was fetched again for
    this.waiting = null; // that fetch, while it runs
  }

  // opened settles when the stream (if any) answered: a search started
  // with Live on waits for it, so that no line falls between the two.
  get opened() { return this.stream?.opened ?? null; }

  // set follows the search params ({q, mode, case, log}) or, with null,
  // stops following (the rows stay).
  set(params) {
    if (!params) {
      this.close();
      this.state = 'off';
      this.render();
      return;
    }
    const key = keyOf(params);
    if (this.key !== key || this.gen !== this.results.gen) {
      this.close();
      this.reset();
      this.key = key;
      this.gen = this.results.gen;
    }
    this.params = params;
    if (!this.results.live) this.results.liveBegin(new Date());
    if (!this.stream) {
      // A stream closed may still be unwinding: only the current one speaks.
      const token = (this.token = {});
      const mine = (fn) => (...args) => { if (this.token === token) fn(...args); };
      this.stream = new TailStream(params, {
        onHit: mine((hit) => this.received(hit)),
        onState: mine((state, detail) => { this.state = state; this.detail = detail; this.render(); }),
        onNotice: mine((text) => { this.notice = text; this.render(); }),
      }, this.lastId);
    }
    this.render();
  }

  close() {
    if (!this.stream) return;
    this.token = null;
    this.stream.stop();
    this.lastId = this.stream.lastId;
    this.stream = null;
  }

  received(hit) {
    // Another log's hit (its file known) is let go at once: a hidden tab's
    // queue bounded below keeps this log's.
    const log = this.params?.log;
    if (log) {
      const of = this.catalog.logOf(hit.file_id);
      if (of !== undefined && of !== log) return;
    }
    this.queue.push(hit);
    // A hidden tab draws no frames: keep no more than would be shown, and
    // say so (as for the rows let go once shown).
    if (this.queue.length > liveConfig.cap) {
      const over = this.queue.length - liveConfig.cap;
      this.queue.splice(0, over);
      this.dropped += over;
    }
    if (!this.raf) this.raf = requestAnimationFrame(() => this.flush());
  }

  // flush adds what arrived since the last frame, in one go.
  flush() {
    this.raf = 0;
    const r = this.results;
    if (!r.live || this.gen !== r.gen) {
      this.queue = [];
      return;
    }
    let hits = this.queue;
    if (this.params?.log) {
      const unknown = hits.filter((x) => this.catalog.logOf(x.file_id) === undefined);
      const ask = unknown.filter((x) => !this.asked.has(x.file_id));
      if (ask.length || (unknown.length && this.waiting)) {
        // Hold the hits (in order) until the file list knows their files:
        // those that came while it loads wait for it too (they were let
        // through, unknown, and dropped as another log's).
        for (const x of ask) this.asked.add(x.file_id);
        if (ask.length) {
          this.waiting = this.catalog.load({ fresh: true }).catch(() => {}).finally(() => {
            this.waiting = null;
            this.flush();
          });
        }
        return;
      }
      hits = hits.filter((x) => this.catalog.logOf(x.file_id) === this.params.log);
    }
    this.queue = [];
    if (!hits.length) return;
    const sc = r.els.scroller;
    const follow = sc.hidden || r.vlist.atEnd();
    const added = r.liveAppend(hits);
    if (!added.length) return;
    const over = r.liveCount - liveConfig.cap;
    if (over > 0) {
      r.liveDrop(over);
      this.dropped += over;
    }
    if (!follow) {
      this.unseen ||= added[0];
      if (this.unseen.dropped) this.unseen = r.hits[r.histHits] || null;
    }
    r.vlist.update(); // reports the rows on screen: viewed() counts the rest
    if (follow) {
      sc.scrollTop = sc.scrollHeight;
      r.vlist.update();
      this.unseen = null;
    }
    this.cb.onAppend?.();
    this.render();
  }

  // viewed moves the first unseen hit past the rows on screen (Results
  // reports each change of the rows shown).
  viewed(first, last) {
    let u = this.unseen;
    if (!u) return;
    if (u.dropped || this.gen !== this.results.gen) u = this.gen === this.results.gen ? this.results.hits[this.results.histHits] : null;
    while (u && u.item <= last) u = this.results.hits[u.n + 1];
    this.unseen = u || null;
    this.renderPill();
  }

  unseenCount() {
    return this.unseen ? this.results.hits.length - this.unseen.n : 0;
  }

  // showUnseen scrolls the first unseen match (with its file's header)
  // to the top of the list.
  showUnseen() {
    const u = this.unseen;
    if (!u) return;
    const r = this.results;
    r.vlist.scrollToStart(r.items[u.item - 1]?.kind === 'file' ? u.item - 1 : u.item);
  }

  renderPill() {
    const n = this.unseenCount();
    const pill = this.els.pill;
    pill.hidden = n === 0;
    if (n) pill.textContent = `↓ ${fmtInt(n)} new ${n === 1 ? 'match' : 'matches'}`;
  }

  render() {
    const el = clear(this.els.status);
    const r = this.results;
    const section = !!r.live && this.gen === r.gen;
    el.hidden = !section;
    el.dataset.state = this.state;
    this.renderPill();
    if (!section) return;
    const n = r.liveCount;
    el.append(h('span', { class: 'live-dot', 'aria-hidden': 'true' }));
    switch (this.state) {
      case 'connecting': el.append('Live: connecting…'); break;
      case 'open': el.append('Live: following new matches'); break;
      case 'retry': el.append(`Live: connecting again in ${Math.ceil(this.detail.delay / 1000)} s`,
        h('span', { class: 'reason', text: ` (${this.detail.reason})` })); break;
      case 'failed': el.append('Live stopped: ', h('span', { class: 'reason', text: this.detail.reason })); break;
      default: el.append('Live off');
    }
    el.append(h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }),
      `${fmtInt(n)} new ${n === 1 ? 'match' : 'matches'}`);
    if (this.dropped) {
      el.append(h('span', { class: 'sep', 'aria-hidden': 'true', text: '·' }),
        h('span', { class: 'capped', title: `${fmtInt(this.dropped)} older live matches were let go to bound memory`,
          text: `keeping the newest ${fmtInt(liveConfig.cap)}` }));
    }
    if (this.notice) el.append(h('span', { class: 'notice', text: this.notice }));
  }
}
