//! Colours: fixed ones for the series of a run, and a stable colour per policy label.
//!
//! A policy's colour is its position in the order labels were first registered (the
//! sweep's grid order), so the same policy has the same colour in every chart of a
//! folder. The categorical colours are Okabe and Ito's colour-blind-safe set, then
//! Tableau's, without yellow (too pale on white) and grey (kept for reference lines).

use plotters::style::RGBColor;

/// Logical arrivals per second.
pub(crate) const OFFERED: RGBColor = RGBColor(64, 64, 64);
/// Attempts arriving at the dependency.
pub(crate) const INBOUND: RGBColor = RGBColor(230, 159, 0);
/// Logical successes per second.
pub(crate) const GOODPUT: RGBColor = RGBColor(0, 114, 178);
/// The dependency's capacity.
pub(crate) const CAPACITY: RGBColor = RGBColor(190, 30, 45);
/// Success rate.
pub(crate) const SUCCESS: RGBColor = RGBColor(0, 158, 115);
/// Outage shading (drawn with transparency).
pub(crate) const OUTAGE: RGBColor = RGBColor(213, 94, 0);
/// Breaker-open periods.
pub(crate) const BREAKER: RGBColor = RGBColor(204, 121, 167);
/// Budget-exhausted periods.
pub(crate) const BUDGET: RGBColor = RGBColor(86, 180, 233);
/// Median latency.
pub(crate) const P50: RGBColor = RGBColor(0, 114, 178);
/// 99th percentile latency.
pub(crate) const P99: RGBColor = RGBColor(213, 94, 0);
/// Time to failure (purple: apart from both success percentiles).
pub(crate) const FAILURE: RGBColor = RGBColor(148, 103, 189);
/// Busy threads of a service (utilisation).
pub(crate) const THREADS: RGBColor = RGBColor(148, 103, 189);
/// A concurrency limit (a tier's `concurrency_limit`).
pub(crate) const LIMIT: RGBColor = RGBColor(190, 30, 45);
/// Reference lines (worst case, whole-run percentiles).
pub(crate) const REFERENCE: RGBColor = RGBColor(110, 110, 110);

/// Fill of a fleet's box in the service graph.
pub(crate) const FLEET_FILL: RGBColor = RGBColor(226, 226, 226);
/// Fill of a service box whose utilisation is unknown (unlimited servers).
pub(crate) const UNKNOWN_FILL: RGBColor = RGBColor(232, 238, 250);
/// Box outlines and arrows of the service graph.
pub(crate) const GRAPH_INK: RGBColor = RGBColor(80, 80, 80);

/// Service-box fills by peak utilisation: (upper bound, exclusive; fill; legend
/// label), light enough that black text stays readable on every one.
pub(crate) const UTILISATION_CLASSES: [(f64, RGBColor, &str); 4] = [
    (0.5, RGBColor(204, 235, 197), "peak utilisation < 50%"),
    (0.8, RGBColor(255, 237, 160), "peak utilisation 50-80%"),
    (0.95, RGBColor(253, 190, 120), "peak utilisation 80-95%"),
    (
        f64::INFINITY,
        RGBColor(244, 140, 120),
        "peak utilisation >= 95%",
    ),
];

/// The fill of a service box of peak utilisation `u` (a fraction).
pub(crate) fn utilisation_fill(u: Option<f64>) -> RGBColor {
    match u {
        Some(u) if u.is_finite() => UTILISATION_CLASSES
            .iter()
            .find(|(hi, _, _)| u < *hi)
            .map_or(UTILISATION_CLASSES[3].1, |c| c.1),
        _ => UNKNOWN_FILL,
    }
}

/// The swimlane's colour of each attempt outcome (`traces.csv`'s `outcome`), in
/// legend order: success green, timeouts orange, errors red, capacity refusals brown,
/// refusals before leaving in the breaker's and the budget's colours.
pub(crate) const OUTCOMES: [(&str, RGBColor); 15] = [
    ("success", SUCCESS),
    ("timeout", INBOUND),
    ("error", CAPACITY),
    ("rejected", RGBColor(140, 86, 75)),
    ("overloaded", RGBColor(140, 86, 75)),
    ("bulkhead_full", RGBColor(140, 86, 75)),
    ("pool_exhausted", RGBColor(140, 86, 75)),
    ("rate_limited", RGBColor(140, 86, 75)),
    ("priority_shed", RGBColor(140, 86, 75)),
    ("conflict", RGBColor(188, 189, 34)),
    ("deadline_exceeded", FAILURE),
    ("breaker_open", BREAKER),
    ("budget_exhausted", BUDGET),
    ("cancelled", RGBColor(150, 150, 150)),
    ("in_flight", OFFERED),
];

/// The swimlane's colour of outcome `name` (an unknown one: in flight's).
pub(crate) fn outcome_colour(name: &str) -> RGBColor {
    OUTCOMES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(OFFERED, |(_, c)| *c)
}

/// Categorical colours, in order of use.
pub(crate) const CATEGORICAL: [RGBColor; 12] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(0, 0, 0),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(51, 34, 136),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// Policy label → colour, in registration order.
#[derive(Debug, Clone, Default)]
pub(crate) struct Palette {
    labels: Vec<String>,
}

impl Palette {
    /// Gives `label` the next colour, unless it already has one.
    pub(crate) fn register(&mut self, label: &str) {
        if !self.labels.iter().any(|l| l == label) {
            self.labels.push(label.to_string());
        }
    }

    /// The colour of `label`: its registration index, or (unregistered) one picked by
    /// a hash of the text, which is still the same on every run.
    pub(crate) fn colour(&self, label: &str) -> RGBColor {
        let i = match self.labels.iter().position(|l| l == label) {
            Some(i) => i,
            None => crate::engine::rng::stream_id(label) as usize,
        };
        CATEGORICAL[i % CATEGORICAL.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_keeps_its_colour_whatever_else_is_registered_later() {
        let mut p = Palette::default();
        p.register("retries=3");
        p.register("retries=1");
        p.register("retries=3");
        let c = p.colour("retries=3");
        p.register("retries=5");
        assert_eq!(p.colour("retries=3"), c);
        assert_eq!(p.colour("retries=3"), CATEGORICAL[0]);
        assert_eq!(p.colour("retries=1"), CATEGORICAL[1]);
        assert_eq!(p.colour("unknown"), p.colour("unknown"));
    }

    #[test]
    fn every_attempt_outcome_has_its_swimlane_colour() {
        for e in crate::metrics::ordinal::End::ALL {
            assert!(OUTCOMES.iter().any(|(n, _)| *n == e.name()), "{}", e.name());
        }
        assert_eq!(outcome_colour("success"), SUCCESS);
        assert_eq!(outcome_colour("no such outcome"), OFFERED);
    }

    #[test]
    fn utilisation_classes_split_at_50_80_and_95_percent() {
        let c = |i: usize| UTILISATION_CLASSES[i].1;
        assert_eq!(utilisation_fill(Some(0.0)), c(0));
        assert_eq!(utilisation_fill(Some(0.4999)), c(0));
        assert_eq!(utilisation_fill(Some(0.5)), c(1));
        assert_eq!(utilisation_fill(Some(0.8)), c(2));
        assert_eq!(utilisation_fill(Some(0.95)), c(3));
        assert_eq!(utilisation_fill(Some(1.0)), c(3));
        assert_eq!(utilisation_fill(None), UNKNOWN_FILL);
        assert_eq!(utilisation_fill(Some(f64::NAN)), UNKNOWN_FILL);
    }
}
