//! The columns of bulkheads and connection pools (`max_concurrent`, `pool`): written
//! only when a scenario (or a cell of a sweep) has one. Summed over every bulkhead and
//! pool of the scenario, fleets' and service calls' alike.

use super::*;
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;

/// `bulkhead_full`.
pub(crate) const BULKHEAD_FULL: Column = count(
    "bulkhead_full",
    "attempts refused locally by a full bulkhead (max_concurrent; only with a bulkhead)",
);
/// `pool_exhausted`.
pub(crate) const POOL_EXHAUSTED: Column = count(
    "pool_exhausted",
    "attempts that got no pooled connection within acquire_timeout (only with a pool)",
);
/// `pool_wait_mean_ms`.
pub(crate) const POOL_WAIT_MEAN_MS: Column = measure(
    "pool_wait_mean_ms",
    "ms",
    TIME,
    "mean wait for a pooled connection, those that ran out included (only with a pool)",
);
/// `pool_wait_p99_ms`.
pub(crate) const POOL_WAIT_P99_MS: Column = measure(
    "pool_wait_p99_ms",
    "ms",
    TIME,
    "99th percentile of the waits for a pooled connection (only with a pool)",
);

/// The summary columns of a bulkhead.
pub(crate) const BULKHEAD_COLUMNS: [Column; 1] = [BULKHEAD_FULL];
/// The summary columns of a pool.
pub(crate) const POOL_COLUMNS: [Column; 3] = [POOL_EXHAUSTED, POOL_WAIT_MEAN_MS, POOL_WAIT_P99_MS];

/// `pool_in_use`, the last column of `timeseries.csv` when a scenario has a pool.
pub(crate) const TS_POOL_IN_USE: Column = Column {
    name: "pool_in_use",
    unit: "connections",
    kind: Kind::Measure,
    compared: false,
    floor: AMOUNT,
    description: "time-averaged pooled connections in use, over every pool (only with a pool)",
};

/// The column of bulkheads.
pub(crate) const BULKHEAD_GROUP: Group = Group {
    name: "bulkheads",
    instances: Instances::Once(Scenario::uses_bulkheads),
    summary: &BULKHEAD_COLUMNS,
    cells: bulkhead_cells,
    series: &[],
    series_cells: no_series,
    file: None,
    note: "",
};

fn bulkhead_cells(m: &RunMetrics, _: &Scenario, _: &str, out: &mut Vec<Cell>) {
    out.push(
        m.guards
            .as_ref()
            .map_or(Cell::Empty, |g| Cell::Int(g.bulkhead_full)),
    );
}

/// The columns of connection pools: in `summary.csv`, and `pool_in_use` in
/// `timeseries.csv`.
pub(crate) const POOL_GROUP: Group = Group {
    name: "pools",
    instances: Instances::Once(Scenario::uses_pools),
    summary: &POOL_COLUMNS,
    cells: pool_cells,
    series: &[TS_POOL_IN_USE],
    series_cells: pool_series_cells,
    file: None,
    note: "",
};

fn pool_cells(m: &RunMetrics, _: &Scenario, _: &str, out: &mut Vec<Cell>) {
    match &m.guards {
        Some(g) => out.extend([
            Cell::Int(g.pool_exhausted),
            Cell::ratio(g.pool_wait_ns as f64 / 1e6, g.pool_waits as f64),
            Cell::quantile_ms(&g.pool_wait, 0.99),
        ]),
        None => out.resize(out.len() + POOL_COLUMNS.len(), Cell::Empty),
    }
}

fn pool_series_cells(m: &RunMetrics, i: usize, out: &mut Vec<Cell>) {
    let mean = m
        .guards
        .as_ref()
        .filter(|g| !g.in_use_area.is_empty())
        .zip(m.buckets.get(i))
        .and_then(|(g, b)| g.in_use_mean(i, m.width(b)));
    out.push(mean.map_or(Cell::Empty, Cell::float));
}
