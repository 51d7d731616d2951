// One run, request by request: the traces of a sample of its requests (the engine's
// `trace` machinery, what `retrysim run --trace` writes) played back as marks that
// move from the caller (a fleet, or a service of a graph) through its retry layers to
// the service and back, each attempt coloured by its ordinal, the service shaded while
// an outage hits it. Nothing is invented: each mark is a span of the run, at its times.

import { COLOURS, surface, tickLabel } from "./charts.js";
import { outcomeColour } from "./swimlane.js";

/** Colours of attempt ordinals 1, 2, 3, 4 and 5 or more. */
export const ORDINALS = ["rgb(0,114,178)", "rgb(230,159,0)", "rgb(213,94,0)", "rgb(148,103,189)", "rgb(20,20,20)"];
const ordinalColour = (k) => ORDINALS[Math.min(Math.max(k, 1), ORDINALS.length) - 1];

/** Most caller → service paths drawn (one band each). */
const MAX_BANDS = 8;

export class Animation {
  /** `ui`: the play button, the speed select, the time slider, the clock output, the
   * legend and the caption's span. */
  constructor(canvas, ui) {
    this.canvas = canvas;
    this.ui = ui;
    this.trace = null;
    this.t = 0;
    this.playing = false;
    this.frames = 0;
    this.lastTick = null;
    ui.play.addEventListener("click", () => (this.playing ? this.pause() : this.play()));
    ui.time.addEventListener("input", () => {
      if (!this.trace) return;
      this.t = (Number(ui.time.value) / 1000) * this.trace.end;
      this.draw();
    });
    ui.speed.addEventListener("change", () => this.draw());
  }

  /** Sim seconds per real second. */
  get speed() {
    return Number(this.ui.speed.value) || 1;
  }

  /** Takes the traces of a new run (and its charts, for the inbound strip). */
  load(trace, charts) {
    const keep = this.trace && Math.abs(this.trace.end - trace.end) < 1e-9;
    this.trace = trace;
    this.charts = charts;
    // Bands: the stacks the sampled spans use, fleets' first, at most MAX_BANDS.
    const used = new Set(trace.spans.map((s) => s[3]));
    const order = [...used].sort((a, b) => Number(trace.stacks[b].fleet) - Number(trace.stacks[a].fleet) || a - b);
    this.bands = order.slice(0, MAX_BANDS);
    this.bandOf = new Map(this.bands.map((s, i) => [s, i]));
    const first = trace.windows.map((w) => w[0]).sort((a, b) => a - b)[0];
    if (!keep) this.t = first === undefined ? 0 : Math.max(0, first - 3);
    const n = trace.requests.length;
    const hidden = order.length - this.bands.length;
    this.ui.what.textContent =
      `${n} of the run's ${trace.population} requests, sampled uniformly` +
      (trace.truncated ? "; the log hit its cap, later spans are missing" : "") +
      (hidden > 0 ? `; ${hidden} more caller → service paths not drawn` : "");
    this.draw();
  }

  play() {
    if (!this.trace) return;
    if (this.t >= this.trace.end) this.t = 0;
    this.playing = true;
    this.ui.play.textContent = "Pause";
    this.lastTick = null;
    const step = (now) => {
      if (!this.playing) return;
      if (this.lastTick !== null) this.t = Math.min(this.trace.end, this.t + ((now - this.lastTick) / 1000) * this.speed);
      this.lastTick = now;
      this.draw();
      if (this.t >= this.trace.end) this.pause();
      else requestAnimationFrame(step);
    };
    requestAnimationFrame(step);
  }

  pause() {
    this.playing = false;
    this.ui.play.textContent = "Play";
  }

  /** Where station `k` of band `b` is, pixels. */
  station(b, k, geo) {
    const stack = this.trace.stacks[this.bands[b]];
    const n = stack.layers.length + 2;
    return geo.left + (k / (n - 1)) * (geo.right - geo.left);
  }

