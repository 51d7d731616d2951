// The swimlane as the report draws it (src/plot/swimlane.rs, its data rules ported):
// the sampled requests around the first outage, one lane per request in arrival
// order, a bar per attempt the fleet sent to the first service, coloured by outcome.

import { COLOURS, bands, frame, legend } from "./charts.js";

/** Most lanes drawn (the report's MAX_LANES). */
export const MAX_LANES = 200;
/** Seconds before the first outage's start, and after its end (BEFORE, AFTER). */
const BEFORE = 2.0;
const AFTER = 10.0;

/** The report's colour of each attempt outcome (palette::OUTCOMES), legend order. */
export const OUTCOMES = [
  ["success", "rgb(0,158,115)"],
  ["timeout", "rgb(230,159,0)"],
  ["error", "rgb(190,30,45)"],
  ["rejected", "rgb(140,86,75)"],
  ["overloaded", "rgb(140,86,75)"],
  ["bulkhead_full", "rgb(140,86,75)"],
  ["pool_exhausted", "rgb(140,86,75)"],
  ["rate_limited", "rgb(140,86,75)"],
  ["priority_shed", "rgb(140,86,75)"],
  ["conflict", "rgb(188,189,34)"],
  ["deadline_exceeded", "rgb(148,103,189)"],
  ["breaker_open", "rgb(204,121,167)"],
  ["budget_exhausted", "rgb(86,180,233)"],
  ["cancelled", "rgb(150,150,150)"],
  ["in_flight", "rgb(64,64,64)"],
];
const OUTCOME_COLOUR = new Map(OUTCOMES);
export const outcomeColour = (o) => OUTCOME_COLOUR.get(o === "" ? "in_flight" : o) ?? "rgb(64,64,64)";

/** The rows of `traces.csv` as the swimlane reads them, from the engine's traces, in
 * file order (request ordinal, then span index). */
function rows(tr) {
  const out = tr.spans.map((s, i) => {
    const req = tr.requests[s[0]];
    const stack = tr.stacks[s[3]];
    return {
      request: req[0],
      span: i,
      parent: s[1] < 0 ? null : s[1],
      attempt: s[2] === "attempt" || s[2] === "hedge",
      fleetSide: tr.fleets[req[1]] === stack.caller,
      send: s[6],
      arrive: s[7],
      end: s[9],
      done: s[11],
      outcome: s[10],
      budgetRefused: s[13] === "refused" || s[13] === "limiter_refused",
      breakerRejected: s[14].includes("rejected"),
    };
  });
  out.sort((a, b) => a.request - b.request || a.span - b.span);
  return out;
}

/** The lanes of the traces (swimlane.rs's lanes_of). */
export function lanesOf(tr) {
  const rs = rows(tr);
  const callers = new Set(rs.filter((r) => r.attempt && r.parent !== null).map((r) => `${r.request}:${r.parent}`));
  let latest = 0;
  const lanes = new Map();
  const rooted = new Set();
  for (const r of rs) {
    for (const t of [r.send, r.arrive, r.end, r.done]) if (t !== null) latest = Math.max(latest, t);
    let lane = lanes.get(r.request);
    if (!lane) {
      lane = { ordinal: r.request, start: r.send, stop: r.end, bars: [], refusals: [] };
      lanes.set(r.request, lane);
    }
    if (r.parent === null) {
      rooted.add(r.request);
      lane.start = r.send;
      lane.stop = r.end;
    } else if (!rooted.has(r.request)) {
      lane.start = Math.min(lane.start, r.send);
      lane.stop = lane.stop !== null && r.end !== null ? Math.max(lane.stop, r.end) : null;
    }
    if (!r.fleetSide) continue;
    const refused = r.budgetRefused || (r.breakerRejected && r.arrive === null);
    if (r.budgetRefused) lane.refusals.push([r.send, "budget"]);
    if (r.breakerRejected) lane.refusals.push([r.send, "breaker"]);
    if (r.attempt && !refused && !callers.has(`${r.request}:${r.span}`)) {
      lane.bars.push({ send: r.send, end: r.end, done: r.done, outcome: r.outcome });
    }
  }
  return { lanes: [...lanes.values()].sort((a, b) => a.ordinal - b.ordinal), latest };
}

