// The playground's three charts, drawn on canvases: what `retrysim plot` draws for a
// run folder (src/plot/timeseries.rs, phase.rs, herd.rs), from the numbers the engine
// returns (src/plot/chart_data.rs), in the same colours (src/plot/palette.rs).

export const COLOURS = {
  offered: "rgb(64,64,64)",
  inbound: "rgb(230,159,0)",
  goodput: "rgb(0,114,178)",
  capacity: "rgb(190,30,45)",
  success: "rgb(0,158,115)",
  outage: "rgba(213,94,0,0.15)",
  breaker: "rgb(204,121,167)",
  budget: "rgb(86,180,233)",
  branches: ["rgb(0,114,178)", "rgb(213,94,0)", "rgb(0,158,115)"],
  grid: "rgb(225,225,225)",
  axis: "rgb(90,90,90)",
  text: "rgb(40,40,40)",
};

/** The largest of the numbers in `lists` (nulls skipped) and `floor`. */
function maxOf(floor, ...lists) {
  let m = floor;
  for (const list of lists) for (const v of list) if (v !== null && v > m) m = v;
  return m;
}

/** The smallest of the numbers in `list` and `ceiling`. */
function minOf(ceiling, list) {
  let m = ceiling;
  for (const v of list) if (v < m) m = v;
  return m;
}

/** Top of an axis a little above its largest value (as the CLI's `upper`). */
function upper(max) {
  return Number.isFinite(max) && max > 0 ? max * 1.08 : 1;
}

/** About `n` round tick values (1, 2 or 5 times a power of ten) over [lo, hi]. */
function ticks(lo, hi, n) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / n;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw);
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  }
  return out;
}

/** A tick label: whole numbers bare, else as few decimals as the step needs. */
export function tickLabel(v) {
  if (Math.abs(v - Math.round(v)) < 1e-9) return String(Math.round(v));
  return String(Number(v.toPrecision(6)));
}

/** A canvas sized to its box at the screen's pixel density, and its 2-D context. */
export function surface(canvas) {
  const dpr = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 600;
  const h = canvas.clientHeight || 300;
  if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
    canvas.width = Math.round(w * dpr);
    canvas.height = Math.round(h * dpr);
  }
  const g = canvas.getContext("2d");
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, h);
  g.font = "12px system-ui, sans-serif";
  return { g, w, h };
}

/**
 * A plot frame: axes with ticks and labels, a grid, and mappings from data to
 * pixels. `y2` (optional) is a second axis on the right.
 */
