//! Plots and the HTML report of a result folder, drawn from its CSV files alone.
//!
//! [`draw_folder`] reads `manifest.toml`, `summary.csv`, `timeseries.csv`, `herd.csv`,
//! (sweeps) `aggregate.csv` and (traced runs) `traces.csv` and `trace.json`, draws every chart that applies into `DIR/plots/`, and
//! writes `DIR/report.html`, one self-contained page with every chart inline as SVG,
//! led by the scenario's header, the headline numbers, the `[[expect]]` results
//! (`expect`) and the lints (`report`).
//!
//! ```text
//! manifest.toml ─┐
//! summary.csv ───┤                ┌─► plots/timeseries.png  phase  herd  latency   (run)
//! timeseries.csv ┼─► data (typed) ┼─► plots/load_vs_success  amplification
//! herd.csv ──────┤                │         metrics/<metric>_vs_<key>           (sweep)
//! aggregate.csv ─┘                └─► report.html (inline SVG, tables, scenario)
//! ```
//!
//! | chart | folder | what it shows |
//! | --- | --- | --- |
//! | `timeseries` | run | offered, inbound, goodput per second, capacity, success rate (right axis); outages shaded; breaker-open and budget-exhausted strips |
//! | `graph` | run of a service graph | fleets and services as boxes by depth, calls as arrows labelled with the callee's attempts per request; each box's servers and peak utilisation |
//! | `limit` | run, sweep with `concurrency_limit` | the limit of the service the fleets call over time against the requests it holds, refusals per second (right axis); sweep: each cell's limit |
//! | `services` | run of a service graph | a panel per service from `services.csv`: inbound and goodput per second, utilisation (right axis; a limited service: its limit against the requests it holds), its outages shaded |
//! | `phase` | run, sweep | success rate against inbound load as a trajectory; branches before/during/after outages, or while the load rises/falls |
//! | `herd` | run, sweep | attempt arrivals in fine buckets around the outage end or burst |
//! | `swimlane` | traced run | a lane per sampled request (`traces.csv`) around the first outage: its attempts as bars coloured by outcome, refusals as marks, orphans' tails |
//! | `latency` | run, sweep | p50 and p99 per bucket (sweep: p99 per cell) |
//! | `load_vs_success` | sweep | success fraction against the swept load, a line per policy, 95% band |
//! | `metrics/<m>_vs_<k>` | sweep | every summary metric that varies against each swept key |
//! | `amplification` | sweep | measured attempts per request against N^L |
//!
//! In a run folder the per-run charts show the first run (replication 0). In a sweep
//! folder they overlay replication 0 of each grid cell, when there are at most
//! [`MAX_OVERLAY`] cells. Colours: fixed per series in run charts; per policy label
//! in sweep charts, in grid order, the same in every chart of a folder.
//!
//! Every chart draws a bounded number of points whatever the number of buckets: a
//! series longer than the plot is wide keeps a few points per pixel column, its
//! extremes among them ([`decimate`]), so spikes stay visible and the report's size is
//! bounded.
//!
//! [`run_charts`] gives the numbers the run charts draw, from a run's CSV text, without
//! drawing (the playground draws them in the browser).
//!
//! The same CSVs give byte-identical SVG files and report: nothing depends on time,
//! hashing order or the machine's fonts (the font is bundled: [`font`]).

#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod canvas;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod cells;
pub(crate) mod chart_data;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod data;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod decimate;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod expect;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod font;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod graph;
// On WebAssembly too: the playground lays the graph out as the report does.
pub(crate) mod graph_layout;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod herd;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod latency;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod limit;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod palette;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod phase;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod report;
pub(crate) mod series;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod services;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod summary;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod sweep;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod swimlane;
pub(crate) mod table;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod timeseries;
pub(crate) mod trajectory;

use std::path::PathBuf;

#[cfg(not(target_arch = "wasm32"))]
use {
    crate::export::manifest::GraphShape,
    crate::export::write_atomic,
    crate::metrics::columns::{RUN, SERVICES_FILE, SUCCESS_LATENCY_P50_MS, SUCCESS_LATENCY_P99_MS},
    canvas::{render_png, render_svg, Chart},
    data::{CsvTable, FolderKind, Manifest, Sweep},
    graph::{Graph, GraphChart},
    herd::HerdChart,
    latency::{LatencyChart, LatencyInput},
    limit::LimitChart,
    palette::Palette,
    phase::{PhaseChart, PhaseInput},
    services::{ServiceSeries, ServicesChart},
    std::path::Path,
    swimlane::{SwimlaneChart, Traces},
    timeseries::TimeseriesChart,
};

