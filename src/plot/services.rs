//! `services`: one small panel per service of a graph scenario, stacked on a shared
//! time axis: inbound attempts and goodput per second (`services.csv` counts per
//! bucket over the bucket's width) and, on the right axis, the busy threads as a
//! share of the servers (the busy threads themselves when the servers are unlimited);
//! the outages that hit the service are shaded. A service with a concurrency limit
//! has instead, on the right axis, its limit against the requests it holds (busy
//! threads plus its queue: what the limit counts), so a refusal shows where the two
//! meet.
//!
//! `services.csv` is read one record at a time and only one run is kept.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::export::manifest::GraphShape;
use crate::metrics::columns::{REPLICATION, RUN, SERVICES, SERVICES_LIMIT};

use super::canvas::{frame, tick, tick_font, upper, Chart, DrawResult, Entry, Swatch};
use super::decimate::{decimate_gapped, merge_spans};
use super::font::FAMILY;
use super::palette;
use super::table::CsvStream;
use super::PlotError;

const COL_T: &str = SERVICES[2].name;
const COL_SERVICE: &str = SERVICES[3].name;
const COL_INBOUND: &str = SERVICES[4].name;
const COL_GOODPUT: &str = SERVICES[8].name;
const COL_QUEUE: &str = SERVICES[9].name;
const COL_UTILISATION: &str = SERVICES[10].name;
const COL_THREADS: &str = SERVICES[11].name;
const COL_LIMIT: &str = SERVICES_LIMIT[0].name;

/// Height of one panel, pixels (the chart grows with the services, within bounds).
const PANEL_H: u32 = 150;
/// Room under the bottom panel for the time axis, pixels.
const X_AXIS_H: i32 = 42;
/// Tallest the chart is drawn, pixels.
const MAX_H: u32 = 2400;

/// What a service's panel draws on its right axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RightAxis {
    /// Its concurrency limit and the requests it holds.
    Limit,
    /// Busy threads as a share of its servers.
    Utilisation,
    /// Busy threads (unlimited servers).
    Threads,
}

/// One service's series in one run (`services.csv` rows with one `run` and `service`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct ServiceSeries {
    /// The service.
    pub name: String,
    /// Run index.
    pub run: u64,
    /// Replication index.
    pub replication: u64,
    /// Bucket starts, seconds.
    pub t: Vec<f64>,
    /// Attempts that reached the service, count per bucket.
    pub inbound: Vec<Option<f64>>,
    /// Successful answers somebody waited for, count per bucket.
    pub goodput: Vec<Option<f64>>,
    /// Time-averaged busy threads / servers (empty with unlimited servers).
    pub utilisation: Vec<Option<f64>>,
    /// Time-averaged busy threads.
    pub threads_busy: Vec<Option<f64>>,
    /// Time-averaged queue length.
    pub queue_mean: Vec<Option<f64>>,
    /// Time-weighted mean concurrency limit (empty without one, or in a folder
    /// written before the column existed).
    pub limit: Vec<Option<f64>>,
}

impl ServiceSeries {
    /// Bucket width in seconds (the smallest step between bucket starts; 1 if unknown).
    pub(crate) fn bucket(&self) -> f64 {
        self.t
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|d| *d > 0.0)
            .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.min(d))))
            .unwrap_or(1.0)
    }

    /// A per-bucket count as a rate per second, drawn at the bucket's middle.
    fn rate(&self, counts: &[Option<f64>]) -> (Vec<f64>, Vec<Option<f64>>) {
        let b = self.bucket();
        let mid = self.t.iter().map(|t| t + b / 2.0).collect();
        (mid, counts.iter().map(|c| c.map(|c| c / b)).collect())
    }

    /// What the panel's right axis shows.
    fn right_axis(&self) -> RightAxis {
        if self.limit.iter().any(Option::is_some) {
            RightAxis::Limit
        } else if self.has_utilisation() {
            RightAxis::Utilisation
        } else {
            RightAxis::Threads
        }
    }

    /// The requests the service holds, busy threads plus queue (what its limit counts).
    fn held(&self) -> Vec<Option<f64>> {
        self.threads_busy
            .iter()
            .zip(&self.queue_mean)
            .map(|(b, q)| {
                Some(b.unwrap_or(0.0) + q.unwrap_or(0.0)).filter(|_| b.is_some() || q.is_some())
            })
            .collect()
    }

    /// Whether the service has a finite number of servers (a utilisation).
    fn has_utilisation(&self) -> bool {
        self.utilisation.iter().any(Option::is_some)
    }
}