export function frame(canvas, { x, y, y2, xLabel, yLabel, y2Label, y2Ticks, yFormat }) {
  const { g, w, h } = surface(canvas);
  const m = { left: 62, right: y2 ? 58 : 16, top: 12, bottom: 44 };
  const pw = w - m.left - m.right;
  const ph = h - m.top - m.bottom;
  const px = (v) => m.left + ((v - x[0]) / (x[1] - x[0])) * pw;
  const py = (v) => m.top + ph - ((v - y[0]) / (y[1] - y[0])) * ph;
  const py2 = y2 ? (v) => m.top + ph - ((v - y2[0]) / (y2[1] - y2[0])) * ph : null;
  g.lineWidth = 1;
  g.strokeStyle = COLOURS.grid;
  g.fillStyle = COLOURS.text;
  g.textAlign = "center";
  g.textBaseline = "top";
  for (const v of ticks(x[0], x[1], Math.max(2, Math.floor(pw / 80)))) {
    const X = Math.round(px(v)) + 0.5;
    g.beginPath();
    g.moveTo(X, m.top);
    g.lineTo(X, m.top + ph);
    g.stroke();
    g.fillText(tickLabel(v), X, m.top + ph + 5);
  }
  g.textAlign = "right";
  g.textBaseline = "middle";
  for (const v of ticks(y[0], y[1], Math.max(2, Math.floor(ph / 45)))) {
    const Y = Math.round(py(v)) + 0.5;
    g.beginPath();
    g.moveTo(m.left, Y);
    g.lineTo(m.left + pw, Y);
    g.stroke();
    g.fillText(yFormat ? yFormat(v) : tickLabel(v), m.left - 6, Y);
  }
  if (y2) {
    g.textAlign = "left";
    for (const v of y2Ticks) g.fillText(`${Math.round(v * 100)}`, m.left + pw + 6, py2(v));
  }
  g.strokeStyle = COLOURS.axis;
  g.strokeRect(m.left + 0.5, m.top + 0.5, pw, ph);
  g.fillStyle = COLOURS.text;
  g.font = "13px system-ui, sans-serif";
  g.textAlign = "center";
  g.textBaseline = "bottom";
  g.fillText(xLabel, m.left + pw / 2, h - 4);
  const vertical = (text, X) => {
    g.save();
    g.translate(X, m.top + ph / 2);
    g.rotate(-Math.PI / 2);
    g.textBaseline = "top";
    g.fillText(text, 0, 0);
    g.restore();
  };
  vertical(yLabel, 4);
  if (y2) {
    g.save();
    g.translate(w - 4, m.top + ph / 2);
    g.rotate(Math.PI / 2);
    g.textBaseline = "top";
    g.fillText(y2Label, 0, 0);
    g.restore();
  }
  const clip = () => {
    g.save();
    g.beginPath();
    g.rect(m.left, m.top, pw, ph);
    g.clip();
  };
  return { g, px, py, py2, m, pw, ph, clip };
}

/** Shaded spans `[a, b]` of x between y pixels `top` and `bottom`. */
export function bands(f, spans, colour, top, bottom) {
  f.g.fillStyle = colour;
  for (const [a, b] of spans) f.g.fillRect(f.px(a), top, f.px(b) - f.px(a), bottom - top);
}

/** A polyline through `xs`/`ys` (`null` breaks it), in `colour`. */
function line(f, xs, ys, colour, width, map = f.py) {
  const g = f.g;
  g.strokeStyle = colour;
  g.lineWidth = width;
  g.lineJoin = "round";
  g.beginPath();
  let pen = false;
  for (let i = 0; i < xs.length; i++) {
    if (ys[i] === null || ys[i] === undefined) {
      pen = false;
      continue;
    }
    const X = f.px(xs[i]);
    const Y = map(ys[i]);
    if (pen) g.lineTo(X, Y);
    else g.moveTo(X, Y);
    pen = true;
  }
  g.stroke();
}

function dashed(f, x0, y0, x1, y1) {
  const g = f.g;
  g.save();
  g.strokeStyle = COLOURS.capacity;
  g.lineWidth = 2;
  g.setLineDash([8, 5]);
  g.beginPath();
  g.moveTo(x0, y0);
  g.lineTo(x1, y1);
  g.stroke();
  g.restore();
}

/** The legend under a chart: `[label, colour, kind]`, kind `line`, `dash` or `band`. */
export function legend(el, entries) {
  el.replaceChildren(
    ...entries.map(([label, colour, kind]) => {
      const item = document.createElement("span");
      item.className = "key";
      const swatch = document.createElement("i");
      swatch.className = `swatch ${kind}`;
      swatch.style.setProperty("--c", colour);
      item.append(swatch, label);
      return item;
    }),
  );
}

/** The axes of the `timeseries` chart of `c`. */
export function timeseriesExtent(c) {
  return { end: c.end, ymax: upper(maxOf(c.capacity ?? 0, c.offered, c.inbound, c.goodput)) };
}

/** `timeseries`: offered, inbound and goodput per second, capacity, success rate;
 * `lim` (optional): the axes of another run's chart to share (see `joinExtents`). */
