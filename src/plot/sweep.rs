//! The charts of a sweep, from its cells (`aggregate.csv`: means and 95% intervals over
//! the replications):
//!
//! - `load_vs_success`: success fraction against load, a line per policy, with the
//!   confidence band. The x axis is the swept key that looks like a load (a path ending
//!   in `arrival.rate`, or in `.multiplier` inside a `load_profile`: a backoff's
//!   multiplier is a policy, not a load); a policy is one combination of the other
//!   swept values. Without such a key, x is the measured `offered_rate` if it varies
//!   over the cells, else `peak_inbound`, each cell its own point; with neither the
//!   chart is skipped.
//! - `metrics/<metric>_vs_<key>`: every summary metric whose mean varies over the cells,
//!   against each swept key (numeric keys on a numeric axis, others as categories), a
//!   line per combination of the other keys.
//! - `amplification`: measured attempts per logical request against N^L, the worst case
//!   (every attempt fails) of the cell's retry stack: the product of `max_attempts`
//!   over the layers (the largest over fleets when there are several), as the manifest
//!   records it for each cell (`[plot] worst_case_attempts`, worked out from the
//!   cell's scenario when the sweep was written, for a grid of at most
//!   [`MAX_WORST_CASE_CELLS`](crate::export::manifest::MAX_WORST_CASE_CELLS) cells). Drawn when a swept key ends in `max_attempts` or
//!   passes through `layers`, and every cell's N^L is finite; the diagonal y = N^L is
//!   the bound.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::canvas::{
    axis_font, frame, padded, tick, tick_font, upper, Chart, DrawResult, Entry, Swatch,
};
use crate::export::manifest::{shapes_attempts, Limit};
use crate::metrics::columns::{
    AMPLIFICATION, EVENTS, OFFERED_RATE, PEAK_INBOUND, RECOVERY_TIME_S, SUCCESS_FRACTION,
};

use super::data::{Manifest, Stat, Sweep, SweepCell};
use super::palette::{self, Palette};
use super::{emit, Drawn, Format, PlotError};

/// Metrics left out of the per-metric charts: simulator bookkeeping, not behaviour.
const SKIPPED_METRICS: [&str; 1] = [EVENTS.name];

/// A sweep with the names and labels its charts share.
#[derive(Debug)]
pub(crate) struct SweepContext<'a> {
    /// The cells.
    pub sweep: &'a Sweep,
    /// Scenario name.
    pub scenario: &'a str,
    /// Each grid cell's N^L, in cell order, as the manifest records it (`None`: a
    /// manifest that predates `[plot]`).
    pub worst_case: Option<&'a [Limit<f64>]>,
    /// Replications per cell: run `r` is of grid cell `r / replications`.
    pub replications: u64,
    /// Short name of each swept key (shortest unique dotted suffix).
    pub short: Vec<String>,
    /// Index of the swept key that is the load, if one is.
    pub load_key: Option<usize>,
}

/// Whether a dotted key sweeps the load.
pub(crate) fn is_load_key(key: &str) -> bool {
    key == "arrival.rate"
        || key.ends_with(".arrival.rate")
        || (key.ends_with(".multiplier") && key.split('.').any(|p| p == "load_profile"))
}

/// Shortest dotted suffixes that tell the keys apart; a suffix never starts with an
/// array index (`layers.1.max_attempts`, not `1.max_attempts`).
pub(crate) fn short_names(keys: &[String]) -> Vec<String> {
    let parts: Vec<Vec<&str>> = keys.iter().map(|k| k.split('.').collect()).collect();
    let suffix = |p: &[&str], n: usize| -> String {
        let mut n = n.min(p.len());
        while n < p.len() && p[p.len() - n].parse::<usize>().is_ok() {
            n += 1;
        }
        p[p.len() - n..].join(".")
    };
    parts
        .iter()
        .map(|p| {
            for n in 1..=p.len() {
                let s = suffix(p, n);
                let unique = parts
                    .iter()
                    .filter(|q| q.len() >= n && suffix(q, n) == s)
                    .count()
                    == 1;
                if unique {
                    return s;
                }
            }
            p.join(".")
        })
        .collect()
}