/// Reads the series of run `run` (the first run of the file when `None`) from
/// `services.csv`, one per service in order of first appearance.
pub(crate) fn read_services(
    path: &Path,
    run: Option<u64>,
) -> Result<Vec<ServiceSeries>, PlotError> {
    let mut csv = CsvStream::open(path)?;
    let i_run = csv.index(RUN.name)?;
    let i_rep = csv.index(REPLICATION.name)?;
    let i_t = csv.index(COL_T)?;
    let i_service = csv.index(COL_SERVICE)?;
    let cols = [
        COL_INBOUND,
        COL_GOODPUT,
        COL_UTILISATION,
        COL_THREADS,
        COL_QUEUE,
    ]
    .map(|c| csv.index(c))
    .into_iter()
    .collect::<Result<Vec<usize>, _>>()?;
    let i_limit = csv.index(COL_LIMIT).ok();
    let mut want = run;
    let mut out: Vec<ServiceSeries> = Vec::new();
    while let Some(line) = csv.next()? {
        let r = csv.integer(i_run, line)?;
        if *want.get_or_insert(r) != r {
            continue;
        }
        let rep = csv.integer(i_rep, line)?;
        let Some(t) = csv.number(i_t, line)? else {
            return Err(PlotError::BadValue {
                path: path.to_path_buf(),
                line,
                column: COL_T.into(),
                expected: "a number",
                found: String::new(),
            });
        };
        let name = csv.text(i_service).to_string();
        let k = match out.iter().position(|s| s.name == name) {
            Some(k) => k,
            None => {
                out.push(ServiceSeries {
                    name,
                    run: r,
                    replication: rep,
                    ..ServiceSeries::default()
                });
                out.len() - 1
            }
        };
        let s = &mut out[k];
        s.t.push(t);
        let fields = [
            &mut s.inbound,
            &mut s.goodput,
            &mut s.utilisation,
            &mut s.threads_busy,
            &mut s.queue_mean,
        ];
        for (f, c) in fields.into_iter().zip(&cols) {
            f.push(csv.number(*c, line)?);
        }
        s.limit.push(match i_limit {
            Some(c) => csv.number(c, line)?,
            None => None,
        });
    }
    Ok(out)
}

/// The outage spans to shade in each service's panel, seconds: the windows of the
/// outages that hit it (targeted at it or at every service) within `[0, end)`, as the
/// graph's shape records them. An outage of random (Markov) windows, or a service the
/// shape does not name (or no shape), takes `measured` instead: the spans
/// `timeseries.csv` marks as inside an outage.
pub(crate) fn outage_spans(
    graph: Option<&GraphShape>,
    names: &[String],
    measured: &[(f64, f64)],
    end: f64,
) -> Vec<Vec<(f64, f64)>> {
    names
        .iter()
        .map(|name| {
            let Some(g) = graph.filter(|g| g.services.iter().any(|x| &x.name == name)) else {
                return measured.to_vec();
            };
            let mut spans = Vec::new();
            for o in g
                .outages
                .iter()
                .filter(|o| o.service.as_ref().is_none_or(|s| s == name))
            {
                match o.window_s {
                    Some([start, stop]) => {
                        let (a, b) = (start, stop.min(end));
                        if a < b {
                            spans.push((a, b));
                        }
                    }
                    None => return measured.to_vec(),
                }
            }
            spans.sort_by(|a, b| a.0.total_cmp(&b.0));
            spans
        })
        .collect()
}

