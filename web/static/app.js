// The playground page: a scenario (the controls' herd, or any shipped scenario) in an
// editor, run by the engine as it is edited; a second copy side by side on the same
// seed; the page's state in the link; one run animated request by request.

import { loadEngine } from "./engine.js";
import {
  drawGraph,
  drawServices,
  drawHerd,
  drawPhase,
  drawTimeseries,
  herdExtent,
  joinExtents,
  phaseExtent,
  timeseriesExtent,
} from "./charts.js";
import { Animation } from "./anim.js";
import { drawSwimlane } from "./swimlane.js";
import { decodeState, encodeState } from "./permalink.js";
import { lineOf, renderBackdrop } from "./editor.js";

/** The controls' values that give scenarios/default.toml exactly. */
const DEFAULTS = {
  clients: 50,
  rate: 700,
  outage: 10,
  attempts: 3,
  layers: 1,
  backoff: "exponential",
  base: 50,
  jitter: "full",
  budget: false,
  breaker: "none",
  seed: 1,
};

/** The picker's entry for the scenario the controls make. */
const CONTROLS = "controls";

/** Requests traced for the animation and the swimlane. */
const TRACE_SAMPLE = 1000;

/** The summary columns shown as headline numbers, with what they mean. */
const HEADLINE = [
  ["success_fraction", "of requests succeeded", "fraction"],
  ["amplification", "attempts per request", "number"],
  ["peak_inbound_ratio", "busiest second, × capacity", "number"],
  ["herd_peak", "most attempts in one fine bucket", "number"],
  ["recovery_time_s", "seconds to recover after the outage", "seconds"],
  ["metastable", "stuck after the outage (metastable)", "flag"],
];

const $ = (id) => document.getElementById(id);

/** The controls as a plain object. */
function readControls() {
  return {
    clients: Number($("clients").value),
    rate: Number($("rate").value),
    outage: Number($("outage").value),
    attempts: Number($("attempts").value),
    layers: Number($("layers").value),
    backoff: $("backoff").value,
    base: Number($("base").value),
    jitter: $("jitter").value,
    budget: $("budget").checked,
    breaker: $("breaker").value,
    // As typed (a seed past 2^53 is exact; a bad one is refused as the CLI refuses it).
    seed: $("seed").value.trim() === "" ? String(DEFAULTS.seed) : $("seed").value.trim(),
  };
}

function writeControls(c) {
  for (const k of ["clients", "rate", "outage", "attempts", "layers", "backoff", "base", "jitter", "breaker", "seed"]) {
    if (c[k] !== undefined) $(k).value = String(c[k]);
  }
  if (c.budget !== undefined) $("budget").checked = c.budget;
}

/** Labels follow the values: units, and what "inside" means with one or two layers. */
function label(c) {
  $("clients-out").textContent = String(c.clients);
  $("rate-out").textContent = `${c.rate} /s`;
  $("outage-out").textContent = c.outage === 0 ? "no outage" : `${c.outage} s`;
  $("attempts-out").textContent = String(c.attempts);
  $("base-out").textContent = `${c.base} ms`;
  const own = state.picked === CONTROLS;
  $("jitter").disabled = (own && c.backoff !== "exponential") || !keyed("jitter");
  $("base").disabled = (own && c.backoff === "none") || !keyed("base");
  const [, inside, outside] = $("breaker").options;
  if (c.layers === 1) {
    inside.textContent = "inside the retries (counts attempts)";
    inside.title = "Retry(Breaker(call))";
    outside.textContent = "outside the retries (counts calls)";
    outside.title = "Breaker(Retry(call))";
  } else {
    inside.textContent = "on the inner layer (counts attempts)";
    inside.title = "Retry(Retry(Breaker(call)))";
    outside.textContent = "on the outer layer (counts requests)";
    outside.title = "Breaker(Retry(Retry(call)))";
  }
}

