//! The pictures: every chart renders for a small scenario, as SVG holding its series
//! names and axis labels and as PNG that decodes and is not blank; sweep charts render
//! from hand-made sweep folders; bad input is an error naming the file; and
//! `report.html` renders in headless Chromium with every plot and the table.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::plot::{draw_folder, Format};
use crate::scenario::{self, Source};

/// A short storm: two layers, a retry budget, a breaker, an outage.
const STORM: &str = r#"
name = "storm"
seed = 3
duration = "20s"
drain = "5s"
warmup = "3s"

[dependency]
servers = 10
queue_limit = 100
service_time = { kind = "exponential", mean = "10ms" }

[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 600, clients = 20 }
deadline = "2s"

[[fleets.layers]]
name = "client"
max_attempts = 3
attempt_timeout = "500ms"
backoff = { kind = "exponential", base = "50ms", cap = "1s", jitter = "full" }
budget = { kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }

[[fleets.layers]]
name = "sdk"
max_attempts = 2
backoff = { kind = "fixed", delay = "20ms" }
breaker = { kind = "consecutive", failures = 5, open_for = "2s" }

[[outages]]
start = "8s"
end = "12s"
mode = { kind = "fail", after = "1ms" }
"#;

/// Load swept up then down in one run, past capacity, with eager retries: metastable.
const RAMP: &str = r#"
name = "ramp"
seed = 1
duration = "40s"
drain = "5s"
warmup = "2s"

[dependency]
servers = 10
queue_limit = 400
service_time = { kind = "exponential", mean = "10ms" }

[[fleets]]
name = "web"
arrival = { kind = "poisson", rate = 700, clients = 50 }
deadline = "2s"
load_profile = { ramp = [{ at = "0s", multiplier = 0.6 }, { at = "18s", multiplier = 1.6 }, { at = "22s", multiplier = 1.6 }, { at = "38s", multiplier = 0.6 }] }

[[fleets.layers]]
name = "client"
max_attempts = 4
attempt_timeout = "150ms"
backoff = { kind = "fixed", delay = "10ms" }
"#;

const RUN_CHARTS: [&str; 4] = ["timeseries", "phase", "herd", "latency"];

/// Runs `text` with `sets` and writes its CSVs and manifest into `dir` (no plots).
fn write_run(text: &str, sets: &[&str], dir: &Path) {
    let source = Source {
        path: "<test>".into(),
        stem: "test".into(),
        text: text.into(),
    };
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    let loaded = scenario::load(source, &sets).expect("valid scenario");
    let origin = crate::export::manifest::Origin::of(None, Vec::new());
    crate::sweep::run_folder(&loaded, dir, &origin, true).expect("written");
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

fn assert_has(text: &str, what: &str, needles: &[&str]) {
    for n in needles {
        assert!(text.contains(n), "{what} lacks {n:?}");
    }
}

/// Decodes a PNG; returns (width, height, distinct colours, fraction of non-white pixels).
fn png_stats(p: &Path) -> (u32, u32, usize, f64) {
    let f = std::fs::File::open(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let mut dec = png::Decoder::new(std::io::BufReader::new(f));
    dec.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
    let mut reader = dec.read_info().expect("png header");
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).expect("png data");
    let ch = info.color_type.samples();
    let px = &buf[..info.buffer_size()];
    let mut colours = std::collections::BTreeSet::new();
    let mut ink = 0usize;
    let n = px.len() / ch;
    for p in px.chunks(ch) {
        let rgb = (p[0], p[1 % ch], p[2 % ch]);
        colours.insert(rgb);
        if rgb != (255, 255, 255) {
            ink += 1;
        }
    }
    (
        info.width,
        info.height,
        colours.len(),
        ink as f64 / n as f64,
    )
}

fn plot_file(dir: &Path, name: &str, ext: &str) -> PathBuf {
    dir.join("plots").join(format!("{name}.{ext}"))
}

#[test]
fn every_run_chart_renders_as_svg_with_its_series_names_and_axis_labels() {
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    let files = draw_folder(d.path(), Format::Svg).expect("drawn");
    assert_eq!(files.len(), RUN_CHARTS.len() + 1, "{files:?}");
    assert_eq!(files.last().unwrap(), &d.path().join("report.html"));
    let svg = |n: &str| read(&plot_file(d.path(), n, "svg"));

    let ts = svg("timeseries");
    assert_has(
        &ts,
        "timeseries.svg",
        &[
            "Traffic over time: storm (run 0)",
            "offered (requests/s)",
            "inbound (attempts/s)",
            "goodput (successes/s)",
            "capacity (attempts/s)",
            "success rate (right axis)",
            "outage",
            "breaker open",
            "time (s)",
            "rate (per second)",
            "success rate (%)",
        ],
    );
    assert_has(
        &svg("phase"),
        "phase.svg",
        &[
            "Phase portrait",
            "before the outage",
            "during the outage",
            "after the outage",
            "inbound load at the dependency (attempts/s)",
            "success rate (%)",
            "start",
            "end",
        ],
    );
    assert_has(
        &svg("herd"),
        "herd.svg",
        &[
            "Thundering herd: attempt arrivals per 10 ms",
            "attempt arrivals",
            "attempts arriving per 10 ms",
            "time (s)",
            "capacity (10 attempts per 10 ms)",
        ],
    );
    assert_has(
        &svg("latency"),
        "latency.svg",
        &[
            "Latency over time",
            "successes: p50 per bucket",
            "successes: p99 per bucket",
            "time to failure: p50 per bucket",
            "success percentiles of the whole run",
            "success p99 of the run: ",
            "latency of logical requests (ms)",
            "time (s)",
        ],
    );
}

#[test]
fn every_run_chart_renders_as_a_png_that_decodes_and_is_not_blank() {
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    draw_folder(d.path(), Format::Png).expect("drawn");
    for n in RUN_CHARTS {
        let p = plot_file(d.path(), n, "png");
        let (w, h, colours, ink) = png_stats(&p);
        assert_eq!((w, h), (1000, 600), "{n}");
        assert!(colours > 50, "{n}.png has only {colours} colours");
        assert!(ink > 0.03, "{n}.png is almost blank ({ink:.3} ink)");
        let size = std::fs::metadata(&p).unwrap().len();
        assert!(size < 150_000, "{n}.png is {size} bytes");
    }
}

#[test]
fn the_same_csvs_give_byte_identical_svgs_pngs_and_report() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write_run(STORM, &[], a.path());
    for f in ["manifest.toml", "summary.csv", "timeseries.csv", "herd.csv"] {
        std::fs::copy(a.path().join(f), b.path().join(f)).unwrap();
    }
    for format in [Format::Svg, Format::Png] {
        let fa = draw_folder(a.path(), format).unwrap();
        let fb = draw_folder(b.path(), format).unwrap();
        assert_eq!(fa.len(), fb.len());
        for (x, y) in fa.iter().zip(&fb) {
            assert_eq!(
                std::fs::read(x).unwrap(),
                std::fs::read(y).unwrap(),
                "{} differs",
                x.display()
            );
        }
    }
}

#[test]
fn a_load_swept_up_then_down_in_one_run_shows_both_branches_in_phase() {
    let d = tempfile::tempdir().unwrap();
    write_run(RAMP, &[], d.path());
    draw_folder(d.path(), Format::Svg).unwrap();
    let phase = read(&plot_file(d.path(), "phase", "svg"));
    assert_has(&phase, "phase.svg", &["load rising", "load falling"]);
    assert!(!phase.contains("outage"), "no outage in this run");
}

#[test]
fn a_300_bucket_run_draws_every_chart() {
    // How long this takes is measured in `benches/plot.rs`, not here.
    let d = tempfile::tempdir().unwrap();
    write_run(
        STORM,
        &["duration=\"300s\"", "fleets.0.arrival.rate=100"],
        d.path(),
    );
    let lines = read(&d.path().join("timeseries.csv")).lines().count();
    assert_eq!(lines, 301);
    let charts = draw_folder(d.path(), Format::Png).unwrap();
    assert!(!charts.is_empty());
    for c in &charts {
        let len = std::fs::metadata(c).unwrap().len();
        assert!(len > 1000, "{} holds only {len} bytes", c.display());
    }
}

/// The number of points of each `<polyline>` in `svg`.
fn polyline_points(svg: &str) -> Vec<usize> {
    svg.split("points=\"")
        .skip(1)
        .map(|rest| {
            rest.split('"')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .count()
        })
        .collect()
}