/// The services of one run over time.
#[derive(Debug)]
pub(crate) struct ServicesChart<'a> {
    /// One series per service, in order.
    pub services: &'a [ServiceSeries],
    /// The outage spans of each service's panel (see [`outage_spans`]).
    pub outages: Vec<Vec<(f64, f64)>>,
    /// The end of the time axis, seconds (the timeseries chart's).
    pub end: f64,
    /// Scenario name (for the title).
    pub scenario: &'a str,
}

impl ServicesChart<'_> {
    fn legend(&self) -> Vec<Entry> {
        let mut l = vec![
            Entry::new("inbound (attempts/s)", Swatch::Line(palette::INBOUND)),
            Entry::new("goodput (successes/s)", Swatch::Line(palette::GOODPUT)),
        ];
        // Which right axis each panel has: limit, utilisation or busy threads.
        let axes = |want: RightAxis| self.services.iter().any(|s| s.right_axis() == want);
        if axes(RightAxis::Utilisation) {
            l.push(Entry::new(
                "utilisation (right axis)",
                Swatch::Line(palette::THREADS),
            ));
        }
        if axes(RightAxis::Threads) {
            l.push(Entry::new(
                "busy threads (right axis)",
                Swatch::Dashed(palette::THREADS),
            ));
        }
        if axes(RightAxis::Limit) {
            l.push(Entry::new(
                "concurrency limit (right axis)",
                Swatch::Line(palette::LIMIT),
            ));
            l.push(Entry::new(
                "held: busy + queued (right axis)",
                Swatch::Line(palette::REFERENCE),
            ));
        }
        if self.outages.iter().any(|o| !o.is_empty()) {
            l.push(Entry::new(
                "outage at the service",
                Swatch::Band(palette::OUTAGE, 0.15),
            ));
        }
        l
    }
}