pub use chart_data::{run_charts, RunCharts};
pub(crate) use series::{HerdSeries, RunSeries};
#[cfg(not(target_arch = "wasm32"))]
pub(crate) use summary::sweep_summary;
pub use trajectory::Branch;

#[cfg(not(target_arch = "wasm32"))]
/// At most this many grid cells are overlaid in a sweep's per-run charts.
pub(crate) const MAX_OVERLAY: usize = 12;

/// Image format of plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// PNG bitmaps.
    Png,
    /// SVG vector images.
    Svg,
}

impl Format {
    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Svg => "svg",
        }
    }
}

/// Why a folder could not be plotted.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The folder's charts may not be written (not retrysim's, or a symlink on the way).
    #[error("cannot draw into '{}': {source}", path.display())]
    Owner {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::export::owner::OwnerError,
    },
    /// A file could not be read.
    #[error("cannot read '{}': {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A CSV file is malformed.
    #[error("cannot read '{}': {message}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A CSV file lacks a column the plots need.
    #[error("cannot read '{}': the file has no column '{column}'", path.display())]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
    },
    /// A CSV cell holds something other than what its column needs.
    #[error("cannot read '{}': line {line}, column '{column}': expected {expected} (found '{found}')", path.display())]
    BadValue {
        /// The file.
        path: PathBuf,
        /// 1-based line in the file.
        line: u64,
        /// The column.
        column: String,
        /// What the column holds.
        expected: &'static str,
        /// The cell's text.
        found: String,
    },
    /// A JSON file (`trace.json`) is malformed.
    #[error("cannot read '{}': {message}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The manifest is malformed.
    #[error("cannot read '{}': {message}", path.display())]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Drawing a chart failed.
    #[error("cannot draw '{}': {message}", path.display())]
    Draw {
        /// The chart's file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// Writing a file failed.
    #[error("cannot write '{}': {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

#[cfg(not(target_arch = "wasm32"))]
/// Everything read from a result folder.
#[derive(Debug)]
pub(crate) struct Folder {
    /// The folder.
    pub dir: PathBuf,
    /// `manifest.toml`.
    pub manifest: Manifest,
    /// Its text without the `[output]` file list and the `[plot]` table.
    pub manifest_text: String,
    /// `summary.csv`.
    pub summary: CsvTable,
    /// `timeseries.csv`, per run (empty when a sweep folder has none).
    pub series: Vec<RunSeries>,
    /// `herd.csv`, per run (empty when absent or header only).
    pub herd: Vec<HerdSeries>,
    /// The cells of a sweep.
    pub sweep: Option<Sweep>,
    /// A run folder of a service graph (it has `services.csv`): the graph's shape, as
    /// its manifest records it (`[plot.graph]`; `None` in a manifest that predates it).
    pub graph: Option<GraphShape>,
    /// `services.csv` of such a folder: the series of each service in the first run.
    pub services: Vec<ServiceSeries>,
    /// `traces.csv` of a run folder that has one: the sampled requests' lanes.
    pub traces: Option<Traces>,
    /// The outage windows of `trace.json`, seconds, when the folder has it.
    pub trace_outages: Option<Vec<(f64, f64)>>,
    /// The charts left out because the manifest predates `[plot]`, which they are
    /// drawn from (HTML, for the report's note).
    pub left_out: Vec<&'static str>,
    /// A sweep that wants the amplification chart but has too many cells for its
    /// manifest to record their N^L: its number of cells (0: none left out).
    pub too_many_cells: u64,
}

#[cfg(not(target_arch = "wasm32"))]
impl Folder {
    /// Reads the files of `dir`.
    pub(crate) fn read(dir: &Path) -> Result<Folder, PlotError> {
        let (manifest, manifest_text) = data::read_manifest(&dir.join("manifest.toml"))?;
        let summary = CsvTable::read(&dir.join("summary.csv"))?;
        let ts_path = dir.join("timeseries.csv");
        let series = if manifest.run.kind == FolderKind::Sweep && !ts_path.exists() {
            Vec::new()
        } else {
            data::read_timeseries(&ts_path)?
        };
        let herd_path = dir.join("herd.csv");
        let herd = if herd_path.exists() {
            data::read_herd(&herd_path)?
        } else {
            Vec::new()
        };
        let sweep = match manifest.run.kind {
            FolderKind::Run => None,
            FolderKind::Sweep => {
                let agg_path = dir.join("aggregate.csv");
                let agg = if agg_path.exists() {
                    Some(CsvTable::read(&agg_path)?)
                } else {
                    None
                };
                Some(Sweep::read(&manifest.run.params, &summary, agg.as_ref())?)
            }
        };
        let mut left_out = Vec::new();
        if manifest.plot.is_none() && sweep.as_ref().is_some_and(sweep::wants_amplification) {
            left_out.push("the amplification chart (<code>amplification</code>)");
        }
        let too_many_cells = match (&manifest.plot, &sweep) {
            (Some(p), Some(sw)) if sweep::wants_amplification(sw) => p.worst_case_cells,
            _ => 0,
        };
        let services_path = dir.join(SERVICES_FILE);
        let (graph, services) = if sweep.is_none() && services_path.exists() {
            if manifest.plot.is_none() {
                left_out.push("the service graph (<code>graph</code>)");
            }
            let run = series.first().map(|s| s.run);
            (
                manifest.plot.as_ref().and_then(|p| p.graph.clone()),
                services::read_services(&services_path, run)?,
            )
        } else {
            (None, Vec::new())
        };
        let traces_path = dir.join(crate::metrics::columns::TRACES_FILE);
        let traces = if sweep.is_none() && traces_path.exists() {
            Some(swimlane::read_traces(&traces_path)?)
        } else {
            None
        };
        let json_path = dir.join(crate::export::trace::TRACE_JSON_FILE);
        let trace_outages = if traces.is_some() && json_path.exists() {
            Some(swimlane::read_outages(&json_path)?)
        } else {
            None
        };
        Ok(Folder {
            dir: dir.to_path_buf(),
            manifest,
            manifest_text,
            summary,
            series,
            herd,
            sweep,
            graph,
            services,
            traces,
            trace_outages,
            left_out,
            too_many_cells,
        })
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// A drawn chart: its file stem, title and SVG text (for the report).
#[derive(Debug, Clone)]
pub(crate) struct Drawn {
    /// File stem under `plots/`.
    pub name: String,
    /// Title.
    pub title: String,
    /// Whether the report shows it among the main charts (else in a folded section).
    pub main: bool,
    /// What to read in it, a sentence for the report (charts that have one).
    pub caption: Option<String>,
    /// The chart as SVG.
    pub svg: String,
    /// The file written.
    pub path: PathBuf,
    /// Its bytes, written once every chart is drawn.
    bytes: Vec<u8>,
}

#[cfg(not(target_arch = "wasm32"))]
/// Draws `chart` into `plots/` in `format` and keeps its SVG for the report.
fn emit<C: Chart>(
    chart: &C,
    dir: &Path,
    format: Format,
    main: bool,
    out: &mut Vec<Drawn>,
) -> Result<(), PlotError> {
    let name = chart.name();
    let path = dir
        .join("plots")
        .join(format!("{name}.{}", format.extension()));
    let svg = render_svg(chart, &path)?;
    let bytes = match format {
        Format::Svg => svg.clone().into_bytes(),
        Format::Png => render_png(chart, &path)?,
    };
    out.push(Drawn {
        name,
        title: chart.title(),
        main,
        caption: None,
        svg,
        path,
        bytes,
    });
    Ok(())
}

#[cfg(not(target_arch = "wasm32"))]
/// Reads the CSVs of the run or sweep folder `dir`, draws every chart that applies into
/// `dir/plots/` in `format`, writes `dir/report.html`, and returns the files written
/// (the report last).
///
/// Only a folder whose manifest retrysim wrote is drawn into; the charts are listed in
/// that manifest before they are written, and a chart path that is a symlink, or a
/// file of that name the manifest does not list, is refused (see
/// [`crate::export::owner`]).
pub(crate) fn draw_folder(dir: &Path, format: Format) -> Result<Vec<PathBuf>, PlotError> {
    let folder = Folder::read(dir)?;
    let expectations = expect::evaluate(&folder);
    let drawn = draw_charts(&folder, format, &expectations.metrics())?;
    let html = report::render(&folder, &drawn, &expectations);
    let report_path = dir.join("report.html");
    let mut names: Vec<String> = drawn
        .iter()
        .map(|d| format!("plots/{}.{}", d.name, format.extension()))
        .collect();
    names.push("report.html".to_string());
    crate::export::owner::record_charts(dir, &names).map_err(|e| PlotError::Owner {
        path: dir.to_path_buf(),
        source: e,
    })?;
    let mut files = Vec::with_capacity(drawn.len() + 1);
    for d in drawn {
        write_atomic(&d.path, &d.bytes).map_err(|source| PlotError::Write {
            path: d.path.clone(),
            source,
        })?;
        files.push(d.path);
    }
    write_atomic(&report_path, html.as_bytes()).map_err(|source| PlotError::Write {
        path: report_path.clone(),
        source,
    })?;
    files.push(report_path);
    Ok(files)
}

#[cfg(not(target_arch = "wasm32"))]
/// The whole-run latency percentiles of `run` from `summary.csv`.
fn run_percentiles(summary: &CsvTable, run: u64) -> Vec<(String, f64)> {
    let Ok(runs) = summary.integers(RUN.name) else {
        return Vec::new();
    };
    let Some(row) = runs.iter().position(|r| *r == run) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (label, col) in [
        ("success p50", SUCCESS_LATENCY_P50_MS.name),
        ("success p99", SUCCESS_LATENCY_P99_MS.name),
    ] {
        if let Ok(i) = summary.index(col) {
            if let Ok(Some(v)) = data::parse_number(&summary.rows[row][i]) {
                out.push((label.to_string(), v));
            }
        }
    }
    out
}

#[cfg(not(target_arch = "wasm32"))]
/// The charts of `folder`; a sweep's charts of the metrics in `first` (those the
/// expectations name) against each swept key come first.
fn draw_charts(folder: &Folder, format: Format, first: &[&str]) -> Result<Vec<Drawn>, PlotError> {
    let m = &folder.manifest;
    let dir = &folder.dir;
    let scenario = m.scenario_name();
    let mut out = Vec::new();
    match &folder.sweep {
        None => {
            let Some(s) = folder.series.first() else {
                return Ok(out);
            };
            emit(
                &TimeseriesChart {
                    series: s,
                    scenario,
                    capacity: m.capacity_per_s(),
                },
                dir,
                format,
                true,
                &mut out,
            )?;
            if let Some(chart) =
                LimitChart::new(vec![(String::new(), palette::LIMIT, s)], scenario, false)
            {
                emit(&chart, dir, format, true, &mut out)?;
                set_caption(&mut out, chart.caption());
            }
            draw_graph_charts(folder, s, format, &mut out)?;
            emit(
                &PhaseChart {
                    input: PhaseInput::Run(s),
                    scenario,
                    capacity: m.capacity_per_s(),
                },
                dir,
                format,
                true,
                &mut out,
            )?;
            if let Some(h) = folder.herd.iter().find(|h| h.run == s.run) {
                emit(
                    &HerdChart {
                        runs: vec![("attempt arrivals".to_string(), palette::INBOUND, h)],
                        outages: s.outage_spans(),
                        scenario,
                        capacity: m.capacity_per_s(),
                    },
                    dir,
                    format,
                    true,
                    &mut out,
                )?;
            }
            draw_swimlane(folder, s, format, &mut out)?;
            emit(
                &LatencyChart {
                    input: LatencyInput::Run(s, run_percentiles(&folder.summary, s.run)),
                    scenario,
                },
                dir,
                format,
                true,
                &mut out,
            )?;
        }
        Some(sw) => {
            let ctx = sweep::SweepContext::new(sw, m);
            let palette = ctx.palette();
            sweep::draw(&ctx, &palette, first, dir, format, &mut out)?;
            draw_overlays(folder, sw, &ctx, &palette, format, &mut out)?;
        }
    }
    Ok(out)
}

#[cfg(not(target_arch = "wasm32"))]
/// The charts of a service graph's run folder, after the timeseries: `graph` (when
/// the manifest's scenario loads) and `services` (when `services.csv` has rows).
fn draw_graph_charts(
    folder: &Folder,
    s: &RunSeries,
    format: Format,
    out: &mut Vec<Drawn>,
) -> Result<(), PlotError> {
    let scenario = folder.manifest.scenario_name();
    if let Some(scn) = &folder.graph {
        let chart = GraphChart {
            graph: Graph::of(scn, &folder.summary),
            scenario,
            runs: folder.summary.rows.len(),
        };
        emit(&chart, &folder.dir, format, true, out)?;
        set_caption(
            out,
            "Arrow labels: the attempts that reached the callee per logical request (retries multiply along a path); box colour: the service's peak utilisation.",
        );
    }
    if !folder.services.is_empty() {
        let names: Vec<String> = folder.services.iter().map(|x| x.name.clone()).collect();
        let measured = s.outage_spans();
        let end = s.end();
        let chart = ServicesChart {
            services: &folder.services,
            outages: services::outage_spans(folder.graph.as_ref(), &names, &measured, end),
            end,
            scenario,
        };
        emit(&chart, &folder.dir, format, true, out)?;
        set_caption(
            out,
            "Per service: inbound far above goodput means its callers' retries arrive faster than it answers; utilisation at 100% means its threads are exhausted.",
        );
    }
    Ok(())
}

#[cfg(not(target_arch = "wasm32"))]
/// The swimlane of a traced run (it has `traces.csv`), after the herd: outages from
/// `trace.json`, or the buckets of `timeseries.csv` without it.
fn draw_swimlane(
    folder: &Folder,
    s: &RunSeries,
    format: Format,
    out: &mut Vec<Drawn>,
) -> Result<(), PlotError> {
    let Some(traces) = &folder.traces else {
        return Ok(());
    };
    let outages = folder
        .trace_outages
        .clone()
        .unwrap_or_else(|| s.outage_spans());
    let scenario = folder.manifest.scenario_name();
    if let Some(chart) = SwimlaneChart::new(traces, outages, s.end(), scenario) {
        emit(&chart, &folder.dir, format, true, out)?;
        set_caption(out, &chart.caption());
    }
    Ok(())
}

#[cfg(not(target_arch = "wasm32"))]
fn set_caption(out: &mut [Drawn], caption: &str) {
    if let Some(d) = out.last_mut() {
        d.caption = Some(caption.to_string());
    }
}

#[cfg(not(target_arch = "wasm32"))]
/// The per-run charts of a sweep: replication 0 of each cell, overlaid.
fn draw_overlays(
    folder: &Folder,
    sw: &Sweep,
    ctx: &sweep::SweepContext,
    palette: &Palette,
    format: Format,
    out: &mut Vec<Drawn>,
) -> Result<(), PlotError> {
    if sw.cells.len() > MAX_OVERLAY || folder.series.is_empty() {
        return Ok(());
    }
    let m = &folder.manifest;
    let scenario = m.scenario_name();
    // The first run of each cell, in grid order.
    let mut firsts: Vec<(usize, u64)> = Vec::new();
    for (run, _, cell) in &sw.runs {
        if !firsts.iter().any(|(c, _)| c == cell) {
            firsts.push((*cell, *run));
        }
    }
    firsts.sort_by_key(|(c, _)| *c);
    let mut series = Vec::new();
    let mut herds = Vec::new();
    for (cell, run) in &firsts {
        let label = ctx.cell_label(&sw.cells[*cell]);
        let colour = palette.colour(&label);
        if let Some(s) = folder.series.iter().find(|s| s.run == *run) {
            series.push((label.clone(), colour, s));
        }
        if let Some(h) = folder.herd.iter().find(|h| h.run == *run) {
            herds.push((label, colour, h));
        }
    }
    if series.is_empty() {
        return Ok(());
    }
    let outages = series[0].2.outage_spans();
    if let Some(chart) = LimitChart::new(series.clone(), scenario, true) {
        emit(&chart, &folder.dir, format, true, out)?;
        set_caption(out, chart.caption());
    }
    emit(
        &PhaseChart {
            input: PhaseInput::Overlay(series.clone()),
            scenario,
            capacity: m.capacity_per_s(),
        },
        &folder.dir,
        format,
        true,
        out,
    )?;
    if !herds.is_empty() {
        emit(
            &HerdChart {
                runs: herds,
                outages,
                scenario,
                capacity: m.capacity_per_s(),
            },
            &folder.dir,
            format,
            true,
            out,
        )?;
    }
    emit(
        &LatencyChart {
            input: LatencyInput::Overlay(series),
            scenario,
        },
        &folder.dir,
        format,
        true,
        out,
    )?;
    Ok(())
}
