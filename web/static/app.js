// The playground page: the controls make a scenario (the embedded default,
// scenarios/default.toml, with their values), the engine runs it, the charts redraw.

import { loadEngine } from "./engine.js";
import { drawHerd, drawPhase, drawTimeseries } from "./charts.js";

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
    $(k).value = String(c[k]);
  }
  $("budget").checked = c.budget;
}

/** Labels follow the values: units, and what "inside" means with one or two layers. */
function label(c) {
  $("clients-out").textContent = String(c.clients);
  $("rate-out").textContent = `${c.rate} /s`;
  $("outage-out").textContent = c.outage === 0 ? "no outage" : `${c.outage} s`;
  $("attempts-out").textContent = String(c.attempts);
  $("base-out").textContent = `${c.base} ms`;
  $("jitter").disabled = c.backoff !== "exponential";
  $("base").disabled = c.backoff === "none";
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
let runs = 0;
let pending = false;
let first = null;
const loadStart = performance.now();

let last = null;

/** Draws the three charts of an answer. */
function draw(answer) {
  const c = answer.charts;
  drawTimeseries($("timeseries"), $("timeseries-legend"), c);
  drawPhase($("phase"), $("phase-legend"), c);
  drawHerd($("herd"), $("herd-legend"), c);
}

/** Runs `toml` (with `seed`, or `null`: the scenario's own, as the page's scenarios
 * hold theirs) and redraws everything; the time it took is shown. */
function runScenario(toml, seed) {
  const t0 = performance.now();
  const answer = engine.run({ toml, seed: seed === null ? null : String(seed) });
  const t1 = performance.now();
  $("toml").textContent = toml;
  $("toml-edit").value = toml;
  const url = $("download").href;
  if (url.startsWith("blob:")) URL.revokeObjectURL(url);
  $("download").href = URL.createObjectURL(new Blob([toml], { type: "text/plain" }));
  const error = $("error");
  if (!answer.ok) {
    error.textContent = answer.error;
    error.hidden = false;
    $("summary").textContent = "";
    $("headline").replaceChildren();
  } else {
    error.hidden = true;
    const row = {};
    answer.summary.columns.forEach((col, i) => (row[col] = answer.summary.values[i]));
    $("summary").textContent = JSON.stringify(row, null, 1);
    $("stopped").textContent = answer.stopped ?? "";
    $("stopped").hidden = !answer.stopped;
    $("headline").replaceChildren(
      ...HEADLINE.map(([col, what, kind]) => {
        const item = document.createElement("div");
        item.title = `${col} = ${row[col]}`;
        const dt = document.createElement("dt");
        dt.textContent = headlineValue(row[col], kind);
        const dd = document.createElement("dd");
        dd.textContent = what;
        item.append(dt, dd);
        return item;
      }),
    );
    draw(answer);
    last = answer;
  }
  window.retrysimPlayground.last = answer;
  const t2 = performance.now();
  runs += 1;
  const timing = $("timing");
  timing.dataset.ms = (t2 - t0).toFixed(1);
  timing.dataset.runMs = (t1 - t0).toFixed(1);
  timing.dataset.drawMs = (t2 - t1).toFixed(1);
  if (first === null) {
    first = { total: t2 - t0, sincePageLoad: t2 - loadStart };
    timing.dataset.firstMs = first.total.toFixed(1);
    timing.dataset.firstSinceLoadMs = first.sincePageLoad.toFixed(1);
  }
  timing.textContent =
    `${answer.ok ? `run ${(t1 - t0).toFixed(0)} ms + draw ${(t2 - t1).toFixed(0)} ms` : "not run"}` +
    `${answer.ok ? ` (seed ${answer.seed})` : ""}; the first run drew ${first.sincePageLoad.toFixed(0)} ms after the page began to load`;
  document.body.dataset.runs = String(runs);
}

/** Runs the controls' scenario at the next frame (moves in between coalesce). */
function schedule() {
  const c = readControls();
  label(c);
  if (pending || !engine) return;
  pending = true;
  requestAnimationFrame(() => {
    pending = false;
    const now = readControls();
    runScenario(scenarioToml(now), null);
  });
}

async function main() {
  writeControls(DEFAULTS);
  label(DEFAULTS);
  try {
    const bytes = await (await fetch("retrysim.wasm")).arrayBuffer();
    engine = await loadEngine(bytes);
  } catch (e) {
    $("error").textContent = `cannot load the engine (retrysim.wasm): ${e.message}`;
    $("error").hidden = false;
    return;
  }
  // For the browser test (web/test/playground.mjs) and the curious: the engine and
  // the last answer.
  window.retrysimPlayground = { engine, last: null, scenarioToml };
  const form = $("controls");
  form.addEventListener("input", schedule);
  form.addEventListener("change", schedule);
  $("reset").addEventListener("click", () => {
    writeControls(DEFAULTS);
    schedule();
  });
  $("copy").addEventListener("click", () => navigator.clipboard?.writeText($("toml").textContent));
  $("run-edit").addEventListener("click", () => runScenario($("toml-edit").value, null));
  let resize = null;
  window.addEventListener("resize", () => {
    clearTimeout(resize);
    resize = setTimeout(() => last && draw(last), 100);
  });
  const c = readControls();
  runScenario(scenarioToml(c), null);
}

main();
