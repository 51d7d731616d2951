//! The columns of hedging (a layer's `hedging`): written only when a scenario (or a
//! cell of a sweep) has a hedging layer. Summed over every hedging layer of the
//! scenario, fleets' and service calls' alike.

use crate::metrics::columns::{count, no_series, Column, Group, Instances};
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;

/// `hedges`.
pub(crate) const HEDGES: Column = count(
    "hedges",
    "copies hedging layers sent after a call's first (only with hedging)",
);
/// `hedge_wins`.
pub(crate) const HEDGE_WINS: Column = count(
    "hedge_wins",
    "hedged calls whose success came from a hedge, not the first copy (only with hedging)",
);
/// `hedge_losers`.
pub(crate) const HEDGE_LOSERS: Column = count(
    "hedge_losers",
    "copies still out when their hedged call was decided: cancelled, or left running as wasted work with cancel_losers = false (only with hedging)",
);
/// The summary columns of hedging.
pub(crate) const HEDGE_COLUMNS: [Column; 3] = [HEDGES, HEDGE_WINS, HEDGE_LOSERS];

/// The columns of hedging.
pub(crate) const HEDGE_GROUP: Group = Group {
    name: "hedging",
    instances: Instances::Once(Scenario::uses_hedging),
    summary: &HEDGE_COLUMNS,
    cells: hedge_cells,
    series: &[],
    series_cells: no_series,
    file: None,
    note: "",
};

fn hedge_cells(m: &RunMetrics, _: &Scenario, _: &str, out: &mut Vec<Cell>) {
    let t = &m.totals;
    out.extend([
        Cell::Int(t.hedges),
        Cell::Int(t.hedge_wins),
        Cell::Int(t.hedge_losers),
    ]);
}
