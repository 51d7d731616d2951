//! Server-side admission control: a limiter in front of a tier's queue (the
//! `admission` table of `[dependency]` and of each `[[services]]` tier), checked when
//! an attempt arrives, before it takes a server or a place in the queue. A refused
//! attempt is answered `rate_limited` with the limiter's status (429 by default) and,
//! for GCRA, a computed Retry-After; with the tier's `reject_cost` the refusal takes a
//! server for that long first (see [`crate::model`]'s dependency).
//!
//! The kinds, one file each, as their upstream ships them:
//! - [`token_bucket`]: Envoy's local rate limit (timer-driven discrete refill);
//! - [`gcra`]: redis-cell's GCRA, with its computed Retry-After and whole-second test;
//! - [`fixed_window`]: N per window;
//! - [`leaky_bucket`]: nginx's `limit_req`, whose admitted-but-early attempts wait
//!   ([`Verdict::Delay`]) before they reach the servers or the queue;
//! - [`probabilistic`]: admits with probability `min(1, capacity / offered rate)`,
//!   drawing from the tier's own stream.
//!
//! This root holds the written form [`AdmissionFile`], the validated
//! [`AdmissionConfig`], the per-tier state [`Admission`] and the counts a run keeps
//! ([`Counts`]). Each limiter's state is a few words: O(1) memory per tier and O(1)
//! work per attempt.

pub(crate) mod fixed_window;
pub(crate) mod gcra;
pub(crate) mod leaky_bucket;
pub(crate) mod probabilistic;
mod record;
pub(crate) mod token_bucket;

use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::model::field::{Ctx, R};

pub(crate) use record::Counts;

/// The limiter of a tier, as written: `admission = { kind = "...", ... }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AdmissionFile {
    /// Envoy's local rate limit.
    TokenBucket(token_bucket::Written),
    /// redis-cell's GCRA.
    Gcra(gcra::Written),
    /// N per fixed window.
    FixedWindow(fixed_window::Written),
    /// nginx's `limit_req`.
    LeakyBucket(leaky_bucket::Written),
    /// Admission with probability `min(1, capacity / offered rate)`.
    Probabilistic(probabilistic::Written),
}

impl AdmissionFile {
    /// The validated limiter; `p` is the field path of the table
    /// (`dependency.admission`).
    pub fn validate(&self, c: &Ctx, p: &str) -> R<AdmissionConfig> {
        match self {
            AdmissionFile::TokenBucket(w) => w.validate(c, p),
            AdmissionFile::Gcra(w) => w.validate(c, p),
            AdmissionFile::FixedWindow(w) => w.validate(c, p),
            AdmissionFile::LeakyBucket(w) => w.validate(c, p),
            AdmissionFile::Probabilistic(w) => w.validate(c, p),
        }
    }
}

/// The status a limiter's rejection is answered with when none is written.
pub(crate) const DEFAULT_STATUS: u16 = 429;

/// The status a rejection is answered with: 429 (default) or 503.
pub(crate) fn status_of(c: &Ctx, p: &str, status: Option<u16>) -> R<u16> {
    status_or(c, p, status, DEFAULT_STATUS)
}

/// The status a rejection is answered with: 429 or 503, `default` when not written.
pub(crate) fn status_or(c: &Ctx, p: &str, status: Option<u16>, default: u16) -> R<u16> {
    match status.unwrap_or(default) {
        s @ (429 | 503) => Ok(s),
        s => c.err(
            format!("{p}.status"),
            format!("must be 429 or 503 (found {s})"),
        ),
    }
}

/// A tier's validated limiter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AdmissionConfig {
    /// Envoy's local rate limit.
    TokenBucket(token_bucket::Config),
    /// redis-cell's GCRA.
    Gcra(gcra::Config),
    /// N per fixed window.
    FixedWindow(fixed_window::Config),
    /// nginx's `limit_req`.
    LeakyBucket(leaky_bucket::Config),
    /// Admission with probability `min(1, capacity / offered rate)`.
    Probabilistic(probabilistic::Config),
}

impl AdmissionConfig {
    /// The status of its rejections.
    pub fn status(&self) -> u16 {
        match self {
            AdmissionConfig::TokenBucket(c) => c.status,
            AdmissionConfig::Gcra(c) => c.status,
            AdmissionConfig::FixedWindow(c) => c.status,
            AdmissionConfig::LeakyBucket(c) => c.status,
            AdmissionConfig::Probabilistic(c) => c.status,
        }
    }

    /// Whether its rejections carry a Retry-After computed per rejection.
    pub fn computes_retry_after(&self) -> bool {
        matches!(self, AdmissionConfig::Gcra(c) if c.computed)
    }

