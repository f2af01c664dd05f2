// Times as the API gives them: RFC 3339 strings in the index's zone (the
// server's --tz). The UI shows a time's wall clock as written, in that
// zone, rather than in the browser's: a hit's time then reads like the
// timestamp in the line itself, and a range picked on the histogram is
// written back in the same zone.

const RFC3339 = /^(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/;
const PLAIN = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d)(?::(\d\d))?$/; // the API's "2026-11-29 14:02", UTC
const DATE = /^(\d{4})-(\d\d)-(\d\d)$/; // midnight, UTC (as the API reads it)
const AGO_TERM = /(\d{1,9})(ms|s|m|h|d|w)/y; // the API's "1d12h": terms summed
const UNIT_MS = { ms: 1, s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 7 * 86400e3 };
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
export const DAY = 86400e3;

// The range presets: `from` as a duration ago (the API's form, so a shared
// link means "the last hour" whenever it is opened).
export const PRESETS = [
  { id: '15m', label: '15m', title: 'Last 15 minutes', name: 'the last 15 minutes' },
  { id: '1h', label: '1h', title: 'Last hour', name: 'the last hour' },
  { id: '24h', label: '24h', title: 'Last 24 hours', name: 'the last 24 hours' },
  { id: '7d', label: '7d', title: 'Last 7 days', name: 'the last 7 days' },
];

// parseTime reads an API time into {ms, off}: epoch milliseconds and the
// zone's offset in minutes. null when s is not RFC 3339.
export function parseTime(s) {
  const m = RFC3339.exec(s || '');
  if (!m) return null;
  const z = m[8];
  const off = z === 'Z' || z === 'z' ? 0 : (z[0] === '-' ? -1 : 1) * (Number(z.slice(1, 3)) * 60 + Number(z.slice(4, 6)));
  const frac = m[7] ? Math.floor(Number(m[7]) * 1000) : 0;
  return { ms: Date.UTC(+m[1], m[2] - 1, +m[3], +m[4], +m[5], +m[6], frac) - off * 60e3, off };
}

// absTime turns any of the API's range forms into epoch ms (a duration is
// taken back from now); null when it cannot tell.
export function absTime(s, now = Date.now()) {
  s = (s || '').trim();
  const t = parseTime(s);
  if (t) return t.ms;
  if (s === 'now') return now;
  let m = PLAIN.exec(s);
  if (m) return Date.UTC(+m[1], m[2] - 1, +m[3], +m[4], +m[5], +(m[6] || 0));
  m = DATE.exec(s);
  if (m) return Date.UTC(+m[1], m[2] - 1, +m[3]);
  if (/^\d{1,15}$/.test(s)) return Number(s); // epoch milliseconds
  let ago = 0, i = 0;
  while (i < s.length) {
    AGO_TERM.lastIndex = i;
    m = AGO_TERM.exec(s);
    if (!m) return null;
    ago += Number(m[1]) * UNIT_MS[m[2]];
    i = AGO_TERM.lastIndex;
  }
  return i > 0 ? now - ago : null;
}

// wall is the wall clock of ms in a zone off minutes east of UTC, as a
// Date read with its UTC getters.
const wall = (ms, off) => new Date(ms + off * 60e3);
const p2 = (n) => String(n).padStart(2, '0');
const day = (d) => `${MONTHS[d.getUTCMonth()]} ${d.getUTCDate()}`;
const hm = (d) => `${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}`;
const hms = (d) => `${hm(d)}:${p2(d.getUTCSeconds())}`;

// fmtRFC3339 writes ms as RFC 3339 in the zone off (whole seconds when
// they are whole).
export function fmtRFC3339(ms, off) {
  const d = wall(ms, off);
  const frac = d.getUTCMilliseconds() ? `.${String(d.getUTCMilliseconds()).padStart(3, '0')}` : '';
  const zone = off === 0 ? 'Z' : `${off < 0 ? '-' : '+'}${p2(Math.floor(Math.abs(off) / 60))}:${p2(Math.abs(off) % 60)}`;
  return `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())}T${hms(d)}${frac}${zone}`;
}

