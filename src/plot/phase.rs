//! `phase`: the run as a trajectory in the plane (inbound load, success rate), one point
//! per bucket, joined in time order.
//!
//! A healthy system stays in one corner; a storm leaves it and comes back, drawing a
//! loop. To tell the way out from the way back, the trajectory is cut into branches:
//! before, during and after the outages when there are outages; otherwise, when the
//! offered load moves (a load profile swept up then down), while the load rises and
//! while it falls. A metastable system's branches do not meet: the loop stays open.
//! In a sweep folder the chart overlays one trajectory per grid cell (replication 0).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::canvas::{
    axis_font, frame, padded, tick, tick_font, upper, Chart, DrawResult, Entry, Swatch,
};
use super::data::RunSeries;
use super::decimate::thin_trajectory;
use super::palette;

/// Branch colours, in order.
const BRANCH_COLOURS: [RGBColor; 3] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
];

/// Smoothed offered load must move by this factor to count as a load profile.
const PROFILE_RATIO: f64 = 1.25;

/// A labelled trajectory.
#[derive(Debug, Clone)]
pub(crate) struct Branch {
    /// Legend label.
    pub label: String,
    /// Points `(inbound/s, success rate)` in time order.
    pub points: Vec<(f64, f64)>,
}

/// Cuts a run's trajectory into branches (see the module docs); every branch but the
/// first starts at the last point of the one before, so the path stays joined.
pub(crate) fn branches(s: &RunSeries) -> Vec<Branch> {
    let n = s.t.len();
    let point = |i: usize| match (s.inbound[i], s.success_rate[i]) {
        (Some(x), Some(y)) => Some((x, y)),
        _ => None,
    };
    let in_outage: Vec<bool> = (0..n).map(|i| s.outage[i].unwrap_or(0.0) > 0.0).collect();
    // Branch index of each bucket.
    let (labels, branch_of): (Vec<&str>, Vec<usize>) = if let (Some(first), Some(last)) = (
        in_outage.iter().position(|b| *b),
        in_outage.iter().rposition(|b| *b),
    ) {
        (
            vec!["before the outage", "during the outage", "after the outage"],
            (0..n)
                .map(|i| {
                    if i < first {
                        0
                    } else if i <= last {
                        1
                    } else {
                        2
                    }
                })
                .collect(),
        )
    } else if let Some(peak) = load_peak(&s.offered) {
        (
            vec!["load rising", "load falling"],
            (0..n).map(|i| usize::from(i > peak)).collect(),
        )
    } else {
        (vec!["trajectory"], vec![0; n])
    };
    let mut out: Vec<Branch> = labels
        .iter()
        .map(|l| Branch {
            label: (*l).to_string(),
            points: Vec::new(),
        })
        .collect();
    let mut last: Option<(usize, (f64, f64))> = None;
    for (i, &b) in branch_of.iter().enumerate() {
        let Some(p) = point(i) else { continue };
        if let Some((lb, lp)) = last {
            if lb != b && out[b].points.is_empty() {
                out[b].points.push(lp);
            }
        }
        out[b].points.push(p);
        last = Some((b, p));
    }
    out.retain(|b| !b.points.is_empty());
    out
}

/// The bucket where a moving load peaks, when the smoothed offered load rises by
/// [`PROFILE_RATIO`] to the peak and falls by it after (a load swept up then down).
fn load_peak(offered: &[Option<f64>]) -> Option<usize> {
    let n = offered.len();
    if n < 5 {
        return None;
    }
    let w = (n / 20).clamp(1, 5);
    let smooth: Vec<Option<f64>> = (0..n)
        .map(|i| {
            let lo = i.saturating_sub(w);
            let hi = (i + w + 1).min(n);
            let xs: Vec<f64> = offered[lo..hi].iter().flatten().copied().collect();
            (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
        })
        .collect();
    let (peak, top) = smooth
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .fold(None, |m: Option<(usize, f64)>, (i, v)| match m {
            Some((_, mv)) if mv >= v => m,
            _ => Some((i, v)),
        })?;
    let min_before = smooth[..=peak]
        .iter()
        .flatten()
        .copied()
        .fold(f64::MAX, f64::min);
    let min_after = smooth[peak..]
        .iter()
        .flatten()
        .copied()
        .fold(f64::MAX, f64::min);
    let moves = |m: f64| m > 0.0 && top / m >= PROFILE_RATIO;
    (moves(min_before) && moves(min_after)).then_some(peak)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn series(offered: &[f64], outage: &[f64]) -> RunSeries {
        let n = offered.len();
        RunSeries {
            t: (0..n).map(|i| i as f64).collect(),
            offered: offered.iter().map(|v| Some(*v)).collect(),
            inbound: offered.iter().map(|v| Some(*v)).collect(),
            success_rate: vec![Some(1.0); n],
            outage: outage.iter().map(|v| Some(*v)).collect(),
            ..RunSeries::default()
        }
    }

    #[test]
    fn an_outage_cuts_the_trajectory_into_three_joined_branches() {
        let s = series(&[1.0; 6], &[0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
        let b = branches(&s);
        let labels: Vec<&str> = b.iter().map(|b| b.label.as_str()).collect();
        assert_eq!(
            labels,
            ["before the outage", "during the outage", "after the outage"]
        );
        assert_eq!(b[0].points.len(), 2);
        // Each later branch starts where the one before ended.
        assert_eq!(b[1].points.len(), 3);
        assert_eq!(b[2].points.len(), 3);
    }

    #[test]
    fn a_load_swept_up_then_down_gives_rising_and_falling_branches() {
        let up: Vec<f64> = (0..20).map(|i| 100.0 + 50.0 * i as f64).collect();
        let mut load = up.clone();
        load.extend(up.iter().rev());
        let s = series(&load, &vec![0.0; load.len()]);
        let b = branches(&s);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].label, "load rising");
        assert_eq!(b[1].label, "load falling");
    }

    #[test]
    fn a_steady_load_is_one_trajectory() {
        let s = series(&[700.0, 690.0, 710.0, 705.0, 695.0, 700.0], &[0.0; 6]);
        let b = branches(&s);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].label, "trajectory");
    }
}