impl<'a> SweepContext<'a> {
    /// The context of `sweep` described by `manifest`.
    pub(crate) fn new(sweep: &'a Sweep, manifest: &'a Manifest) -> SweepContext<'a> {
        SweepContext {
            sweep,
            scenario: manifest.scenario_name(),
            worst_case: manifest
                .plot
                .as_ref()
                .map(|p| p.worst_case_attempts.as_slice()),
            replications: manifest.run.replications.unwrap_or(1).max(1) as u64,
            short: short_names(&sweep.keys),
            load_key: sweep.keys.iter().position(|k| is_load_key(k)),
        }
    }

    /// `short=value, ...` over the swept keys not in `excluded`; the scenario name when
    /// none is left.
    pub(crate) fn label_without(&self, cell: &SweepCell, excluded: &[usize]) -> String {
        let parts: Vec<String> = (0..self.sweep.keys.len())
            .filter(|i| !excluded.contains(i))
            .map(|i| crate::sweep::label::with_key(&self.short[i], &cell.values[i]))
            .collect();
        if parts.is_empty() {
            self.scenario.to_string()
        } else {
            parts.join(", ")
        }
    }

    /// The policy of a cell: its values other than the load key's.
    pub(crate) fn policy_label(&self, cell: &SweepCell) -> String {
        match self.load_key {
            Some(k) => self.label_without(cell, &[k]),
            None => self.label_without(cell, &[]),
        }
    }

    /// All the swept values of a cell.
    pub(crate) fn cell_label(&self, cell: &SweepCell) -> String {
        self.label_without(cell, &[])
    }

    /// Every label a chart of this sweep may use, registered in a fixed order: the
    /// policies, the cells, then the other-keys labels of each key.
    pub(crate) fn palette(&self) -> Palette {
        let mut p = Palette::default();
        for c in &self.sweep.cells {
            p.register(&self.policy_label(c));
        }
        for c in &self.sweep.cells {
            p.register(&self.cell_label(c));
        }
        for k in 0..self.sweep.keys.len() {
            for c in &self.sweep.cells {
                p.register(&self.label_without(c, &[k]));
            }
        }
        p
    }

    /// The values of key `k` as numbers, if every cell's value is one.
    fn numeric(&self, k: usize) -> Option<Vec<f64>> {
        self.sweep
            .cells
            .iter()
            .map(|c| c.values[k].parse::<f64>().ok().filter(|v| v.is_finite()))
            .collect()
    }

    /// Whether metric `m`'s mean differs between cells.
    fn varies(&self, m: &str) -> bool {
        let xs: Vec<f64> = self
            .sweep
            .cells
            .iter()
            .filter_map(|c| c.metrics.get(m).map(|s| s.mean))
            .collect();
        let lo = xs.iter().copied().fold(f64::MAX, f64::min);
        let hi = xs.iter().copied().fold(f64::MIN, f64::max);
        xs.len() >= 2 && hi - lo > 1e-9 * (hi.abs() + lo.abs()).max(1e-300)
    }

    /// Whether any cell has more than one run with a real interval.
    fn has_bands(&self) -> bool {
        self.sweep.has_intervals && self.sweep.cells.iter().any(|c| c.runs > 1)
    }
}

/// The unit of a summary metric, for axis labels (the catalog's).
pub(crate) use crate::metrics::columns::unit;

/// One line of a sweep chart: points `(x, stat)` sorted by x.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    /// Legend label (a policy).
    pub label: String,
    /// Colour.
    pub colour: RGBColor,
    /// Points.
    pub points: Vec<(f64, Stat)>,
}