/// Plotting 10^5 buckets took minutes (a bucket-width scan per point, and every point
/// drawn); now each series keeps at most 4 points per pixel column of the 1000-pixel
/// chart, and the whole run, simulation included, takes seconds.
#[test]
fn a_100000_bucket_run_with_plots_finishes_in_seconds_with_bounded_charts() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("big");
    let start = Instant::now();
    let o = retrysim(&[
        "run",
        "--set",
        "duration=\"1000s\"",
        "--set",
        "bucket=\"10ms\"",
        "--set",
        "fleets.0.arrival.rate=100",
        "--format",
        "svg",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    let took = start.elapsed();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let limit = if cfg!(debug_assertions) { 300.0 } else { 60.0 };
    assert!(
        took.as_secs_f64() < limit,
        "run and plots took {took:?} (limit {limit} s)"
    );
    let rows = read(&out.join("timeseries.csv")).lines().count();
    assert_eq!(rows, 100_001);
    for n in RUN_CHARTS {
        assert!(plot_file(&out, n, "svg").exists(), "{n}");
    }
    // At most 4 points per pixel column for each line: 4 lines (offered, inbound,
    // goodput, success rate) over fewer than 1000 columns; it drew 400,000 before.
    let ts = read(&plot_file(&out, "timeseries", "svg"));
    let pts = polyline_points(&ts);
    assert!(pts.iter().all(|n| *n <= 4000), "{:?}", pts.iter().max());
    let total: usize = pts.iter().sum();
    assert!(total <= 16_000, "timeseries draws {total} points");
    assert!(
        ts.len() < 1_000_000,
        "timeseries.svg has {} bytes",
        ts.len()
    );
    let lat = read(&plot_file(&out, "latency", "svg"));
    let total: usize = polyline_points(&lat).iter().sum();
    assert!(total <= 8_000, "latency draws {total} points");
    let phase = read(&plot_file(&out, "phase", "svg"));
    // Per branch (3 here) at most 2 moves per column, each with its 2 markers.
    let markers = phase.matches("<circle").count();
    assert!(markers <= 3 * 2 * 2_001, "phase draws {markers} markers");
    let html = read(&out.join("report.html"));
    assert!(
        html.len() < 3_000_000,
        "report.html has {} bytes",
        html.len()
    );
}

/// A sweep overlays 10^5-bucket series of several cells: also bounded.
#[test]
fn a_sweep_of_100000_bucket_runs_draws_bounded_overlays() {
    let d = tempfile::tempdir().unwrap();
    SweepFixture {
        keys: vec![RATE],
        values: vec![vec!["400", "800", "1200"]],
        replications: 1,
        aggregate: true,
        buckets: 100_000,
    }
    .write(d.path());
    let start = Instant::now();
    draw_folder(d.path(), Format::Svg).unwrap();
    let took = start.elapsed();
    let limit = if cfg!(debug_assertions) { 300.0 } else { 60.0 };
    assert!(took.as_secs_f64() < limit, "plotting took {took:?}");
    for n in ["phase", "latency"] {
        let svg = read(&plot_file(d.path(), n, "svg"));
        let total: usize = polyline_points(&svg).iter().sum();
        assert!(total <= 3 * 8_000, "{n} draws {total} points");
        assert!(svg.len() < 1_500_000, "{n}.svg has {} bytes", svg.len());
    }
    let html = read(&d.path().join("report.html"));
    assert!(
        html.len() < 5_000_000,
        "report.html has {} bytes",
        html.len()
    );
}

// ---- sweeps, from hand-made folders --------------------------------------------------

const RATE: &str = "fleets.0.arrival.rate";
const ATTEMPTS: &str = "fleets.0.layers.0.max_attempts";

struct SweepFixture {
    keys: Vec<&'static str>,
    /// Values of each key, in grid order (first key slowest).
    values: Vec<Vec<&'static str>>,
    replications: u64,
    aggregate: bool,
    /// Buckets of each run's time series (1 s each).
    buckets: usize,
}

impl SweepFixture {
    fn cells(&self) -> Vec<Vec<&'static str>> {
        let mut cells: Vec<Vec<&'static str>> = vec![vec![]];
        for vals in &self.values {
            cells = cells
                .into_iter()
                .flat_map(|c| {
                    vals.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push(*v);
                        c
                    })
                })
                .collect();
        }
        cells
    }

    /// Synthetic but plausible numbers: success falls with load, faster with retries.
    fn metrics(&self, cell: &[&str], rep: u64) -> Vec<(&'static str, f64)> {
        let get = |k: &str, d: f64| {
            self.keys
                .iter()
                .position(|x| *x == k)
                .and_then(|i| cell[i].parse::<f64>().ok())
                .unwrap_or(d)
        };
        let rate = get(RATE, 700.0);
        let n = get(ATTEMPTS, 3.0);
        let noise = 0.01 * rep as f64;
        let over = (rate / 1000.0 - 0.6).max(0.0);
        let success = (1.0 - over * (0.4 + 0.2 * n) - noise).clamp(0.0, 1.0);
        let amp = 1.0 + (n - 1.0) * (1.0 - success) + noise;
        vec![
            ("success_fraction", success),
            ("amplification", amp),
            (
                "latency_p99_ms",
                40.0 + 200.0 * (1.0 - success) + rep as f64,
            ),
            ("peak_inbound_ratio", rate * amp / 1000.0),
            ("offered_rate", rate),
            ("metastable", if success < 0.5 { 1.0 } else { 0.0 }),
            ("events", 1000.0 + rep as f64),
        ]
    }

    fn write(&self, dir: &Path) {
        let table: toml::Table =
            toml::from_str(include_str!("../../scenarios/default.toml")).unwrap();
        let cells = self.cells();
        let runs = cells.len() as u64 * self.replications;
        let mut run = toml::Table::new();
        run.insert("kind".into(), "sweep".into());
        run.insert(
            "params".into(),
            toml::Value::Array(self.keys.iter().map(|k| (*k).into()).collect()),
        );
        run.insert("scenario".into(), "default".into());
        run.insert("seed".into(), 1.into());
        run.insert("replications".into(), (self.replications as i64).into());
        run.insert("runs".into(), (runs as i64).into());
        let mut resolved = toml::Table::new();
        resolved.insert("capacity_per_s".into(), 1000.0.into());
        resolved.insert("offered_per_s".into(), 700.0.into());
        let mut root = toml::Table::new();
        root.insert("run".into(), run.into());
        root.insert("resolved".into(), resolved.into());
        root.insert("scenario".into(), table.into());
        // What retrysim records for the charts: the grid's labels and each cell's N^L
        // (here its max_attempts, 3 when not swept).
        let mut plot = toml::Table::new();
        plot.insert(
            "labels".into(),
            toml::Value::Array(
                self.values
                    .iter()
                    .map(|v| toml::Value::Array(v.iter().map(|x| (*x).into()).collect()))
                    .collect(),
            ),
        );
        let n = self.keys.iter().position(|k| *k == ATTEMPTS);
        let worst = cells
            .iter()
            .map(|c| n.map_or(3.0, |i| c[i].parse::<f64>().unwrap()).into())
            .collect();
        plot.insert("worst_case_attempts".into(), toml::Value::Array(worst));
        root.insert("plot".into(), plot.into());
        std::fs::write(dir.join("manifest.toml"), toml::to_string(&root).unwrap()).unwrap();

        let names: Vec<&str> = self.metrics(&cells[0], 0).iter().map(|m| m.0).collect();
        let params: Vec<String> = self.keys.iter().map(|k| format!("param_{k}")).collect();
        let mut summary = format!(
            "run,replication,seed,{},{}\n",
            names.join(","),
            params.join(",")
        );
        let mut ts = String::from("run,replication,t,offered,inbound,served,goodput,success_rate,amplification,queue_mean,queue_max,utilisation,wasted,breaker_open_fraction,budget_level,completions,rejected,errors,timeouts,breaker_open,budget_exhausted,deadline_exceeded,latency_p50_ms,latency_p99_ms,outage\n");
        let mut herd = String::from("run,replication,t,inbound\n");
        let mut agg = format!("cell,{},runs", params.join(","));
        for n in &names {
            agg.push_str(&format!(",{n}_mean,{n}_ci_low,{n}_ci_high"));
        }
        agg.push('\n');
        let mut r = 0u64;
        for (ci, cell) in cells.iter().enumerate() {
            let mut per_rep: Vec<Vec<(&str, f64)>> = Vec::new();
            for rep in 0..self.replications {
                let m = self.metrics(cell, rep);
                let vals: Vec<String> = m.iter().map(|x| x.1.to_string()).collect();
                summary.push_str(&format!(
                    "{r},{rep},{},{},{}\n",
                    rep + 1,
                    vals.join(","),
                    cell.join(",")
                ));
                let s = m[0].1;
                for t in 0..self.buckets {
                    let dip = if (4..6).contains(&t) { 0.5 } else { 1.0 };
                    let inbound = 700.0 * (2.0 - dip);
                    let outage = if (4..6).contains(&t) { "1" } else { "0" };
                    ts.push_str(&format!(
                        "{r},{rep},{t},700,{inbound},700,{},{},1,0,0,0.7,0,,,700,0,0,0,0,0,0,8,{},{outage}\n",
                        700.0 * s * dip,
                        s * dip,
                        40.0 + 10.0 * t as f64,
                    ));
                }
                for k in 0..50 {
                    herd.push_str(&format!(
                        "{r},{rep},{},{}\n",
                        5.0 + 0.01 * k as f64,
                        5 + (k * (ci + 1)) % 17
                    ));
                }
                per_rep.push(m);
                r += 1;
            }
            agg.push_str(&format!("{ci},{},{}", cell.join(","), self.replications));
            for (j, _) in names.iter().enumerate() {
                let xs: Vec<f64> = per_rep.iter().map(|m| m[j].1).collect();
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                let half = if xs.len() > 1 {
                    0.05 * mean.abs() + 0.01
                } else {
                    0.0
                };
                agg.push_str(&format!(",{mean},{},{}", mean - half, mean + half));
            }
            agg.push('\n');
        }
        std::fs::write(dir.join("summary.csv"), summary).unwrap();
        std::fs::write(dir.join("timeseries.csv"), ts).unwrap();
        std::fs::write(dir.join("herd.csv"), herd).unwrap();
        if self.aggregate {
            std::fs::write(dir.join("aggregate.csv"), agg).unwrap();
        }
    }
}

