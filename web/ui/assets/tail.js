// The client of /api/tail: newly indexed matching lines as Server-Sent
// Events (server/API.md). EventSource cannot send the Authorization header
// the API may want, so the stream is read with fetch (through api.js,
// which adds the token and asks for one on a 401) and parsed here.
//
// TailStream keeps the id of the last message it got — a hit's, or an
// id-only position marker's — and, when the connection breaks or the
// server ends the stream, connects again with it as Last-Event-ID after a
// growing delay, so that nothing is missed or repeated. A stream silent
// for longer than the server's heartbeats allow counts as broken.

import * as api from './api.js';

// SSEParser splits a text/event-stream into events as the HTML standard's
// EventSource does: lines end with CRLF, LF or CR (also across chunks),
// "field: value" with one space after the colon dropped, comments start
// with ":", an event is dispatched at an empty line; the last event id
// lasts until an "id" field changes it (an event without data sets it
// too, but is not dispatched).
export class SSEParser {
  constructor() {
    this.rest = '';
    this.skipLF = false; // the last chunk ended with CR: a LF first is part of it
    this.data = [];
    this.event = '';
    this.idBuf = '';
    this.lastId = '';
  }

  // push parses a chunk; it returns the events it completes, each
  // {event, data, id} (event 'message' when unnamed).
  push(text) {
    const out = [];
    let s = this.rest + text;
    if (this.skipLF && s.charCodeAt(0) === 10) s = s.slice(1);
    this.skipLF = false;
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      this.line(s.slice(start, i), out);
      if (c === 13) {
        if (i + 1 === s.length) this.skipLF = true;
        else if (s.charCodeAt(i + 1) === 10) i++;
      }
      start = i + 1;
    }
    this.rest = s.slice(start);
    return out;
  }

  line(l, out) {
    if (l === '') {
      this.lastId = this.idBuf;
      if (this.data.length) out.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.lastId });
      this.data = [];
      this.event = '';
      return;
    }
    if (l.charCodeAt(0) === 58) return; // ':' comment (a heartbeat)
    const i = l.indexOf(':');
    const field = i < 0 ? l : l.slice(0, i);
    let value = i < 0 ? '' : l.slice(i + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case 'event': this.event = value; break;
      case 'data': this.data.push(value); break;
      case 'id': if (!value.includes('\0')) this.idBuf = value; break;
      default: // retry and unknown fields: ignored
    }
  }
}

// tailConfig holds the stream's timings (the tests shorten them).
export const tailConfig = {
  retryMs: 1000, // the first delay before connecting again; it doubles
  maxRetryMs: 30_000,
  idleMs: 60_000, // silence that counts as a dead connection (the server beats every 15 s)
  waitOpenMs: 2000, // at most this long a search waits for its stream to open
};

// reasons a stream ended that call for a fresh start rather than a resume.
const TOO_SLOW = /^client too slow/;

export class TailStream {
  // params: {q, mode, case}; cb: {onHit(hit), onState(state, detail),
  // onNotice(text)}. States: 'connecting', 'open', 'retry' ({delay,
  // reason}), 'failed' ({reason}: given up, e.g. a bad query).
  constructor(params, cb, lastId = '') {
    this.params = params;
    this.cb = cb;
    this.lastId = lastId;
    this.stopped = false;
    this.ctl = null;
    let opened;
    // opened settles when the first connection answers (or fails, or
    // takes too long): a search waits for it.
    this.opened = new Promise((r) => { opened = r; });
    this.markOpened = opened;
    setTimeout(opened, tailConfig.waitOpenMs);
    this.run();
  }

  stop() {
    this.stopped = true;
    this.ctl?.abort();
    this.wake?.();
    this.markOpened();
  }

  async run() {
    let failures = 0;
    while (!this.stopped) {
      this.cb.onState('connecting');
      const ctl = (this.ctl = new AbortController());
      let reason = '', gotHit = false, retryAfter = 0, openedAt = 0;
      try {
        const res = await api.tail(this.params, this.lastId, { signal: ctl.signal });
        this.markOpened();
        if (this.stopped) { ctl.abort(); return; }
        this.cb.onState('open');
        openedAt = performance.now();
        const r = await this.read(res.body, ctl, () => { gotHit = true; });
        reason = r ?? 'the connection closed';
      } catch (err) {
        this.markOpened();
        if (this.stopped) return;
        if (err.status >= 400 && err.status < 500) { // a bad query, a refused token: trying again will not help
          this.cb.onState('failed', { reason: err.message });
          return;
        }
        reason = ctl.signal.reason?.message || err.message || String(err);
        retryAfter = (err.retryAfter || 0) * 1000;
      }
      if (this.stopped) return;
      if (TOO_SLOW.test(reason)) {
        // The server no longer has where this stream was: start from now.
        this.cb.onNotice(`Live fell behind and started again from now; matches in between are not shown (${reason})`);
        this.lastId = '';
      }
      // Backing off is for a server that keeps failing: a stream that
      // worked for a while (hits, or open long) starts over.
      const worked = gotHit || (openedAt && performance.now() - openedAt > tailConfig.maxRetryMs);
      failures = worked ? 1 : failures + 1;
      const delay = Math.max(retryAfter, Math.min(tailConfig.maxRetryMs, tailConfig.retryMs * 2 ** (failures - 1)));
      this.cb.onState('retry', { delay, reason });
      await new Promise((r) => {
        const t = setTimeout(r, delay);
        this.wake = () => { clearTimeout(t); r(); };
      });
    }
  }

  // read parses the stream until it ends; it returns the reason of an
  // "end" event, or null when the body just stopped. A chunk of
  // nothing for tailConfig.idleMs aborts it.
  async read(body, ctl, onHit) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SSEParser();
    parser.lastId = parser.idBuf = this.lastId;
    let idle = 0;
    const watch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => ctl.abort(new Error(`no data for ${tailConfig.idleMs / 1000} s`)), tailConfig.idleMs);
    };
    try {
      for (;;) {
        watch();
        const { value, done } = await reader.read();
        if (done) return null;
        for (const ev of parser.push(value)) {
          let data = null;
          try { data = JSON.parse(ev.data); } catch { /* not JSON: ignored */ }
          if (ev.event === 'hit' && data) {
            api.shownHit(data);
            onHit();
            this.cb.onHit(data);
          } else if (ev.event === 'reset') {
            this.cb.onNotice(`Live started again from now: ${data?.reason || 'the server reset the stream'}`);
          } else if (ev.event === 'end') {
            this.lastId = parser.lastId;
            return data?.reason || 'the server ended the stream';
          }
        }
        this.lastId = parser.lastId;
      }
    } finally {
      clearTimeout(idle);
      reader.cancel().catch(() => {});
    }
  }
}