/// A chart of lines with optional confidence bands and an optional diagonal.
#[derive(Debug)]
pub(crate) struct LinesChart {
    /// File stem.
    pub name: String,
    /// Title.
    pub title: String,
    /// X axis description.
    pub x_desc: String,
    /// Y axis description.
    pub y_desc: String,
    /// Category names when x is categorical (x = index).
    pub categories: Option<Vec<String>>,
    /// The lines.
    pub lines: Vec<Line>,
    /// Whether to draw the 95% bands.
    pub bands: bool,
    /// Show y as a percentage of 1.
    pub percent: bool,
    /// The largest value the metric can take (1 for a fraction); every summary metric
    /// is at least 0. Bands are clamped to the domain.
    pub max: Option<f64>,
    /// A reference diagonal y = x with this label.
    pub diagonal: Option<String>,
    /// Cells where the metric is empty in some runs, marked at the top edge.
    pub empty: Vec<EmptyMark>,
    /// What an empty value means (`never recovered`), for the legend.
    pub empty_label: String,
}

/// A cell whose metric is empty in `empty` of its `runs` runs (a run that never
/// recovered has no `recovery_time_s`): a triangle at the top edge at its x, in its
/// line's colour, with `empty/runs` beside it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EmptyMark {
    /// Its x position.
    pub x: f64,
    /// Its line's colour.
    pub colour: RGBColor,
    /// Runs where the metric is empty.
    pub empty: u64,
    /// Runs of the cell.
    pub runs: u64,
}