export function drawTimeseries(canvas, legendEl, c, lim = timeseriesExtent(c)) {
  const RATE_TOP = 1.25;
  const mid = c.t.map((t) => t + c.bucket / 2);
  const f = frame(canvas, {
    x: [0, lim.end],
    y: [0, lim.ymax],
    y2: [0, RATE_TOP],
    y2Ticks: [0, 0.2, 0.4, 0.6, 0.8, 1],
    xLabel: "time (s)",
    yLabel: "rate (per second)",
    y2Label: "success rate (%)",
  });
  f.clip();
  bands(f, c.outages, COLOURS.outage, f.m.top, f.m.top + f.ph);
  const strip = (spans, lo, hi, colour) => bands(f, spans, colour, f.py2(hi), f.py2(lo));
  strip(c.breaker_open, 1.17, 1.23, COLOURS.breaker);
  strip(c.budget_exhausted, 1.08, 1.14, COLOURS.budget);
  if (c.capacity !== null) dashed(f, f.m.left, f.py(c.capacity), f.m.left + f.pw, f.py(c.capacity));
  line(f, mid, c.offered, COLOURS.offered, 2);
  line(f, mid, c.inbound, COLOURS.inbound, 2);
  line(f, mid, c.goodput, COLOURS.goodput, 2);
  line(f, mid, c.success_rate, COLOURS.success, 2, f.py2);
  f.g.restore();
  const keys = [
    ["offered (requests/s)", COLOURS.offered, "line"],
    ["inbound (attempts/s)", COLOURS.inbound, "line"],
    ["goodput (successes/s)", COLOURS.goodput, "line"],
  ];
  if (c.capacity !== null) keys.push(["capacity (attempts/s)", COLOURS.capacity, "dash"]);
  keys.push(["success rate (right axis)", COLOURS.success, "line"]);
  if (c.outages.length) keys.push(["outage", COLOURS.outage, "band"]);
  if (c.breaker_open.length) keys.push(["breaker open", COLOURS.breaker, "band"]);
  if (c.budget_exhausted.length) keys.push(["retry budget exhausted", COLOURS.budget, "band"]);
  legend(legendEl, keys);
}

/** The axes of the `phase` chart of `c`. */
export function phaseExtent(c) {
  const pts = c.phase.flatMap((b) => b.points);
  const xmax = upper(maxOf(c.capacity ?? 0, pts.map((p) => p[0])));
  const lowest = minOf(1, pts.map((p) => p[1]));
  // The CLI's padded(min(lowest, 0.9), 1.0), floored at 0.
  const lo = Math.min(lowest, 0.9);
  return { xmax, ylo: Math.max(0, lo - (1 - lo) * 0.05) };
}

/** `phase`: success rate against inbound load, one point a bucket, by branch. */
export function drawPhase(canvas, legendEl, c, lim = phaseExtent(c)) {
  const f = frame(canvas, {
    x: [0, lim.xmax],
    y: [lim.ylo, 1.03],
    xLabel: "inbound load at the dependency (attempts/s)",
    yLabel: "success rate (%)",
    yFormat: (v) => `${Math.round(v * 100)}`,
  });
  f.clip();
  if (c.capacity !== null) dashed(f, f.px(c.capacity), f.m.top, f.px(c.capacity), f.m.top + f.ph);
  const g = f.g;
  c.phase.forEach((b, i) => {
    const colour = COLOURS.branches[i % 3];
    line(f, b.points.map((p) => p[0]), b.points.map((p) => p[1]), colour, 2);
    g.fillStyle = colour;
    g.globalAlpha = 0.7;
    for (const [x, y] of b.points) {
      g.beginPath();
      g.arc(f.px(x), f.py(y), 3, 0, 2 * Math.PI);
      g.fill();
    }
    g.globalAlpha = 1;
  });
  g.restore();
  const first = c.phase[0]?.points[0];
  const last = c.phase.at(-1)?.points.at(-1);
  g.strokeStyle = "black";
  g.fillStyle = COLOURS.text;
  g.lineWidth = 2;
  g.textAlign = "left";
  g.textBaseline = "middle";
  if (first) {
    g.beginPath();
    g.arc(f.px(first[0]), f.py(first[1]), 7, 0, 2 * Math.PI);
    g.stroke();
    g.fillText("start", f.px(first[0]) + 10, f.py(first[1]) - 14);
  }
  if (last) {
    const X = f.px(last[0]);
    const Y = f.py(last[1]);
    g.beginPath();
    g.moveTo(X - 6, Y - 6);
    g.lineTo(X + 6, Y + 6);
    g.moveTo(X + 6, Y - 6);
    g.lineTo(X - 6, Y + 6);
    g.stroke();
    g.fillText("end", X + 10, Y + 12);
  }
  const keys = c.phase.map((b, i) => [b.label, COLOURS.branches[i % 3], "line"]);
  if (c.capacity !== null) keys.push(["capacity (attempts/s)", COLOURS.capacity, "dash"]);
  legend(legendEl, keys);
}

