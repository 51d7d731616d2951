//! `latency`: the latency of the logical requests that succeeded in each bucket (p50 and
//! p99), and the time to failure of those that failed (p50) as its own line, against
//! time, with outages shaded and the whole run's success percentiles as dashed
//! reference lines. Kept apart because during an outage a latency over all completions
//! is mostly time to failure. In a sweep folder, each grid cell's success p99.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::canvas::{axis_font, frame, tick, tick_font, upper, Chart, DrawResult, Entry, Swatch};
use super::data::RunSeries;
use super::decimate::{decimate_gapped, merge_spans};
use super::palette;

/// What the latency chart draws.
#[derive(Debug)]
pub(crate) enum LatencyInput<'a> {
    /// One run: success p50 and p99 and failure p50 per bucket, and the whole run's
    /// `(label, ms)` success percentiles.
    Run(&'a RunSeries, Vec<(String, f64)>),
    /// The success p99 of several labelled runs.
    Overlay(Vec<(String, RGBColor, &'a RunSeries)>),
}

/// Latency percentiles over time.
#[derive(Debug)]
pub(crate) struct LatencyChart<'a> {
    /// The runs drawn.
    pub input: LatencyInput<'a>,
    /// Scenario name (for the title).
    pub scenario: &'a str,
}

impl LatencyChart<'_> {
    /// `(label, colour, dashed, series of one run, column)` lines to draw.
    fn lines(&self) -> Vec<(String, RGBColor, &RunSeries, &[Option<f64>])> {
        match &self.input {
            LatencyInput::Run(s, _) => {
                let mut lines = vec![
                    (
                        "successes: p50 per bucket".into(),
                        palette::P50,
                        *s,
                        &s.success_latency_p50[..],
                    ),
                    (
                        "successes: p99 per bucket".into(),
                        palette::P99,
                        *s,
                        &s.success_latency_p99[..],
                    ),
                ];
                if s.failure_latency_p50.iter().any(Option::is_some) {
                    lines.push((
                        "time to failure: p50 per bucket".into(),
                        palette::FAILURE,
                        *s,
                        &s.failure_latency_p50[..],
                    ));
                }
                lines
            }
            LatencyInput::Overlay(runs) => runs
                .iter()
                .map(|(l, c, s)| {
                    (
                        format!("{l} (success p99)"),
                        *c,
                        *s,
                        &s.success_latency_p99[..],
                    )
                })
                .collect(),
        }
    }

    fn first(&self) -> Option<&RunSeries> {
        match &self.input {
            LatencyInput::Run(s, _) => Some(s),
            LatencyInput::Overlay(runs) => runs.first().map(|r| r.2),
        }
    }
}

impl Chart for LatencyChart<'_> {
    fn name(&self) -> String {
        "latency".into()
    }

    fn title(&self) -> String {
        match &self.input {
            LatencyInput::Run(s, _) => {
                format!("Latency over time: {} (run {})", self.scenario, s.run)
            }
            LatencyInput::Overlay(_) => format!("Latency over time: {}", self.scenario),
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let lines = self.lines();
        let refs: &[(String, f64)] = match &self.input {
            LatencyInput::Run(_, r) => r,
            LatencyInput::Overlay(_) => &[],
        };
        let outages = self.first().map_or_else(Vec::new, |s| s.outage_spans());
        let mut legend: Vec<Entry> = lines
            .iter()
            .map(|(l, c, _, _)| Entry::new(l.clone(), Swatch::Line(*c)))
            .collect();
        if !refs.is_empty() {
            legend.push(Entry::new(
                "success percentiles of the whole run",
                Swatch::Dashed(palette::REFERENCE),
            ));
        }
        if !outages.is_empty() {
            legend.push(Entry::new("outage", Swatch::Band(palette::OUTAGE, 0.15)));
        }
        let area = frame(root, &self.title(), &legend)?;
        let end = lines.iter().map(|(_, _, s, _)| s.end()).fold(1.0, f64::max);
        let ymax = upper(
            lines
                .iter()
                .flat_map(|(_, _, _, c)| c.iter().flatten().copied())
                .chain(refs.iter().map(|r| r.1))
                .fold(0.0, f64::max),
        );
        let mut chart = ChartBuilder::on(&area)
            .margin(5)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..end, 0f64..ymax)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("latency of logical requests (ms)")
            .axis_desc_style(axis_font())
            .label_style(tick_font())
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(RGBColor(247, 247, 247))
            .bold_line_style(RGBColor(218, 218, 218))
            .draw()?;
        // Pixel columns of the plot: long series are cut to a few points per column.
        let width = chart.plotting_area().dim_in_pixel().0 as usize;
        for (a, b) in merge_spans(&outages, 0.0, end, width) {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(a, 0.0), (b, ymax)],
                palette::OUTAGE.mix(0.15).filled(),
            )))?;
        }
        for (label, v) in refs {
            chart.draw_series(DashedLineSeries::new(
                [(0.0, *v), (end, *v)],
                8,
                5,
                palette::REFERENCE.stroke_width(1),
            ))?;
            let anchor = Pos::new(HPos::Left, VPos::Bottom);
            chart.draw_series(std::iter::once(Text::new(
                format!("{label} of the run: {} ms", tick(*v)),
                (end * 0.01, *v),
                tick_font().color(&palette::REFERENCE).pos(anchor),
            )))?;
        }
        for (_, colour, s, col) in &lines {
            let mid = s.midpoints();
            let column = |x: f64| i64::from(chart.backend_coord(&(x, 0.0)).0);
            for seg in decimate_gapped(&mid, col, width, column) {
                chart.draw_series(LineSeries::new(seg, colour.stroke_width(2)))?;
            }
        }
        Ok(())
    }
}
