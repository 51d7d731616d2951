//! What the playground (web/, the library compiled to WebAssembly) needs beyond the
//! command line's entry points: loading a scenario whose data files are embedded in
//! the page rather than on a disk, a scenario's header comment, and the traces of a
//! sample of one run's requests as plain JSON for its animation and swimlane.

use serde_json::{json, Value};

use crate::engine::time::to_secs;
use crate::engine::Nanos;
use crate::error::Error;
use crate::metrics::trace::{TraceLog, NO_SPAN};
use crate::scenario::{Loaded, Overrides};

/// Parses and validates a scenario given as text, as [`crate::load_scenario_text`]
/// does, with `files` (a path as the scenario names it, relative to its folder, and
/// the file's bytes) readable as if they sat beside it: the data files of a shipped
/// scenario (recorded traffic, imported configuration) in a browser, which has no file
/// system. A file not among them is read from the file system as ever, so messages are
/// the command line's.
///
/// ```
/// use retrysim::api::playground::load_text_with_files;
/// let text = "duration = \"1s\"\n[dependency]\nservers = 1\nservice_time = { kind = \"histogram\", file = \"l.csv\" }\n[[fleets]]\nname = \"w\"\narrival = { kind = \"poisson\", rate = 10 }\n[[fleets.layers]]\nname = \"c\"\nmax_attempts = 1\n";
/// let files: &[(&str, &[u8])] = &[("l.csv", b"le,count\n0.001,5\n0.002,10\n")];
/// let loaded = load_text_with_files("p.toml", text, &Default::default(), files);
/// assert!(loaded.is_ok(), "{:?}", loaded.err());
/// ```
pub fn load_text_with_files(
    path: &str,
    text: &str,
    overrides: &Overrides,
    files: &[(&str, &[u8])],
) -> Result<Loaded, Error> {
    crate::export::read::with_files(files, || super::load_scenario_text(path, text, overrides))
}

/// A scenario's header, as the manifest and the report take it
/// (`export::manifest::header_of`): the comment lines at the top of its text, `#` and
/// one space stripped, blank comment lines kept as paragraph breaks; empty when the text
/// opens with something else.
///
/// ```
/// let h = retrysim::api::playground::header("# One\n# two\n#\n# three\nname = \"x\"\n# later\n");
/// assert_eq!(h, "One\ntwo\n\nthree");
/// ```
pub fn header(text: &str) -> String {
    crate::export::manifest::header_of(text).unwrap_or_default()
}

/// The traces of replication 0 of a loaded scenario whose run started `population`
/// logical requests (its `metrics.totals.logical`): `sample` of them drawn as `retrysim
/// run --trace` draws them (the scenario's `trace.seed`, else the run's seed), as
/// JSON, times in seconds:
///
/// - `end`, `truncated` (the log hit its cap on spans), `population`, `sample_seed`;
/// - `stacks`: `[{caller, service, layers, fleet}]` (`fleet`: the caller is a fleet);
/// - `services`, `fleets`: names; `windows`: `[[start, end, service or null]]`;
/// - `requests`: `[[ordinal, fleet, arrival, end or null, outcome or null, root]]`;
/// - `spans`: `[[request, parent or -1, kind, stack, depth, attempt, send, arrive,
///   start, end, outcome, done, fate, budget, breaker]]` (times or null; `request`
///   an index into `requests`; names as `traces.csv` writes them, `""` for none).
///
/// ```
/// let loaded = retrysim::load_scenario(None, &Default::default()).unwrap();
/// let t = retrysim::run_tables(&loaded, 0).unwrap();
/// let n = t.result.metrics.totals.logical;
/// let j = retrysim::api::playground::traces(&loaded, n, 20);
/// assert_eq!(j["requests"].as_array().unwrap().len(), 20);
/// assert!(j["spans"].as_array().unwrap().len() >= 40);
/// ```
pub fn traces(loaded: &Loaded, population: u64, sample: u64) -> Value {
    let sample = sample.min(crate::model::config::MAX_TRACE_SAMPLE);
    let log = crate::run::trace_run(&loaded.scenario, 0, population, sample);
    traces_json(&log)
}

