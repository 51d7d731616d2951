//! Request traces: every call and attempt of a few logical requests, sampled uniformly
//! over a run, as the seeds ask a retry to record them (operation, attempt ordinal,
//! parent, endpoint, timing, the wait before it and why, the decisions of the budget and
//! the breaker, the final outcome).
//!
//! A *span* is one node of a request's call tree: the request's call into its first
//! layer (or straight into its service), each attempt a layer makes (which is also the
//! call into the layer below, or the request at the service), each copy of a hedging
//! call, and in a service graph each downstream call a service makes while it serves an
//! attempt. An attempt refused before it left (an open breaker, a limiter, a full
//! bulkhead, a retry the budget denied) is a span too, with no arrival.
//!
//! Each span has two ends: `end`/`outcome`, when and how the one that made it learned
//! how it went (an answer, its own timeout, a cancellation); and `done`/`fate`, when and
//! how the callee finished with it. They differ for orphans: an attempt its layer gave
//! up on at its timeout keeps the service busy until `done`.
//!
//! The model records traces (`run --trace N`, or the scenario's `trace` table); the
//! export writes them as `traces.csv` (one row per span) and `trace.json` (the Chrome
//! trace event format, for Perfetto and `chrome://tracing`).

use crate::engine::Nanos;
use crate::model::outcome::Class;

use super::ordinal::End;

/// "No span": the parent of a request's root span.
pub(crate) const NO_SPAN: u32 = u32::MAX;

/// What a span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpanKind {
    /// A call into a layer stack: a request's root, or a service's downstream call.
    Call,
    /// An attempt a layer made.
    Attempt,
    /// A copy of a hedging call beyond its first.
    Hedge,
}

impl SpanKind {
    /// The name written in the `kind` column.
    pub(crate) fn name(self) -> &'static str {
        match self {
            SpanKind::Call => "call",
            SpanKind::Attempt => "attempt",
            SpanKind::Hedge => "hedge",
        }
    }
}

/// Why an attempt waited before it was sent (bits; an attempt can wait for several).
pub(crate) mod wait {
    /// The layer's backoff.
    pub(crate) const BACKOFF: u8 = 1;
    /// A Retry-After the layer honours.
    pub(crate) const RETRY_AFTER: u8 = 2;
    /// A gRPC server pushback (Retry-After under the gRPC backoff).
    pub(crate) const PUSHBACK: u8 = 4;
    /// The layer's rate limiter.
    pub(crate) const LIMITER: u8 = 8;
    /// A bulkhead slot or a pooled connection.
    pub(crate) const GUARD: u8 = 16;

    /// The names, in the order `wait_reason` lists them.
    pub(crate) const NAMES: [(u8, &str); 5] = [
        (BACKOFF, "backoff"),
        (RETRY_AFTER, "retry_after"),
        (PUSHBACK, "pushback"),
        (LIMITER, "limiter"),
        (GUARD, "guard"),
    ];

    /// The `wait_reason` text of `bits`: names joined by `+`, empty for none.
    pub(crate) fn names(bits: u8) -> String {
        super::names_of(&NAMES, bits, "+")
    }
}

/// The names of the bits set in `bits`, in table order, joined by `sep`.
fn names_of(table: &[(u8, &str)], bits: u8, sep: &str) -> String {
    table
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join(sep)
}

/// What the retry budget (or the rate limiter) decided about an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Budget {
    /// The budget granted the retry.
    Granted,
    /// The budget denied the retry: the attempt was never made.
    Refused,
    /// The layer's rate limiter refused the attempt.
    LimiterRefused,
}

impl Budget {
    /// The name written in the `budget` column.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Budget::Granted => "granted",
            Budget::Refused => "refused",
            Budget::LimiterRefused => "limiter_refused",
        }
    }
}