fn rate_by_attempts() -> SweepFixture {
    SweepFixture {
        keys: vec![RATE, ATTEMPTS],
        values: vec![vec!["400", "800", "1200"], vec!["1", "3"]],
        replications: 2,
        aggregate: true,
        buckets: 10,
    }
}

#[test]
fn a_sweep_draws_load_vs_success_with_a_line_per_policy_and_bands() {
    let d = tempfile::tempdir().unwrap();
    rate_by_attempts().write(d.path());
    draw_folder(d.path(), Format::Svg).expect("drawn");
    let lvs = read(&plot_file(d.path(), "load_vs_success", "svg"));
    assert_has(
        &lvs,
        "load_vs_success.svg",
        &[
            "Success against load: default",
            "max_attempts=1",
            "max_attempts=3",
            "rate (swept load, requests/s)",
            "logical requests that succeeded (%)",
            "95% confidence band",
        ],
    );
    // Two policies: two legend lines, no line per load value.
    assert!(!lvs.contains("rate=400"), "the load is on x, not a policy");
}

#[test]
fn a_sweep_draws_each_varying_metric_against_each_swept_key() {
    let d = tempfile::tempdir().unwrap();
    rate_by_attempts().write(d.path());
    let files = draw_folder(d.path(), Format::Png).expect("drawn");
    let names: Vec<String> = files
        .iter()
        .filter_map(|f| f.strip_prefix(d.path().join("plots")).ok())
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    for m in [
        "success_fraction",
        "amplification",
        "latency_p99_ms",
        "metastable",
    ] {
        for k in ["rate", "max_attempts"] {
            let n = format!("metrics/{m}_vs_{k}.png");
            assert!(names.contains(&n), "{n} missing from {names:?}");
        }
    }
    // `events` is bookkeeping, not a behaviour.
    assert!(!names.iter().any(|n| n.contains("events")), "{names:?}");
    let (_, _, colours, ink) =
        png_stats(&d.path().join("plots/metrics/latency_p99_ms_vs_rate.png"));
    assert!(colours > 50 && ink > 0.03);
    let svg = crate::plot::draw_folder(d.path(), Format::Svg).unwrap();
    let m = svg
        .iter()
        .find(|f| f.ends_with("metrics/latency_p99_ms_vs_max_attempts.svg"))
        .expect("drawn");
    assert_has(
        &read(m),
        "latency_p99_ms_vs_max_attempts.svg",
        &[
            "latency_p99_ms against max_attempts: default",
            "max_attempts (swept)",
            "latency_p99_ms (ms)",
            "rate=400",
            "rate=1200",
        ],
    );
}

#[test]
fn a_sweep_over_max_attempts_draws_measured_amplification_against_n_to_the_l() {
    let d = tempfile::tempdir().unwrap();
    rate_by_attempts().write(d.path());
    draw_folder(d.path(), Format::Svg).unwrap();
    let amp = read(&plot_file(d.path(), "amplification", "svg"));
    assert_has(
        &amp,
        "amplification.svg",
        &[
            "Retry amplification against N^L: default",
            "worst-case attempts per request N^L (product of max_attempts)",
            "measured attempts per logical request",
            "N^L: every attempt fails",
            "rate=800",
        ],
    );
}

#[test]
fn a_sweep_overlays_one_trajectory_per_cell_in_phase_herd_and_latency() {
    let d = tempfile::tempdir().unwrap();
    rate_by_attempts().write(d.path());
    draw_folder(d.path(), Format::Svg).unwrap();
    for n in ["phase", "herd", "latency"] {
        let s = read(&plot_file(d.path(), n, "svg"));
        assert_has(
            &s,
            n,
            &["rate=400, max_attempts=1", "rate=1200, max_attempts=3"],
        );
    }
}

#[test]
fn a_sweep_with_no_load_key_skips_load_vs_success_and_amplification_without_failing() {
    let d = tempfile::tempdir().unwrap();
    SweepFixture {
        keys: vec!["dependency.queue_limit"],
        values: vec![vec!["50", "200", "800"]],
        replications: 1,
        aggregate: true,
        buckets: 10,
    }
    .write(d.path());
    let files = draw_folder(d.path(), Format::Svg).expect("drawn");
    assert!(!plot_file(d.path(), "load_vs_success", "svg").exists());
    assert!(!plot_file(d.path(), "amplification", "svg").exists());
    assert!(files.iter().any(|f| f.ends_with("phase.svg")));
    assert!(d.path().join("report.html").exists());
}

#[test]
fn a_sweep_without_aggregate_csv_is_drawn_from_summary_means() {
    let d = tempfile::tempdir().unwrap();
    SweepFixture {
        aggregate: false,
        ..rate_by_attempts()
    }
    .write(d.path());
    draw_folder(d.path(), Format::Svg).expect("drawn");
    let lvs = read(&plot_file(d.path(), "load_vs_success", "svg"));
    assert!(lvs.contains("max_attempts=3"));
    assert!(!lvs.contains("95% confidence band"));
    let report = read(&d.path().join("report.html"));
    assert!(report.contains("no <code>aggregate.csv</code>"));
}

// ---- bad input -------------------------------------------------------------------------

#[test]
fn a_bad_cell_is_an_error_naming_the_file_the_line_and_the_column() {
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    let p = d.path().join("timeseries.csv");
    let text = read(&p);
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut cells: Vec<String> = lines[3].split(',').map(str::to_string).collect();
    cells[4] = "lots".into();
    lines[3] = cells.join(",");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let e = draw_folder(d.path(), Format::Png).unwrap_err().to_string();
    assert!(e.contains("timeseries.csv"), "{e}");
    assert!(e.contains("line 4"), "{e}");
    assert!(e.contains("column 'inbound'"), "{e}");
    assert!(e.contains("found 'lots'"), "{e}");
}

#[test]
fn missing_files_and_columns_are_errors_not_panics() {
    let d = tempfile::tempdir().unwrap();
    let e = draw_folder(d.path(), Format::Png).unwrap_err().to_string();
    assert!(e.starts_with("cannot read '"), "{e}");
    assert!(e.contains("manifest.toml"), "{e}");

    write_run(STORM, &[], d.path());
    std::fs::write(d.path().join("herd.csv"), "run,t\n0,1\n").unwrap();
    let e = draw_folder(d.path(), Format::Png).unwrap_err().to_string();
    assert!(e.contains("herd.csv"), "{e}");
    assert!(
        e.contains("no column 'replication'") || e.contains("no column 'inbound'"),
        "{e}"
    );

    std::fs::write(d.path().join("herd.csv"), "run,replication,t,inbound\n").unwrap();
    std::fs::write(d.path().join("timeseries.csv"), "run,replication,t\n0,0\n").unwrap();
    let e = draw_folder(d.path(), Format::Png).unwrap_err().to_string();
    assert!(e.contains("timeseries.csv"), "{e}");

    std::fs::write(d.path().join("manifest.toml"), "[run]\nkind = \"walk\"\n").unwrap();
    let e = draw_folder(d.path(), Format::Png).unwrap_err().to_string();
    assert!(e.contains("run.kind"), "{e}");
}