/// [`traces`]' JSON of a log.
fn traces_json(log: &TraceLog) -> Value {
    let opt = |t: Option<Nanos>| t.map_or(Value::Null, |t| json!(to_secs(t)));
    let fleets = &log.fleets;
    let stacks: Vec<Value> = log
        .stacks
        .iter()
        .map(|s| {
            json!({
                "caller": s.caller,
                "service": s.service,
                "layers": s.layers,
                "fleet": fleets.contains(&s.caller),
            })
        })
        .collect();
    let windows: Vec<Value> = log
        .windows
        .iter()
        .map(|w| json!([to_secs(w.start), to_secs(w.end), w.service]))
        .collect();
    let requests: Vec<Value> = log
        .requests
        .iter()
        .map(|r| {
            json!([
                r.ordinal,
                r.fleet,
                to_secs(r.arrival),
                opt(r.end),
                r.outcome.map(|c| c.name()),
                r.root
            ])
        })
        .collect();
    let spans: Vec<Value> = log
        .spans
        .iter()
        .map(|s| {
            let parent = if s.parent == NO_SPAN {
                -1
            } else {
                i64::from(s.parent)
            };
            json!([
                s.request,
                parent,
                s.kind.name(),
                s.stack,
                s.depth,
                s.attempt,
                to_secs(s.send),
                opt(s.arrive),
                opt(s.start),
                opt(s.end),
                s.outcome.map_or("", |o| o.name()),
                opt(s.done),
                s.fate.map_or("", |f| f.name()),
                s.budget.map_or("", |b| b.name()),
                crate::metrics::trace::breaker::names(s.breaker),
            ])
        })
        .collect();
    json!({
        "end": to_secs(log.end),
        "truncated": log.truncated,
        "population": log.population,
        "sample_seed": log.sample_seed.to_string(),
        "stacks": stacks,
        "services": log.services,
        "fleets": log.fleets,
        "windows": windows,
        "requests": requests,
        "spans": spans,
    })
}

/// The per-service series of a run of a service graph, as the report's `services`
/// chart draws them (`services.csv`'s counts per bucket over the bucket's width), JSON,
/// `null` for a scenario that is not a graph: `{bucket, t: [bucket starts, s],
/// services: [{name, servers, inbound, goodput: [per second], utilisation: [busy
/// threads / servers, or null with unlimited servers], threads: [busy threads],
/// outages: [[start, end]] (the windows that hit it)}]}`.
///
/// ```
/// let loaded = retrysim::load_scenario(None, &Default::default()).unwrap();
/// let t = retrysim::run_tables(&loaded, 0).unwrap();
/// assert!(retrysim::api::playground::services(&loaded, &t.result).is_null());
/// ```
pub fn services(loaded: &Loaded, result: &crate::run::RunResult) -> Value {
    let scn = &loaded.scenario;
    let Some(sv) = result.metrics.services.as_ref().filter(|_| scn.graph) else {
        return Value::Null;
    };
    let b = to_secs(sv.bucket());
    let buckets = sv.services.first().map_or(0, |t| t.rows.len());
    let t: Vec<f64> = (0..buckets).map(|i| i as f64 * b).collect();
    let per_second = |v: u64| v as f64 / b;
    let services: Vec<Value> = sv
        .services
        .iter()
        .enumerate()
        .map(|(k, track)| {
            let name = scn.services.get(k).map_or("", |s| s.name.as_str());
            let outages: Vec<[f64; 2]> = result
                .windows
                .iter()
                .filter(|w| w.target.is_none_or(|x| usize::from(x) == k))
                .map(|w| [to_secs(w.start), to_secs(w.end)])
                .collect();
            json!({
                "name": name,
                "servers": track.servers,
                "inbound": track.rows.iter().map(|r| per_second(r.inbound)).collect::<Vec<_>>(),
                "goodput": track.rows.iter().map(|r| per_second(r.goodput)).collect::<Vec<_>>(),
                "utilisation": (0..track.rows.len()).map(|i| sv.utilisation(k, i)).collect::<Vec<_>>(),
                "threads": (0..track.rows.len()).map(|i| sv.threads_busy(k, i)).collect::<Vec<_>>(),
                "outages": outages,
            })
        })
        .collect();
    json!({ "bucket": b, "t": t, "services": services })
}

/// A box of the graph: name, whether a fleet, column, servers, peak utilisation.
type Node = (String, bool, usize, Option<u32>, Option<f64>);
/// An arrow of the graph: from, to (nodes), the callee's attempts per request.
type Edge = (usize, usize, Option<f64>);