  /** Draws the frame at the current time. */
  draw() {
    const tr = this.trace;
    if (!tr) return;
    const { g, w, h } = surface(this.canvas);
    const t = this.t;
    const strip = 46;
    const geo = { left: 80, right: w - 70, top: 8, bottom: h - strip };
    const nb = Math.max(1, this.bands.length);
    const bandH = (geo.bottom - geo.top) / nb;
    // Minimum times on screen, in run seconds: short hops would be invisible.
    const m = 0.3 * this.speed;
    // Stations: boxes for the caller, each layer, the service.
    g.textAlign = "center";
    g.textBaseline = "top";
    this.bands.forEach((s, b) => {
      const stack = tr.stacks[s];
      const y0 = geo.top + b * bandH;
      const names = [stack.caller, ...stack.layers, stack.service];
      const down = tr.windows.some(([a, e, sv]) => a <= t && t < e && (sv === null || sv === stack.service));
      names.forEach((name, k) => {
        const x = this.station(b, k, geo);
        const service = k === names.length - 1;
        g.fillStyle = service && down ? "rgba(213,94,0,0.35)" : k === 0 ? "rgb(236,236,236)" : "rgb(246,246,244)";
        g.strokeStyle = service && down ? "rgb(213,94,0)" : "rgb(200,200,200)";
        g.lineWidth = 1;
        g.fillRect(x - 24, y0 + 16, 48, bandH - 22);
        g.strokeRect(x - 24 + 0.5, y0 + 16.5, 48, bandH - 22);
        g.fillStyle = COLOURS.text;
        g.font = "11px system-ui, sans-serif";
        const label = k === 0 ? `${name}` : service ? `${name}${down ? " (down)" : ""}` : `layer ${name}`;
        g.fillText(label, x, y0 + 2);
      });
    });
    // The marks.
    let marks = 0;
    let retries = 0;
    const yOf = (r, b) => {
      const y0 = geo.top + b * bandH + 22;
      return y0 + (((r * 0.6180339887) % 1) * (bandH - 34));
    };
    for (const s of tr.spans) {
      const b = this.bandOf.get(s[3]);
      if (b === undefined) continue;
      const [r, , , , d, k, send, arrive, , end] = s;
      if (send > t) continue;
      const y = yOf(r, b);
      const from = this.station(b, d, geo);
      const to = this.station(b, d + 1, geo);
      if (arrive === null) {
        // Refused before it left: a cross at its layer for a moment.
        if (t - send < 2 * m) {
          g.strokeStyle = ordinalColour(k);
          g.lineWidth = 2;
          g.beginPath();
          g.moveTo(from - 4, y - 4);
          g.lineTo(from + 4, y + 4);
          g.moveTo(from + 4, y - 4);
          g.lineTo(from - 4, y + 4);
          g.stroke();
          marks++;
        }
        continue;
      }
      const out = Math.max(arrive - send, m);
      const stay = Math.max(end ?? tr.end, send + out + m);
      const back = m;
      let x;
      let colour = ordinalColour(k);
      if (t < send + out) x = from + ((t - send) / out) * (to - from);
      else if (t < stay) x = to + (((r * 0.37) % 1) - 0.5) * 16;
      else if (t < stay + back && end !== null) {
        x = to + ((t - stay) / back) * (from - to);
        colour = outcomeColour(s[10]);
      } else continue;
      g.fillStyle = colour;
      g.beginPath();
      g.arc(x, y, 3.5, 0, 2 * Math.PI);
      g.fill();
      marks++;
      if (k > 1) retries++;
    }
    // The strip: attempts arriving per second, outages, the play head.
    const c = this.charts;
    const sy0 = h - strip + 8;
    const sy1 = h - 16;
    const sx = (v) => geo.left + (v / tr.end) * (geo.right - geo.left);
    g.fillStyle = COLOURS.outage;
    for (const [a, e] of tr.windows) g.fillRect(sx(a), sy0, sx(e) - sx(a), sy1 - sy0);
    if (c && c.inbound.length) {
      const top = Math.max(1, ...c.inbound.filter((v) => v !== null));
      g.strokeStyle = COLOURS.inbound;
      g.lineWidth = 1.5;
      g.beginPath();
      c.t.forEach((tt, i) => {
        const Y = sy1 - ((c.inbound[i] ?? 0) / top) * (sy1 - sy0);
        if (i === 0) g.moveTo(sx(tt), Y);
        else g.lineTo(sx(tt), Y);
      });
      g.stroke();
    }
    g.strokeStyle = COLOURS.axis;
    g.strokeRect(geo.left + 0.5, sy0 + 0.5, geo.right - geo.left, sy1 - sy0);
    g.strokeStyle = "black";
    g.lineWidth = 2;
    g.beginPath();
    g.moveTo(sx(t), sy0 - 4);
    g.lineTo(sx(t), sy1 + 4);
    g.stroke();
    g.fillStyle = COLOURS.text;
    g.font = "11px system-ui, sans-serif";
    g.textAlign = "right";
    g.textBaseline = "middle";
    g.fillText("attempts/s", geo.left - 6, (sy0 + sy1) / 2);
    g.textAlign = "left";
    g.fillText(`${tickLabel(Number(tr.end.toFixed(1)))} s`, geo.right + 6, (sy0 + sy1) / 2);
    this.frames += 1;
    this.canvas.dataset.frames = String(this.frames);
    this.canvas.dataset.t = t.toFixed(3);
    this.canvas.dataset.marks = String(marks);
    this.ui.time.value = String(Math.round((t / tr.end) * 1000));
    this.ui.clock.textContent = `t = ${t.toFixed(2)} s · ${marks} on screen, ${retries} retries`;
    const keys = ORDINALS.map((col, i) => [i === ORDINALS.length - 1 ? `attempt ${i + 1}+` : i === 0 ? "first attempt" : `attempt ${i + 1} (retry)`, col, "band"]);
    keys.push(["answer: success", outcomeColour("success"), "band"], ["answer: failure", outcomeColour("error"), "band"]);
    if (tr.windows.length) keys.push(["outage", COLOURS.outage, "band"]);
    if (!this.legendDrawn) {
      this.ui.legend.replaceChildren(
        ...keys.map(([label, colour]) => {
          const item = document.createElement("span");
          item.className = "key";
          const sw = document.createElement("i");
          sw.className = "swatch band";
          sw.style.setProperty("--c", colour);
          item.append(sw, label);
          return item;
        }),
      );
      this.legendDrawn = true;
    }
  }
}
