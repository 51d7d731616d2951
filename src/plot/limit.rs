//! `limit`: the concurrency limit of the service the fleets call over time, drawn
//! when `timeseries.csv` has one (`concurrency_limit`). For one run, the limit (its
//! time-weighted mean per bucket) against the requests the service holds, queued or in
//! service (what the limit counts), and on the right axis the attempts it refused per
//! second; in a sweep folder, one limit line per grid cell, so the kinds can be
//! compared over the same storm. Outages are shaded.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::canvas::{axis_font, frame, tick, tick_font, upper, Chart, DrawResult, Entry, Swatch};
use super::data::RunSeries;
use super::decimate::{decimate_gapped, merge_spans};
use super::palette;

/// The limit of one run, or of several labelled runs.
#[derive(Debug)]
pub(crate) struct LimitChart<'a> {
    /// `(label, colour, series)`, only runs with a limit; one entry for a run folder.
    pub runs: Vec<(String, RGBColor, &'a RunSeries)>,
    /// Scenario name (for the title).
    pub scenario: &'a str,
    /// Whether the runs are a sweep's cells (each labelled), not one run.
    overlay: bool,
}

impl<'a> LimitChart<'a> {
    /// The chart of `runs` that have a limit (a sweep's cells when `overlay`), `None`
    /// when none has.
    pub(crate) fn new(
        runs: Vec<(String, RGBColor, &'a RunSeries)>,
        scenario: &'a str,
        overlay: bool,
    ) -> Option<LimitChart<'a>> {
        let runs: Vec<_> = runs.into_iter().filter(|(_, _, s)| s.has_limit()).collect();
        (!runs.is_empty()).then_some(LimitChart {
            runs,
            scenario,
            overlay,
        })
    }

    fn single(&self) -> Option<&RunSeries> {
        match self.runs.as_slice() {
            [(_, _, s)] if !self.overlay => Some(s),
            _ => None,
        }
    }

    /// The refusals of a single run as a rate per second.
    fn refused_per_s(s: &RunSeries) -> Vec<Option<f64>> {
        let b = s.bucket();
        s.limit_rejected.iter().map(|c| c.map(|c| c / b)).collect()
    }

    /// What the report says under the chart.
    pub(crate) fn caption(&self) -> &'static str {
        if self.single().is_some() {
            "The limit against the requests the service holds: where the two meet the limit refuses (right axis); an adaptive limit that falls while the load rises is shedding, one that rises with a queue behind it is not."
        } else {
            "The limit each cell's policy settled on over the same storm: a limit pinned at its floor sheds hard, one that climbs with the queue does not protect the service."
        }
    }
}

impl Chart for LimitChart<'_> {
    fn name(&self) -> String {
        "limit".into()
    }

    fn title(&self) -> String {
        let which = match self.single() {
            Some(s) => format!(" (run {})", s.run),
            None => String::new(),
        };
        format!("Concurrency limit over time: {}{which}", self.scenario)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let single = self.single();
        let mut legend: Vec<Entry> = match single {
            Some(_) => vec![
                Entry::new("concurrency limit", Swatch::Line(palette::LIMIT)),
                Entry::new(
                    "held: queued + in service",
                    Swatch::Line(palette::REFERENCE),
                ),
                Entry::new(
                    "refused (per s, right axis)",
                    Swatch::Dashed(palette::INBOUND),
                ),
            ],
            None => self
                .runs
                .iter()
                .map(|(l, c, _)| Entry::new(l.clone(), Swatch::Line(*c)))
                .collect(),
        };
        let outages = self.runs[0].2.outage_spans();
        if !outages.is_empty() {
            legend.push(Entry::new("outage", Swatch::Band(palette::OUTAGE, 0.15)));
        }
        let area = frame(root, &self.title(), &legend)?;
        let end = self
            .runs
            .iter()
            .map(|(_, _, s)| s.end())
            .fold(0.0, f64::max);
        let most = |ys: &mut dyn Iterator<Item = &Option<f64>>| {
            upper(ys.flatten().copied().fold(0.0, f64::max))
        };
        let ymax = match single {
            Some(s) => most(&mut s.limit.iter().chain(&s.in_system)),
            None => most(&mut self.runs.iter().flat_map(|(_, _, s)| s.limit.iter())),
        };
        let refused = single.map(LimitChart::refused_per_s);
        let rmax = refused.as_ref().map_or(1.0, |r| most(&mut r.iter()));
        let mut chart = ChartBuilder::on(&area)
            .margin(5)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .right_y_label_area_size(if single.is_some() { 70 } else { 0 })
            .build_cartesian_2d(0f64..end, 0f64..ymax)?
            .set_secondary_coord(0f64..end, 0f64..rmax);
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("requests")
            .axis_desc_style(axis_font())
            .label_style(tick_font())
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .light_line_style(RGBColor(247, 247, 247))
            .bold_line_style(RGBColor(218, 218, 218))
            .draw()?;
        if single.is_some() {
            chart
                .configure_secondary_axes()
                .y_desc("refused per second")
                .axis_desc_style(axis_font())
                .label_style(tick_font())
                .y_label_formatter(&|v| tick(*v))
                .draw()?;
        }
        let width = chart.plotting_area().dim_in_pixel().0 as usize;
        for (a, b) in merge_spans(&outages, 0.0, end, width) {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(a, 0.0), (b, ymax)],
                palette::OUTAGE.mix(0.15).filled(),
            )))?;
        }
        let column = |x: f64| i64::from(chart.backend_coord(&(x, 0.0)).0);
        let mut lines = Vec::new();
        let mut dashed = Vec::new();
        match single {
            Some(s) => {
                let mid = s.midpoints();
                lines.push((
                    decimate_gapped(&mid, &s.in_system, width, column),
                    palette::REFERENCE,
                ));
                lines.push((
                    decimate_gapped(&mid, &s.limit, width, column),
                    palette::LIMIT,
                ));
                if let Some(r) = &refused {
                    dashed = decimate_gapped(&mid, r, width, column);
                }
            }
            None => {
                for (_, colour, s) in &self.runs {
                    let mid = s.midpoints();
                    lines.push((decimate_gapped(&mid, &s.limit, width, column), *colour));
                }
            }
        }
        for (segs, colour) in lines {
            for seg in segs {
                chart.draw_series(LineSeries::new(seg, colour.stroke_width(2)))?;
            }
        }
        for seg in dashed {
            chart.draw_secondary_series(DashedLineSeries::new(
                seg,
                6,
                4,
                palette::INBOUND.stroke_width(2),
            ))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_runs_with_a_limit_are_drawn_and_refusals_become_rates() {
        let with = RunSeries {
            t: vec![0.0, 0.5],
            limit: vec![Some(20.0), Some(18.5)],
            limit_rejected: vec![Some(3.0), None],
            ..RunSeries::default()
        };
        let without = RunSeries {
            t: vec![0.0, 0.5],
            limit: vec![None, None],
            ..RunSeries::default()
        };
        assert!(LimitChart::new(vec![("".into(), palette::LIMIT, &without)], "s", false).is_none());
        let c = LimitChart::new(
            vec![
                ("fifo".into(), palette::LIMIT, &without),
                ("aimd".into(), palette::LIMIT, &with),
            ],
            "s",
            true,
        )
        .unwrap();
        assert_eq!(c.runs.len(), 1);
        assert!(
            c.single().is_none(),
            "a sweep's one limited cell is still labelled"
        );
        assert_eq!(LimitChart::refused_per_s(&with), vec![Some(6.0), None]);
    }
}