/** The window and the lanes drawn (SwimlaneChart::new); null when none meets it. */
export function swimlaneOf(tr) {
  const traces = lanesOf(tr);
  const outages = tr.windows.map((w) => [w[0], w[1]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const end = Math.max(tr.end, traces.latest);
  const first = outages.filter(([a, b]) => a < b && a < end).sort((x, y) => x[0] - y[0])[0];
  let [lo, hi] = first ? [Math.max(0, first[0] - BEFORE), Math.min(end, first[1] + AFTER)] : [0, end];
  if (!(hi > lo)) hi = lo + 1;
  const all = traces.lanes.filter((l) => l.start <= hi && (l.stop === null || l.stop >= lo));
  if (all.length === 0) return null;
  const lanes = all.length > MAX_LANES ? Array.from({ length: MAX_LANES }, (_, j) => all[Math.floor((j * all.length) / MAX_LANES)]) : all;
  return { lanes, meeting: all.length, window: [lo, hi], aroundOutage: Boolean(first), outages };
}

/** Draws the swimlane of the traces `tr` of scenario `name`. */
export function drawSwimlane(canvas, legendEl, captionEl, tr, name) {
  const c = swimlaneOf(tr);
  if (!c) {
    canvas.getContext("2d").clearRect(0, 0, canvas.width, canvas.height);
    legend(legendEl, []);
    captionEl.textContent = "No sampled request meets the window.";
    return null;
  }
  const [lo, hi] = c.window;
  const n = c.lanes.length;
  const f = frame(canvas, {
    x: [lo, hi],
    y: [-0.5, n - 0.5],
    xLabel: "time (s)",
    yLabel: "request (in arrival order)",
    yFormat: (v) => {
      const j = n - 1 - Math.round(v);
      return Math.abs(v - Math.round(v)) < 1e-6 && c.lanes[j] ? String(c.lanes[j].ordinal) : "";
    },
  });
  f.clip();
  const g = f.g;
  bands(f, c.outages, COLOURS.outage, f.m.top, f.m.top + f.ph);
  const lanePx = f.ph / n;
  const half = Math.min(0.5, Math.max(0.3, 0.5 / lanePx));
  const clip = (t) => Math.min(hi, Math.max(lo, t));
  const seen = new Set();
  let orphans = false;
  const refusals = new Set();
  c.lanes.forEach((lane, j) => {
    const y = n - 1 - j;
    const Y = f.py(y);
    const a = lane.start;
    const b = lane.stop ?? hi;
    if (b >= lo && a <= hi) {
      g.strokeStyle = "rgb(205,205,205)";
      g.lineWidth = 1;
      g.beginPath();
      g.moveTo(f.px(clip(a)), Y);
      g.lineTo(f.px(clip(b)), Y);
      g.stroke();
    }
    for (const bar of lane.bars) {
      const stop = bar.end ?? hi;
      if (bar.done !== null && bar.done > stop && bar.done >= lo && stop <= hi) {
        g.strokeStyle = "rgb(70,70,70)";
        g.beginPath();
        g.moveTo(f.px(clip(stop)), Y);
        g.lineTo(f.px(clip(bar.done)), Y);
        g.stroke();
        if (bar.end !== null && bar.done > lo && bar.send < hi) orphans = true;
      }
      if (stop < lo || bar.send > hi) continue;
      const x0 = f.px(clip(bar.send));
      const x1 = Math.max(f.px(clip(stop)), x0 + 1);
      seen.add(bar.outcome === "" ? "in_flight" : bar.outcome);
      g.fillStyle = outcomeColour(bar.outcome);
      g.fillRect(x0, f.py(y + half), x1 - x0, Math.max(1, f.py(y - half) - f.py(y + half)));
    }
    const mark = Math.min(6, Math.max(2, lanePx * 0.9));
    for (const [t, kind] of lane.refusals) {
      if (t < lo || t > hi) continue;
      refusals.add(kind);
      g.fillStyle = kind === "budget" ? COLOURS.budget : COLOURS.breaker;
      const X = f.px(t);
      g.beginPath();
      g.moveTo(X, Y - mark);
      g.lineTo(X - mark, Y + mark);
      g.lineTo(X + mark, Y + mark);
      g.closePath();
      g.fill();
    }
  });
  g.restore();
  const keys = OUTCOMES.filter(([o]) => seen.has(o)).map(([o, col]) => [`attempt: ${o.replace(/_/g, " ")}`, col, "band"]);
  keys.push(["request lifetime", "rgb(205,205,205)", "line"]);
  if (orphans) keys.push(["served after its caller gave up", "rgb(70,70,70)", "line"]);
  if (refusals.has("budget")) keys.push(["refused by budget or limiter", COLOURS.budget, "band"]);
  if (refusals.has("breaker")) keys.push(["rejected by a breaker", COLOURS.breaker, "band"]);
  if (c.outages.some(([a, b]) => b > lo && a < hi)) keys.push(["outage", COLOURS.outage, "band"]);
  legend(legendEl, keys);
  const shown = n < c.meeting ? `${n} of the ${c.meeting} sampled requests alive in the window (at most ${MAX_LANES}, evenly spread)` : `the ${n} sampled requests alive in the window`;
  const window = c.aroundOutage ? `from ${BEFORE} s before the first outage to ${AFTER} s after it` : "over the whole run";
  captionEl.textContent = `${name}: one lane per request, in arrival order (${shown}), ${window}: each bar is an attempt the fleet sent to the first service, from its send to when its caller learned the outcome, coloured by that outcome; a dark tail, the service still working on an attempt its caller had given up on; triangles, calls a retry budget, a rate limiter or a breaker refused.`;
  canvas.dataset.lanes = String(n);
  return c;
}
