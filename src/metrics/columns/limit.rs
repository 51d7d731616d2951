//! The columns of concurrency limits (a tier's `concurrency_limit`): written only when
//! a scenario (or a cell of a sweep) gives a tier a limit. The limit's columns are
//! time-weighted means over `[0, duration)` (per bucket in `timeseries.csv`), so a
//! limit that moves within a bucket shows what it held on average.

use super::*;
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;

/// `concurrency_limit_mean`.
pub(crate) const CONCURRENCY_LIMIT_MEAN: Column = measure(
    "concurrency_limit_mean",
    "requests",
    AMOUNT,
    "time-weighted mean concurrency limit of the service the fleets call, over the series; empty when it has none (only with concurrency_limit)",
);
/// `concurrency_limit_min`.
pub(crate) const CONCURRENCY_LIMIT_MIN: Column = measure(
    "concurrency_limit_min",
    "requests",
    AMOUNT,
    "least concurrency limit the service the fleets call held during the series; empty when it has none (only with concurrency_limit)",
);
/// `concurrency_limit_max`.
pub(crate) const CONCURRENCY_LIMIT_MAX: Column = measure(
    "concurrency_limit_max",
    "requests",
    AMOUNT,
    "greatest concurrency limit the service the fleets call held during the series; empty when it has none (only with concurrency_limit)",
);
/// `limit_rejected`.
pub(crate) const LIMIT_REJECTED: Column = count(
    "limit_rejected",
    "attempts the tiers' concurrency limits refused (answered rate_limited with the limit's status), summed over the tiers, drain included (only with concurrency_limit)",
);
/// The summary columns of concurrency limits.
pub(crate) const LIMIT_COLUMNS: [Column; 4] = [
    CONCURRENCY_LIMIT_MEAN,
    CONCURRENCY_LIMIT_MIN,
    CONCURRENCY_LIMIT_MAX,
    LIMIT_REJECTED,
];

/// `timeseries.csv` columns of concurrency limits.
pub(crate) const LIMIT_SERIES: [Column; 2] = [
    Column {
        name: "concurrency_limit",
        unit: "requests",
        kind: Kind::Measure,
        compared: false,
        floor: AMOUNT,
        description: "time-weighted mean concurrency limit of the service the fleets call over the bucket; empty when it has none",
    },
    Column {
        name: "limit_rejected",
        unit: "count",
        kind: Kind::Count,
        compared: false,
        floor: AMOUNT,
        description: "attempts the concurrency limits refused in the bucket (every tier with concurrency_limit)",
    },
];

/// The columns of concurrency limits.
pub(crate) const LIMIT_GROUP: Group = Group {
    name: "concurrency_limit",
    instances: Instances::Once(Scenario::uses_concurrency_limit),
    summary: &LIMIT_COLUMNS,
    cells: limit_cells,
    series: &LIMIT_SERIES,
    series_cells: limit_series_cells,
    file: None,
    note: "",
};

/// Per graph tier with a limit: `concurrency_limit_<name>_mean`, `_min`, `_max`,
/// `_rejected`.
pub(crate) const TIER_LIMIT_COLUMNS: [Column; 4] = [
    measure(
        "mean",
        "requests",
        AMOUNT,
        "time-weighted mean of this tier's concurrency limit over the series (tiers with concurrency_limit)",
    ),
    measure(
        "min",
        "requests",
        AMOUNT,
        "least concurrency limit this tier held during the series (tiers with concurrency_limit)",
    ),
    measure(
        "max",
        "requests",
        AMOUNT,
        "greatest concurrency limit this tier held during the series (tiers with concurrency_limit)",
    ),
    count(
        "rejected",
        "attempts this tier's concurrency limit refused, drain included (tiers with concurrency_limit)",
    ),
];