/// What circuit breakers decided about a span (bits).
pub(crate) mod breaker {
    /// The inside breaker of the layer that made the attempt admitted it.
    pub(crate) const INSIDE_ADMITTED: u8 = 1;
    /// It refused it.
    pub(crate) const INSIDE_REJECTED: u8 = 2;
    /// The outside breaker of the layer the span calls into admitted the call.
    pub(crate) const OUTSIDE_ADMITTED: u8 = 4;
    /// It refused it.
    pub(crate) const OUTSIDE_REJECTED: u8 = 8;

    /// The names, in the order `breaker` lists them.
    pub(crate) const NAMES: [(u8, &str); 4] = [
        (INSIDE_ADMITTED, "inside:admitted"),
        (INSIDE_REJECTED, "inside:rejected"),
        (OUTSIDE_ADMITTED, "outside:admitted"),
        (OUTSIDE_REJECTED, "outside:rejected"),
    ];

    /// The `breaker` text of `bits`: names joined by a space, empty for none.
    pub(crate) fn names(bits: u8) -> String {
        super::names_of(&NAMES, bits, " ")
    }
}

/// How the callee finished with a span's work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fate {
    /// It answered with this class (for a layer call: its call's outcome).
    Answered(Class),
    /// A service dropped it unserved: its deadline had passed (`shed`).
    Shed,
    /// A blackholed service swallowed it: no answer, ever.
    Swallowed,
    /// It was served, but its answer was lost in a blackhole.
    Lost,
    /// Its caller cancelled it.
    Cancelled,
}

impl Fate {
    /// The name written in the `fate` column.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Fate::Answered(c) => c.name(),
            Fate::Shed => "shed",
            Fate::Swallowed => "swallowed",
            Fate::Lost => "lost",
            Fate::Cancelled => "cancelled",
        }
    }
}

/// One call or attempt of a traced request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Span {
    /// The traced request it belongs to (an index into [`TraceLog::requests`]).
    pub request: u32,
    /// The span that made it (an index into [`TraceLog::spans`]), or [`NO_SPAN`].
    pub parent: u32,
    /// What it is.
    pub kind: SpanKind,
    /// Its layer stack (an index into [`TraceLog::stacks`]).
    pub stack: u16,
    /// Its depth in the stack: an attempt of layer `depth - 1`; the stack's length for
    /// an attempt at the service.
    pub depth: u8,
    /// Its ordinal among the attempts (copies) of the call that made it; 1 for a call.
    pub attempt: u32,
    /// When it was made (sent, or refused).
    pub send: Nanos,
    /// When it reached its layer or service (`None`: it never did).
    pub arrive: Option<Nanos>,
    /// When a service started serving it (`None`: it never started).
    pub start: Option<Nanos>,
    /// When its maker learned its outcome (`None`: it never did).
    pub end: Option<Nanos>,
    /// Its outcome as its maker saw it.
    pub outcome: Option<End>,
    /// When the callee finished with it (`None`: still going at the end of the run).
    pub done: Option<Nanos>,
    /// How the callee finished with it.
    pub fate: Option<Fate>,
    /// How long the call waited before this attempt (since the previous attempt's end,
    /// or since the call arrived).
    pub wait: Nanos,
    /// Why it waited ([`wait`] bits).
    pub wait_reason: u8,
    /// The budget's (or limiter's) decision.
    pub budget: Option<Budget>,
    /// The breakers' decisions ([`breaker`] bits).
    pub breaker: u8,
}

impl Span {
    /// Attempt (or call) `attempt` of request `request`, made at `send` by span
    /// `parent` at (`stack`, `depth`), with nothing known yet of how it went.
    pub(crate) fn new(
        request: u32,
        parent: u32,
        kind: SpanKind,
        (stack, depth): (u16, u8),
        attempt: u32,
        send: Nanos,
    ) -> Span {
        Span {
            request,
            parent,
            kind,
            stack,
            depth,
            attempt,
            send,
            arrive: None,
            start: None,
            end: None,
            outcome: None,
            done: None,
            fate: None,
            wait: 0,
            wait_reason: 0,
            budget: None,
            breaker: 0,
        }
    }
}