    /// Whether it is of a kind that delays admitted attempts ([`Verdict::Delay`]):
    /// its tier has the delay columns (even with `nodelay`).
    pub fn delays(&self) -> bool {
        matches!(self, AdmissionConfig::LeakyBucket(_))
    }

    /// Whether it draws random numbers (from the tier's stream `admission/<tier>`).
    pub fn draws(&self) -> bool {
        matches!(self, AdmissionConfig::Probabilistic(_))
    }

    /// Its kind as written.
    pub fn kind(&self) -> &'static str {
        match self {
            AdmissionConfig::TokenBucket(_) => "token_bucket",
            AdmissionConfig::Gcra(_) => "gcra",
            AdmissionConfig::FixedWindow(_) => "fixed_window",
            AdmissionConfig::LeakyBucket(_) => "leaky_bucket",
            AdmissionConfig::Probabilistic(_) => "probabilistic",
        }
    }

    /// What explain says of the limiter.
    pub fn describe(&self) -> String {
        match self {
            AdmissionConfig::TokenBucket(c) => c.describe(),
            AdmissionConfig::Gcra(c) => c.describe(),
            AdmissionConfig::FixedWindow(c) => c.describe(),
            AdmissionConfig::LeakyBucket(c) => c.describe(),
            AdmissionConfig::Probabilistic(c) => c.describe(),
        }
    }

    /// Bytes of state a tier keeps for it (a constant: O(1) per tier).
    pub const fn memory_bound() -> u64 {
        std::mem::size_of::<Admission>() as u64
    }
}

/// What the limiter says of an arriving attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// On to the queue.
    Admit,
    /// Refused, with the Retry-After it carries in whole seconds, if any.
    Limit(Option<u64>),
    /// Admitted, on to the queue after waiting this long (ns, more than 0).
    Delay(crate::engine::Nanos),
}

/// A tier's limiter state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Admission {
    /// Envoy's local rate limit.
    TokenBucket(token_bucket::Bucket),
    /// redis-cell's GCRA.
    Gcra(gcra::Gcra),
    /// N per fixed window.
    FixedWindow(fixed_window::Window),
    /// nginx's `limit_req`.
    LeakyBucket(leaky_bucket::Bucket),
    /// Admission with probability `min(1, capacity / offered rate)`.
    Probabilistic(probabilistic::Probabilistic),
}

impl Admission {
    /// The limiter at time 0.
    pub(crate) fn new(cfg: AdmissionConfig) -> Admission {
        match cfg {
            AdmissionConfig::TokenBucket(c) => Admission::TokenBucket(token_bucket::Bucket::new(c)),
            AdmissionConfig::Gcra(c) => Admission::Gcra(gcra::Gcra::new(c)),
            AdmissionConfig::FixedWindow(c) => Admission::FixedWindow(fixed_window::Window::new(c)),
            AdmissionConfig::LeakyBucket(c) => Admission::LeakyBucket(leaky_bucket::Bucket::new(c)),
            AdmissionConfig::Probabilistic(c) => {
                Admission::Probabilistic(probabilistic::Probabilistic::new(c))
            }
        }
    }

    /// An attempt arrives at `now` (times never go back); `rng` is the tier's
    /// admission stream, which only a limiter that [`AdmissionConfig::draws`] needs.
    #[inline]
    pub(crate) fn admit(
        &mut self,
        now: crate::engine::Nanos,
        rng: Option<&mut ChaCha8Rng>,
    ) -> Verdict {
        match self {
            Admission::TokenBucket(b) => b.admit(now),
            Admission::Gcra(g) => g.admit(now),
            Admission::FixedWindow(w) => w.admit(now),
            Admission::LeakyBucket(b) => b.admit(now),
            Admission::Probabilistic(p) => p.admit(
                now,
                rng.expect("a probabilistic limiter's tier has its admission stream"),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_stays_three_bytes_so_a_node_stays_56() {
        assert_eq!(std::mem::size_of::<crate::model::outcome::Outcome>(), 3);
        assert_eq!(std::mem::size_of::<crate::model::request::Node>(), 56);
    }

    #[test]
    fn a_limiter_keeps_a_few_words() {
        assert!(AdmissionConfig::memory_bound() <= 64);
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn admission_example() {
        use crate::model::admission::{fixed_window, Admission, AdmissionConfig, Verdict};
        let cfg = AdmissionConfig::FixedWindow(fixed_window::Config {
            limit: 2,
            window: 1_000_000_000,
            status: 429,
        });
        let mut a = Admission::new(cfg);
        assert_eq!(a.admit(0, None), Verdict::Admit);
        assert_eq!(a.admit(1, None), Verdict::Admit);
        assert_eq!(a.admit(2, None), Verdict::Limit(None));
    }
}
