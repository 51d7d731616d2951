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
//! - [`fixed_window`]: N per window.
//!
//! This root holds the written form [`AdmissionFile`], the validated
//! [`AdmissionConfig`], the per-tier state [`Admission`] and the counts a run keeps
//! ([`Counts`]). Each limiter's state is a few words: O(1) memory per tier and O(1)
//! work per attempt.
//!
//! ```
//! use retrysim::model::admission::{fixed_window, Admission, AdmissionConfig, Verdict};
//! let cfg = AdmissionConfig::FixedWindow(fixed_window::Config {
//!     limit: 2, window: 1_000_000_000, status: 429 });
//! let mut a = Admission::new(cfg);
//! assert_eq!(a.admit(0), Verdict::Admit);
//! assert_eq!(a.admit(1), Verdict::Admit);
//! assert_eq!(a.admit(2), Verdict::Limit(None));
//! ```

pub mod fixed_window;
pub mod gcra;
mod record;
pub mod token_bucket;

use serde::{Deserialize, Serialize};

use crate::model::field::{Ctx, R};

pub use record::Counts;

/// The limiter of a tier, as written: `admission = { kind = "...", ... }`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AdmissionFile {
    /// Envoy's local rate limit.
    TokenBucket(token_bucket::Written),
    /// redis-cell's GCRA.
    Gcra(gcra::Written),
    /// N per fixed window.
    FixedWindow(fixed_window::Written),
}

impl AdmissionFile {
    /// The validated limiter; `p` is the field path of the table
    /// (`dependency.admission`).
    pub fn validate(&self, c: &Ctx, p: &str) -> R<AdmissionConfig> {
        match self {
            AdmissionFile::TokenBucket(w) => w.validate(c, p),
            AdmissionFile::Gcra(w) => w.validate(c, p),
            AdmissionFile::FixedWindow(w) => w.validate(c, p),
        }
    }
}

/// The status a limiter's rejection is answered with when none is written.
pub const DEFAULT_STATUS: u16 = 429;

/// The status a rejection is answered with: 429 (default) or 503.
pub(crate) fn status_of(c: &Ctx, p: &str, status: Option<u16>) -> R<u16> {
    match status.unwrap_or(DEFAULT_STATUS) {
        s @ (429 | 503) => Ok(s),
        s => c.err(
            format!("{p}.status"),
            format!("must be 429 or 503 (found {s})"),
        ),
    }
}

/// A tier's validated limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AdmissionConfig {
    /// Envoy's local rate limit.
    TokenBucket(token_bucket::Config),
    /// redis-cell's GCRA.
    Gcra(gcra::Config),
    /// N per fixed window.
    FixedWindow(fixed_window::Config),
}

impl AdmissionConfig {
    /// The status of its rejections.
    pub fn status(&self) -> u16 {
        match self {
            AdmissionConfig::TokenBucket(c) => c.status,
            AdmissionConfig::Gcra(c) => c.status,
            AdmissionConfig::FixedWindow(c) => c.status,
        }
    }

    /// Whether its rejections carry a Retry-After computed per rejection.
    pub fn computes_retry_after(&self) -> bool {
        matches!(self, AdmissionConfig::Gcra(c) if c.computed)
    }

    /// Its kind as written.
    pub fn kind(&self) -> &'static str {
        match self {
            AdmissionConfig::TokenBucket(_) => "token_bucket",
            AdmissionConfig::Gcra(_) => "gcra",
            AdmissionConfig::FixedWindow(_) => "fixed_window",
        }
    }

    /// What explain says of the limiter.
    pub fn describe(&self) -> String {
        match self {
            AdmissionConfig::TokenBucket(c) => c.describe(),
            AdmissionConfig::Gcra(c) => c.describe(),
            AdmissionConfig::FixedWindow(c) => c.describe(),
        }
    }

    /// Bytes of state a tier keeps for it (a constant: O(1) per tier).
    pub const fn memory_bound() -> u64 {
        std::mem::size_of::<Admission>() as u64
    }
}

/// What the limiter says of an arriving attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// On to the queue.
    Admit,
    /// Refused, with the Retry-After it carries in whole seconds, if any.
    Limit(Option<u64>),
}

/// A tier's limiter state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Envoy's local rate limit.
    TokenBucket(token_bucket::Bucket),
    /// redis-cell's GCRA.
    Gcra(gcra::Gcra),
    /// N per fixed window.
    FixedWindow(fixed_window::Window),
}

impl Admission {
    /// The limiter at time 0.
    pub fn new(cfg: AdmissionConfig) -> Admission {
        match cfg {
            AdmissionConfig::TokenBucket(c) => Admission::TokenBucket(token_bucket::Bucket::new(c)),
            AdmissionConfig::Gcra(c) => Admission::Gcra(gcra::Gcra::new(c)),
            AdmissionConfig::FixedWindow(c) => Admission::FixedWindow(fixed_window::Window::new(c)),
        }
    }

    /// An attempt arrives at `now` (times never go back).
    #[inline]
    pub fn admit(&mut self, now: crate::engine::Nanos) -> Verdict {
        match self {
            Admission::TokenBucket(b) => b.admit(now),
            Admission::Gcra(g) => g.admit(now),
            Admission::FixedWindow(w) => w.admit(now),
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