// fmtClock: "04:23:27", the wall clock of ms in the zone off.
export function fmtClock(ms, off) {
  return hms(wall(ms, off));
}

// hitTime is a hit's time for its row: {date: 'Oct 10', clock:
// '04:23:27'}, or null for a line without a time.
export function hitTime(s) {
  const t = parseTime(s);
  if (!t) return null;
  const d = wall(t.ms, t.off);
  return { date: day(d), clock: hms(d) };
}

// fmtStamp: "2026-10-10 04:23" (the files page's form of a time), with
// seconds if asked.
export function fmtStamp(s, seconds = false) {
  const t = parseTime(s);
  if (!t) return '–';
  const d = wall(t.ms, t.off);
  return `${d.getUTCFullYear()}-${p2(d.getUTCMonth() + 1)}-${p2(d.getUTCDate())} ${seconds ? hms(d) : hm(d)}`;
}

// fmtSpan: "Oct 10 04:00 – 05:00", the date repeated only when it
// changes; seconds when step (the span's precision) is under a minute.
export function fmtSpan(a, b, off, step) {
  const da = wall(a, off), db = wall(b, off);
  const clock = step < 60e3 ? hms : hm;
  if (step >= DAY && hm(da) === '00:00') {
    const last = wall(b - 1, off);
    return day(da) === day(last) ? day(da) : `${day(da)} – ${day(last)}`;
  }
  // "23:00 – 00:00" needs no second date; any other change of day does.
  const sameDay = day(da) === day(db) || (b - a < DAY && hm(db) === '00:00' && db.getUTCSeconds() === 0);
  return `${day(da)} ${clock(da)} – ${sameDay ? '' : `${day(db)} `}${clock(db)}`;
}

// fmtStep: "1 h", "30 s", "2 d".
export function fmtStep(ms) {
  for (const [u, n] of [['d', DAY], ['h', 3600e3], ['min', 60e3], ['s', 1e3]]) {
    if (ms >= n && ms % n === 0) return `${ms / n} ${u}`;
  }
  return `${ms} ms`;
}

// The widths the axis may step by (the API's bucket widths).
const TICK_STEPS = [1, 2, 5, 10, 15, 30].map((s) => s * 1e3)
  .concat([1, 2, 5, 10, 15, 30].map((m) => m * 60e3))
  .concat([1, 2, 3, 6, 12].map((x) => x * 3600e3))
  .concat([1, 2, 7, 14, 30, 91, 365].map((x) => x * DAY));

// ticks labels about n places of [a, b) on round wall-clock times: the
// clock, with the date where it changes (or the date alone for steps of a
// day and more).
export function ticks(a, b, off, n) {
  const span = b - a;
  if (!(span > 0)) return [];
  const step = TICK_STEPS.find((s) => s >= span / Math.max(1, n)) || TICK_STEPS[TICK_STEPS.length - 1];
  const o = off * 60e3;
  const out = [];
  let prevDay = '';
  for (let t = Math.ceil((a + o) / step) * step - o; t <= b; t += step) {
    const d = wall(t, off), dd = day(d);
    let label;
    if (step >= DAY) label = dd;
    else {
      const c = step < 60e3 ? hms(d) : hm(d);
      label = dd !== prevDay ? `${dd} ${c}` : c;
    }
    prevDay = dd;
    out.push({ ms: t, label });
  }
  return out;
}

// rangeName names a range for messages: "the last hour", "all time",
// "2026-10-10T10:00:00Z – 2026-10-10T12:00:00Z".
export function rangeName(from, to) {
  if (!from && !to) return 'all time';
  const p = !to && PRESETS.find((x) => x.id === from);
  if (p) return p.name;
  if (!to) return `the time since ${from}`;
  if (!from) return `the time before ${to}`;
  return `${from} – ${to}`;
}