/// A traced logical request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TracedRequest {
    /// Its ordinal among the run's logical requests, in the order they started (from 0).
    pub ordinal: u64,
    /// Its fleet (an index into [`TraceLog::fleets`]).
    pub fleet: u16,
    /// Its client within the fleet.
    pub client: u32,
    /// When it arrived.
    pub arrival: Nanos,
    /// When it completed (`None`: still going at the end of the run).
    pub end: Option<Nanos>,
    /// How it completed.
    pub outcome: Option<Class>,
    /// Its root span.
    pub root: u32,
}

/// The names a stack's spans are written with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StackNames {
    /// Who calls through the stack: a fleet, or a service of a graph.
    pub caller: String,
    /// The service it leads to.
    pub service: String,
    /// Its layers' names, outermost first.
    pub layers: Vec<String>,
}

/// An outage window, as the traces show it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TraceWindow {
    /// Start.
    pub start: Nanos,
    /// End.
    pub end: Nanos,
    /// The service it hits (`None`: every service).
    pub service: Option<String>,
}

/// The traces of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TraceLog {
    /// The run's seed.
    pub seed: u64,
    /// The seed of the sample.
    pub sample_seed: u64,
    /// Logical requests the run started: the sample is drawn from these.
    pub population: u64,
    /// The fleets' names.
    pub fleets: Vec<String>,
    /// The services' names.
    pub services: Vec<String>,
    /// Each stack's names.
    pub stacks: Vec<StackNames>,
    /// The outage windows of the run.
    pub windows: Vec<TraceWindow>,
    /// The traced requests, in the order they started.
    pub requests: Vec<TracedRequest>,
    /// Their spans, in the order they were made.
    pub spans: Vec<Span>,
    /// When the run ended.
    pub end: Nanos,
    /// Whether the log hit its cap on spans: the spans made after it are missing.
    pub truncated: bool,
}

impl TraceLog {
    /// The layer that made span `s` (`None` for a call).
    pub(crate) fn layer_name(&self, s: &Span) -> Option<&str> {
        let d = usize::from(s.depth).checked_sub(1)?;
        self.stacks
            .get(usize::from(s.stack))?
            .layers
            .get(d)
            .map(String::as_str)
    }

    /// Whether span `s` is an attempt at its stack's service (not a layer call).
    pub(crate) fn at_service(&self, s: &Span) -> bool {
        self.stacks
            .get(usize::from(s.stack))
            .is_some_and(|st| usize::from(s.depth) == st.layers.len())
    }
}

/// Draws `k` distinct ordinals from `0..n` uniformly (Floyd's algorithm, one ChaCha
/// stream named `trace` of `seed`), sorted; all of them when `k >= n`. The draw depends
/// on `(seed, n, k)` only.
pub(crate) fn sample(seed: u64, n: u64, k: u64) -> Vec<u64> {
    use rand::RngExt;
    if k >= n {
        return (0..n).collect();
    }
    let mut rng = crate::engine::stream(seed, "trace");
    let mut chosen = std::collections::BTreeSet::new();
    for j in n - k..n {
        let t = rng.random_range(0..=j);
        if !chosen.insert(t) {
            chosen.insert(j);
        }
    }
    chosen.into_iter().collect()
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn names_example() {
        use crate::metrics::trace::wait;
        assert_eq!(
            wait::names(wait::BACKOFF | wait::LIMITER),
            "backoff+limiter"
        );
        assert_eq!(wait::names(0), "");
    }

    #[test]
    fn names_example_2() {
        use crate::metrics::trace::breaker;
        assert_eq!(
            breaker::names(breaker::INSIDE_ADMITTED | breaker::OUTSIDE_REJECTED),
            "inside:admitted outside:rejected"
        );
    }

    #[test]
    fn sample_example() {
        use crate::metrics::trace::sample;
        let s = sample(7, 1000, 10);
        assert_eq!(s.len(), 10);
        assert!(s.windows(2).all(|w| w[0] < w[1]) && s[9] < 1000);
        assert_eq!(sample(7, 5, 10), vec![0, 1, 2, 3, 4]);
        assert_eq!(s, sample(7, 1000, 10));
    }
}
