//! `phase`: the run as a trajectory in the plane (inbound load, success rate), one point
//! per bucket, joined in time order.
//!
//! A healthy system stays in one corner; a storm leaves it and comes back, drawing a
//! loop. To tell the way out from the way back, the trajectory is cut into branches
//! ([`super::trajectory`]): before, during and after the outages, or while the load
//! rises and falls. A metastable system's branches do not meet: the loop stays open.
//! In a sweep folder the chart overlays one trajectory per grid cell (replication 0).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::canvas::{
    axis_font, frame, padded, tick, tick_font, upper, Chart, DrawResult, Entry, Swatch,
};
use super::data::RunSeries;
use super::decimate::thin_trajectory;
use super::palette;
use super::trajectory::branches;

/// Branch colours, in order.
const BRANCH_COLOURS: [RGBColor; 3] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
];

/// A trajectory to draw: label, colour, points.
type Trajectory = (String, RGBColor, Vec<(f64, f64)>);

/// What the phase chart draws.
#[derive(Debug)]
pub(crate) enum PhaseInput<'a> {
    /// One run, cut into branches.
    Run(&'a RunSeries),
    /// One trajectory per labelled run (a sweep's cells), with its colour.
    Overlay(Vec<(String, RGBColor, &'a RunSeries)>),
}

/// Success rate against inbound load, as a trajectory.
#[derive(Debug)]
pub(crate) struct PhaseChart<'a> {
    /// The runs drawn.
    pub input: PhaseInput<'a>,
    /// Scenario name (for the title).
    pub scenario: &'a str,
    /// Capacity of the dependency, attempts per second.
    pub capacity: Option<f64>,
}

impl PhaseChart<'_> {
    fn lines(&self) -> Vec<Trajectory> {
        match &self.input {
            PhaseInput::Run(s) => branches(s)
                .into_iter()
                .enumerate()
                .map(|(i, b)| (b.label, BRANCH_COLOURS[i % 3], b.points))
                .collect(),
            PhaseInput::Overlay(runs) => runs
                .iter()
                .map(|(label, colour, s)| {
                    let pts = s
                        .inbound
                        .iter()
                        .zip(&s.success_rate)
                        .filter_map(|(x, y)| Some(((*x)?, (*y)?)))
                        .collect();
                    (label.clone(), *colour, pts)
                })
                .collect(),
        }
    }
}

impl Chart for PhaseChart<'_> {
    fn name(&self) -> String {
        "phase".into()
    }

    fn title(&self) -> String {
        match &self.input {
            PhaseInput::Run(s) => format!(
                "Phase portrait: success rate against inbound load: {} (run {})",
                self.scenario, s.run
            ),
            PhaseInput::Overlay(_) => format!(
                "Phase portrait: success rate against inbound load: {}",
                self.scenario
            ),
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let lines = self.lines();
        let mut legend: Vec<Entry> = lines
            .iter()
            .map(|(l, c, _)| Entry::new(l.clone(), Swatch::LineMarker(*c)))
            .collect();
        if self.capacity.is_some() {
            legend.push(Entry::new(
                "capacity (attempts/s)",
                Swatch::Dashed(palette::CAPACITY),
            ));
        }
        let area = frame(root, &self.title(), &legend)?;
        let xmax = upper(
            lines
                .iter()
                .flat_map(|(_, _, p)| p.iter().map(|q| q.0))
                .chain(self.capacity)
                .fold(0.0, f64::max),
        );
        let ylo = lines
            .iter()
            .flat_map(|(_, _, p)| p.iter().map(|q| q.1))
            .fold(1.0f64, f64::min);
        let (ylo, _) = padded(ylo.min(0.9), 1.0);
        let ylo = ylo.max(0.0);
        let mut chart = ChartBuilder::on(&area)
            .margin(5)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..xmax, ylo..1.03f64)?;
        chart
            .configure_mesh()
            .x_desc("inbound load at the dependency (attempts/s)")
            .y_desc("success rate (%)")
            .axis_desc_style(axis_font())
            .label_style(tick_font())
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| crate::metrics::format::percent_tick(*v))
            .light_line_style(RGBColor(247, 247, 247))
            .bold_line_style(RGBColor(218, 218, 218))
            .draw()?;
        if let Some(c) = self.capacity {
            chart.draw_series(DashedLineSeries::new(
                [(c, ylo), (c, 1.03)],
                8,
                5,
                palette::CAPACITY.stroke_width(2),
            ))?;
        }
        let label_font = tick_font();
        // A long trajectory draws each move between two pixel cells once.
        let width = chart.plotting_area().dim_in_pixel().0 as usize;
        for (i, (_, colour, pts)) in lines.iter().enumerate() {
            let pixel = |p: (f64, f64)| {
                let (x, y) = chart.backend_coord(&p);
                (i64::from(x), i64::from(y))
            };
            for line in thin_trajectory(pts, width, pixel) {
                chart.draw_series(LineSeries::new(
                    line.iter().copied(),
                    colour.stroke_width(2),
                ))?;
                chart.draw_series(
                    line.iter()
                        .map(|p| Circle::new(*p, 3, colour.mix(0.7).filled())),
                )?;
            }
            let single = matches!(self.input, PhaseInput::Run(_));
            if single && i == 0 {
                if let Some(p) = pts.first() {
                    chart.draw_series(std::iter::once(
                        EmptyElement::at(*p)
                            + Circle::new((0, 0), 7, BLACK.stroke_width(2))
                            + Text::new("start", (10, -18), label_font.clone()),
                    ))?;
                }
            }
            if single && i + 1 == lines.len() {
                if let Some(p) = pts.last() {
                    chart.draw_series(std::iter::once(
                        EmptyElement::at(*p)
                            + Cross::new((0, 0), 7, BLACK.stroke_width(2))
                            + Text::new("end", (10, 4), label_font.clone()),
                    ))?;
                }
            }
        }
        Ok(())
    }
}