/** The scenario of the controls, as TOML laid out as scenarios/default.toml. */
export function scenarioToml(c) {
  const backoff = {
    none: `{ kind = "none" }`,
    fixed: `{ kind = "fixed", delay = "${c.base}ms" }`,
    exponential: `{ kind = "exponential", base = "${c.base}ms", cap = "1s", jitter = "${c.jitter}" }`,
  }[c.backoff];
  const budget = `budget = { kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }\n`;
  const breaker = (placement) =>
    `breaker = { kind = "consecutive", failures = 3, open_for = "2s", half_open_probes = 1, placement = "${placement}" }\n`;
  let layers;
  if (c.layers === 1) {
    layers =
      `[[fleets.layers]]\nname = "client"\nmax_attempts = ${c.attempts}\nattempt_timeout = "250ms"\n` +
      `backoff = ${backoff}\n` +
      (c.budget ? budget : "") +
      (c.breaker === "none" ? "" : breaker(c.breaker));
  } else {
    // The outer layer is bounded by the deadline; the inner one holds the attempt
    // timeout. Each client has its own budget and breaker on both layers (a lower
    // layer's default is one instance for the whole fleet).
    layers =
      `[[fleets.layers]]\nname = "client"\nmax_attempts = ${c.attempts}\nbackoff = ${backoff}\n` +
      (c.budget ? budget : "") +
      (c.breaker === "outside" ? breaker("outside") : "") +
      `\n[[fleets.layers]]\nname = "sdk"\nmax_attempts = ${c.attempts}\nattempt_timeout = "250ms"\n` +
      `backoff = ${backoff}\ninstances = ${c.clients}\n` +
      (c.budget ? budget : "") +
      (c.breaker === "inside" ? breaker("inside") : "");
  }
  const outage =
    c.outage === 0
      ? ""
      : `\n[[outages]]\nstart = "20s"\nend = "${20 + c.outage}s"\nmode = { kind = "fail", after = "1ms" }\n`;
  return `# The retrysim playground's scenario: the embedded default (scenarios/default.toml)
# with the page's controls. Run it with: retrysim run playground.toml
name = "playground"
seed = ${c.seed}
duration = "60s"
drain = "10s"
warmup = "5s"

[dependency]
servers = 10
queue_limit = 200
service_time = { kind = "exponential", mean = "10ms" }

[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = ${c.rate}, clients = ${c.clients} }
deadline = "2s"

${layers}${outage}`;
}

// The keys of a scenario's text the controls follow (any scenario): the first
// occurrence of each, as it is written. Moving the control rewrites that occurrence;
// editing the text moves the control. Each pattern has three groups: before, the
// value, after.
const KEYS = {
  seed: { re: /^(seed\s*=\s*)(\d+)()/m, write: (v) => String(v) },
  rate: { re: /(\brate\s*=\s*)(\d+(?:\.\d+)?)()/, write: (v) => String(v) },
  clients: { re: /(\bclients\s*=\s*)(\d+)()/, write: (v) => String(v) },
  attempts: { re: /(\bmax_attempts\s*=\s*)(\d+)()/, write: (v) => String(v) },
  base: { re: /(\b(?:base|delay)\s*=\s*")(\d+)(ms")/, write: (v) => String(v) },
  jitter: { re: /(\bjitter\s*=\s*")(\w+)(")/, write: (v) => v },
};

/** The part of `text` a key of control `k` is looked for in: the seed is a top-level
 * key (before the first table); the others, the first anywhere. */
