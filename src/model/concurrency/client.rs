//! A client layer's concurrency limit: Netflix's client-side limiter
//! (`concurrency-limits-grpc`, `ConcurrencyLimitClientInterceptor` with
//! `SimpleLimiter`, at 78a74b9), one per client instance of the layer.
//!
//! It sits under the layer's retry loop, around each attempt the layer sends, as the
//! gRPC interceptor sits around each call an application's retry loop makes: an
//! attempt sent with `limit` of the instance's attempts in flight is refused at once,
//! never sent, and answered `rate_limited` with the limit's status (429 unless
//! `status` says otherwise; the gRPC interceptor's is `"unavailable"`, "Client
//! concurrency limit reached"), which the layer's `retry_on` may retry. Each attempt let through is released when it ends,
//! and its end is a sample as the interceptor's `onClose` makes it:
//! - a success (status OK): `onSuccess`, a sample of its RTT;
//! - an answer gRPC gives as UNAVAILABLE (a rejection, a limiter's or priority
//!   shedding's refusal, `overloaded`, a transient `error`): `onDropped`, a sample
//!   marked dropped;
//! - anything else (a timeout is DEADLINE_EXCEEDED, a conflict ABORTED, a refusal
//!   below it, a cancellation): `onIgnore`, released without a sample.
//!
//! Envoy's gradient controller is a server-side filter: a layer takes the Netflix
//! kinds. A hedging layer sends several copies of one attempt, which the interceptor
//! would see as several calls: the two are not combined.

use rand_chacha::ChaCha8Rng;

use serde::{Deserialize, Serialize};

use super::{aimd, fixed, gradient2, vegas, ConcurrencyLimit, ConcurrencyLimitConfig};
use crate::engine::Nanos;
use crate::model::field::{Ctx, R};
use crate::model::outcome::Class;

/// A client layer's limit as written: `concurrency_limit = { kind = "...", ... }`,
/// Netflix's kinds (Envoy's gradient controller is a server-side filter).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ClientLimitFile {
    /// A fixed limit.
    Fixed(fixed::Written),
    /// Netflix's AIMD.
    Aimd(aimd::Written),
    /// Netflix's Vegas.
    Vegas(vegas::Written),
    /// Netflix's Gradient2.
    Gradient2(gradient2::Written),
}

impl ClientLimitFile {
    /// The validated limit; `p` is the field path of the table
    /// (`fleets[0].layers[0].concurrency_limit`), `hedging` whether the layer hedges.
    pub fn validate(&self, c: &Ctx, p: &str, hedging: bool) -> R<ConcurrencyLimitConfig> {
        if hedging {
            return c.err(
                p,
                "a hedging layer cannot also have a concurrency limit (the limiter would see each copy as a call of its own)",
            );
        }
        match self {
            ClientLimitFile::Fixed(w) => w.validate(c, p),
            ClientLimitFile::Aimd(w) => w.validate(c, p),
            ClientLimitFile::Vegas(w) => w.validate(c, p),
            ClientLimitFile::Gradient2(w) => w.validate(c, p),
        }
    }
}

/// What explain says of a client layer's limit.
pub(crate) fn describe(cfg: &ConcurrencyLimitConfig) -> String {
    format!(
        "client-side concurrency limit per instance, around each attempt (Netflix ConcurrencyLimitClientInterceptor, 78a74b9; refusals are rate_limited, never sent; samples: successes, and answers gRPC gives as UNAVAILABLE as drops; timeouts ignored): {}",
        cfg.describe()
    )
}

/// How an attempt's end counts for the limit (the interceptor's `onClose`).
fn sample_of(answer: Option<Class>) -> Option<bool> {
    match answer? {
        Class::Success => Some(false),
        Class::Rejected
        | Class::Error
        | Class::RateLimited
        | Class::PriorityShed
        | Class::Overloaded => Some(true),
        _ => None,
    }
}

/// One instance's limit and its attempts in flight.
#[derive(Debug, Clone)]
struct Instance {
    limit: ConcurrencyLimit,
    inflight: u32,
}

/// The client limits of one layer: one per instance, their random stream (Vegas'
/// probe jitter) and each attempt's stamp for its sample.
#[derive(Debug, Clone)]
pub(crate) struct ClientLimits {
    instances: Vec<Instance>,
    rng: ChaCha8Rng,
    /// Per node: (sent at, in flight then, itself included).
    starts: Vec<(Nanos, u32)>,
}