/// A service graph as the report's `graph` chart draws it (the rules of
/// `plot::graph::Graph::of` for one run: fleets in column 0, each service one column
/// right of its deepest caller, in the order the calls reach them; the boxes and arrows
/// placed by the report's layout on a `w` × `h` area), JSON, `null` for a scenario that
/// is not a graph: `{w, h, nodes: [{name, fleet, servers, peak, rect: [x0, y0, x1,
/// y1]}], edges: [{from, to, attempts, path: [[x, y]]}]}`, `peak` the service's
/// `utilisation_peak` and `attempts` the callee's attempts per request, from the
/// summary row (`columns`, `values`).
pub fn graph(loaded: &Loaded, columns: &[String], values: &[String]) -> Value {
    use crate::metrics::columns::{
        service_column, SERVICE_ATTEMPTS_PER_REQUEST, SERVICE_UTILISATION_PEAK,
    };
    use crate::plot::graph_layout::{columns as depth, layout, port, reach_order, route};
    let scn = &loaded.scenario;
    if !scn.graph {
        return Value::Null;
    }
    let shape = crate::export::manifest::GraphShape::of(scn);
    let summary = |name: String| -> Option<f64> {
        let i = columns.iter().position(|c| *c == name)?;
        values.get(i)?.parse::<f64>().ok()
    };
    let n = shape.services.len();
    let find = |name: &str| {
        shape
            .services
            .iter()
            .position(|s| s.name == name)
            .unwrap_or(usize::MAX)
    };
    let calls: Vec<Vec<usize>> = shape
        .services
        .iter()
        .map(|s| s.calls.iter().map(|c| find(c)).collect())
        .collect();
    let col = depth(&calls);
    let roots: Vec<usize> = shape.fleets.iter().map(|f| find(&f.target)).collect();
    let mut order = reach_order(&roots, &calls);
    order.sort_by_key(|s| col[*s]);
    let mut nodes: Vec<Node> = shape
        .fleets
        .iter()
        .map(|f| (f.name.clone(), true, 0, None, None))
        .collect();
    let mut node_of = vec![0usize; n];
    for &s in &order {
        let svc = &shape.services[s];
        node_of[s] = nodes.len();
        let peak = summary(service_column(&svc.name, &SERVICE_UTILISATION_PEAK));
        nodes.push((svc.name.clone(), false, col[s], svc.servers.finite(), peak));
    }
    let attempts: Vec<Option<f64>> = shape
        .services
        .iter()
        .map(|s| summary(service_column(&s.name, &SERVICE_ATTEMPTS_PER_REQUEST)))
        .collect();
    let mut edges: Vec<Edge> = Vec::new();
    let mut add = |from: usize, to: usize| {
        if to < n && !edges.iter().any(|e| e.0 == from && e.1 == node_of[to]) {
            edges.push((from, node_of[to], attempts[to]));
        }
    };
    for (i, &t) in roots.iter().enumerate() {
        add(i, t);
    }
    for (s, cs) in calls.iter().enumerate() {
        for &c in cs {
            add(node_of[s], c);
        }
    }
    // The area: as the report sizes it, less its title and legend.
    let cols: Vec<usize> = nodes.iter().map(|x| x.2).collect();
    let ncol = cols.iter().max().map_or(1, |m| m + 1);
    let mut per = vec![0i32; ncol];
    for &c in &cols {
        per[c] += 1;
    }
    let tallest = per.into_iter().max().unwrap_or(1);
    let (w, h) = (185 * ncol as i32 + 60, 95 * tallest + 20);
    let rects = layout(&cols, w, h);
    let count =
        |f: &dyn Fn(&Edge) -> usize, node: usize| edges.iter().filter(|e| f(e) == node).count();
    let edges_json: Vec<Value> = edges
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let (a, b) = (rects[e.0], rects[e.1]);
            let out_i = edges[..k].iter().filter(|x| x.0 == e.0).count();
            let in_i = edges[..k].iter().filter(|x| x.1 == e.1).count();
            let start = (a.x1, port(&a, out_i, count(&|x| x.0, e.0)));
            let tip = (b.x0 - 1, port(&b, in_i, count(&|x| x.1, e.1)));
            let path = route(start, tip, &cols, &rects, (cols[e.0], cols[e.1]), h);
            json!({ "from": e.0, "to": e.1, "attempts": e.2, "path": path.iter().map(|p| [p.0, p.1]).collect::<Vec<_>>() })
        })
        .collect();
    let nodes_json: Vec<Value> = nodes
        .iter()
        .zip(&rects)
        .map(|(x, r)| {
            json!({ "name": x.0, "fleet": x.1, "servers": x.3, "peak": x.4, "rect": [r.x0, r.y0, r.x1, r.y1] })
        })
        .collect();
    json!({ "w": w, "h": h, "nodes": nodes_json, "edges": edges_json })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scenario_reading_data_files_loads_from_embedded_files_and_runs_as_from_disk() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
        let path = format!("{dir}/recorded_day.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let names = ["data/day.csv", "data/latency.csv", "data/incidents.csv"];
        let bytes: Vec<Vec<u8>> = names
            .iter()
            .map(|n| std::fs::read(format!("{dir}/{n}")).unwrap())
            .collect();
        let files: Vec<(&str, &[u8])> = names
            .iter()
            .zip(&bytes)
            .map(|(n, b)| (*n, b.as_slice()))
            .collect();
        let o = Overrides::default();
        let mem = load_text_with_files("playground.toml", &text, &o, &files).unwrap();
        let disk = crate::load_scenario(Some(std::path::Path::new(&path)), &o).unwrap();
        let a = crate::run_tables(&mem, 0).unwrap();
        let b = crate::run_tables(&disk, 0).unwrap();
        assert_eq!(a.summary_values, b.summary_values);
        assert_eq!(a.timeseries, b.timeseries);
        // Without the files, the message is the command line's for a missing file.
        let e = crate::load_scenario_text("playground.toml", &text, &o).unwrap_err();
        let held = load_text_with_files("playground.toml", &text, &o, &files[..1]).unwrap_err();
        assert!(e.to_string().contains("cannot read 'data/"), "{e}");
        let held = held.to_string();
        assert!(
            held.contains("cannot read 'data/") && !held.contains("day.csv"),
            "{held}"
        );
    }

    #[test]
    fn the_traces_are_those_of_run_trace() {
        let loaded = crate::load_scenario(None, &Overrides::default()).unwrap();
        let t = crate::run_tables(&loaded, 0).unwrap();
        let n = t.result.metrics.totals.logical;
        let log = crate::run::trace_run(&loaded.scenario, 0, n, 30);
        let j = traces(&loaded, n, 30);
        assert_eq!(j["spans"].as_array().unwrap().len(), log.spans.len());
        assert_eq!(j["requests"][0][0], json!(log.requests[0].ordinal));
        assert_eq!(j["windows"], json!([[20.0, 30.0, null]]));
    }

    #[test]
    fn the_services_series_are_those_of_services_csv() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios");
        let path = std::path::PathBuf::from(format!("{dir}/cascade.toml"));
        let loaded = crate::load_scenario(Some(&path), &Overrides::default()).unwrap();
        let t = crate::run_tables(&loaded, 0).unwrap();
        let j = services(&loaded, &t.result);
        let sv = j["services"].as_array().unwrap();
        assert_eq!(sv.len(), loaded.scenario.services.len());
        // services.csv as the run folder writes it: bucket 10 of the first service.
        let plan = crate::sweep::plan(loaded.clone()).unwrap();
        let groups = plan
            .layout
            .file_groups(crate::metrics::columns::SERVICES_FILE);
        let names: Vec<String> = loaded
            .scenario
            .services
            .iter()
            .map(|s| s.name.clone())
            .collect();
        let csv = crate::export::csv::services_rows(&t.result, &names, &groups);
        let header = crate::metrics::columns::SERVICES.map(|c| c.name);
        let inbound = header.iter().position(|c| *c == "inbound").unwrap();
        let row: Vec<&str> = csv
            .lines()
            .nth(10 * names.len())
            .unwrap()
            .split(',')
            .collect();
        let b = j["bucket"].as_f64().unwrap();
        let want: f64 = row[inbound].parse::<f64>().unwrap() / b;
        assert_eq!(sv[0]["inbound"][10].as_f64().unwrap(), want);
        // The graph: users -> frontend -> backend -> db, the report's peak utilisation.
        let g = graph(&loaded, &t.summary_columns, &t.summary_values);
        let names: Vec<&str> = g["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["users", "frontend", "backend", "db"]);
        assert_eq!(g["edges"].as_array().unwrap().len(), 3);
        let i = t
            .summary_columns
            .iter()
            .position(|c| c == "service_db_utilisation_peak")
            .unwrap();
        let peak: f64 = t.summary_values[i].parse().unwrap();
        assert_eq!(g["nodes"][3]["peak"].as_f64(), Some(peak));
        let default = crate::load_scenario(None, &Overrides::default()).unwrap();
        assert!(graph(&default, &[], &[]).is_null());
    }
}