/** The axes of the `herd` chart of `c`. */
export function herdExtent(c) {
  const h = c.herd;
  const perBucket = c.capacity === null ? null : c.capacity * h.width;
  return {
    lo: h.t.length ? h.t[0] : 0,
    hi: h.t.length ? h.t.at(-1) + h.width : 1,
    ymax: upper(maxOf(perBucket ?? 0, h.inbound)),
  };
}

/** The axes two runs' charts share: the union of their extents. */
export function joinExtents(a, b) {
  const out = {};
  for (const k of Object.keys(a)) {
    out[k] = k === "lo" || k === "ylo" ? Math.min(a[k], b[k]) : Math.max(a[k], b[k]);
  }
  return out;
}

/** `herd`: attempt arrivals per fine bucket around the outage, capacity for scale. */
export function drawHerd(canvas, legendEl, c, lim = herdExtent(c)) {
  const h = c.herd;
  const width = h.width;
  const ms = `${tickLabel(width * 1000)} ms`;
  const { lo, hi, ymax } = lim;
  const perBucket = c.capacity === null ? null : c.capacity * width;
  const f = frame(canvas, {
    x: [lo, hi],
    y: [0, ymax],
    xLabel: "time (s)",
    yLabel: `attempts arriving per ${ms}`,
  });
  f.clip();
  const g = f.g;
  bands(f, c.outages, COLOURS.outage, f.m.top, f.m.top + f.ph);
  // A step line: each fine bucket is flat over its width.
  const h0 = h.t.length ? h.t[0] : lo;
  const h1 = h.t.length ? h.t.at(-1) + width : hi;
  g.beginPath();
  g.moveTo(f.px(h0), f.py(0));
  h.t.forEach((t, i) => {
    g.lineTo(f.px(t), f.py(h.inbound[i]));
    g.lineTo(f.px(t + width), f.py(h.inbound[i]));
  });
  g.lineTo(f.px(h1), f.py(0));
  g.closePath();
  g.fillStyle = "rgba(230,159,0,0.25)";
  g.fill();
  g.strokeStyle = COLOURS.inbound;
  g.lineWidth = 1;
  g.stroke();
  if (perBucket !== null) dashed(f, f.m.left, f.py(perBucket), f.m.left + f.pw, f.py(perBucket));
  g.restore();
  const keys = [["attempt arrivals", COLOURS.inbound, "line"]];
  if (perBucket !== null) {
    keys.push([`capacity (${tickLabel(perBucket)} attempts per ${ms})`, COLOURS.capacity, "dash"]);
  }
  if (c.outages.some(([a, b]) => b > lo && a < hi)) keys.push(["outage", COLOURS.outage, "band"]);
  legend(legendEl, keys);
}

/** Height of one service's panel, pixels (as the report's PANEL_H). */
const PANEL_H = 150;

/** `services`: a panel per service of a graph on a shared time axis: inbound attempts
 * and goodput per second, busy threads as a share of the servers (or busy threads,
 * with unlimited servers) on the right axis, the outages that hit it shaded. `sv` is
 * the engine's `services`; `end`, the time axis's end. */
