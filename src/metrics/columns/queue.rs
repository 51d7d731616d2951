//! The columns of queue fleets (`arrival = { kind = "queue" }`), written only when a
//! scenario has one: summary columns after the others, and time-series columns after
//! the others in `timeseries.csv` (see [`crate::metrics::queue`]).

use super::*;
use crate::engine::time::to_secs;
use crate::metrics::summary::Cell;
use crate::metrics::RunMetrics;
use crate::model::config::Scenario;

/// `messages`.
pub(crate) const MESSAGES: Column = count("messages", "messages published to the queues");
/// `deliveries`.
pub(crate) const DELIVERIES: Column = count(
    "deliveries",
    "receives of messages, each one handler run (a logical request)",
);
/// `redeliveries`.
pub(crate) const REDELIVERIES: Column = count(
    "redeliveries",
    "receives of a message after its first (after a failure or a visibility timeout)",
);
/// `duplicate_deliveries`.
pub(crate) const DUPLICATE_DELIVERIES: Column = count(
    "duplicate_deliveries",
    "receives of a message while an earlier handler of it still ran (it outlived its visibility timeout)",
);
/// `dlq`.
pub(crate) const DLQ: Column = count(
    "dlq",
    "messages moved to the dead-letter queue after max_receive_count receives",
);
/// `messages_left`.
pub(crate) const MESSAGES_LEFT: Column = count(
    "messages_left",
    "messages neither deleted nor dead-lettered when the run ended",
);
/// `end_to_end_latency_p50_ms`.
pub(crate) const END_TO_END_LATENCY_P50_MS: Column = measure(
    "end_to_end_latency_p50_ms",
    "ms",
    TIME,
    "median time from a message's publish to its successful handling",
);
/// `end_to_end_latency_p99_ms`.
pub(crate) const END_TO_END_LATENCY_P99_MS: Column = measure(
    "end_to_end_latency_p99_ms",
    "ms",
    TIME,
    "99th percentile time from a message's publish to its successful handling",
);

/// Summary columns of a scenario with a queue fleet, after every other column.
pub(crate) const QUEUE_SUMMARY: [Column; 8] = [
    MESSAGES,
    DELIVERIES,
    REDELIVERIES,
    DUPLICATE_DELIVERIES,
    DLQ,
    MESSAGES_LEFT,
    END_TO_END_LATENCY_P50_MS,
    END_TO_END_LATENCY_P99_MS,
];

const fn ts(
    name: &'static str,
    unit: &'static str,
    kind: Kind,
    description: &'static str,
) -> Column {
    Column {
        name,
        unit,
        kind,
        compared: false,
        floor: AMOUNT,
        description,
    }
}

/// `timeseries.csv` columns of a scenario with a queue fleet, after the others.
pub(crate) const QUEUE_SERIES: [Column; 4] = [
    ts(
        "queue_depth",
        "messages",
        Kind::Measure,
        "time-weighted mean of visible messages (waiting for a consumer)",
    ),
    ts(
        "oldest_age_s",
        "s",
        Kind::Measure,
        "age of the oldest visible message at the bucket's end (0 when none)",
    ),
    ts(
        "redeliveries",
        "count",
        Kind::Count,
        "receives of messages received before, in the bucket",
    ),
    ts(
        "dlq",
        "count",
        Kind::Count,
        "messages moved to the dead-letter queue in the bucket",
    ),
];

/// The columns of queue fleets: in `summary.csv` and `timeseries.csv`.
pub(crate) const QUEUE_GROUP: Group = Group {
    name: "queue",
    instances: Instances::Once(has_queue),
    summary: &QUEUE_SUMMARY,
    cells: queue_cells,
    series: &QUEUE_SERIES,
    series_cells: queue_series_cells,
    file: None,
    note: "queue fleets only",
};

fn has_queue(scn: &Scenario) -> bool {
    scn.fleets.iter().any(|f| f.queue.is_some())
}

fn queue_cells(m: &RunMetrics, _: &Scenario, _: &str, out: &mut Vec<Cell>) {
    match &m.queue {
        Some(q) => {
            let t = &q.totals;
            out.extend([
                Cell::Int(t.messages),
                Cell::Int(t.deliveries),
                Cell::Int(t.redeliveries),
                Cell::Int(t.duplicate_deliveries),
                Cell::Int(t.dlq),
                Cell::Int(t.left),
                Cell::quantile_ms(&q.end_to_end, 0.5),
                Cell::quantile_ms(&q.end_to_end, 0.99),
            ]);
        }
        None => out.resize(out.len() + QUEUE_SUMMARY.len(), Cell::Empty),
    }
}

fn queue_series_cells(m: &RunMetrics, i: usize, out: &mut Vec<Cell>) {
    match m.queue.as_ref().zip(m.buckets.get(i)) {
        Some((q, b)) => {
            let row = q.rows.get(i).copied().unwrap_or_default();
            out.extend([
                Cell::float(row.depth_area as f64 / m.width(b) as f64),
                Cell::float(to_secs(row.oldest_age)),
                Cell::Int(row.redeliveries),
                Cell::Int(row.dlq),
            ]);
        }
        None => out.resize(out.len() + QUEUE_SERIES.len(), Cell::Empty),
    }
}
