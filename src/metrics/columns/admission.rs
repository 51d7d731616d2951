//! The columns of server-side admission control (a tier's `admission`): written only
//! when a scenario (or a cell of a sweep) gives a tier a limiter.

use super::*;
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;
use crate::model::outcome::Class;

/// `admission_admitted`.
pub(crate) const ADMISSION_ADMITTED: Column = count(
    "admission_admitted",
    "attempts the tiers' limiters (admission) let through to their queues, summed over the tiers (only with admission)",
);
/// `admission_rejected`.
pub(crate) const ADMISSION_REJECTED: Column = count(
    "admission_rejected",
    "attempts the tiers' limiters refused (answered rate_limited), summed over the tiers (only with admission)",
);
/// `rate_limited`.
pub(crate) const RATE_LIMITED: Column = count(
    "rate_limited",
    "attempts the limiter of the service the fleets call refused, counted where they arise as `rejected` counts its full queue's refusals (only with admission)",
);
/// The summary columns of admission.
pub(crate) const ADMISSION_COLUMNS: [Column; 3] =
    [ADMISSION_ADMITTED, ADMISSION_REJECTED, RATE_LIMITED];

/// `timeseries.csv` columns of admission.
pub(crate) const ADMISSION_SERIES: [Column; 2] = [
    Column {
        name: "admitted",
        unit: "count",
        kind: Kind::Count,
        compared: false,
        floor: AMOUNT,
        description: "attempts the limiters admitted in the bucket (every tier with admission)",
    },
    Column {
        name: "rate_limited",
        unit: "count",
        kind: Kind::Count,
        compared: false,
        floor: AMOUNT,
        description: "attempts the limiters refused in the bucket (every tier with admission)",
    },
];

/// The columns of admission control.
pub(crate) const ADMISSION_GROUP: Group = Group {
    name: "admission",
    instances: Instances::Once(uses_admission),
    summary: &ADMISSION_COLUMNS,
    cells: admission_cells,
    series: &ADMISSION_SERIES,
    series_cells: admission_series_cells,
    file: None,
    note: "",
};

/// Per graph tier with a limiter: `admission_<name>_admitted`, `_rejected`.
pub(crate) const TIER_ADMISSION_COLUMNS: [Column; 2] = [
    count(
        "admitted",
        "attempts this tier's limiter let through (tiers with admission)",
    ),
    count(
        "rejected",
        "attempts this tier's limiter refused (tiers with admission)",
    ),
];

/// The per-tier columns of admission in a service graph.
pub(crate) const TIER_ADMISSION_GROUP: Group = Group {
    name: "tier_admission",
    instances: Instances::Named {
        prefix: "admission_",
        names: tiers_with_admission,
    },
    summary: &TIER_ADMISSION_COLUMNS,
    cells: tier_cells,
    series: &[],
    series_cells: no_series,
    file: None,
    note: "service graphs only",
};

fn uses_admission(scn: &Scenario) -> bool {
    scn.services.iter().any(|s| s.capacity.admission.is_some())
}

fn tiers_with_admission(scn: &Scenario) -> Vec<String> {
    if !scn.graph {
        return Vec::new();
    }
    scn.services
        .iter()
        .filter(|s| s.capacity.admission.is_some())
        .map(|s| s.name.clone())
        .collect()
}

fn admission_cells(m: &RunMetrics, _: &Scenario, _: &str, out: &mut Vec<Cell>) {
    let (a, r) = m
        .admission
        .as_ref()
        .map_or((0, 0), |c| (c.total_admitted(), c.total_limited()));
    out.extend([
        Cell::Int(a),
        Cell::Int(r),
        Cell::Int(m.totals.outcomes[Class::RateLimited as usize]),
    ]);
}

/// A tier the run's scenario lacks has empty cells.
fn tier_cells(m: &RunMetrics, scn: &Scenario, name: &str, out: &mut Vec<Cell>) {
    let i = scn.services.iter().position(|s| s.name == name);
    match i.zip(m.admission.as_ref()) {
        Some((i, c)) => out.extend([Cell::Int(c.admitted[i]), Cell::Int(c.limited[i])]),
        None => out.extend([Cell::Empty, Cell::Empty]),
    }
}