export function drawServices(canvas, legendEl, sv, end) {
  const n = sv.services.length;
  canvas.style.height = `${Math.min(2400, PANEL_H * n + 50)}px`;
  const { g, w, h } = surface(canvas);
  const m = { left: 62, right: 58, top: 8, bottom: 42 };
  const pw = w - m.left - m.right;
  const ph = (h - m.top - m.bottom) / n;
  const mid = sv.t.map((t) => t + sv.bucket / 2);
  const px = (v) => m.left + (v / end) * pw;
  g.font = "11px system-ui, sans-serif";
  let anyUtil = false;
  let anyThreads = false;
  let anyOutage = false;
  sv.services.forEach((s, k) => {
    const top = m.top + k * ph;
    const bottom = top + ph - 14;
    const ymax = upper(maxOf(0, s.inbound, s.goodput));
    const py = (v) => bottom - (v / ymax) * (bottom - top - 14);
    const util = s.utilisation.some((v) => v !== null);
    anyUtil ||= util;
    anyThreads ||= !util;
    const rmax = util ? 1.25 : upper(maxOf(0, s.threads));
    const py2 = (v) => bottom - (v / rmax) * (bottom - top - 14);
    g.fillStyle = COLOURS.outage;
    for (const [a, b] of s.outages) {
      anyOutage = true;
      g.fillRect(px(a), top + 14, px(Math.min(b, end)) - px(a), bottom - top - 14);
    }
    g.strokeStyle = COLOURS.grid;
    g.lineWidth = 1;
    g.textAlign = "right";
    g.textBaseline = "middle";
    g.fillStyle = COLOURS.text;
    for (const v of ticks(0, ymax, 3)) {
      const Y = Math.round(py(v)) + 0.5;
      g.beginPath();
      g.moveTo(m.left, Y);
      g.lineTo(m.left + pw, Y);
      g.stroke();
      g.fillText(tickLabel(v), m.left - 6, Y);
    }
    g.textAlign = "left";
    for (const v of util ? [0, 0.5, 1] : ticks(0, rmax, 3)) g.fillText(util ? `${Math.round(v * 100)}%` : tickLabel(v), m.left + pw + 6, py2(v));
    const trace = (ys, colour, map) => line({ g, px, py: map }, mid, ys, colour, 1.5, map);
    trace(s.inbound, COLOURS.inbound, py);
    trace(s.goodput, COLOURS.goodput, py);
    trace(util ? s.utilisation : s.threads, "rgb(148,103,189)", py2);
    g.strokeStyle = COLOURS.axis;
    g.strokeRect(m.left + 0.5, top + 14.5, pw, bottom - top - 14);
    g.fillStyle = COLOURS.text;
    g.textAlign = "left";
    g.textBaseline = "top";
    g.font = "600 12px system-ui, sans-serif";
    g.fillText(`${s.name}${s.servers === null ? " (unlimited threads)" : ` (${s.servers} threads)`}`, m.left, top);
    g.font = "11px system-ui, sans-serif";
  });
  g.textAlign = "center";
  g.textBaseline = "top";
  const base = m.top + n * ph - 14;
  for (const v of ticks(0, end, Math.max(2, Math.floor(pw / 80)))) g.fillText(tickLabel(v), px(v), base + 4);
  g.font = "13px system-ui, sans-serif";
  g.textBaseline = "bottom";
  g.fillText("time (s)", m.left + pw / 2, h - 4);
  const keys = [
    ["inbound (attempts/s)", COLOURS.inbound, "line"],
    ["goodput (successes/s)", COLOURS.goodput, "line"],
  ];
  if (anyUtil) keys.push(["busy threads / servers (right axis)", "rgb(148,103,189)", "line"]);
  if (anyThreads) keys.push(["busy threads (right axis, unlimited servers)", "rgb(148,103,189)", "line"]);
  if (anyOutage) keys.push(["outage", COLOURS.outage, "band"]);
  legend(legendEl, keys);
  canvas.dataset.panels = String(n);
}