#[test]
fn an_empty_herd_file_leaves_out_the_herd_chart() {
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    std::fs::write(d.path().join("herd.csv"), "run,replication,t,inbound\n").unwrap();
    let files = draw_folder(d.path(), Format::Svg).unwrap();
    assert_eq!(files.len(), 4, "{files:?}");
    assert!(!files.iter().any(|f| f.ends_with("herd.svg")));
}

#[test]
fn degenerate_folders_draw_without_panicking() {
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    let header = read(&d.path().join("timeseries.csv"))
        .lines()
        .next()
        .unwrap()
        .to_string();
    // One bucket, every optional cell empty, nothing arriving.
    let one = format!("{header}\n0,0,0,0,0,0,0,,,0,0,,0,,,0,0,0,0,0,0,0,,,0,,,,,,,0\n");
    std::fs::write(d.path().join("timeseries.csv"), one).unwrap();
    std::fs::write(
        d.path().join("herd.csv"),
        "run,replication,t,inbound\n0,0,5,3\n",
    )
    .unwrap();
    let files = draw_folder(d.path(), Format::Png).expect("drawn");
    assert_eq!(files.len(), RUN_CHARTS.len() + 1, "{files:?}");

    // No runs at all: no chart, still a report.
    std::fs::write(d.path().join("timeseries.csv"), format!("{header}\n")).unwrap();
    let files = draw_folder(d.path(), Format::Svg).expect("drawn");
    assert_eq!(files, vec![d.path().join("report.html")]);
    assert!(read(&files[0]).contains("No chart applies"));
}

// ---- the swimlane of a traced run -------------------------------------------------------

/// A hand-written `traces.csv` for STORM (outage 8 s to 12 s; two layers, client and
/// sdk): request 4242 long before the outage; 100 just before it; 200 in it, failing
/// twice at sdk, then its retry refused by the budget; 300 at its end, an orphan (sdk
/// attempt timed out at 12.4 s, served until 12.8 s) and a success; 350 refused by a
/// breaker.
const TRACES: &str = "\
request,fleet,client,span,parent,kind,caller,service,layer,attempt,send,arrive,start,end,outcome,done,fate,wait,wait_reason,budget,breaker
100,web,3,3,,call,web,dependency,,1,7,7,,7.02,success,7.02,success,0,,,
100,web,3,4,3,attempt,web,dependency,client,1,7,7,,7.02,success,7.02,success,0,,,
100,web,3,5,4,attempt,web,dependency,sdk,1,7,7,7,7.02,success,7.02,success,0,,,inside:admitted
200,web,4,6,,call,web,dependency,,1,8.5,8.5,,8.7,budget_exhausted,8.7,budget_exhausted,0,,,
200,web,4,7,6,attempt,web,dependency,client,1,8.5,8.5,,8.53,error,8.53,error,0,,,
200,web,4,8,7,attempt,web,dependency,sdk,1,8.5,8.5,8.5,8.501,error,8.501,error,0,,,inside:admitted
200,web,4,9,7,attempt,web,dependency,sdk,2,8.521,8.521,8.521,8.53,error,8.53,error,0.02,backoff,,inside:admitted
200,web,4,10,6,attempt,web,dependency,client,2,8.6,8.6,,8.61,error,8.61,error,0.07,backoff,granted,
200,web,4,11,10,attempt,web,dependency,sdk,1,8.6,8.6,8.6,8.61,error,8.61,error,0,,,inside:admitted
200,web,4,12,6,attempt,web,dependency,client,3,8.7,,,8.7,budget_exhausted,,,0.09,backoff,refused,
300,web,0,13,,call,web,dependency,,1,11.9,11.9,,12.62,success,12.62,success,0,,,
300,web,0,14,13,attempt,web,dependency,client,1,11.9,11.9,,12.4,timeout,12.8,success,0,,,
300,web,0,15,14,attempt,web,dependency,sdk,1,11.9,11.9,12.3,12.4,cancelled,12.8,success,0,,,inside:admitted
300,web,0,16,13,attempt,web,dependency,client,2,12.6,12.6,,12.62,success,12.62,success,0.2,backoff,granted,
300,web,0,17,16,attempt,web,dependency,sdk,1,12.6,12.6,12.6,12.62,success,12.62,success,0,,,inside:admitted
350,web,1,18,,call,web,dependency,,1,13,13,,13,breaker_open,13,breaker_open,0,,,
350,web,1,19,18,attempt,web,dependency,client,1,13,13,,13,breaker_open,13,breaker_open,0,,,
350,web,1,20,19,attempt,web,dependency,sdk,1,13,,,13,breaker_open,,,0,,,inside:rejected
4242,web,1,0,,call,web,dependency,,1,0.5,0.5,,0.52,success,0.52,success,0,,,
4242,web,1,1,0,attempt,web,dependency,client,1,0.5,0.5,,0.52,success,0.52,success,0,,,
4242,web,1,2,1,attempt,web,dependency,sdk,1,0.5,0.5,0.5,0.52,success,0.52,success,0,,,inside:admitted
";

/// Whether the swimlane labels a lane with request `ordinal`.
fn labels_lane(svg: &str, ordinal: u64) -> bool {
    svg.contains(&format!(">\n{ordinal}\n</text>"))
}

#[test]
fn a_traced_run_draws_a_swimlane_of_its_requests_around_the_first_outage() {
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    // Without traces.csv: no swimlane.
    let files = draw_folder(d.path(), Format::Svg).unwrap();
    assert!(
        !files.iter().any(|f| f.ends_with("swimlane.svg")),
        "{files:?}"
    );
    assert!(!read(&d.path().join("report.html")).contains("plot-swimlane"));

    std::fs::write(d.path().join("traces.csv"), TRACES).unwrap();
    let files = draw_folder(d.path(), Format::Svg).unwrap();
    assert_eq!(files.len(), RUN_CHARTS.len() + 2, "{files:?}");
    let herd = files.iter().position(|f| f.ends_with("herd.svg")).unwrap();
    assert!(
        files[herd + 1].ends_with("swimlane.svg"),
        "after the herd: {files:?}"
    );
    let svg = read(&plot_file(d.path(), "swimlane", "svg"));
    assert_has(
        &svg,
        "swimlane.svg",
        &[
            "Sampled requests around the first outage: storm",
            "time (s)",
            "attempt: success",
            "attempt: error",
            "attempt: cancelled",
            "request lifetime",
            "served after its caller gave up",
            "refused by budget or limiter",
            "rejected by a breaker",
            "outage",
        ],
    );
    // The window is 6 s to 22 s (timeseries.csv's outage, 8 s to 12 s): 4242 is left out.
    for ordinal in [100, 200, 300, 350] {
        assert!(labels_lane(&svg, ordinal), "lane {ordinal}");
    }
    assert!(!labels_lane(&svg, 4242));
    // The three failed sdk attempts are bars of the error colour (and one legend swatch).
    let error_fill = "fill=\"#BE1E2D\"";
    assert_eq!(svg.matches(error_fill).count(), 3 + 1, "{svg}");
    let html = read(&d.path().join("report.html"));
    assert_has(
        &html,
        "report.html",
        &[
            "id=\"plot-swimlane\"",
            "One lane per request, in arrival order",
        ],
    );

    // With trace.json, its outage windows place the window: 12 s to the run's end.
    let log = crate::metrics::trace::TraceLog {
        windows: vec![crate::metrics::trace::TraceWindow {
            start: 14_000_000_000,
            end: 15_000_000_000,
            service: None,
        }],
        end: 25_000_000_000,
        ..Default::default()
    };
    std::fs::write(
        d.path().join("trace.json"),
        crate::export::trace::render_json(&log),
    )
    .unwrap();
    draw_folder(d.path(), Format::Png).unwrap();
    let (w, h, colours, ink) = png_stats(&plot_file(d.path(), "swimlane", "png"));
    assert_eq!(w, 1000);
    assert!(h >= 600 && colours > 8 && ink > 0.02, "{h} {colours} {ink}");
    let svg = render_svg_of(d.path());
    assert!(labels_lane(&svg, 300) && labels_lane(&svg, 350));
    assert!(!labels_lane(&svg, 100) && !labels_lane(&svg, 200));
}

/// The swimlane's SVG of `dir`, drawn again.
fn render_svg_of(dir: &Path) -> String {
    draw_folder(dir, Format::Svg).unwrap();
    read(&plot_file(dir, "swimlane", "svg"))
}