function scope(text, k) {
  if (k !== "seed") return [text, ""];
  const i = text.search(/^\s*\[/m);
  return i < 0 ? [text, ""] : [text.slice(0, i), text.slice(i)];
}

/** Whether the control `k` follows a key of the scenario being edited. */
function keyed(k) {
  if (state.picked === CONTROLS) return true;
  return KEYS[k] ? KEYS[k].re.test(scope($("toml-edit").value, k)[0]) : false;
}

/** The text with the key of control `k` set to `v`. */
function setKey(text, k, v) {
  const { re, write } = KEYS[k];
  const [head, tail] = scope(text, k);
  return head.replace(re, (_, a, _old, b) => `${a}${write(v)}${b}`) + tail;
}

/** The controls that follow a key, read from `text` (those it has). */
function readKeys(text) {
  const out = {};
  for (const [k, { re }] of Object.entries(KEYS)) {
    const m = scope(text, k)[0].match(re);
    if (m) out[k] = k === "jitter" ? m[2] : m[2];
  }
  return out;
}

/** How a summary value reads in the headline. */
function headlineValue(value, kind) {
  if (value === undefined || value === "") return kind === "seconds" ? "did not" : "–";
  if (kind === "fraction") return `${(Number(value) * 100).toFixed(1)}%`;
  if (kind === "flag") return value === "true" ? "yes" : "no";
  if (kind === "seconds") return `${Number(value).toFixed(1)} s`;
  const n = Number(value);
  return Number.isInteger(n) ? String(n) : n.toFixed(2);
}

let engine = null;
let shipped = [];
let runs = 0;
let first = null;

/** The page's state: what the link holds. */
const state = {
  picked: CONTROLS,
  compare: false,
};

/** The last answers of A and B (B: `null` when not comparing). */
const last = { a: null, b: null };
let animation = null;

/** The text a shipped scenario (or the controls) starts from. */
function original(picked) {
  if (picked === CONTROLS) return scenarioToml(readControls());
  return shipped.find((s) => s.path === picked)?.text ?? "";
}

/** The seed both columns run on: the seed box, or the scenario's own when empty. */
function seedOf() {
  const s = $("seed").value.trim();
  return s === "" ? null : s;
}

/** Fills one column's headline and message from an answer. */
function showColumn(answer, ids) {
  const error = $(ids.error);
  $(ids.headline).replaceChildren();
  if (!answer.ok) {
    error.textContent = answer.error;
    error.hidden = false;
    $(ids.stopped).hidden = true;
    return null;
  }
  error.hidden = true;
  const row = {};
  answer.summary.columns.forEach((col, i) => (row[col] = answer.summary.values[i]));
  $(ids.stopped).textContent = answer.stopped ?? "";
  $(ids.stopped).hidden = !answer.stopped;
  $(ids.headline).replaceChildren(
    ...HEADLINE.map(([col, what, kind]) => {
      const item = document.createElement("div");
      item.title = `${col} = ${row[col]}`;
      item.dataset.col = col;
      item.dataset.value = row[col] ?? "";
      const dt = document.createElement("dt");
      dt.textContent = headlineValue(row[col], kind);
      const dd = document.createElement("dd");
      dd.textContent = what;
      item.append(dt, dd);
      return item;
    }),
  );
  return row;
}

/** The three charts every run draws: canvas id, drawer, extent of its axes. */
const CHARTS = [
  ["timeseries", drawTimeseries, timeseriesExtent],
  ["phase", drawPhase, phaseExtent],
  ["herd", drawHerd, herdExtent],
];

/** Draws the three charts of A (and B, on the same axes). */
function draw() {
  const a = last.a?.ok ? last.a.charts : null;
  const b = state.compare && last.b?.ok ? last.b.charts : null;
  const services = a && last.a.services;
  $("services-figure").hidden = !services;
  if (services) drawServices($("services"), $("services-legend"), services, a.end);
  const graph = a && last.a.graph;
  $("graph-figure").hidden = !graph;
  if (graph) drawGraph($("graph"), $("graph-legend"), graph);
  for (const [id, drawIt, extent] of CHARTS) {
    const lim = a && b ? joinExtents(extent(a), extent(b)) : null;
    if (a) drawIt($(id), $(`${id}-legend`), a, lim ?? extent(a));
    $(`${id}-b`).hidden = !state.compare;
    if (b) drawIt($(`${id}-b`), $(`${id}-legend`), b, lim ?? extent(b));
    else if (state.compare) $(`${id}-b`).getContext("2d").clearRect(0, 0, 1e5, 1e5);
  }
}

/** Marks the line an error names in an editor (none when it names none). */
function markError(which, text, answer) {
  const line = answer.ok ? null : lineOf(text, answer.error);
  const backdrop = $(which === "a" ? "toml-backdrop" : "toml-backdrop-b");
  renderBackdrop(backdrop, text, line);
  const err = $(which === "a" ? "error" : "error-b");
  if (line === null) delete err.dataset.line;
  else err.dataset.line = String(line);
  if (line !== null) {
    const area = $(which === "a" ? "toml-edit" : "toml-edit-b");
    const mark = backdrop.querySelector(".bad");
    if (mark && (mark.offsetTop < area.scrollTop || mark.offsetTop > area.scrollTop + area.clientHeight - 20)) {
      area.scrollTop = Math.max(0, mark.offsetTop - area.clientHeight / 3);
      backdrop.scrollTop = area.scrollTop;
    }
  }
}

let traceTimer = null;

/** Runs A (and B when comparing) as the editors hold them, and redraws everything;
 * the time it took is shown. */
function runAll() {
  const t0 = performance.now();
  const seed = seedOf();
  const at = state.picked === CONTROLS ? "" : state.picked;
  const textA = $("toml-edit").value;
  const a = engine.run({ toml: textA, seed, at });
  let b = null;
  if (state.compare) b = engine.run({ toml: $("toml-edit-b").value, seed, at });
  const t1 = performance.now();
  $("toml").textContent = textA;
  const url = $("download").href;
  if (url.startsWith("blob:")) URL.revokeObjectURL(url);
  $("download").href = URL.createObjectURL(new Blob([textA], { type: "text/plain" }));
  last.a = a;
  last.b = b;
  const row = showColumn(a, { error: "error", headline: "headline", stopped: "stopped" });
  $("summary").textContent = row ? JSON.stringify(row, null, 1) : "";
  markError("a", textA, a);
  if (b) {
    showColumn(b, { error: "error-b", headline: "headline-b", stopped: "stopped-b" });
    markError("b", $("toml-edit-b").value, b);
  }
  draw();
  window.retrysimPlayground.last = a;
  window.retrysimPlayground.lastB = b;
  const t2 = performance.now();
  runs += 1;
  const timing = $("timing");
  timing.dataset.ms = (t2 - t0).toFixed(1);
  timing.dataset.runMs = (t1 - t0).toFixed(1);
  timing.dataset.drawMs = (t2 - t1).toFixed(1);
  if (first === null) {
    // performance.now() counts from the start of the page's navigation.
    first = { total: t2 - t0, sincePageLoad: t2 };
    timing.dataset.firstMs = first.total.toFixed(1);
    timing.dataset.firstSinceLoadMs = first.sincePageLoad.toFixed(1);
  }
  timing.textContent =
    `${a.ok ? `run ${(t1 - t0).toFixed(0)} ms + draw ${(t2 - t1).toFixed(0)} ms` : "not run"}` +
    `${a.ok ? ` (seed ${a.seed})` : ""}; the first run drew ${first.sincePageLoad.toFixed(0)} ms after the page's navigation began`;
  document.body.dataset.runs = String(runs);
  // The traces for the animation and the swimlane: a second run of A, after this one
  // is on screen.
  clearTimeout(traceTimer);
  if (a.ok) traceTimer = setTimeout(() => traceA(textA, seed, at), 30);
  saveState();
}

/** Runs A again with traces and hands them to the animation and the swimlane. */
function traceA(toml, seed, at) {
  const t = engine.run({ toml, seed, at, trace: TRACE_SAMPLE });
  if (!t.ok || !t.trace) return;
  window.retrysimPlayground.trace = t.trace;
  animation.load(t.trace, t.charts);
  drawSwimlane($("swimlane"), $("swimlane-legend"), $("swimlane-caption"), t.trace, t.scenario);
  $("swimlane-figure").hidden = false;
  document.body.dataset.traces = String(Number(document.body.dataset.traces ?? 0) + 1);
}

let pending = false;

/** Runs at the next frame (moves in between coalesce). */
function schedule() {
  if (pending || !engine) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    runAll();
  });
}

