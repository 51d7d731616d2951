//! The columns of bulkheads, connection pools and hedging (`max_concurrent`, `pool`,
//! `hedging`): written
//! only when a scenario (or a cell of a sweep) has one. Summed over every bulkhead,
//! pool and hedging layer of the scenario, fleets' and service calls' alike.

use super::*;

/// `bulkhead_full`.
pub const BULKHEAD_FULL: Column = count(
    "bulkhead_full",
    "attempts refused locally by a full bulkhead (max_concurrent; only with a bulkhead)",
);
/// `pool_exhausted`.
pub const POOL_EXHAUSTED: Column = count(
    "pool_exhausted",
    "attempts that got no pooled connection within acquire_timeout (only with a pool)",
);
/// `pool_wait_mean_ms`.
pub const POOL_WAIT_MEAN_MS: Column = measure(
    "pool_wait_mean_ms",
    "ms",
    TIME,
    "mean wait for a pooled connection, those that ran out included (only with a pool)",
);
/// `pool_wait_p99_ms`.
pub const POOL_WAIT_P99_MS: Column = measure(
    "pool_wait_p99_ms",
    "ms",
    TIME,
    "99th percentile of the waits for a pooled connection (only with a pool)",
);

/// The summary columns of a bulkhead.
pub const BULKHEAD_COLUMNS: [Column; 1] = [BULKHEAD_FULL];
/// The summary columns of a pool.
pub const POOL_COLUMNS: [Column; 3] = [POOL_EXHAUSTED, POOL_WAIT_MEAN_MS, POOL_WAIT_P99_MS];

/// `hedges`.
pub const HEDGES: Column = count(
    "hedges",
    "copies hedging layers sent after a call's first (only with hedging)",
);
/// `hedge_wins`.
pub const HEDGE_WINS: Column = count(
    "hedge_wins",
    "hedged calls whose success came from a hedge, not the first copy (only with hedging)",
);
/// `hedge_losers`.
pub const HEDGE_LOSERS: Column = count(
    "hedge_losers",
    "copies still out when their hedged call was decided: cancelled, or left running as wasted work with cancel_losers = false (only with hedging)",
);
/// The summary columns of hedging.
pub const HEDGE_COLUMNS: [Column; 3] = [HEDGES, HEDGE_WINS, HEDGE_LOSERS];

/// `pool_in_use`, the last column of `timeseries.csv` when a scenario has a pool.
pub const TS_POOL_IN_USE: Column = Column {
    name: "pool_in_use",
    unit: "connections",
    kind: Kind::Measure,
    compared: false,
    floor: AMOUNT,
    description: "time-averaged pooled connections in use, over every pool (only with a pool)",
};
