//! The columns of the queue policies that drop (a tier's `queue_policy` of kind
//! `codel` or `codel_timeout`): written only when a scenario (or a cell of a sweep)
//! gives a tier one.

use super::*;
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;
use crate::model::queue_policy::QueuePolicyConfig;

/// `codel_dropped`.
pub(crate) const CODEL_DROPPED: Column = count(
    "codel_dropped",
    "attempts the tiers' CoDel (queue_policy codel or codel_timeout) dropped at dequeue after waiting too long, answered as the full queue answers (rejected, or overloaded), summed over the tiers (only with such a queue_policy)",
);

/// The summary columns of CoDel.
pub(crate) const CODEL_COLUMNS: [Column; 1] = [CODEL_DROPPED];

/// `timeseries.csv` columns of CoDel.
pub(crate) const CODEL_SERIES: [Column; 1] = [Column {
    name: "codel_dropped",
    unit: "count",
    kind: Kind::Count,
    compared: false,
    floor: AMOUNT,
    description: "attempts the tiers' CoDel dropped in the bucket (every tier with a codel or codel_timeout queue_policy)",
}];

/// The columns of the queue policies that drop.
pub(crate) const CODEL_GROUP: Group = Group {
    name: "codel",
    instances: Instances::Once(uses_codel),
    summary: &CODEL_COLUMNS,
    cells: codel_cells,
    series: &CODEL_SERIES,
    series_cells: codel_series_cells,
    file: None,
    note: "",
};

/// Per graph tier with a dropping queue policy: `service_<name>_codel_dropped`.
pub(crate) const TIER_CODEL_COLUMNS: [Column; 1] = [count(
    "codel_dropped",
    "attempts this tier's CoDel dropped (tiers with a codel or codel_timeout queue_policy)",
)];

/// The per-tier columns of CoDel in a service graph.
pub(crate) const TIER_CODEL_GROUP: Group = Group {
    name: "tier_codel",
    instances: Instances::Named {
        prefix: "service_",
        names: tiers_with_codel,
    },
    summary: &TIER_CODEL_COLUMNS,
    cells: tier_cells,
    series: &[],
    series_cells: no_series,
    file: None,
    note: "service graphs only",
};

fn uses_codel(scn: &Scenario) -> bool {
    scn.services.iter().any(QueuePolicyConfig::drops_at)
}

fn tiers_with_codel(scn: &Scenario) -> Vec<String> {
    if !scn.graph {
        return Vec::new();
    }
    scn.services
        .iter()
        .filter(|s| QueuePolicyConfig::drops_at(s))
        .map(|s| s.name.clone())
        .collect()
}

fn codel_cells(m: &RunMetrics, _: &Scenario, _: &str, out: &mut Vec<Cell>) {
    out.push(Cell::Int(m.codel.as_ref().map_or(0, |c| c.total())));
}

/// A tier the run's scenario lacks, or gives no dropping policy, has an empty cell.
fn tier_cells(m: &RunMetrics, scn: &Scenario, name: &str, out: &mut Vec<Cell>) {
    let i = scn
        .services
        .iter()
        .position(|s| s.name == name && QueuePolicyConfig::drops_at(s));
    out.push(match i.zip(m.codel.as_ref()) {
        Some((i, c)) => Cell::Int(c.per_tier[i]),
        None => Cell::Empty,
    });
}

fn codel_series_cells(m: &RunMetrics, i: usize, out: &mut Vec<Cell>) {
    out.push(match m.codel.as_ref() {
        Some(c) => Cell::Int(c.series.get(i).copied().unwrap_or(0)),
        None => Cell::Empty,
    });
}