#[test]
fn bad_traces_are_errors_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    let bad = TRACES.replacen(",8.5,8.5,,8.7,", ",soon,8.5,,8.7,", 1);
    std::fs::write(d.path().join("traces.csv"), bad).unwrap();
    let e = draw_folder(d.path(), Format::Svg).unwrap_err().to_string();
    assert!(e.contains("traces.csv") && e.contains("line 5"), "{e}");
    assert!(
        e.contains("column 'send'") && e.contains("found 'soon'"),
        "{e}"
    );

    std::fs::write(d.path().join("traces.csv"), "request,span\n1,2\n").unwrap();
    let e = draw_folder(d.path(), Format::Svg).unwrap_err().to_string();
    assert!(e.contains("traces.csv") && e.contains("no column"), "{e}");

    std::fs::write(d.path().join("traces.csv"), TRACES).unwrap();
    std::fs::write(
        d.path().join("trace.json"),
        "{\"traceEvents\":[{\"ts\":\"x\"",
    )
    .unwrap();
    let e = draw_folder(d.path(), Format::Svg).unwrap_err().to_string();
    assert!(
        e.starts_with("cannot read '") && e.contains("trace.json"),
        "{e}"
    );

    // A header alone: nobody to draw, no swimlane, no error.
    std::fs::remove_file(d.path().join("trace.json")).unwrap();
    let header = TRACES.lines().next().unwrap();
    std::fs::write(d.path().join("traces.csv"), format!("{header}\n")).unwrap();
    let files = draw_folder(d.path(), Format::Svg).unwrap();
    assert!(!files.iter().any(|f| f.ends_with("swimlane.svg")));
}

// ---- the command line --------------------------------------------------------------------