let typing = null;

/** Runs a while after the last keystroke. */
function debounced() {
  clearTimeout(typing);
  typing = setTimeout(schedule, 250);
}

/** A control moved: the text follows (the whole of it for the controls' scenario,
 * the key the control follows for another), then the run. */
function controlMoved(e) {
  const c = readControls();
  label(c);
  const id = e?.target?.id;
  if (state.picked === CONTROLS) {
    $("toml-edit").value = scenarioToml(c);
  } else if (id && KEYS[id] && keyed(id)) {
    $("toml-edit").value = setKey($("toml-edit").value, id, c[id]);
  }
  if (id === "seed" && state.compare && KEYS.seed.re.test(scope($("toml-edit-b").value, "seed")[0])) {
    $("toml-edit-b").value = setKey($("toml-edit-b").value, "seed", c.seed);
  }
  schedule();
}

/** The text was edited: the controls that follow its keys move, then the run. */
function textEdited() {
  const keys = readKeys($("toml-edit").value);
  writeControls(keys);
  const c = readControls();
  label(c);
  enableControls();
  debounced();
}

/** Controls with nothing to follow in the scenario are off. */
function enableControls() {
  const own = state.picked === CONTROLS;
  for (const id of ["outage", "layers", "backoff", "budget", "breaker"]) $(id).disabled = !own;
  for (const id of ["clients", "rate", "attempts"]) $(id).disabled = !keyed(id);
  $("controls-note").textContent = own
    ? "The controls write the whole scenario."
    : "Controls follow the keys they name in this scenario (the first of each); the others are off.";
  label(readControls());
}

