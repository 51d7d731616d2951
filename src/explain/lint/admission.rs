//! Lints of server-side admission control: `computed-retry-after-unjittered`, a
//! limiter whose computed Retry-After clients without jitter obey to the second.
//!
//! A client honours a Retry-After as `max(wait, Retry-After)`, and redis-cell's
//! computed Retry-After is at least 1 s (it limits only attempts a whole second
//! early): a jitter whose waits never pass 1 s is swamped by it, as if there were none.

use crate::engine::time::SECOND;
use crate::model::config::Scenario;
use crate::model::outcome::Class;

use super::{many_clients, retrying_layers, Found, Rule};

/// A computed Retry-After answered to many clients that wait it without jitter.
pub(crate) const COMPUTED_RETRY_AFTER_UNJITTERED: Rule = Rule {
    id: "computed-retry-after-unjittered",
    why: "a rate limiter tells every client it rejects when to come back (a computed Retry-After), and clients that wait exactly that long without jitter return together, as a wave the limiter rejects again",
    fires_when: "the service a fleet calls has `admission` of kind `gcra` with `retry_after = \"computed\"` (the default), and a retrying layer of the fleet retries its rejections (`rejected` or `rate_limited` in `retry_on`, or `rejected_5xx` with its `status` 503), has `respect_retry_after = true` and a backoff without jitter or whose waits never exceed 1 s (the least Retry-After redis-cell computes, which then sets every wait; over the first 64 retries when attempts are unlimited), and the fleet has many clients: `clients` ≥ 10, or a burst of at least 10 requests",
    check: computed_unjittered,
};

fn computed_unjittered(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, l) in retrying_layers(scn) {
        let Some(svc) = scn.services.get(f.target as usize) else {
            continue;
        };
        let Some(a) = svc.capacity.admission.filter(|a| a.computes_retry_after()) else {
            continue;
        };
        let retries = l
            .max_attempts
            .limit()
            .map_or(64, |n| n.saturating_sub(1).min(64));
        let swamped = (1..=retries).all(|k| l.backoff.max_wait(k) <= SECOND);
        if !l.respect_retry_after
            || (l.backoff.is_jittered() && !swamped)
            || !l.retry_on.retries(Class::RateLimited, a.status())
        {
            continue;
        }
        let Some(who) = many_clients(f) else { continue };
        found.push(
            fi,
            f,
            Some(li),
            &COMPUTED_RETRY_AFTER_UNJITTERED,
            format!(
                "its limiter answers {} with a Retry-After computed to the whole second, and this layer waits exactly that (respect_retry_after, and its backoff, {}, has no jitter beyond 1 s): {who} rejected together come back together, in waves the limiter mostly rejects again while its capacity between the waves goes unused; jitter the retries beyond the Retry-After, or send no Retry-After (retry_after = \"none\")",
                a.status(),
                l.backoff.describe()
            ),
        );
    }
}