/// The per-tier columns of concurrency limits in a service graph.
pub(crate) const TIER_LIMIT_GROUP: Group = Group {
    name: "tier_concurrency_limit",
    instances: Instances::Named {
        prefix: "concurrency_limit_",
        names: tiers_with_limit,
    },
    summary: &TIER_LIMIT_COLUMNS,
    cells: tier_cells,
    series: &[],
    series_cells: no_series,
    file: Some(GroupFile {
        name: SERVICES_FILE,
        columns: &SERVICES_LIMIT,
        cells: tier_row,
    }),
    note: "service graphs only",
};

/// `services.csv` columns of a tier's concurrency limit, after the fixed ones: written
/// when a tier of the scenario (of a cell of a sweep) has a limit, empty for the
/// tiers without one.
pub(crate) const SERVICES_LIMIT: [Column; 2] = [
    measure(
        "concurrency_limit",
        "requests",
        AMOUNT,
        "time-weighted mean of the service's concurrency limit over the bucket; empty without one (only with concurrency_limit)",
    ),
    count(
        "limit_rejected",
        "attempts the service's concurrency limit refused in the bucket; empty without one (only with concurrency_limit)",
    ),
];

/// The `services.csv` cells of one bucket of one tier.
fn tier_row(m: &RunMetrics, row: &FileRow, out: &mut Vec<Cell>) {
    let c = m.limits.as_ref();
    match c.and_then(|c| c.tiers.get(row.service)?.as_ref().map(|t| (c, t))) {
        Some((c, t)) => out.extend([
            c.bucket_mean(row.service, row.bucket)
                .map_or(Cell::Empty, Cell::float),
            Cell::Int(t.rejected_series.get(row.bucket).copied().unwrap_or(0)),
        ]),
        None => out.extend([Cell::Empty, Cell::Empty]),
    }
}

fn tiers_with_limit(scn: &Scenario) -> Vec<String> {
    if !scn.graph {
        return Vec::new();
    }
    scn.services
        .iter()
        .filter(|s| s.capacity.concurrency_limit.is_some())
        .map(|s| s.name.clone())
        .collect()
}

/// The mean, min and max cells of tier `sv` (empty without a limit).
fn limit_of(m: &RunMetrics, sv: usize, out: &mut Vec<Cell>) {
    let c = m.limits.as_ref();
    match c.and_then(|c| c.tiers.get(sv)?.as_ref().zip(c.mean(sv))) {
        Some((t, mean)) => out.extend([
            Cell::float(mean),
            Cell::Int(u64::from(t.min)),
            Cell::Int(u64::from(t.max)),
        ]),
        None => out.extend([Cell::Empty, Cell::Empty, Cell::Empty]),
    }
}

fn limit_cells(m: &RunMetrics, _: &Scenario, _: &str, out: &mut Vec<Cell>) {
    let primary = m.limits.as_ref().map_or(0, |c| c.primary);
    limit_of(m, primary, out);
    out.push(Cell::Int(
        m.limits.as_ref().map_or(0, |c| c.total_rejected()),
    ));
}

/// A tier the run's scenario lacks, or gives no limit, has empty cells.
fn tier_cells(m: &RunMetrics, scn: &Scenario, name: &str, out: &mut Vec<Cell>) {
    let i = scn
        .services
        .iter()
        .position(|s| s.name == name && s.capacity.concurrency_limit.is_some());
    let t = i
        .zip(m.limits.as_ref())
        .and_then(|(i, c)| c.tiers[i].as_ref());
    match (i, t) {
        (Some(i), Some(t)) => {
            limit_of(m, i, out);
            out.push(Cell::Int(t.rejected));
        }
        _ => out.extend([Cell::Empty, Cell::Empty, Cell::Empty, Cell::Empty]),
    }
}

fn limit_series_cells(m: &RunMetrics, i: usize, out: &mut Vec<Cell>) {
    match m.limits.as_ref() {
        Some(c) => out.extend([
            c.bucket_mean(c.primary, i).map_or(Cell::Empty, Cell::float),
            Cell::Int(c.rejected_in(i)),
        ]),
        None => out.extend([Cell::Empty, Cell::Empty]),
    }
}