/** The report's service-box fills by peak utilisation (palette::UTILISATION_CLASSES). */
const UTILISATION = [
  [0.5, "rgb(204,235,197)", "peak utilisation < 50%"],
  [0.8, "rgb(255,237,160)", "peak utilisation 50-80%"],
  [0.95, "rgb(253,190,120)", "peak utilisation 80-95%"],
  [Infinity, "rgb(244,140,120)", "peak utilisation >= 95%"],
];

/** An arrow's label: the callee's attempts per request, three significant digits. */
function attemptsLabel(a) {
  if (a === null || !Number.isFinite(a)) return "n/a";
  const digits = Math.abs(a) >= 100 ? 0 : Math.abs(a) >= 10 ? 1 : 2;
  return `${a.toFixed(digits)}/req`;
}

/** `graph`: the service graph as the report draws it, from the engine's `graph` (boxes
 * and arrows placed by the report's layout), scaled to the canvas. */
export function drawGraph(canvas, legendEl, gr) {
  const w = canvas.clientWidth || 600;
  const k = Math.min(1, w / gr.w);
  canvas.style.height = `${Math.round(gr.h * k) + 8}px`;
  const G = surface(canvas).g;
  G.save();
  G.translate(Math.max(0, (w - gr.w * k) / 2), 4);
  G.scale(k, k);
  const ink = "rgb(80,80,80)";
  G.strokeStyle = ink;
  G.fillStyle = ink;
  G.lineWidth = 1.5;
  for (const e of gr.edges) {
    const p = e.path;
    G.beginPath();
    G.moveTo(p[0][0], p[0][1]);
    for (const [x, y] of p.slice(1)) G.lineTo(x, y);
    G.stroke();
    const [tx, ty] = p.at(-1);
    G.beginPath();
    G.moveTo(tx, ty);
    G.lineTo(tx - 9, ty - 5);
    G.lineTo(tx - 9, ty + 5);
    G.closePath();
    G.fill();
    const [ax, ay] = p.at(-2);
    G.font = "12px system-ui, sans-serif";
    G.textAlign = "center";
    G.textBaseline = "bottom";
    G.fillText(attemptsLabel(e.attempts), (ax + tx) / 2, (ay + ty) / 2 - 4);
  }
  let unknown = false;
  for (const n of gr.nodes) {
    const [x0, y0, x1, y1] = n.rect;
    const fill = n.fleet
      ? "rgb(226,226,226)"
      : n.peak === null
        ? ((unknown = true), "rgb(232,238,250)")
        : UTILISATION.find(([hi]) => n.peak < hi)[1];
    G.fillStyle = fill;
    G.fillRect(x0, y0, x1 - x0, y1 - y0);
    G.strokeStyle = ink;
    G.strokeRect(x0 + 0.5, y0 + 0.5, x1 - x0, y1 - y0);
    const lines = n.fleet
      ? [n.name, "fleet"]
      : [n.name, n.servers === null ? "servers ∞" : `servers ${n.servers}`, n.peak === null ? "peak util n/a" : `peak util ${(n.peak * 100).toFixed(0)}%`];
    G.fillStyle = "black";
    G.textAlign = "center";
    G.textBaseline = "middle";
    const lh = 17;
    const top = (y0 + y1) / 2 - ((lines.length - 1) * lh) / 2;
    lines.forEach((t, i) => {
      G.font = i === 0 ? "bold 14px system-ui, sans-serif" : "12px system-ui, sans-serif";
      G.fillText(t, (x0 + x1) / 2, top + i * lh, x1 - x0 - 8);
    });
  }
  G.restore();
  const keys = [["fleet", "rgb(226,226,226)", "band"], ["call: callee attempts/request", ink, "line"]];
  for (const [, c, label] of UTILISATION) keys.push([label, c, "band"]);
  if (unknown) keys.push(["utilisation unknown", "rgb(232,238,250)", "band"]);
  legend(legendEl, keys);
  canvas.dataset.nodes = String(gr.nodes.length);
  canvas.dataset.edges = String(gr.edges.length);
}