fn admission_series_cells(m: &RunMetrics, i: usize, out: &mut Vec<Cell>) {
    match m.admission.as_ref() {
        Some(c) => out.extend([
            Cell::Int(c.admitted_series.get(i).copied().unwrap_or(0)),
            Cell::Int(c.limited_series.get(i).copied().unwrap_or(0)),
        ]),
        None => out.extend([Cell::Empty, Cell::Empty]),
    }
}

/// `admission_delayed`.
pub(crate) const ADMISSION_DELAYED: Column = count(
    "admission_delayed",
    "attempts the tiers' leaky buckets (nginx limit_req) admitted with a delay, counted in admission_admitted too, summed over the tiers (only with a leaky_bucket)",
);
/// `admission_delay_mean_ms`.
pub(crate) const ADMISSION_DELAY_MEAN_MS: Column = measure(
    "admission_delay_mean_ms",
    "ms",
    TIME,
    "mean delay of the attempts the leaky buckets delayed, over all their tiers; empty when none was (only with a leaky_bucket)",
);
/// The summary columns of delaying limiters.
pub(crate) const ADMISSION_DELAY_COLUMNS: [Column; 2] =
    [ADMISSION_DELAYED, ADMISSION_DELAY_MEAN_MS];

/// The columns of limiters that delay attempts (a `leaky_bucket`).
pub(crate) const ADMISSION_DELAY_GROUP: Group = Group {
    name: "admission_delay",
    instances: Instances::Once(uses_delay),
    summary: &ADMISSION_DELAY_COLUMNS,
    cells: delay_cells,
    series: &[],
    series_cells: no_series,
    file: None,
    note: "",
};

/// Per graph tier with a leaky bucket: `admission_<name>_delayed`,
/// `admission_<name>_delay_mean_ms`.
pub(crate) const TIER_ADMISSION_DELAY_COLUMNS: [Column; 2] = [
    count(
        "delayed",
        "attempts this tier's leaky bucket admitted with a delay (tiers with a leaky_bucket)",
    ),
    measure(
        "delay_mean_ms",
        "ms",
        TIME,
        "mean delay of the attempts this tier's leaky bucket delayed; empty when none was (tiers with a leaky_bucket)",
    ),
];

/// The per-tier columns of delaying limiters in a service graph.
pub(crate) const TIER_ADMISSION_DELAY_GROUP: Group = Group {
    name: "tier_admission_delay",
    instances: Instances::Named {
        prefix: "admission_",
        names: tiers_with_delay,
    },
    summary: &TIER_ADMISSION_DELAY_COLUMNS,
    cells: tier_delay_cells,
    series: &[],
    series_cells: no_series,
    file: None,
    note: "service graphs only",
};

fn delays(s: &crate::model::config::ServiceConfig) -> bool {
    s.capacity.admission.is_some_and(|a| a.delays())
}

fn uses_delay(scn: &Scenario) -> bool {
    scn.services.iter().any(delays)
}

fn tiers_with_delay(scn: &Scenario) -> Vec<String> {
    if !scn.graph {
        return Vec::new();
    }
    scn.services
        .iter()
        .filter(|s| delays(s))
        .map(|s| s.name.clone())
        .collect()
}

fn delay_cells(m: &RunMetrics, scn: &Scenario, _: &str, out: &mut Vec<Cell>) {
    match m.admission.as_ref() {
        Some(c) => out.extend([
            Cell::Int(c.total_delayed()),
            c.mean_delay_ms(|i| delays(&scn.services[i]))
                .map_or(Cell::Empty, Cell::float),
        ]),
        None => out.extend([Cell::Empty, Cell::Empty]),
    }
}

/// A tier the run's scenario lacks has empty cells.
fn tier_delay_cells(m: &RunMetrics, scn: &Scenario, name: &str, out: &mut Vec<Cell>) {
    let i = scn.services.iter().position(|s| s.name == name);
    match i.zip(m.admission.as_ref()) {
        Some((i, c)) => out.extend([
            Cell::Int(c.delayed[i]),
            c.mean_delay_ms(|j| j == i).map_or(Cell::Empty, Cell::float),
        ]),
        None => out.extend([Cell::Empty, Cell::Empty]),
    }
}