/** Shows the picked scenario: its explanation, its text in the editor(s). */
function pick(path, { text = null, textB = null } = {}) {
  state.picked = path;
  $("scenario").value = path;
  const own = path === CONTROLS;
  $("intro").hidden = !own;
  const expl = $("explanation");
  expl.hidden = own;
  expl.textContent = own ? "" : shipped.find((s) => s.path === path)?.header ?? "";
  const t = text ?? original(path);
  $("toml-edit").value = t;
  if (!own && text === null) {
    // The seed box shows the scenario's own seed.
    const m = scope(t, "seed")[0].match(KEYS.seed.re);
    $("seed").value = m ? m[2] : "";
  }
  writeControls(readKeys(t));
  $("toml-edit-b").value = textB ?? t;
  enableControls();
  $("download").download = own ? "playground.toml" : path.split("/").pop();
}

function setCompare(on) {
  state.compare = on;
  $("compare").checked = on;
  document.body.classList.toggle("comparing", on);
  $("col-b").hidden = !on;
  $("editor-b").hidden = !on;
  for (const el of document.querySelectorAll(".col-title")) {
    if (!el.closest("#col-b") && !el.closest("#editor-b")) el.hidden = !on;
  }
}

/** The page's state, as the link holds it. */
function currentState() {
  const textA = $("toml-edit").value;
  const s = { v: 1, s: state.picked, seed: $("seed").value.trim() };
  if (state.picked === CONTROLS) s.k = readControls();
  if (textA !== original(state.picked)) s.a = textA;
  if (state.compare) {
    s.c = 1;
    if ($("toml-edit-b").value !== textA) s.b = $("toml-edit-b").value;
  }
  return s;
}

let saving = null;
let savedFor = "";

/** Writes the state into the link (a while after the last change). */
function saveState() {
  clearTimeout(saving);
  saving = setTimeout(async () => {
    const json = JSON.stringify(currentState());
    if (json === savedFor) return;
    const code = await encodeState(json);
    savedFor = json;
    history.replaceState(null, "", `#p=${code}`);
    document.body.dataset.saved = String(Number(document.body.dataset.saved ?? 0) + 1);
  }, 200);
}

