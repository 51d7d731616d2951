//! The columns of queue fleets (`arrival = { kind = "queue" }`), written only when a
//! scenario has one: summary columns after the others, and time-series columns after
//! the others in `timeseries.csv` (see [`crate::metrics::queue`]).

use super::*;

/// `messages`.
pub const MESSAGES: Column = count("messages", "messages published to the queues");
/// `deliveries`.
pub const DELIVERIES: Column = count(
    "deliveries",
    "receives of messages, each one handler run (a logical request)",
);
/// `redeliveries`.
pub const REDELIVERIES: Column = count(
    "redeliveries",
    "receives of a message after its first (after a failure or a visibility timeout)",
);
/// `duplicate_deliveries`.
pub const DUPLICATE_DELIVERIES: Column = count(
    "duplicate_deliveries",
    "receives of a message while an earlier handler of it still ran (it outlived its visibility timeout)",
);
/// `dlq`.
pub const DLQ: Column = count(
    "dlq",
    "messages moved to the dead-letter queue after max_receive_count receives",
);
/// `messages_left`.
pub const MESSAGES_LEFT: Column = count(
    "messages_left",
    "messages neither deleted nor dead-lettered when the run ended",
);
/// `end_to_end_latency_p50_ms`.
pub const END_TO_END_LATENCY_P50_MS: Column = measure(
    "end_to_end_latency_p50_ms",
    "ms",
    TIME,
    "median time from a message's publish to its successful handling",
);
/// `end_to_end_latency_p99_ms`.
pub const END_TO_END_LATENCY_P99_MS: Column = measure(
    "end_to_end_latency_p99_ms",
    "ms",
    TIME,
    "99th percentile time from a message's publish to its successful handling",
);

/// Summary columns of a scenario with a queue fleet, after every other column.
pub const QUEUE_SUMMARY: [Column; 8] = [
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
pub const QUEUE_SERIES: [Column; 4] = [
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

/// Names of [`QUEUE_SERIES`].
pub const QUEUE_SERIES_COLUMNS: [&str; 4] = names(&QUEUE_SERIES);