impl Chart for LinesChart {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn title(&self) -> String {
        self.title.clone()
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let mut legend: Vec<Entry> = self
            .lines
            .iter()
            .map(|l| Entry::new(l.label.clone(), Swatch::LineMarker(l.colour)))
            .collect();
        if self.bands {
            legend.push(Entry::new(
                "95% confidence band",
                Swatch::Band(palette::REFERENCE, 0.25),
            ));
        }
        if let Some(d) = &self.diagonal {
            legend.push(Entry::new(d.clone(), Swatch::Dashed(palette::REFERENCE)));
        }
        if !self.empty.is_empty() {
            legend.push(Entry::new(
                format!("▲ k/R runs {}", self.empty_label),
                Swatch::LineMarker(palette::REFERENCE),
            ));
        }
        let area = frame(root, &self.title, &legend)?;
        // Intervals clamped to the metric's domain: no band below 0 or above 1.
        let lines: Vec<Line> = self
            .lines
            .iter()
            .map(|l| Line {
                points: l
                    .points
                    .iter()
                    .map(|&(x, st)| (x, self.clamp(st)))
                    .collect(),
                ..l.clone()
            })
            .collect();
        let pts = || lines.iter().flat_map(|l| l.points.iter());
        let xs = || pts().map(|p| p.0).chain(self.empty.iter().map(|e| e.x));
        let (xlo, xhi) = match &self.categories {
            Some(c) => (-0.5, c.len() as f64 - 0.5),
            None => padded(xs().fold(f64::MAX, f64::min), xs().fold(f64::MIN, f64::max)),
        };
        let mut ylo = pts().map(|p| p.1.low).fold(f64::MAX, f64::min).min(0.0);
        // Only empty marks: a unit scale for them to sit on.
        let mut yhi =
            pts()
                .map(|p| p.1.high)
                .fold(f64::MIN, f64::max)
                .max(if pts().next().is_none() {
                    1.0
                } else {
                    f64::MIN
                });
        if self.diagonal.is_some() {
            yhi = yhi.max(xhi);
            ylo = ylo.min(0.0);
        }
        if self.percent {
            yhi = yhi.max(1.0);
        }
        let (ylo, yhi) = if ylo >= 0.0 {
            (0.0, upper(yhi))
        } else {
            padded(ylo, yhi)
        };
        let mut chart = ChartBuilder::on(&area)
            .margin(5)
            .x_label_area_size(45)
            .y_label_area_size(75)
            .build_cartesian_2d(xlo..xhi, ylo..yhi)?;
        // Tick labels that fit the width: long category names are shortened (or
        // numbered, named in the axis description), numeric ticks thinned.
        let (pw, _) = area.dim_in_pixel();
        let plot_w = f64::from(pw.saturating_sub(90).max(100));
        let (cats, x_desc) = match &self.categories {
            Some(c) => {
                let (fitted, key) = fit_ticks(c, plot_w);
                let desc = match key {
                    Some(k) => format!("{}: {k}", self.x_desc),
                    None => self.x_desc.clone(),
                };
                (Some(fitted), desc)
            }
            None => (None, self.x_desc.clone()),
        };
        let numeric_labels = {
            let widest = [xlo, xhi, (xlo + xhi) / 2.0]
                .iter()
                .map(|v| tick(*v).chars().count())
                .max()
                .unwrap_or(4);
            ((plot_w / ((widest + 3) as f64 * TICK_CHAR_PX)) as usize).clamp(2, 10)
        };
        let x_fmt = move |v: &f64| match &cats {
            Some(c) => {
                let i = v.round();
                if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < c.len() {
                    c[i as usize].clone()
                } else {
                    String::new()
                }
            }
            None => tick(*v),
        };
        let percent = self.percent;
        let y_fmt = move |v: &f64| {
            if percent {
                crate::metrics::format::percent_tick(*v)
            } else {
                tick(*v)
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(x_desc.as_str())
            .y_desc(self.y_desc.as_str())
            .axis_desc_style(axis_font())
            .label_style(tick_font())
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .light_line_style(RGBColor(247, 247, 247))
            .bold_line_style(RGBColor(218, 218, 218));
        match &self.categories {
            Some(c) => mesh.x_labels(c.len() * 2 + 1),
            None => mesh.x_labels(numeric_labels),
        };
        mesh.draw()?;
        if self.diagonal.is_some() {
            let top = xhi.min(yhi);
            chart.draw_series(DashedLineSeries::new(
                [(xlo.max(0.0), xlo.max(0.0)), (top, top)],
                8,
                5,
                palette::REFERENCE.stroke_width(2),
            ))?;
        }
        if self.bands {
            for l in &lines {
                if l.points.iter().all(|p| p.1.low == p.1.high) {
                    continue;
                }
                if l.points.len() == 1 {
                    let (x, s) = l.points[0];
                    chart.draw_series(std::iter::once(PathElement::new(
                        vec![(x, s.low), (x, s.high)],
                        l.colour.mix(0.5).stroke_width(6),
                    )))?;
                    continue;
                }
                let mut poly: Vec<(f64, f64)> = l.points.iter().map(|p| (p.0, p.1.low)).collect();
                poly.extend(l.points.iter().rev().map(|p| (p.0, p.1.high)));
                chart.draw_series(std::iter::once(Polygon::new(
                    poly,
                    l.colour.mix(0.18).filled(),
                )))?;
            }
        }
        for l in &lines {
            chart.draw_series(LineSeries::new(
                l.points.iter().map(|p| (p.0, p.1.mean)),
                l.colour.stroke_width(2),
            ))?;
            chart.draw_series(
                l.points
                    .iter()
                    .map(|p| Circle::new((p.0, p.1.mean), 4, l.colour.filled())),
            )?;
        }
        // Runs with no value: triangles along the top edge, with their count.
        let top = yhi - (yhi - ylo) * 0.03;
        for e in &self.empty {
            chart.draw_series(std::iter::once(TriangleMarker::new(
                (e.x, top),
                7,
                e.colour.filled(),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                format!("{}/{}", e.empty, e.runs),
                (e.x, top),
                tick_font().pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Left,
                    plotters::style::text_anchor::VPos::Top,
                )),
            )))?;
        }
        Ok(())
    }
}

/// Width of a tick label's character, in pixels (13 px DejaVu Sans, rounded up).
const TICK_CHAR_PX: f64 = 8.0;

impl LinesChart {
    /// `st` within the metric's domain: at least 0, at most [`LinesChart::max`].
    fn clamp(&self, st: Stat) -> Stat {
        let hi = self.max.unwrap_or(f64::INFINITY);
        let c = |v: f64| v.clamp(0.0, hi);
        Stat {
            mean: st.mean,
            low: c(st.low).min(st.mean),
            high: c(st.high).max(st.mean),
        }
    }
}