fn retrysim(args: &[&str]) -> std::process::Output {
    Command::new(crate::tests::common::bin())
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn run_draws_png_plots_and_a_report_unless_told_not_to() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("a");
    let o = retrysim(&[
        "run",
        "--set",
        "duration=\"20s\"",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for n in RUN_CHARTS {
        assert!(plot_file(&out, n, "png").exists(), "{n}");
    }
    assert!(out.join("report.html").exists());

    let out = d.path().join("b");
    let o = retrysim(&[
        "run",
        "--set",
        "duration=\"20s\"",
        "--out",
        out.to_str().unwrap(),
        "-q",
        "--no-plots",
    ]);
    assert!(o.status.success());
    assert!(!out.join("plots").exists());
    assert!(!out.join("report.html").exists());
}

#[test]
fn plot_redraws_a_folder_from_its_csvs_in_the_format_asked() {
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    let dir = d.path().to_str().unwrap();
    let o = retrysim(&["plot", dir, "--format", "svg"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for n in RUN_CHARTS {
        assert!(plot_file(d.path(), n, "svg").exists(), "{n}");
    }
    let o = retrysim(&["plot", d.path().join("nowhere").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("error: cannot read '"), "{err}");
    assert!(err.contains("manifest.toml"), "{err}");
}

// ---- the report ----------------------------------------------------------------------------

fn svg_count(html: &str) -> usize {
    html.matches("<svg").count()
}

#[test]
fn the_report_is_self_contained_and_holds_every_plot_and_the_tables() {
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    let files = draw_folder(d.path(), Format::Png).unwrap();
    let html = read(&d.path().join("report.html"));
    assert_report(&html, files.len() - 1, &["plots/timeseries.png"]);
}

#[test]
fn a_sweep_report_also_holds_the_cells_with_their_intervals() {
    let d = tempfile::tempdir().unwrap();
    rate_by_attempts().write(d.path());
    let files = draw_folder(d.path(), Format::Png).unwrap();
    let html = read(&d.path().join("report.html"));
    assert_report(
        &html,
        files.len() - 1,
        &[
            "id=\"cell-table\"",
            "plots/load_vs_success.png",
            "plots/metrics/success_fraction_vs_rate.png",
            "id=\"metric-charts\"",
        ],
    );
}

/// Checks a report holds `plots` inline SVGs, the tables and `needles`, and loads
/// nothing from anywhere.
fn assert_report(html: &str, plots: usize, needles: &[&str]) {
    assert_eq!(svg_count(html), plots);
    assert_has(
        html,
        "report.html",
        &[
            "<!DOCTYPE html>",
            "id=\"summary-table\"",
            "Resolved scenario",
            "[[scenario.fleets]]",
        ],
    );
    assert_has(html, "report.html", needles);
    for banned in ["http://", "https://", "<script", "<link", "src=", "url("] {
        assert!(!html.contains(banned), "report.html holds {banned:?}");
    }
}

#[test]
fn the_report_lists_the_lints_that_fire_on_the_scenario() {
    // STORM's lints fire: the manifest records them and the report shows them.
    let source = Source {
        path: "<test>".into(),
        stem: "test".into(),
        text: STORM.into(),
    };
    let loaded = scenario::load(source, &[]).expect("valid scenario");
    let lints = crate::explain::lint::lints(&loaded.scenario);
    assert!(!lints.is_empty(), "STORM should fire a lint");
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    let manifest = read(&d.path().join("manifest.toml"));
    assert!(manifest.contains("\n[explain]\nlints = ["), "{manifest}");
    draw_folder(d.path(), Format::Svg).unwrap();
    let html = read(&d.path().join("report.html"));
    assert!(html.contains("<section id=\"lints\">"), "no lints section");
    for l in &lints {
        assert!(
            html.contains(&format!("<li>[{}] fleet &#39;{}&#39;", l.id, l.fleet)),
            "{l}"
        );
    }

    // A scenario without lints has neither the table nor the section.
    let quiet = include_str!("../../scenarios/default.toml");
    let d = tempfile::tempdir().unwrap();
    write_run(quiet, &[], d.path());
    assert!(!read(&d.path().join("manifest.toml")).contains("[explain]"));
    draw_folder(d.path(), Format::Svg).unwrap();
    assert!(!read(&d.path().join("report.html")).contains("<section id=\"lints\">"));
}

/// Runs `cmd`, killing it after `limit`; returns its exit status and what it printed.
/// The output goes to files, not pipes: a full pipe would block the browser forever.
fn run_with_limit(
    mut cmd: Command,
    scratch: &Path,
    limit: Duration,
) -> (std::process::ExitStatus, String, String) {
    let out_path = scratch.join("stdout.txt");
    let err_path = scratch.join("stderr.txt");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .expect("chromium starts");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "chromium did not finish within {limit:?}: {}",
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = std::fs::read_to_string(&out_path).unwrap_or_default();
    let err = std::fs::read_to_string(&err_path).unwrap_or_default();
    (status, out, err)
}

fn chromium(profile: &Path, extra: &[String], url: &str) -> Command {
    let mut c = Command::new("/usr/bin/chromium");
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1280,4000",
    ]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    c.args(extra);
    c.arg(url);
    c
}

#[test]
fn the_report_renders_in_headless_chromium_with_every_plot_and_the_table() {
    if !Path::new("/usr/bin/chromium").exists() {
        if std::env::var("CI_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("CI_REQUIRE_CHROMIUM=1 but /usr/bin/chromium is missing (apt-get install -y chromium)");
        }
        eprintln!("skipped: /usr/bin/chromium is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let run = d.path().join("run");
    write_run(STORM, &[], &run);
    let files = draw_folder(&run, Format::Png).unwrap();
    let report = std::fs::canonicalize(run.join("report.html")).unwrap();
    let url = format!("file://{}", report.display());
    let limit = Duration::from_secs(120);

    let shot = d.path().join("shot.png");
    let (status, _, err) = run_with_limit(
        chromium(
            &d.path().join("profile-a"),
            &[format!("--screenshot={}", shot.display())],
            &url,
        ),
        d.path(),
        limit,
    );
    assert!(status.success(), "chromium failed: {err}");
    assert!(
        !err.contains("net::ERR"),
        "the page tried to load something: {err}"
    );
    let (w, h, colours, ink) = png_stats(&shot);
    assert_eq!((w, h), (1280, 4000));
    assert!(colours > 100, "the screenshot has only {colours} colours");
    assert!(ink > 0.05, "the screenshot is almost blank ({ink:.3} ink)");

    let (status, dom, err) = run_with_limit(
        chromium(&d.path().join("profile-b"), &["--dump-dom".into()], &url),
        d.path(),
        limit,
    );
    assert!(status.success(), "chromium failed: {err}");
    assert_eq!(
        svg_count(&dom),
        files.len() - 1,
        "every plot is in the page"
    );
    assert!(dom.contains("id=\"summary-table\""));
    // The table holds the run's row: its `logical` count is a cell of the page.
    let summary = read(&run.join("summary.csv"));
    let mut rows = summary.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let row: Vec<&str> = rows.next().unwrap().split(',').collect();
    let logical = row[header.iter().position(|h| *h == "logical").unwrap()];
    assert!(
        dom.contains(&format!("<td>{logical}</td>")),
        "the summary row ({logical} logical requests) is not in the page"
    );
}

// ---- service graphs: the graph and services charts -----------------------------------------

/// Three tiers, each retrying its callee, the db failing for 3 s: a cascade.
const CASCADE: &str = r#"
name = "cascade"
seed = 5
duration = "12s"
drain = "5s"
warmup = "2s"

[[services]]
name = "frontend"
servers = 40
queue_limit = 40
service_time = { kind = "exponential", mean = "2ms" }

[[services.calls]]
to = "backend"
[[services.calls.layers]]
name = "frontend-client"
max_attempts = 3
attempt_timeout = "500ms"
backoff = { kind = "fixed", delay = "20ms" }

[[services]]
name = "backend"
servers = 30
queue_limit = 50
service_time = { kind = "exponential", mean = "4ms" }

[[services.calls]]
to = "db"
[[services.calls.layers]]
name = "backend-client"
max_attempts = 3
attempt_timeout = "100ms"
backoff = { kind = "fixed", delay = "10ms" }

[[services]]
name = "db"
servers = 20
queue_limit = 100
service_time = { kind = "exponential", mean = "8ms" }

[[fleets]]
name = "users"
arrival = { kind = "poisson", rate = 150, clients = 50 }

[[fleets.layers]]
name = "app"
max_attempts = 2
attempt_timeout = "2s"

[[outages]]
target = "db"
start = "5s"
end = "8s"
mode = { kind = "fail", after = "1ms" }
"#;

const GRAPH_CHARTS: [&str; 2] = ["graph", "services"];

/// The mean over the rows of `summary.csv`'s column `col`.
fn summary_mean(dir: &Path, col: &str) -> f64 {
    let text = read(&dir.join("summary.csv"));
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = header
        .iter()
        .position(|h| *h == col)
        .unwrap_or_else(|| panic!("summary.csv has no {col}"));
    let values: Vec<f64> = lines
        .map(|l| l.split(',').nth(i).unwrap().parse::<f64>().unwrap())
        .collect();
    values.iter().sum::<f64>() / values.len() as f64
}

#[test]
fn a_graph_run_draws_the_graph_and_services_charts_as_pngs() {
    let d = tempfile::tempdir().unwrap();
    write_run(CASCADE, &[], d.path());
    let files = draw_folder(d.path(), Format::Png).expect("drawn");
    // The four run charts, the two graph charts, the report.
    assert_eq!(files.len(), RUN_CHARTS.len() + 3, "{files:?}");
    for n in GRAPH_CHARTS {
        let p = plot_file(d.path(), n, "png");
        assert!(files.contains(&p), "{n} not returned: {files:?}");
        let (w, h, colours, ink) = png_stats(&p);
        // Three tiers and a fleet fit the default size; three panels do too.
        assert_eq!((w, h), (1000, 600), "{n}");
        assert!(colours > 50, "{n}.png has only {colours} colours");
        assert!(ink > 0.03, "{n}.png is almost blank ({ink:.3} ink)");
        let size = std::fs::metadata(&p).unwrap().len();
        assert!(size > 10_000 && size < 200_000, "{n}.png is {size} bytes");
    }
    let html = read(&d.path().join("report.html"));
    assert_report(
        &html,
        files.len() - 1,
        &["plots/graph.png", "plots/services.png", "Arrow labels: "],
    );
    // Right after the timeseries chart, before the phase portrait.
    let at = |id: &str| html.find(&format!("id=\"plot-{id}\"")).unwrap();
    assert!(at("timeseries") < at("graph"));
    assert!(at("graph") < at("services"));
    assert!(at("services") < at("phase"));
    let manifest = read(&d.path().join("manifest.toml"));
    assert_has(
        &manifest,
        "manifest.toml",
        &["\"plots/graph.png\"", "\"plots/services.png\""],
    );
}

#[test]
fn the_graph_chart_labels_arrows_and_boxes_with_the_measured_numbers() {
    let d = tempfile::tempdir().unwrap();
    write_run(CASCADE, &["replications=2"], d.path());
    draw_folder(d.path(), Format::Svg).unwrap();
    let svg = read(&plot_file(d.path(), "graph", "svg"));
    assert_has(
        &svg,
        "graph.svg",
        &[
            "Service graph: cascade (mean of 2 runs)",
            "users",
            "fleet",
            "frontend",
            "backend",
            "db",
            "servers 40",
            "servers 30",
            "servers 20",
            "peak utilisation &gt;= 95%",
        ],
    );
    for s in ["frontend", "backend", "db"] {
        let a = summary_mean(d.path(), &format!("service_{s}_attempts_per_request"));
        let label = format!("{a:.2}/req");
        assert!(svg.contains(&label), "graph.svg lacks {label} ({s})");
        let u = summary_mean(d.path(), &format!("service_{s}_utilisation_peak"));
        let peak = format!("peak util {:.0}%", u * 100.0);
        assert!(svg.contains(&peak), "graph.svg lacks {peak} ({s})");
    }
    // The retries multiply down the tiers.
    let db = summary_mean(d.path(), "service_db_attempts_per_request");
    let fe = summary_mean(d.path(), "service_frontend_attempts_per_request");
    assert!(db > fe, "db {db} frontend {fe}");

    let svc = read(&plot_file(d.path(), "services", "svg"));
    assert_has(
        &svc,
        "services.svg",
        &[
            "Services over time: cascade (run 0)",
            "inbound (attempts/s)",
            "goodput (successes/s)",
            "utilisation (right axis)",
            "outage at the service",
            "utilisation (%)",
            "time (s)",
        ],
    );
    // Only the db's panel is shaded: the legend's swatch and one outage rectangle.
    let shade = "opacity=\"0.15\" fill=\"#D55E00\"";
    assert_eq!(svc.matches(shade).count(), 2, "{shade}");
}

#[test]
fn a_dependency_run_draws_no_graph_charts() {
    let d = tempfile::tempdir().unwrap();
    write_run(STORM, &[], d.path());
    let files = draw_folder(d.path(), Format::Png).unwrap();
    assert_eq!(files.len(), RUN_CHARTS.len() + 1, "{files:?}");
    for n in GRAPH_CHARTS {
        assert!(!plot_file(d.path(), n, "png").exists(), "{n}");
    }
    let html = read(&d.path().join("report.html"));
    assert!(!html.contains("plots/graph"), "report.html shows a graph");
    assert!(
        !html.contains("plots/services"),
        "report.html shows services"
    );
}

#[test]
fn the_same_graph_csvs_give_byte_identical_graph_charts() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    write_run(CASCADE, &[], a.path());
    for f in [
        "manifest.toml",
        "summary.csv",
        "timeseries.csv",
        "herd.csv",
        "services.csv",
    ] {
        std::fs::copy(a.path().join(f), b.path().join(f)).unwrap();
    }
    for format in [Format::Svg, Format::Png] {
        draw_folder(a.path(), format).unwrap();
        draw_folder(b.path(), format).unwrap();
        for n in GRAPH_CHARTS {
            let ext = format.extension();
            assert_eq!(
                std::fs::read(plot_file(a.path(), n, ext)).unwrap(),
                std::fs::read(plot_file(b.path(), n, ext)).unwrap(),
                "{n}.{ext} differs"
            );
        }
    }
}

#[test]
fn graph_charts_are_replaced_by_a_redraw_and_removed_by_a_forced_dependency_run() {
    let d = tempfile::tempdir().unwrap();
    let scenario = d.path().join("cascade.toml");
    std::fs::write(&scenario, CASCADE).unwrap();
    let out = d.path().join("out");
    let out_s = out.to_str().unwrap();
    let o = retrysim(&["run", scenario.to_str().unwrap(), "--out", out_s, "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for n in GRAPH_CHARTS {
        assert!(plot_file(&out, n, "png").exists(), "{n}");
    }
    // Redrawn as SVG: the PNGs the manifest listed go, the SVGs come.
    let o = retrysim(&["plot", out_s, "--format", "svg", "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for n in GRAPH_CHARTS {
        assert!(!plot_file(&out, n, "png").exists(), "{n}.png stayed");
        assert!(plot_file(&out, n, "svg").exists(), "{n}.svg");
    }
    // The same scenario again replaces its own results.
    let o = retrysim(&["run", scenario.to_str().unwrap(), "--out", out_s, "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for n in GRAPH_CHARTS {
        assert!(plot_file(&out, n, "png").exists(), "{n}");
        assert!(!plot_file(&out, n, "svg").exists(), "{n}.svg stayed");
    }
    // Another scenario (the embedded default, a [dependency]) only with --force, and
    // then no graph chart is left.
    let o = retrysim(&["run", "--set", "duration=\"10s\"", "--out", out_s, "-q"]);
    assert!(!o.status.success());
    let o = retrysim(&[
        "run",
        "--set",
        "duration=\"10s\"",
        "--out",
        out_s,
        "-q",
        "--force",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for n in GRAPH_CHARTS {
        assert!(!plot_file(&out, n, "png").exists(), "{n}.png stayed");
    }
    assert!(!out.join("services.csv").exists());
    assert!(plot_file(&out, "timeseries", "png").exists());
}

#[test]
fn recovery_time_is_drawn_with_the_runs_that_never_recovered_marked() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("cp");
    let o = retrysim(&[
        "sweep",
        "scenarios/capacity_planning.toml",
        "--set",
        "replications=2",
        "--format",
        "svg",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Without a budget, 9 to 14 servers never recover: recovery_time_s is empty in
    // both runs of those cells, yet the chart is drawn, those cells marked 2/2.
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let never = summary
        .lines()
        .skip(1)
        .filter(|l| l.contains("no budget") && l.split(',').any(|f| f == "true"))
        .count();
    assert!(never >= 4, "{summary}");
    let svg = read(&plot_file(
        &out,
        "metrics/recovery_time_s_vs_servers",
        "svg",
    ));
    assert!(svg.contains("never recovered"), "legend");
    assert!(svg.contains("2/2"), "a cell marked 2/2");
    assert!(svg.contains("no budget") && svg.contains("budget=token_bucket"));
    // The report's header states the capacity's range over the swept servers (9 to 18
    // servers of 10 ms), not the base scenario's one value.
    let report = read(&out.join("report.html"));
    assert!(
        report.contains("capacity 900 to 1800 attempts/s (over <code>dependency.servers</code>)"),
        "{report}"
    );
}

/// The byte offset of each `<section id=...>` of `html`, asserting they come in `order`.
fn assert_sections_in_order(html: &str, order: &[&str]) {
    let at: Vec<usize> = order
        .iter()
        .map(|id| {
            html.find(&format!("<section id=\"{id}\">"))
                .unwrap_or_else(|| panic!("no section {id}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{order:?} at {at:?}");
}

#[test]
fn a_run_report_leads_with_the_question_the_numbers_the_expectations_and_the_lints() {
    // retry_one_layer fires a lint and has three [[expect]] entries without `where`;
    // one is made to fail with --set.
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("r");
    let o = retrysim(&[
        "run",
        "scenarios/retry_one_layer.toml",
        "--set",
        "expect.2.min=1000000",
        "--format",
        "svg",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let manifest = read(&out.join("manifest.toml"));
    assert!(
        manifest.contains("header = \"\"\"\nQuestion: the cascade"),
        "{manifest}"
    );
    let html = read(&out.join("report.html"));
    assert_sections_in_order(
        &html,
        &[
            "question",
            "headline",
            "expectations",
            "lints",
            "plots",
            "summary",
            "scenario",
        ],
    );
    // The header, escaped, as paragraphs.
    assert!(
        html.contains(
            "<p>Question: the cascade of cascade.toml with one change, the seeds&#39; rule"
        ),
        "{html}"
    );
    assert!(html.contains("id=\"headline-table\""));
    // A row per expectation: two pass, the one made impossible fails with its value.
    let expect = &html[html.find("<section id=\"expectations\">").unwrap()..];
    let expect = &expect[..expect.find("</section>").unwrap()];
    assert!(expect.contains("<p>2 of 3 pass"), "{expect}");
    assert!(
        expect.contains("<td class=\"pass\">PASS</td><td>service_db_attempts_per_request</td><td>&lt;= 2</td><td>1.5</td>"),
        "{expect}"
    );
    assert!(
        expect.contains("<td class=\"fail\">FAIL</td><td>overloaded</td><td>&gt;= 1000000</td>"),
        "{expect}"
    );
    assert_eq!(expect.matches("<tr><td class=").count(), 3, "{expect}");
    assert!(
        html.contains("<li>[retries-at-several-tiers] fleet"),
        "no lint id"
    );
}

#[test]
fn a_sweep_report_leads_with_the_expectations_and_their_metrics_charts() {
    // capacity_planning's expectations name metastable, then recovery_time_s; one of
    // its twelve rows is made to fail with --set. The report's rows are the ones
    // `retrysim check` prints for the same runs.
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("cp");
    let args = ["--set", "replications=1", "--set", "expect.2.max=0.001"];
    let mut sweep = vec!["sweep", "scenarios/capacity_planning.toml"];
    sweep.extend(args);
    sweep.extend(["--format", "svg", "--out", out.to_str().unwrap(), "-q"]);
    let o = retrysim(&sweep);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = read(&out.join("report.html"));
    assert_sections_in_order(
        &html,
        &[
            "question",
            "headline",
            "expectations",
            "plots",
            "summary",
            "scenario",
        ],
    );
    assert!(html.contains("<p>Question: how many servers does the dependency need"));
    assert!(html.contains("id=\"cell-table\""));
    assert!(html.contains("<p>11 of 12 pass"), "{html}");
    assert!(html.contains(
        "<tr><td class=\"fail\">FAIL</td><td>recovery_time_s</td><td>&lt;= 0.001</td><td>1</td><td>servers=18, no budget</td></tr>"
    ));
    let mut check = vec!["check", "scenarios/capacity_planning.toml"];
    check.extend(args);
    let c = retrysim(&check);
    assert_eq!(c.status.code(), Some(1));
    let table = String::from_utf8_lossy(&c.stdout);
    let checked: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("scenarios/"))
        .collect();
    assert_eq!(checked.len(), 12, "{table}");
    assert_eq!(html.matches("<td class=\"pass\">PASS</td>").count(), 11);
    for line in checked {
        let pass = line.ends_with(" pass");
        let word = if pass { "PASS" } else { "FAIL" };
        let f: Vec<&str> = line
            .split("  ")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        // scenario, cell, metric, bound, value, result
        let row = format!(
            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            f[2],
            f[3].replace('<', "&lt;").replace('>', "&gt;"),
            f[4],
            f[1]
        );
        assert!(html.contains(&format!(">{word}</td>{row}")), "{row}");
    }
    // The charts of the metrics the expectations name come first, in their order,
    let figures: Vec<&str> = html
        .split("<figure id=\"plot-")
        .skip(1)
        .map(|s| &s[..s.find('"').unwrap()])
        .collect();
    // (against each swept key: the servers and the policy's layer)
    assert_eq!(
        figures[..5],
        [
            "metrics-metastable_vs_servers",
            "metrics-metastable_vs_layers_0",
            "metrics-recovery_time_s_vs_servers",
            "metrics-recovery_time_s_vs_layers_0",
            "load_vs_success"
        ],
        "{figures:?}"
    );
    let plots = html.find("<section id=\"plots\">").unwrap();
    let folded = html.find("id=\"metric-charts\"").unwrap();
    assert!(html[plots..folded].contains("id=\"plot-metrics-metastable_vs_servers\""));
    assert!(!html[folded..].contains("id=\"plot-metrics-metastable_vs_servers\""));
}

// ---- the manifest's [plot] table: a folder drawn from itself ---------------------------------

/// The `<section id="...">` of a report.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let from = html
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let s = &html[from..];
    &s[..s.find("</section>").unwrap()]
}

/// Runs `args` (a `run` or `sweep` of a shipped scenario) into `out`, SVG charts.
fn write_folder(args: &[&str], out: &Path) {
    let mut a = args.to_vec();
    a.extend(["--format", "svg", "--out", out.to_str().unwrap(), "-q"]);
    let o = retrysim(&a);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Redraws `dir` as `retrysim plot` does, SVG charts.
fn replot(dir: &Path) {
    let o = retrysim(&["plot", dir.to_str().unwrap(), "--format", "svg", "-q"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Rewrites `dir`'s manifest as an older retrysim wrote it: without `[plot]`.
fn strip_plot_table(dir: &Path) {
    let m = read(&dir.join("manifest.toml"));
    let (from, to) = (
        m.find("\n[plot]\n").unwrap(),
        m.find("\n[output]\n").unwrap(),
    );
    let old = format!("{}{}", &m[..=from], &m[to + 1..]);
    std::fs::write(dir.join("manifest.toml"), old).unwrap();
}

#[test]
fn a_folder_is_drawn_from_its_manifest_even_when_its_scenario_would_no_longer_load() {
    // As if a newer retrysim refused the scenario the folder was run with: its
    // [scenario] table gains a key no retrysim knows. The graph and the expectations
    // are drawn from [plot], as they were.
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("cascade");
    write_folder(&["run", "scenarios/cascade.toml"], &out);
    let before = read(&out.join("report.html"));
    assert!(before.contains("id=\"plot-graph\""));
    let m = read(&out.join("manifest.toml"));
    let m = m.replacen("\n[scenario]\n", "\n[scenario]\nno_such_key = 1\n", 1);
    std::fs::write(out.join("manifest.toml"), m).unwrap();
    replot(&out);
    let after = read(&out.join("report.html"));
    assert!(plot_file(&out, "graph", "svg").exists());
    assert_eq!(section(&after, "plots"), section(&before, "plots"));
    let expect = section(&after, "expectations");
    assert_eq!(expect, section(&before, "expectations"));
    assert!(expect.contains("<p>1 of 1 pass"), "{expect}");
    assert!(
        expect.contains("<p>2 expectations select sweep cells"),
        "{expect}"
    );
    // The report shows what produced the files, not what the charts are drawn from.
    let scenario = section(&after, "scenario");
    assert!(scenario.contains("no_such_key = 1"));
    assert!(!scenario.contains("[plot]"), "{scenario}");
}

#[test]
fn a_run_folder_whose_manifest_predates_the_plot_table_leaves_out_the_graph_and_says_why() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("cascade");
    write_folder(&["run", "scenarios/cascade.toml"], &out);
    strip_plot_table(&out);
    replot(&out);
    let html = read(&out.join("report.html"));
    // The graph's shape is not re-read from the scenario: left out, and said so.
    assert!(!plot_file(&out, "graph", "svg").exists());
    assert!(!html.contains("id=\"plot-graph\""));
    assert!(
        section(&html, "plots").contains("<p>Left out: the service graph (<code>graph</code>). This folder's <code>manifest.toml</code> was written by an older retrysim, without the <code>[plot]</code> table it is drawn from (run the same command again to write it).</p>"),
        "{html}"
    );
    // The services chart needs only services.csv (outages shaded where timeseries.csv
    // marks them).
    assert!(plot_file(&out, "services", "svg").exists());
    let expect = section(&html, "expectations");
    assert!(
        expect.contains("<p>Not evaluated: this folder&#39;s manifest.toml was written by an older retrysim, without the [plot] table that holds them resolved"),
        "{expect}"
    );
    assert!(!expect.contains("<tr>"), "{expect}");
}

/// The PASS/FAIL rows `retrysim check` prints, as the report's table rows.
fn check_rows(args: &[&str]) -> Vec<String> {
    let mut check = vec!["check"];
    check.extend(args);
    let c = retrysim(&check);
    assert!(c.status.code().is_some_and(|c| c <= 1), "{c:?}");
    let table = String::from_utf8_lossy(&c.stdout);
    let escape = |s: &str| s.replace('<', "&lt;").replace('>', "&gt;");
    table
        .lines()
        .filter(|l| l.starts_with("scenarios/") || l.starts_with('/'))
        .map(|line| {
            let word = if line.ends_with(" pass") {
                "pass\">PASS"
            } else {
                "fail\">FAIL"
            };
            let f: Vec<&str> = line
                .split("  ")
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            // scenario, cell, metric, bound, value, result
            format!(
                "<tr><td class=\"{word}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                f[2],
                escape(f[3]),
                f[4],
                escape(f[1])
            )
        })
        .collect()
}

#[test]
fn the_report_evaluates_per_run_and_labelled_expectations_as_check_does() {
    // A sweep with labelled values, an expectation per run on the cells a label
    // selects, and one per cell over every cell; one bound fails somewhere.
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("perrun.toml");
    std::fs::write(
        &file,
        "name = \"perrun\"\nseed = 3\nduration = \"4s\"\nreplications = 2\n\
         [dependency]\nservers = 2\nservice_time = \"10ms\"\n\
         [[fleets]]\nname = \"web\"\narrival = { kind = \"poisson\", rate = 100 }\n\
         [[fleets.layers]]\nname = \"client\"\nmax_attempts = 3\nattempt_timeout = \"50ms\"\n\
         [sweep]\n\"fleets.0.layers.0.max_attempts\" = [1, 3]\n\
         \"fleets.0.arrival.rate\" = [{ label = \"low\", value = 50 }, { label = \"high\", value = 400 }]\n\
         [[expect]]\nmetric = \"amplification\"\nmax = 1.5\nper = \"run\"\nwhere = { \"fleets.0.arrival.rate\" = \"high\" }\n\
         [[expect]]\nmetric = \"success_fraction\"\nmin = 0.9\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = d.path().join("out");
    write_folder(&["sweep", f], &out);
    let rows = check_rows(&[f]);
    // Two high-rate cells of two runs each, then four cells.
    assert_eq!(rows.len(), 8, "{rows:?}");
    assert!(rows.iter().any(|r| r.contains("FAIL")), "{rows:?}");
    assert!(
        rows[0].ends_with("<td>run 2 (max_attempts=1, rate=high)</td></tr>"),
        "{rows:?}"
    );
    let html = read(&out.join("report.html"));
    let expect = section(&html, "expectations");
    let shown: Vec<&str> = expect
        .lines()
        .filter(|l| l.starts_with("<tr><td class="))
        .collect();
    assert_eq!(shown, rows);
}

/// A small sweep over `max_attempts` of two layers, `values` (a TOML list), written to
/// `dir/amp.toml`.
fn attempts_sweep(dir: &Path, values: &str) -> PathBuf {
    let file = dir.join("amp.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"amp\"\nduration = \"3s\"\n\
         [dependency]\nservers = \"unlimited\"\nservice_time = \"1ms\"\nerror_rate = 1.0\n\
         [[fleets]]\nname = \"web\"\narrival = {{ kind = \"constant\", rate = 10 }}\n\
         [[fleets.layers]]\nmax_attempts = 2\n[[fleets.layers]]\nmax_attempts = 2\n\
         [sweep]\n\"fleets.*.layers.*.max_attempts\" = {values}\n"
        ),
    )
    .unwrap();
    file
}

#[test]
fn a_sweep_whose_values_carry_labels_draws_amplification_at_each_cell_s_n_to_the_l() {
    // Two layers of 1 or 3 attempts: N^L is 1 and 9, whatever the values are labelled
    // (the labels are not values: they were once applied as if they were, and the
    // chart was left out).
    let d = tempfile::tempdir().unwrap();
    let file = attempts_sweep(
        d.path(),
        "[{ label = \"once\", value = 1 }, { label = \"thrice\", value = 3 }]",
    );
    let out = d.path().join("out");
    write_folder(&["sweep", file.to_str().unwrap()], &out);
    let manifest = read(&out.join("manifest.toml"));
    assert!(
        manifest.contains("\nworst_case_attempts = [1.0, 9.0]\n"),
        "{manifest}"
    );
    let amp = read(&plot_file(&out, "amplification", "svg"));
    assert_has(
        &amp,
        "amplification.svg",
        &[
            "Retry amplification against N^L: amp",
            "N^L: every attempt fails",
        ],
    );
    let html = read(&out.join("report.html"));
    assert!(html.contains("id=\"plot-amplification\""));
}

#[test]
fn a_sweep_whose_manifest_predates_the_plot_table_leaves_out_amplification_and_says_why() {
    let d = tempfile::tempdir().unwrap();
    // Plain values: an older retrysim would have drawn the chart from the scenario.
    let file = attempts_sweep(d.path(), "[1, 3]");
    let out = d.path().join("out");
    let args = ["sweep", file.to_str().unwrap()];
    write_folder(&args, &out);
    assert!(plot_file(&out, "amplification", "svg").exists());
    strip_plot_table(&out);
    replot(&out);
    assert!(!plot_file(&out, "amplification", "svg").exists());
    let html = read(&out.join("report.html"));
    assert!(
        section(&html, "plots").contains("<p>Left out: the amplification chart (<code>amplification</code>). This folder's <code>manifest.toml</code> was written by an older retrysim"),
        "{html}"
    );
    // Drawn again once the folder is written again: the sweep resumes (nothing runs)
    // and rewrites its manifest.
    write_folder(&args, &out);
    assert!(plot_file(&out, "amplification", "svg").exists());
}