/** Restores the state a link holds; false when it holds none or a broken one. */
async function restore() {
  const m = location.hash.match(/^#p=([A-Za-z0-9_-]+)$/);
  if (!m) return false;
  let s;
  try {
    s = JSON.parse(await decodeState(m[1]));
  } catch (e) {
    $("share-state").textContent = `the link's state cannot be read (${e.message}): the default scenario instead`;
    return false;
  }
  const path = s.s === CONTROLS || shipped.some((x) => x.path === s.s) ? s.s : CONTROLS;
  if (path === CONTROLS && s.k) writeControls(s.k);
  pick(path, { text: s.a ?? null });
  $("seed").value = s.seed ?? "";
  setCompare(Boolean(s.c));
  $("toml-edit-b").value = s.c && typeof s.b === "string" ? s.b : $("toml-edit").value;
  label(readControls());
  return true;
}

/** A run with nothing in it: the charts' empty frames, drawn while the engine loads. */
const EMPTY = {
  t: [],
  bucket: 1,
  end: 60,
  offered: [],
  inbound: [],
  goodput: [],
  success_rate: [],
  capacity: null,
  outages: [],
  breaker_open: [],
  budget_exhausted: [],
  phase: [],
  herd: { t: [], width: 0.01, inbound: [] },
};

async function main() {
  writeControls(DEFAULTS);
  label(DEFAULTS);
  // While the module downloads and compiles: the editor's text and the charts' empty
  // frames, so the page is laid out (and its fonts ready) before the first run.
  const linked = location.hash.startsWith("#p=");
  if (!linked) pick(CONTROLS);
  for (const [id, drawIt] of CHARTS) drawIt($(id), $(`${id}-legend`), EMPTY);
  try {
    engine = await loadEngine(fetch("retrysim.wasm"));
  } catch (e) {
    $("error").textContent = `cannot load the engine (retrysim.wasm): ${e.message}`;
    $("error").hidden = false;
    return;
  }
  const select = $("scenario");
  const own = document.createElement("option");
  own.value = CONTROLS;
  own.textContent = "the herd, with the controls (default.toml)";
  select.append(own);
  /** Fills the picker with the shipped scenarios (a page opened without a link runs
   * the controls' scenario first: its charts come sooner). */
  const list = () => {
    shipped = engine.run({ list: true }).scenarios;
    window.retrysimPlayground.shipped = shipped;
    for (const s of shipped) {
      const o = document.createElement("option");
      o.value = s.path;
      o.textContent = s.path;
      select.append(o);
    }
  };
  animation = new Animation($("anim"), {
    play: $("anim-play"),
    speed: $("anim-speed"),
    time: $("anim-time"),
    clock: $("anim-clock"),
    legend: $("anim-legend"),
    what: $("anim-what"),
  });
  // For the browser test (web/test/playground.mjs) and the curious: the engine, the
  // last answers, the animation.
  window.retrysimPlayground = { engine, last: null, lastB: null, scenarioToml, animation, shipped };
  const form = $("controls");
  form.addEventListener("input", controlMoved);
  form.addEventListener("change", controlMoved);
  select.addEventListener("change", () => {
    pick(select.value);
    schedule();
  });
  $("compare").addEventListener("change", () => {
    setCompare($("compare").checked);
    if (state.compare) $("toml-edit-b").value = $("toml-edit").value;
    schedule();
  });
  $("toml-edit").addEventListener("input", textEdited);
  $("toml-edit-b").addEventListener("input", debounced);
  for (const [area, backdrop] of [["toml-edit", "toml-backdrop"], ["toml-edit-b", "toml-backdrop-b"]]) {
    $(area).addEventListener("scroll", () => {
      $(backdrop).scrollTop = $(area).scrollTop;
      $(backdrop).scrollLeft = $(area).scrollLeft;
    });
  }
  $("reset").addEventListener("click", () => {
    writeControls(DEFAULTS);
    pick(CONTROLS);
    schedule();
  });
  $("copy").addEventListener("click", () => navigator.clipboard?.writeText($("toml-edit").value));
  $("run-edit").addEventListener("click", () => {
    textEdited();
    clearTimeout(typing);
    runAll();
  });
  $("share").addEventListener("click", async () => {
    const code = await encodeState(JSON.stringify(currentState()));
    history.replaceState(null, "", `#p=${code}`);
    await navigator.clipboard?.writeText(location.href).catch(() => {});
    $("share-state").textContent = `link copied (${location.href.length} characters)`;
  });
  window.addEventListener("hashchange", async () => {
    if (await restore()) runAll();
  });
  let resize = null;
  window.addEventListener("resize", () => {
    clearTimeout(resize);
    resize = setTimeout(() => last.a && draw(), 100);
  });
  if (linked) {
    list();
    if (!(await restore())) pick(CONTROLS);
    runAll();
  } else {
    runAll();
    list();
  }
}

main();