/// Category names that fit `width` pixels side by side: as they are, else shortened
/// in the middle (`backo…=full`), else (when shortening makes two alike) numbered
/// `1`, `2`..., with the key `1 = name, ...` for the axis description.
pub(crate) fn fit_ticks(names: &[String], width: f64) -> (Vec<String>, Option<String>) {
    let room = ((width / names.len().max(1) as f64 / TICK_CHAR_PX) as usize).saturating_sub(1);
    if names.iter().all(|n| n.chars().count() <= room) {
        return (names.to_vec(), None);
    }
    let shorten = |n: &String| -> String {
        let chars: Vec<char> = n.chars().collect();
        if chars.len() <= room {
            return n.clone();
        }
        let keep = room.saturating_sub(1);
        let head = keep.div_ceil(2);
        let tail = keep - head;
        let mut out: String = chars[..head].iter().collect();
        out.push('…');
        out.extend(&chars[chars.len() - tail..]);
        out
    };
    let short: Vec<String> = names.iter().map(shorten).collect();
    let distinct = short
        .iter()
        .enumerate()
        .all(|(i, a)| !short[..i].contains(a));
    if room >= 6 && distinct {
        return (short, None);
    }
    let numbers: Vec<String> = (1..=names.len()).map(|i| i.to_string()).collect();
    let key: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{} = {n}", i + 1))
        .collect();
    (numbers, Some(key.join(", ")))
}

/// Groups cells into lines by `label`, placing each cell at `x` (skipping cells where
/// either is missing), points sorted by x; lines in order of first appearance.
fn lines_of(
    ctx: &SweepContext,
    palette: &Palette,
    label: impl Fn(&SweepCell) -> String,
    x: impl Fn(usize, &SweepCell) -> Option<f64>,
    metric: &str,
) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    for (i, c) in ctx.sweep.cells.iter().enumerate() {
        let (Some(xv), Some(st)) = (x(i, c), c.metrics.get(metric)) else {
            continue;
        };
        let l = label(c);
        match lines.iter_mut().find(|x| x.label == l) {
            Some(line) => line.points.push((xv, *st)),
            None => lines.push(Line {
                colour: palette.colour(&l),
                label: l,
                points: vec![(xv, *st)],
            }),
        }
    }
    for l in &mut lines {
        l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    lines
}

/// The x positions of key `k`: numbers, or category indices with their names.
fn key_axis(ctx: &SweepContext, k: usize) -> (Vec<f64>, Option<Vec<String>>) {
    if let Some(v) = ctx.numeric(k) {
        return (v, None);
    }
    let mut cats: Vec<String> = Vec::new();
    let mut xs = Vec::new();
    for c in &ctx.sweep.cells {
        let v = &c.values[k];
        let i = match cats.iter().position(|x| x == v) {
            Some(i) => i,
            None => {
                cats.push(v.clone());
                cats.len() - 1
            }
        };
        xs.push(i as f64);
    }
    (xs, Some(cats))
}

/// File-name form of a key or metric.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect()
}

/// `load_vs_success`, or `None` when the sweep has no load to put on x.
pub(crate) fn load_vs_success(ctx: &SweepContext, palette: &Palette) -> Option<LinesChart> {
    let sw = ctx.sweep;
    if !sw.metrics.iter().any(|m| m == SUCCESS_FRACTION.name) {
        return None;
    }
    let numeric_load = ctx.load_key.and_then(|k| ctx.numeric(k).map(|v| (k, v)));
    let (x_desc, lines) = match numeric_load {
        Some((k, xs)) => {
            let unit = if sw.keys[k].ends_with("multiplier") {
                "× base rate"
            } else {
                "requests/s"
            };
            (
                format!("{} (swept load, {unit})", ctx.short[k]),
                lines_of(
                    ctx,
                    palette,
                    |c| ctx.policy_label(c),
                    |i, _| Some(xs[i]),
                    SUCCESS_FRACTION.name,
                ),
            )
        }
        None => {
            let (metric, desc) = if ctx.varies(OFFERED_RATE.name) {
                (OFFERED_RATE.name, "offered load (requests/s, measured)")
            } else if ctx.varies(PEAK_INBOUND.name) {
                (
                    PEAK_INBOUND.name,
                    "peak inbound load (attempts/s, measured)",
                )
            } else {
                return None;
            };
            (
                desc.to_string(),
                lines_of(
                    ctx,
                    palette,
                    |c| ctx.policy_label(c),
                    |_, c| c.metrics.get(metric).map(|s| s.mean),
                    SUCCESS_FRACTION.name,
                ),
            )
        }
    };
    if lines.is_empty() {
        return None;
    }
    Some(LinesChart {
        name: "load_vs_success".into(),
        title: format!("Success against load: {}", ctx.scenario),
        x_desc,
        y_desc: "logical requests that succeeded (%)".into(),
        categories: None,
        lines,
        bands: ctx.has_bands(),
        percent: true,
        max: Some(1.0),
        diagonal: None,
        empty: Vec::new(),
        empty_label: String::new(),
    })
}

