//! `timeseries`: offered, inbound and goodput per second against time, the success rate
//! on a second axis, outages shaded, the dependency's capacity as a dashed line, and
//! strips along the top where breakers were open or budgets denied retries.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::canvas::{axis_font, frame, tick, tick_font, upper, Chart, DrawResult, Entry, Swatch};
use super::data::RunSeries;
use super::decimate::{decimate_gapped, merge_spans};
use super::palette;

/// Top of the success-rate axis: room above 100% for the breaker and budget strips.
const RATE_TOP: f64 = 1.25;
/// Budget-exhausted strip, in success-rate units.
const BUDGET_STRIP: (f64, f64) = (1.08, 1.14);
/// Breaker-open strip, in success-rate units.
const BREAKER_STRIP: (f64, f64) = (1.17, 1.23);

/// The traffic of one run over time.
#[derive(Debug)]
pub(crate) struct TimeseriesChart<'a> {
    /// The run drawn.
    pub series: &'a RunSeries,
    /// Scenario name (for the title).
    pub scenario: &'a str,
    /// Capacity of the dependency, attempts per second.
    pub capacity: Option<f64>,
}

impl TimeseriesChart<'_> {
    fn outage_spans(&self) -> Vec<(f64, f64)> {
        self.series.outage_spans()
    }

    fn breaker_spans(&self) -> Vec<(f64, f64)> {
        self.series.breaker_spans()
    }

    fn budget_spans(&self) -> Vec<(f64, f64)> {
        self.series.budget_spans()
    }

    fn legend(&self) -> Vec<Entry> {
        let mut l = vec![
            Entry::new("offered (requests/s)", Swatch::Line(palette::OFFERED)),
            Entry::new("inbound (attempts/s)", Swatch::Line(palette::INBOUND)),
            Entry::new("goodput (successes/s)", Swatch::Line(palette::GOODPUT)),
        ];
        if self.capacity.is_some() {
            l.push(Entry::new(
                "capacity (attempts/s)",
                Swatch::Dashed(palette::CAPACITY),
            ));
        }
        l.push(Entry::new(
            "success rate (right axis)",
            Swatch::Line(palette::SUCCESS),
        ));
        if !self.outage_spans().is_empty() {
            l.push(Entry::new("outage", Swatch::Band(palette::OUTAGE, 0.15)));
        }
        if !self.breaker_spans().is_empty() {
            l.push(Entry::new(
                "breaker open",
                Swatch::Band(palette::BREAKER, 1.0),
            ));
        }
        if !self.budget_spans().is_empty() {
            l.push(Entry::new(
                "retry budget exhausted",
                Swatch::Band(palette::BUDGET, 1.0),
            ));
        }
        l
    }
}

impl Chart for TimeseriesChart<'_> {
    fn name(&self) -> String {
        "timeseries".into()
    }

    fn title(&self) -> String {
        format!(
            "Traffic over time: {} (run {})",
            self.scenario, self.series.run
        )
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let s = self.series;
        let area = frame(root, &self.title(), &self.legend())?;
        let end = s.end();
        let max = [&s.offered, &s.inbound, &s.goodput]
            .iter()
            .flat_map(|c| c.iter().flatten())
            .copied()
            .chain(self.capacity)
            .fold(0.0f64, f64::max);
        let ymax = upper(max);
        let mut chart = ChartBuilder::on(&area)
            .margin(5)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .right_y_label_area_size(70)
            .build_cartesian_2d(0f64..end, 0f64..ymax)?
            .set_secondary_coord(0f64..end, 0f64..RATE_TOP);
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("rate (per second)")
            .axis_desc_style(axis_font())
            .label_style(tick_font())
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(RGBColor(247, 247, 247))
            .bold_line_style(RGBColor(218, 218, 218))
            .draw()?;
        chart
            .configure_secondary_axes()
            .y_desc("success rate (%)")
            .axis_desc_style(axis_font())
            .label_style(tick_font())
            .y_label_formatter(&|v| {
                if *v <= 1.0 + 1e-9 {
                    crate::metrics::format::percent_tick(*v)
                } else {
                    String::new()
                }
            })
            .draw()?;
        // Pixel columns of the plot: long series are cut to a few points per column.
        let width = chart.plotting_area().dim_in_pixel().0 as usize;
        for (a, b) in merge_spans(&self.outage_spans(), 0.0, end, width) {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(a, 0.0), (b, ymax)],
                palette::OUTAGE.mix(0.15).filled(),
            )))?;
        }
        for (spans, (lo, hi), colour) in [
            (self.breaker_spans(), BREAKER_STRIP, palette::BREAKER),
            (self.budget_spans(), BUDGET_STRIP, palette::BUDGET),
        ] {
            let spans = merge_spans(&spans, 0.0, end, width);
            chart.draw_secondary_series(
                spans
                    .into_iter()
                    .map(|(a, b)| Rectangle::new([(a, lo), (b, hi)], colour.filled())),
            )?;
        }
        if let Some(c) = self.capacity {
            chart.draw_series(DashedLineSeries::new(
                [(0.0, c), (end, c)],
                8,
                5,
                palette::CAPACITY.stroke_width(2),
            ))?;
        }
        // Bucket rates are drawn at the bucket's middle.
        let mid = s.midpoints();
        for (col, colour) in [
            (&s.offered, palette::OFFERED),
            (&s.inbound, palette::INBOUND),
            (&s.goodput, palette::GOODPUT),
        ] {
            let column = |x: f64| i64::from(chart.backend_coord(&(x, 0.0)).0);
            for seg in decimate_gapped(&mid, col, width, column) {
                chart.draw_series(LineSeries::new(seg, colour.stroke_width(2)))?;
            }
        }
        let column = |x: f64| i64::from(chart.backend_coord(&(x, 0.0)).0);
        for seg in decimate_gapped(&mid, &s.success_rate, width, column) {
            chart.draw_secondary_series(LineSeries::new(seg, palette::SUCCESS.stroke_width(2)))?;
        }
        Ok(())
    }
}