impl ClientLimits {
    /// `n` instances of `cfg`, drawing from `rng` (the layer's `client_limit` stream).
    pub(crate) fn new(cfg: ConcurrencyLimitConfig, n: usize, mut rng: ChaCha8Rng) -> ClientLimits {
        let instances = (0..n)
            .map(|_| Instance {
                limit: ConcurrencyLimit::new(cfg, &mut rng),
                inflight: 0,
            })
            .collect();
        ClientLimits {
            instances,
            rng,
            starts: Vec::new(),
        }
    }

    /// Instance `inst` sends the attempt of `node` at `now`: whether it may (then it is
    /// in flight and stamped for its sample).
    pub(crate) fn acquire(&mut self, inst: u32, node: u32, now: Nanos) -> bool {
        let i = &mut self.instances[inst as usize];
        if !i.limit.admits(i.inflight) {
            return false;
        }
        i.inflight += 1;
        let k = node as usize;
        if k >= self.starts.len() {
            self.starts.resize(k + 1, (0, 0));
        }
        self.starts[k] = (now, i.inflight);
        true
    }

    /// The attempt of `node`, let through by instance `inst`, ended at `now` with
    /// `answer` (`None`: cancelled): released, and a sample if its end makes one.
    pub(crate) fn release(&mut self, inst: u32, node: u32, now: Nanos, answer: Option<Class>) {
        let i = &mut self.instances[inst as usize];
        i.inflight = i.inflight.saturating_sub(1);
        if let Some(dropped) = sample_of(answer) {
            let (start, inflight) = self.starts[node as usize];
            i.limit.on_sample(
                start,
                now.saturating_sub(start),
                inflight,
                dropped,
                &mut self.rng,
            );
        }
    }

    /// Instance `inst`'s limit now.
    #[cfg(test)]
    pub(crate) fn limit(&self, inst: u32) -> u32 {
        self.instances[inst as usize].limit.limit()
    }

    /// Instance `inst`'s attempts in flight.
    #[cfg(test)]
    pub(crate) fn inflight(&self, inst: u32) -> u32 {
        self.instances[inst as usize].inflight
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::concurrency::Rejected;
    use rand::SeedableRng;

    #[test]
    fn an_instance_refuses_at_its_limit_and_releases_on_any_end() {
        let cfg = ConcurrencyLimitConfig::Fixed(fixed::Config {
            limit: 2,
            status: Rejected::Unavailable,
        });
        let mut l = ClientLimits::new(cfg, 2, ChaCha8Rng::seed_from_u64(1));
        assert!(l.acquire(0, 7, 10) && l.acquire(0, 8, 11));
        assert!(!l.acquire(0, 9, 12), "two in flight at instance 0");
        assert!(l.acquire(1, 9, 12), "instance 1 has its own");
        l.release(0, 7, 20, None);
        assert_eq!(l.inflight(0), 1);
        assert!(l.acquire(0, 10, 21));
    }

    #[test]
    fn successes_and_unavailable_answers_are_samples_timeouts_are_ignored() {
        // AIMD at 20 grows by one on a sample with half the limit in flight, and
        // backs off by 0.9 on a drop (then clamped to its floor of 20).
        let cfg = ConcurrencyLimitConfig::Aimd(aimd::Config::default());
        let mut l = ClientLimits::new(cfg, 1, ChaCha8Rng::seed_from_u64(1));
        for node in 0..10 {
            assert!(l.acquire(0, node, 0));
        }
        l.release(0, 8, 1_000_000, Some(Class::Timeout));
        assert_eq!(l.limit(0), 20, "DEADLINE_EXCEEDED: onIgnore");
        l.release(0, 9, 1_000_000, Some(Class::Success));
        assert_eq!(l.limit(0), 21, "sent 10th, 10 in flight: 10·2 ≥ 20, + 1");
        l.release(0, 7, 1_000_000, Some(Class::Rejected));
        assert_eq!(
            l.limit(0),
            20,
            "UNAVAILABLE: onDropped, (int)(21·0.9) = 18 → 20"
        );
        l.release(0, 6, 1_000_000, Some(Class::Conflict));
        assert_eq!(l.inflight(0), 6);
    }
}