/// The per-metric charts: every varying metric against every swept key.
pub(crate) fn metric_charts(ctx: &SweepContext, palette: &Palette) -> Vec<LinesChart> {
    let sw = ctx.sweep;
    let mut out = Vec::new();
    for k in 0..sw.keys.len() {
        let (xs, cats) = key_axis(ctx, k);
        for m in &sw.metrics {
            let empty: Vec<EmptyMark> = sw
                .cells
                .iter()
                .enumerate()
                .filter_map(|(i, c)| {
                    let n = *c.empty.get(m)?;
                    Some(EmptyMark {
                        x: xs[i],
                        colour: palette.colour(&ctx.label_without(c, &[k])),
                        empty: n,
                        runs: c.runs.max(n),
                    })
                })
                .collect();
            if SKIPPED_METRICS.contains(&m.as_str()) || (!ctx.varies(m) && empty.is_empty()) {
                continue;
            }
            let lines = lines_of(
                ctx,
                palette,
                |c| ctx.label_without(c, &[k]),
                |i, _| Some(xs[i]),
                m,
            );
            if lines.is_empty() && empty.is_empty() {
                continue;
            }
            let empty_label = if m == RECOVERY_TIME_S.name {
                "never recovered".to_string()
            } else {
                format!("no {m} (empty)")
            };
            let percent = unit(m) == "fraction";
            let max = (percent || unit(m) == "fraction of runs").then_some(1.0);
            let y_desc = if percent {
                format!("{m} (%)")
            } else {
                format!("{m} ({})", unit(m))
            };
            out.push(LinesChart {
                name: format!("metrics/{}_vs_{}", slug(m), slug(&ctx.short[k])),
                title: format!("{m} against {}: {}", ctx.short[k], ctx.scenario),
                x_desc: format!("{} (swept)", ctx.short[k]),
                y_desc,
                categories: cats.clone(),
                lines,
                bands: ctx.has_bands(),
                percent,
                max,
                diagonal: None,
                empty,
                empty_label,
            });
        }
    }
    out
}

/// Whether the sweep is one the `amplification` chart is drawn for, given every
/// cell's N^L: a swept key changes the retry stack and the cells have the metric.
pub(crate) fn wants_amplification(sw: &Sweep) -> bool {
    sw.keys.iter().any(|k| shapes_attempts(k)) && sw.metrics.iter().any(|m| m == AMPLIFICATION.name)
}

/// N^L of each of the sweep's cells: the manifest's value for the grid cell its runs
/// are of (`None` when unlimited, or unknown).
fn worst_cases(ctx: &SweepContext) -> Vec<Option<f64>> {
    let mut first: Vec<Option<u64>> = vec![None; ctx.sweep.cells.len()];
    for &(run, _, c) in &ctx.sweep.runs {
        if let Some(f) = first.get_mut(c) {
            f.get_or_insert(run);
        }
    }
    first
        .into_iter()
        .map(|run| {
            let cell = usize::try_from(run? / ctx.replications).ok()?;
            ctx.worst_case?.get(cell)?.finite()
        })
        .collect()
}

