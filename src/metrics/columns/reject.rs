//! The columns of rejection cost (a tier's `reject_cost`): the server time spent on
//! rejections, written only when a scenario (or a cell of a sweep) gives a tier a
//! `reject_cost` above 0. `services.csv`'s `rejecting` is always there (0 without it).

use super::*;
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;

/// `reject_busy_fraction`, and its per-tier template.
pub(crate) const REJECT_BUSY_FRACTION: Column = measure(
    "reject_busy_fraction",
    "fraction",
    FRACTION,
    "server time of the service the fleets call spent rejecting (reject_cost) / its server time, over the series (only with reject_cost; empty with unlimited servers)",
);

/// The summary columns of rejection cost.
pub(crate) const REJECT_COLUMNS: [Column; 1] = [REJECT_BUSY_FRACTION];

/// `timeseries.csv` columns of rejection cost.
pub(crate) const REJECT_SERIES: [Column; 1] = [Column {
    name: "rejecting",
    unit: "threads",
    kind: Kind::Measure,
    compared: false,
    floor: AMOUNT,
    description:
        "time-averaged servers of the service the fleets call busy rejecting (reject_cost)",
}];

/// The columns of rejection cost.
pub(crate) const REJECT_GROUP: Group = Group {
    name: "reject_cost",
    instances: Instances::Once(Scenario::uses_reject_cost),
    summary: &REJECT_COLUMNS,
    cells: reject_cells,
    series: &REJECT_SERIES,
    series_cells: reject_series_cells,
    file: None,
    note: "",
};

/// Per graph tier with a `reject_cost`: `service_<name>_reject_busy_fraction`.
pub(crate) const TIER_REJECT_COLUMNS: [Column; 1] = [measure(
    "reject_busy_fraction",
    "fraction",
    FRACTION,
    "this tier's server time spent rejecting / its server time, over the series (tiers with reject_cost; empty with unlimited servers)",
)];

/// The per-tier columns of rejection cost in a service graph.
pub(crate) const TIER_REJECT_GROUP: Group = Group {
    name: "tier_reject_cost",
    instances: Instances::Named {
        prefix: "service_",
        names: tiers_with_reject_cost,
    },
    summary: &TIER_REJECT_COLUMNS,
    cells: tier_cells,
    series: &[],
    series_cells: no_series,
    file: None,
    note: "service graphs only",
};

fn tiers_with_reject_cost(scn: &Scenario) -> Vec<String> {
    if !scn.graph {
        return Vec::new();
    }
    scn.services
        .iter()
        .filter(|s| s.capacity.reject_cost > 0)
        .map(|s| s.name.clone())
        .collect()
}

fn fraction(m: &RunMetrics, sv: usize) -> Cell {
    let f = m.reject_busy.as_ref().and_then(|r| r.fraction(sv));
    f.map_or(Cell::Empty, Cell::float)
}

fn reject_cells(m: &RunMetrics, _: &Scenario, _: &str, out: &mut Vec<Cell>) {
    let primary = m.reject_busy.as_ref().map_or(0, |r| r.primary);
    out.push(fraction(m, primary));
}

/// A tier the run's scenario lacks, or gives no `reject_cost`, has an empty cell.
fn tier_cells(m: &RunMetrics, scn: &Scenario, name: &str, out: &mut Vec<Cell>) {
    let i = scn
        .services
        .iter()
        .position(|s| s.name == name && s.capacity.reject_cost > 0);
    out.push(i.map_or(Cell::Empty, |i| fraction(m, i)));
}

fn reject_series_cells(m: &RunMetrics, i: usize, out: &mut Vec<Cell>) {
    out.push(
        m.reject_busy
            .as_ref()
            .map_or(Cell::Empty, |r| Cell::float(r.rejecting(r.primary, i))),
    );
}
