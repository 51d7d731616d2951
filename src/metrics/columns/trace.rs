//! `traces.csv`: one row per span (call or attempt) of the sampled requests (see
//! [`crate::metrics::trace`]), ordered by request, then by span.

use super::*;

/// The file of the request traces.
pub(crate) const TRACES_FILE: &str = "traces.csv";

/// A time of a span, in seconds since the run's start: a measure, never compared by a
/// baseline (a trace is an illustration, not a metric).
const fn time(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        unit: "s",
        kind: Kind::Measure,
        compared: false,
        floor: TIME,
        description,
    }
}

/// `request`.
pub(crate) const TRACE_REQUEST: Column = id(
    "request",
    "index",
    "the traced request: its ordinal among the run's logical requests, in the order they started (from 0)",
);
/// `fleet`.
pub(crate) const TRACE_FLEET: Column = id("fleet", "name", "the request's fleet");
/// `client`.
pub(crate) const TRACE_CLIENT: Column =
    id("client", "index", "the request's client within its fleet");
/// `span`.
pub(crate) const TRACE_SPAN: Column = id(
    "span",
    "index",
    "the span (one call or attempt of the request), numbered over the whole trace in the order spans were made",
);
/// `parent`.
pub(crate) const TRACE_PARENT: Column = id(
    "parent",
    "index",
    "the span that made this one; empty for a request's root call",
);
/// `kind`.
pub(crate) const TRACE_KIND: Column = id(
    "kind",
    "name",
    "call (into a layer stack: a request's root, or a downstream call a service makes while serving an attempt), attempt (an attempt a layer made, which is also its call one level down), or hedge (a hedging call's copy beyond its first)",
);
/// `caller`.
pub(crate) const TRACE_CALLER: Column = id(
    "caller",
    "name",
    "who calls through the span's layer stack: the fleet, or a service of the graph",
);
/// `service`.
pub(crate) const TRACE_SERVICE: Column = id(
    "service",
    "name",
    "the service the span's layer stack leads to",
);
/// `layer`.
pub(crate) const TRACE_LAYER: Column = id(
    "layer",
    "name",
    "the layer that made the attempt; empty for a call",
);
/// `attempt`.
pub(crate) const TRACE_ATTEMPT: Column = id(
    "attempt",
    "attempt number",
    "the span's ordinal among the attempts (copies) of the call that made it: 1 = its first, 2 = its first retry, ...; 1 for a call",
);
/// `send`.
pub(crate) const TRACE_SEND: Column = time("send", "when the span was made (sent, or refused)");
/// `arrive`.
pub(crate) const TRACE_ARRIVE: Column = time(
    "arrive",
    "when it reached its layer or service; empty when it never did (refused before it left)",
);
/// `start`.
pub(crate) const TRACE_START: Column = time(
    "start",
    "when a service started serving it; empty when none did (a layer call, or an attempt rejected, shed or swallowed unserved)",
);
/// `end`.
pub(crate) const TRACE_END: Column = time(
    "end",
    "when the one that made it learned how it went (an answer, its own timeout, a cancellation); empty when it never did",
);
/// `outcome`.
pub(crate) const TRACE_OUTCOME: Column = id(
    "outcome",
    "outcome name",
    "its outcome as the one that made it saw it, at end: an outcome class, cancelled (the call above cancelled the call), or in_flight (still out when the run ended)",
);
/// `done`.
pub(crate) const TRACE_DONE: Column = time(
    "done",
    "when the callee finished with it: after end for an orphan its maker gave up on at its timeout, which keeps the service busy; empty when still going at the end of the run",
);
/// `fate`.
pub(crate) const TRACE_FATE: Column = id(
    "fate",
    "outcome name",
    "how the callee finished with it, at done: the outcome class it answered (a layer call: its call's outcome), shed (dropped unserved, its deadline passed), swallowed (a blackhole: no answer, ever), lost (served, the answer lost in a blackhole), or cancelled (by its caller)",
);
/// `wait`.
pub(crate) const TRACE_WAIT: Column = time(
    "wait",
    "how long the call waited before this attempt: since the previous attempt's end, or since the call arrived",
);
/// `wait_reason`.
pub(crate) const TRACE_WAIT_REASON: Column = id(
    "wait_reason",
    "names",
    "why it waited, joined by +: backoff (the layer's), retry_after (a Retry-After the layer honours), pushback (a gRPC server pushback), limiter (the layer's rate limiter), guard (a bulkhead slot or a pooled connection); empty for none",
);
/// `budget`.
pub(crate) const TRACE_BUDGET: Column = id(
    "budget",
    "name",
    "the retry budget's (or rate limiter's) decision: granted, refused (the budget denied the retry: never made), or limiter_refused (the layer's rate limiter refused the attempt); empty when neither decided",
);
/// `breaker`.
pub(crate) const TRACE_BREAKER: Column = id(
    "breaker",
    "names",
    "the circuit breakers' decisions, space-separated: inside:admitted or inside:rejected (the inside breaker of the layer that made the attempt), outside:admitted or outside:rejected (the outside breaker of the layer the span calls into); empty when none decided",
);

/// Columns of `traces.csv`, in order.
pub(crate) const TRACE_COLUMNS: [Column; 21] = [
    TRACE_REQUEST,
    TRACE_FLEET,
    TRACE_CLIENT,
    TRACE_SPAN,
    TRACE_PARENT,
    TRACE_KIND,
    TRACE_CALLER,
    TRACE_SERVICE,
    TRACE_LAYER,
    TRACE_ATTEMPT,
    TRACE_SEND,
    TRACE_ARRIVE,
    TRACE_START,
    TRACE_END,
    TRACE_OUTCOME,
    TRACE_DONE,
    TRACE_FATE,
    TRACE_WAIT,
    TRACE_WAIT_REASON,
    TRACE_BUDGET,
    TRACE_BREAKER,
];

/// The header of `traces.csv`.
pub(crate) const TRACES_COLUMNS: [&str; 21] = names(&TRACE_COLUMNS);