/// `amplification`, when the sweep changes the retry stack (see the module docs).
pub(crate) fn amplification(ctx: &SweepContext, palette: &Palette) -> Option<LinesChart> {
    let sw = ctx.sweep;
    if !wants_amplification(sw) {
        return None;
    }
    let shaping: Vec<usize> = (0..sw.keys.len())
        .filter(|&k| shapes_attempts(&sw.keys[k]))
        .collect();
    let worst: Vec<f64> = worst_cases(ctx).into_iter().collect::<Option<_>>()?;
    let lines = lines_of(
        ctx,
        palette,
        |c| ctx.label_without(c, &shaping),
        |i, _| Some(worst[i]),
        AMPLIFICATION.name,
    );
    if lines.is_empty() {
        return None;
    }
    Some(LinesChart {
        name: "amplification".into(),
        title: format!("Retry amplification against N^L: {}", ctx.scenario),
        x_desc: "worst-case attempts per request N^L (product of max_attempts)".into(),
        y_desc: "measured attempts per logical request".into(),
        categories: None,
        lines,
        bands: ctx.has_bands(),
        percent: false,
        max: None,
        diagonal: Some("N^L: every attempt fails".into()),
        empty: Vec::new(),
        empty_label: String::new(),
    })
}

/// Draws the sweep charts of `ctx` into `dir/plots/`: first the charts of the metrics
/// in `first` (those the expectations name, in their order) against each swept key,
/// then `load_vs_success`, `amplification` and the other metrics' charts (folded).
pub(crate) fn draw(
    ctx: &SweepContext,
    palette: &Palette,
    first: &[&str],
    dir: &Path,
    format: Format,
    out: &mut Vec<Drawn>,
) -> Result<(), PlotError> {
    let mut metric = metric_charts(ctx, palette);
    for m in first {
        let prefix = format!("metrics/{}_vs_", slug(m));
        let (named, rest): (Vec<LinesChart>, Vec<LinesChart>) = metric
            .into_iter()
            .partition(|c| c.name.starts_with(&prefix));
        for c in &named {
            emit(c, dir, format, true, out)?;
        }
        metric = rest;
    }
    if let Some(c) = load_vs_success(ctx, palette) {
        emit(&c, dir, format, true, out)?;
    }
    if let Some(c) = amplification(ctx, palette) {
        emit(&c, dir, format, true, out)?;
    }
    for c in metric {
        emit(&c, dir, format, false, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// A sweep over presets, `cells` of them present in the folder (its runs: two
    /// replications of each, numbered as in the whole grid).
    fn presets(cells: &[(usize, &str)]) -> Sweep {
        let stat = |m: f64| Stat {
            mean: m,
            low: m,
            high: m,
        };
        Sweep {
            keys: vec!["fleets.0.layers.0.preset".into()],
            cells: cells
                .iter()
                .map(|(_, v)| SweepCell {
                    values: vec![v.to_string()],
                    runs: 2,
                    metrics: BTreeMap::from([(AMPLIFICATION.name.to_string(), stat(1.5))]),
                    empty: BTreeMap::new(),
                })
                .collect(),
            metrics: vec![AMPLIFICATION.name.to_string()],
            has_intervals: false,
            runs: cells
                .iter()
                .enumerate()
                .flat_map(|(i, (grid, _))| {
                    let r = 2 * *grid as u64;
                    [(r, 0, i), (r + 1, 1, i)]
                })
                .collect(),
        }
    }

    fn xs(sw: &Sweep, worst: &[Limit<f64>]) -> Option<Vec<f64>> {
        let ctx = SweepContext {
            sweep: sw,
            scenario: "s",
            worst_case: Some(worst),
            replications: 2,
            short: short_names(&sw.keys),
            load_key: None,
        };
        let c = amplification(&ctx, &ctx.palette())?;
        Some(
            c.lines
                .iter()
                .flat_map(|l| l.points.iter().map(|p| p.0))
                .collect(),
        )
    }

    #[test]
    fn amplification_puts_each_cell_at_the_n_to_the_l_the_manifest_records_for_it() {
        let f = Limit::Finite;
        let worst = [f(4.0), f(2.0), Limit::Unlimited];
        // Each cell at its grid cell's N^L, found by its runs (sorted along x).
        let all = presets(&[(0, "grpc"), (1, "envoy")]);
        assert_eq!(xs(&all, &worst), Some(vec![2.0, 4.0]));
        // A shard's folder holds some cells: they are matched by their runs.
        assert_eq!(xs(&presets(&[(1, "envoy")]), &worst), Some(vec![2.0]));
        // A cell without a finite N^L: no chart.
        assert_eq!(xs(&presets(&[(0, "grpc"), (2, "finagle")]), &worst), None);
        // Nor when the manifest records fewer cells than the folder has.
        assert_eq!(xs(&all, &worst[..1]), None);
    }

    #[test]
    fn tick_labels_fit_the_width_or_are_numbered() {
        let names: Vec<String> = ["none", "full", "equal"].map(String::from).to_vec();
        assert_eq!(fit_ticks(&names, 600.0), (names.clone(), None));
        let long: Vec<String> = [
            "backoff=exponential; jitter=none",
            "backoff=exponential; jitter=full",
            "backoff=exponential; jitter=equal",
        ]
        .map(String::from)
        .to_vec();
        // 600 px for 3: 25 characters each at most.
        let (short, key) = fit_ticks(&long, 600.0);
        assert_eq!(key, None);
        assert!(short.iter().all(|s| s.chars().count() <= 24), "{short:?}");
        assert_eq!(short[1], "backoff=expo…jitter=full");
        // Too narrow to tell them apart shortened: numbered, named in the key.
        let (short, key) = fit_ticks(&long, 120.0);
        assert_eq!(short, ["1", "2", "3"]);
        assert_eq!(
            key.unwrap(),
            "1 = backoff=exponential; jitter=none, 2 = backoff=exponential; jitter=full, 3 = backoff=exponential; jitter=equal"
        );
    }

    #[test]
    fn bands_are_clamped_to_the_metric_domain() {
        let chart = LinesChart {
            name: "x".into(),
            title: String::new(),
            x_desc: String::new(),
            y_desc: String::new(),
            categories: None,
            lines: Vec::new(),
            bands: true,
            percent: true,
            max: Some(1.0),
            diagonal: None,
            empty: Vec::new(),
            empty_label: String::new(),
        };
        let st = Stat {
            mean: 0.98,
            low: 0.9,
            high: 1.06,
        };
        assert_eq!(
            chart.clamp(st),
            Stat {
                mean: 0.98,
                low: 0.9,
                high: 1.0
            }
        );
        let st = Stat {
            mean: 0.01,
            low: -0.03,
            high: 0.05,
        };
        assert_eq!(chart.clamp(st).low, 0.0);
        let free = LinesChart { max: None, ..chart };
        let st = Stat {
            mean: 3.0,
            low: -1.0,
            high: 7.0,
        };
        assert_eq!(
            free.clamp(st),
            Stat {
                mean: 3.0,
                low: 0.0,
                high: 7.0
            }
        );
    }

    #[test]
    fn short_names_are_unique_suffixes_that_do_not_start_with_an_index() {
        let keys: Vec<String> = [
            "fleets.0.layers.0.max_attempts",
            "fleets.0.layers.1.max_attempts",
            "fleets.0.arrival.rate",
            "dependency.servers",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            short_names(&keys),
            [
                "layers.0.max_attempts",
                "layers.1.max_attempts",
                "rate",
                "servers"
            ]
        );
    }

    #[test]
    fn load_keys_are_rates_and_multipliers() {
        assert!(is_load_key("fleets.0.arrival.rate"));
        assert!(is_load_key("fleets.0.load_profile.1.multiplier"));
        assert!(!is_load_key("fleets.0.layers.0.max_attempts"));
        assert!(!is_load_key("fleets.0.layers.0.backoff.multiplier"));
    }

    #[test]
    fn units_follow_the_metric_names() {
        assert_eq!(unit("latency_p99_ms"), "ms");
        assert_eq!(unit("success_fraction"), "fraction");
        assert_eq!(unit("attempts_layer_1"), "calls per logical request");
        assert_eq!(unit("rejected"), "count");
    }
}