impl Chart for ServicesChart<'_> {
    fn name(&self) -> String {
        "services".into()
    }

    fn title(&self) -> String {
        let run = self.services.first().map_or(0, |s| s.run);
        format!("Services over time: {} (run {run})", self.scenario)
    }

    fn size(&self) -> (u32, u32) {
        let n = self.services.len().max(1) as u32;
        (1000, (110 + PANEL_H * n).clamp(600, MAX_H))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let area = frame(root, &self.title(), &self.legend())?;
        let n = self.services.len();
        if n == 0 {
            return Ok(());
        }
        let (_, h) = area.dim_in_pixel();
        let panel = ((h as i32 - X_AXIS_H) / n as i32).max(1);
        let breaks: Vec<i32> = (1..n as i32).map(|i| i * panel).collect();
        let panels = area.split_by_breakpoints(Vec::<i32>::new(), breaks);
        let end = self.end;
        let caption: TextStyle = (FAMILY, 15, FontStyle::Bold).into_font().into();
        for (k, (s, pa)) in self.services.iter().zip(&panels).enumerate() {
            let last = k + 1 == n;
            let (mid, inbound) = s.rate(&s.inbound);
            let (_, goodput) = s.rate(&s.goodput);
            let max = inbound
                .iter()
                .chain(&goodput)
                .flatten()
                .copied()
                .fold(0.0f64, f64::max);
            let ymax = upper(max);
            let axis = s.right_axis();
            let held = s.held();
            let most = |ys: &[&Vec<Option<f64>>]| {
                let m = ys.iter().flat_map(|y| y.iter().flatten()).copied();
                upper(m.fold(0.0, f64::max))
            };
            let right_top = match axis {
                RightAxis::Utilisation => 1.05,
                RightAxis::Threads => most(&[&s.threads_busy]),
                RightAxis::Limit => most(&[&s.limit, &held]),
            };
            let mut chart = ChartBuilder::on(pa)
                .margin_top(4)
                .margin_left(5)
                .margin_right(5)
                .caption(&s.name, caption.clone())
                .x_label_area_size(if last { X_AXIS_H } else { 0 })
                .y_label_area_size(70)
                .right_y_label_area_size(70)
                .build_cartesian_2d(0f64..end, 0f64..ymax)?
                .set_secondary_coord(0f64..end, 0f64..right_top);
            let mut mesh = chart.configure_mesh();
            mesh.y_desc("per second")
                .axis_desc_style(tick_font())
                .label_style(tick_font())
                .x_label_formatter(&|v| tick(*v))
                .y_label_formatter(&|v| tick(*v))
                .y_labels(4)
                .light_line_style(RGBColor(247, 247, 247))
                .bold_line_style(RGBColor(218, 218, 218));
            if last {
                mesh.x_desc("time (s)");
            }
            mesh.draw()?;
            let pct = |v: &f64| crate::metrics::format::percent_tick(*v);
            let plain = |v: &f64| tick(*v);
            let util = axis == RightAxis::Utilisation;
            chart
                .configure_secondary_axes()
                .y_desc(match axis {
                    RightAxis::Utilisation => "utilisation (%)",
                    RightAxis::Threads => "busy threads",
                    RightAxis::Limit => "requests held",
                })
                .axis_desc_style(tick_font())
                .label_style(tick_font())
                .y_labels(4)
                .y_label_formatter(if util { &pct } else { &plain })
                .draw()?;
            let width = chart.plotting_area().dim_in_pixel().0 as usize;
            for (a, b) in merge_spans(&self.outages[k], 0.0, end, width) {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(a, 0.0), (b, ymax)],
                    palette::OUTAGE.mix(0.15).filled(),
                )))?;
            }
            let column = |x: f64| i64::from(chart.backend_coord(&(x, 0.0)).0);
            let lines: Vec<_> = [(&inbound, palette::INBOUND), (&goodput, palette::GOODPUT)]
                .into_iter()
                .map(|(ys, c)| (decimate_gapped(&mid, ys, width, column), c))
                .collect();
            for (segs, colour) in lines {
                for seg in segs {
                    chart.draw_series(LineSeries::new(seg, colour.stroke_width(2)))?;
                }
            }
            let column = |x: f64| i64::from(chart.backend_coord(&(x, 0.0)).0);
            let right: Vec<(&Vec<Option<f64>>, RGBColor, bool)> = match axis {
                RightAxis::Utilisation => vec![(&s.utilisation, palette::THREADS, false)],
                RightAxis::Threads => vec![(&s.threads_busy, palette::THREADS, true)],
                RightAxis::Limit => vec![
                    (&held, palette::REFERENCE, false),
                    (&s.limit, palette::LIMIT, false),
                ],
            };
            let right: Vec<_> = right
                .into_iter()
                .map(|(ys, c, d)| (decimate_gapped(&mid, ys, width, column), c, d))
                .collect();
            for (segs, colour, dashed) in right {
                for seg in segs {
                    if dashed {
                        chart.draw_secondary_series(DashedLineSeries::new(
                            seg,
                            6,
                            4,
                            colour.stroke_width(2),
                        ))?;
                    } else {
                        chart
                            .draw_secondary_series(LineSeries::new(seg, colour.stroke_width(2)))?;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_bucket_become_rates_at_the_bucket_middle() {
        let s = ServiceSeries {
            t: vec![0.0, 0.5, 1.0],
            inbound: vec![Some(10.0), None, Some(4.0)],
            ..ServiceSeries::default()
        };
        let (mid, r) = s.rate(&s.inbound);
        assert_eq!(mid, vec![0.25, 0.75, 1.25]);
        assert_eq!(r, vec![Some(20.0), None, Some(8.0)]);
    }
}
