//! `herd`: attempt arrivals at the dependency in fine buckets (10 ms by default) around
//! the end of an outage or a burst: the thundering herd, with what the dependency can
//! take per fine bucket for scale. In a sweep folder, one line per grid cell.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::canvas::{axis_font, frame, tick, tick_font, upper, Chart, DrawResult, Entry, Swatch};
use super::data::HerdSeries;
use super::decimate::{decimate, merge_spans};
use super::palette;

/// The herd of one run, or of several labelled runs.
#[derive(Debug)]
pub(crate) struct HerdChart<'a> {
    /// `(label, colour, series)`; one entry for a run folder.
    pub runs: Vec<(String, RGBColor, &'a HerdSeries)>,
    /// Outage spans `[start, end)` in seconds (from the time series), to shade.
    pub outages: Vec<(f64, f64)>,
    /// Scenario name (for the title).
    pub scenario: &'a str,
    /// Capacity of the dependency, attempts per second.
    pub capacity: Option<f64>,
}

impl HerdChart<'_> {
    fn width(&self) -> f64 {
        self.runs.first().map_or(0.01, |(_, _, h)| h.width())
    }

    fn width_label(&self) -> String {
        let ms = self.width() * 1000.0;
        format!("{} ms", tick(ms))
    }

    fn span(&self) -> (f64, f64) {
        let lo = self
            .runs
            .iter()
            .filter_map(|(_, _, h)| h.t.first())
            .copied()
            .fold(f64::MAX, f64::min);
        let hi = self
            .runs
            .iter()
            .filter_map(|(_, _, h)| h.t.last().map(|t| t + h.width()))
            .fold(f64::MIN, f64::max);
        if lo < hi {
            (lo, hi)
        } else {
            (0.0, 1.0)
        }
    }
}

impl Chart for HerdChart<'_> {
    fn name(&self) -> String {
        "herd".into()
    }

    fn title(&self) -> String {
        let which = match self.runs.as_slice() {
            [(_, _, h)] => format!(" (run {})", h.run),
            _ => String::new(),
        };
        format!(
            "Thundering herd: attempt arrivals per {}: {}{}",
            self.width_label(),
            self.scenario,
            which
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let single = self.runs.len() == 1;
        let per_bucket = self.capacity.map(|c| c * self.width());
        let mut legend: Vec<Entry> = self
            .runs
            .iter()
            .map(|(l, c, _)| Entry::new(l.clone(), Swatch::Line(*c)))
            .collect();
        if let Some(cap) = per_bucket {
            legend.push(Entry::new(
                format!(
                    "capacity ({} attempts per {})",
                    tick(cap),
                    self.width_label()
                ),
                Swatch::Dashed(palette::CAPACITY),
            ));
        }
        let (lo, hi) = self.span();
        let visible = |a: f64, b: f64| b > lo && a < hi;
        if self.outages.iter().any(|(a, b)| visible(*a, *b)) {
            legend.push(Entry::new("outage", Swatch::Band(palette::OUTAGE, 0.15)));
        }
        let area = frame(root, &self.title(), &legend)?;
        let ymax = upper(
            self.runs
                .iter()
                .flat_map(|(_, _, h)| h.inbound.iter().copied())
                .chain(per_bucket)
                .fold(0.0, f64::max),
        );
        let mut chart = ChartBuilder::on(&area)
            .margin(5)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(lo..hi, 0f64..ymax)?;
        let y_desc = format!("attempts arriving per {}", self.width_label());
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc(y_desc)
            .axis_desc_style(axis_font())
            .label_style(tick_font())
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(RGBColor(247, 247, 247))
            .bold_line_style(RGBColor(218, 218, 218))
            .draw()?;
        // Pixel columns of the plot: long series are cut to a few points per column.
        let width = chart.plotting_area().dim_in_pixel().0 as usize;
        for (a, b) in &merge_spans(&self.outages, lo, hi, width) {
            if visible(*a, *b) {
                chart.draw_series(std::iter::once(Rectangle::new(
                    [(a.max(lo), 0.0), (b.min(hi), ymax)],
                    palette::OUTAGE.mix(0.15).filled(),
                )))?;
            }
        }
        for (_, colour, h) in &self.runs {
            let w = h.width();
            // A step line: each fine bucket is flat over its width.
            let steps: Vec<(f64, f64)> =
                h.t.iter()
                    .zip(&h.inbound)
                    .flat_map(|(t, v)| [(*t, *v), (t + w, *v)])
                    .collect();
            let column = |x: f64| i64::from(chart.backend_coord(&(x, 0.0)).0);
            let steps = decimate(&steps, width, column);
            if single {
                let mut poly = steps.clone();
                if let (Some(first), Some(last)) = (steps.first(), steps.last()) {
                    poly.push((last.0, 0.0));
                    poly.push((first.0, 0.0));
                }
                chart.draw_series(std::iter::once(Polygon::new(
                    poly,
                    colour.mix(0.25).filled(),
                )))?;
            }
            chart.draw_series(LineSeries::new(steps, colour.stroke_width(1)))?;
        }
        if let Some(cap) = per_bucket {
            chart.draw_series(DashedLineSeries::new(
                [(lo, cap), (hi, cap)],
                8,
                5,
                palette::CAPACITY.stroke_width(2),
            ))?;
        }
        Ok(())
    }
}
