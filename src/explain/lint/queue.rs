//! The lints of queue fleets (`arrival = { kind = "queue" }`): a handler that can outlive
//! its message's visibility timeout, and handler retries inside broker redelivery.

use crate::model::backoff::backoff_total;
use crate::model::config::{Attempts, FleetConfig, Scenario};
use crate::model::text::{fmt_count, fmt_duration, fmt_time};

use super::super::{retries, worst_case_attempts, Bound};
use super::{Found, Rule};

/// A queue handler that can outlive its visibility timeout.
pub(crate) const VISIBILITY_TIMEOUT_BELOW_HANDLER_TIME: Rule = Rule {
    id: "visibility-timeout-below-handler-time",
    why: "a queue handler's worst case (its retries, their timeouts and its backoff) exceeds the visibility timeout, so its message is delivered again while it still runs",
    fires_when: "a queue fleet's handler can run longer than its `visibility_timeout`: its worst case (layer by layer from the bottom, `max_attempts` × the attempt's bound, its `attempt_timeout` or the layer below's worst case, plus the longest backoff schedule, capped by `total_timeout`, then by the fleet's `deadline`; hop latencies not counted) exceeds it, or nothing bounds it (no attempt timeout, total timeout or deadline)",
    check: visibility_timeout,
};

/// Handler retries inside broker redelivery, without a budget.
pub(crate) const DOUBLE_RETRY_LOOP: Rule = Rule {
    id: "double-retry-loop",
    why: "a queue handler retries and the broker redelivers too, with no budget, so the two loops multiply (3 attempts × 5 receives = 15 per message)",
    fires_when: "a queue fleet's handler retries (a layer retries) and the broker redelivers (`max_receive_count` above 1 or unlimited), and no retrying layer has a `budget`",
    check: double_retry_loop,
};

/// The smaller of two bounds.
fn min(a: Bound, b: Bound) -> Bound {
    match (a, b) {
        (Bound::Finite(x), Bound::Finite(y)) => Bound::Finite(x.min(y)),
        (Bound::Finite(x), Bound::Unbounded) | (Bound::Unbounded, Bound::Finite(x)) => {
            Bound::Finite(x)
        }
        (Bound::Unbounded, Bound::Unbounded) => Bound::Unbounded,
    }
}

/// The longest a handler of fleet `f` can run, retries and backoff included: layer by
/// layer from the bottom, `T_i = min(total_timeout_i, N_i · A_i + B_i)` with
/// `A_i = min(attempt_timeout_i, T_(i+1))` (an attempt at the dependency has no bound of
/// its own: a queue can hold it for ever) and `B_i` the layer's longest backoff
/// schedule; then the fleet's `deadline` caps it. Hop latencies are not counted.
pub(crate) fn handler_worst_case(f: &FleetConfig) -> Bound {
    let call = f.layers.iter().rev().fold(Bound::Unbounded, |below, l| {
        let attempt = match l.attempt_timeout {
            Some(t) => min(Bound::Finite(t), below),
            None => below,
        };
        let total = l.max_attempts.bound() * attempt + backoff_total(&l.backoff, l.max_attempts, 0);
        match l.total_timeout {
            Some(t) => min(Bound::Finite(t), total),
            None => total,
        }
    });
    match f.deadline {
        Some(d) => min(Bound::Finite(d), call),
        None => call,
    }
}

/// `visibility-timeout-below-handler-time`, per queue fleet.
fn visibility_timeout(found: &mut Found, scn: &Scenario) {
    for (fi, f) in scn.fleets.iter().enumerate() {
        let Some(q) = &f.queue else { continue };
        let worst = handler_worst_case(f);
        if worst.exceeds(q.visibility_timeout) {
            let why = match worst {
                Bound::Finite(_) => format!(
                    "the handler can run for up to {} (its attempts, their timeouts and its backoff), longer than the visibility timeout of {}",
                    fmt_duration(worst),
                    fmt_time(q.visibility_timeout)
                ),
                Bound::Unbounded => format!(
                    "nothing bounds the handler's time (no attempt_timeout, total_timeout or deadline), so one hung call outlives the visibility timeout of {}",
                    fmt_time(q.visibility_timeout)
                ),
            };
            found.push(
                fi,
                f,
                None,
                &VISIBILITY_TIMEOUT_BELOW_HANDLER_TIME,
                format!(
                    "{why}: its message is delivered again while the handler still runs (a duplicate delivery, applied twice if not idempotent); make the visibility timeout at least the handler's worst case"
                ),
            );
        }
    }
}

/// `double-retry-loop`, per queue fleet.
fn double_retry_loop(found: &mut Found, scn: &Scenario) {
    for (fi, f) in scn.fleets.iter().enumerate() {
        let Some(q) = &f.queue else { continue };
        let receives = q
            .max_receive_count
            .map_or(Attempts::Unlimited, Attempts::Limited);
        let retrying: Vec<_> = f.layers.iter().filter(|l| retries(l)).collect();
        if receives.retries() && !retrying.is_empty() && retrying.iter().all(|l| l.budget.is_none())
        {
            let handler = worst_case_attempts(&f.layers);
            found.push(
                fi,
                f,
                None,
                &DOUBLE_RETRY_LOOP,
                format!(
                    "the handler makes up to {} attempts per receive and the broker delivers each message up to {} times (max_receive_count), with no retry budget: {} attempts per message at the dependency when it fails; retry in one loop (max_attempts = 1 in the handler, or max_receive_count = 1) or give the handler's retries a budget",
                    fmt_count(handler),
                    fmt_count(receives.bound()),
                    fmt_count(handler * receives.bound())
                ),
            );
        }
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn handler_worst_case_example() {
        use crate::explain::lint::handler_worst_case;
        use crate::explain::Bound;
        use crate::scenario::{load, Source};
        let text = "duration = \"10s\"\n[dependency]\nservers = 1\nservice_time = \"1ms\"\n\
            [[fleets]]\nname = \"w\"\narrival = { kind = \"queue\", rate = 1 }\nconsumers = 1\n\
            [[fleets.layers]]\nmax_attempts = 3\nattempt_timeout = \"1s\"\n\
            backoff = { kind = \"fixed\", delay = \"500ms\" }\n";
        let src = Source {
            path: "t.toml".into(),
            stem: "t".into(),
            text: text.into(),
        };
        let scn = load(src, &[]).unwrap().scenario;
        // 3 attempts of up to 1 s, and 2 waits of 0.5 s.
        assert_eq!(
            handler_worst_case(&scn.fleets[0]),
            Bound::Finite(4_000_000_000)
        );
    }
}
