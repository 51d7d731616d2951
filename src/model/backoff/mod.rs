//! Backoff: the wait after failed attempt `k` (k = 1, 2, ...) before attempt `k + 1`.
//!
//! A backoff is one of a closed set of kinds (vendors), each in its own file that holds
//! everything about it: its written form ([`BackoffFile`], as the scenario file writes
//! it) with its defaults, its rules (`validate`), its arithmetic, what `explain` says
//! of it and the bound `explain` sums. This root lists the kinds once ([`Backoff`] and
//! [`BackoffFile`] are generated from that list) and delegates each operation to the
//! kind's [`Kind`] implementation.
//!
//! - [`none`] and [`fixed`]: 0, or always the same delay;
//! - [`exponential`]: `e_k = min(cap, base · multiplier^(k−1))`, then a jitter mode;
//! - the kinds named after a library ([`grpc`], [`envoy`], [`polly`], [`resilience4j`],
//!   [`aws_legacy`], [`aws_standard`], [`finagle`], [`tower`]) reproduce that library's
//!   arithmetic, in its units and roundings.
//!
//! [`wait_u`] takes the uniform draw `u` so that tests can pass exact values;
//! [`next_wait`] draws it. What a call carries from one retry to the next (gRPC's
//! current interval, Polly's `prev`, Finagle's last wait, the previous decorrelated
//! wait) is the caller's `prev`, started at [`initial_state`]. Seconds from Python
//! (botocore) become nanoseconds rounded up, as CPython's `time.sleep` rounds its
//! timeout. The kinds honour a Retry-After as `max(wait, retry_after)` unless their
//! library defines its own rule (gRPC, AWS 2.1).

use rand::Rng;
use rand::RngExt;
use serde::{Deserialize, Serialize};

use crate::engine::time::{from_f64_ns, SECOND};
use crate::engine::Nanos;
use crate::model::attempts::Attempts;
use crate::model::bound::Bound;
use crate::model::field::{Ctx, R};
use crate::model::text::fmt_time;

pub(crate) mod aws_legacy;
pub(crate) mod aws_standard;
pub(crate) mod envoy;
pub(crate) mod exponential;
pub(crate) mod finagle;
pub(crate) mod fixed;
pub(crate) mod grpc;
pub(crate) mod none;
pub(crate) mod polly;
pub(crate) mod resilience4j;
pub(crate) mod tower;

/// The longest backoff parameter accepted (about 11.6 days, the longest run: the
/// scenario's `MAX_HORIZON`); breakers' `open_for` keeps the same bound.
pub(crate) const MAX_BACKOFF_PARAM: Nanos = 1_000_000 * SECOND;

/// What a failed attempt tells the backoff beyond its number.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Failure {
    /// A throttling error (in the model: a rejection with status 429).
    pub throttled: bool,
    /// The Retry-After (gRPC: server pushback) the layer honours, when the failure
    /// carried one and the layer respects it.
    pub retry_after: Option<Nanos>,
}

impl Failure {
    /// `w`, or the Retry-After when it is longer (the rule of most kinds).
    #[inline]
    pub fn or_retry_after(&self, w: Nanos) -> Nanos {
        self.retry_after.map_or(w, |ra| w.max(ra))
    }
}

/// What each kind of backoff computes; [`Backoff`] hands each call to its kind. The
/// attempt number `k` is at least 1.
pub(crate) trait Kind {
    /// The state `prev` a call starts its backoff with (0 unless the kind says).
    fn initial_state(&self) -> Nanos {
        0
    }

    /// Whether the wait after failed attempt `k` needs a uniform draw.
    fn draws(&self, k: u32, prev: Nanos, f: &Failure) -> bool;

    /// The wait after failed attempt `k` with the uniform draw `u` in `[0, 1)` given,
    /// updating the call's state `prev`.
    fn wait_u(&self, k: u32, prev: &mut Nanos, f: &Failure, u: f64) -> Nanos;

    /// The wait after failed attempt `k`, drawing one `u = rng.random::<f64>()` when
    /// [`Kind::draws`] says so and computing [`Kind::wait_u`].
    #[inline]
    fn next_wait<G: Rng + ?Sized>(
        &self,
        k: u32,
        prev: &mut Nanos,
        f: &Failure,
        rng: &mut G,
    ) -> Nanos {
        let u = if self.draws(k, *prev, f) {
            rng.random::<f64>()
        } else {
            0.0
        };
        self.wait_u(k, prev, f, u)
    }

    /// The largest wait after failed attempt `k` (for `explain`'s schedule bound): a
    /// bound no draw reaches or exceeds, Retry-After aside.
    fn max_wait(&self, k: u32) -> Nanos;

    /// The wait the largest waits settle at as `k` grows (`u64::MAX` when they grow
    /// without bound), for `explain`'s sum over long schedules.
    fn settled_wait(&self) -> Nanos;

    /// Whether the waits are random: false for a fixed or unjittered schedule.
    fn is_jittered(&self) -> bool;

    /// The backoff in words, e.g. `exponential from 50ms, ×2, capped at 1s, full jitter`.
    fn describe(&self) -> String;

    /// A short form, for the preset line of `explain` (the long one unless shorter).
    fn short(&self) -> String {
        self.describe()
    }

    /// For the `unjittered-backoff-many-clients` lint: what the layer retries with
    /// ("a fixed backoff of 100ms"), when its waits are deterministic and positive.
    fn unjittered(&self, _max_attempts: Attempts) -> Option<String> {
        (!self.is_jittered() && self.max_wait(1) > 0)
            .then(|| format!("an unjittered backoff ({})", self.describe()))
    }
}

/// The kinds: one line each (variant, vendor module, validated type). The written
/// enum, the validated enum and the delegation of every operation come from it.
macro_rules! kinds {
    ($($(#[$doc:meta])* $variant:ident($module:ident::$valid:ident)),* $(,)?) => {
        /// Wait after a failed attempt, as written: `{ kind = "...", ... }`.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
        pub enum BackoffFile {
            $($(#[$doc])* $variant($module::Written),)*
        }

        /// Backoff policy, validated.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum Backoff {
            $($(#[$doc])* $variant($module::$valid),)*
        }

        impl BackoffFile {
            /// The validated backoff; `p` is the path of the backoff table.
            pub fn validate(&self, c: &Ctx, p: &str) -> R<Backoff> {
                match self {
                    $(BackoffFile::$variant(w) => w.validate(c, p).map(Backoff::$variant),)*
                }
            }
        }

        impl Backoff {
            /// See [`Kind::initial_state`].
            #[inline]
            pub fn initial_state(&self) -> Nanos {
                match self { $(Backoff::$variant(b) => b.initial_state(),)* }
            }

            /// See [`Kind::next_wait`].
            #[inline]
            pub fn next_wait<G: Rng + ?Sized>(
                &self,
                k: u32,
                prev: &mut Nanos,
                f: &Failure,
                rng: &mut G,
            ) -> Nanos {
                let k = k.max(1);
                match self { $(Backoff::$variant(b) => b.next_wait(k, prev, f, rng),)* }
            }

            /// See [`Kind::wait_u`].
            pub fn wait_u(&self, k: u32, prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
                let k = k.max(1);
                match self { $(Backoff::$variant(b) => b.wait_u(k, prev, f, u),)* }
            }

            /// See [`Kind::max_wait`].
            pub fn max_wait(&self, k: u32) -> Nanos {
                let k = k.max(1);
                match self { $(Backoff::$variant(b) => b.max_wait(k),)* }
            }

            /// See [`Kind::settled_wait`].
            pub fn settled_wait(&self) -> Nanos {
                match self { $(Backoff::$variant(b) => b.settled_wait(),)* }
            }

            /// See [`Kind::is_jittered`].
            pub fn is_jittered(&self) -> bool {
                match self { $(Backoff::$variant(b) => b.is_jittered(),)* }
            }

            /// See [`Kind::describe`].
            pub fn describe(&self) -> String {
                match self { $(Backoff::$variant(b) => b.describe(),)* }
            }

            /// See [`Kind::short`].
            pub fn short(&self) -> String {
                match self { $(Backoff::$variant(b) => b.short(),)* }
            }

            /// See [`Kind::unjittered`].
            pub fn unjittered(&self, max_attempts: Attempts) -> Option<String> {
                match self { $(Backoff::$variant(b) => b.unjittered(max_attempts),)* }
            }
        }
    };
}

kinds! {
    /// Retry at once.
    None(none::NoBackoff),
    /// Always `delay`.
    Fixed(fixed::Fixed),
    /// Capped exponential with optional jitter.
    Exponential(exponential::Exponential),
    /// gRPC retry backoff with server pushback (gRFC A6).
    Grpc(grpc::Grpc),
    /// Envoy's jittered exponential backoff, in whole milliseconds.
    Envoy(envoy::Envoy),
    /// Polly v8 retry delay, in 100 ns ticks.
    Polly(polly::Polly),
    /// Resilience4j `IntervalFunction`, in whole milliseconds.
    Resilience4j(resilience4j::Resilience4j),
    /// botocore legacy mode.
    AwsLegacy(aws_legacy::AwsLegacy),
    /// botocore standard mode.
    AwsStandard(aws_standard::AwsStandard),
    /// Finagle decorrelated jitter.
    Finagle(finagle::Finagle),
    /// tower exponential backoff.
    Tower(tower::Tower),
}

/// A layer's backoff validated; no backoff written is `none`. `p` is the path of the
/// backoff table.
pub(crate) fn validate(c: &Ctx, p: &str, b: Option<&BackoffFile>) -> R<Backoff> {
    match b {
        Some(b) => b.validate(c, p),
        None => Ok(Backoff::None(none::NoBackoff)),
    }
}

/// The wait after failed attempt `k` with no Retry-After; `prev` is the call's state
/// (start it at [`initial_state`]).
#[inline]
#[cfg(test)]
pub(crate) fn wait<G: Rng + ?Sized>(b: &Backoff, k: u32, prev: &mut Nanos, rng: &mut G) -> Nanos {
    b.next_wait(k, prev, &Failure::default(), rng)
}

/// The wait after failed attempt `k`, drawing from `rng` as the layer's kind needs; the
/// one entry point of the model ([`Kind::next_wait`]).
#[inline(always)] // in both worlds, traced and untraced (see `crate::model::World`)
pub(crate) fn next_wait<G: Rng + ?Sized>(
    b: &Backoff,
    k: u32,
    prev: &mut Nanos,
    f: &Failure,
    rng: &mut G,
) -> Nanos {
    b.next_wait(k, prev, f, rng)
}

/// The wait after failed attempt `k` (1-based) with the uniform draw `u` in `[0, 1)`
/// given, updating the call's state `prev` ([`Kind::wait_u`]; each kind's module
/// gives its formula).
#[cfg(test)]
pub(crate) fn wait_u(b: &Backoff, k: u32, prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
    b.wait_u(k, prev, f, u)
}

/// The state a call starts its backoff with ([`Kind::initial_state`]).
#[inline]
pub(crate) fn initial_state(b: &Backoff) -> Nanos {
    b.initial_state()
}

/// The largest wait after failed attempt `k` ([`Kind::max_wait`]).
pub(crate) fn max_wait(b: &Backoff, k: u32) -> Nanos {
    b.max_wait(k)
}

/// The wait the largest waits settle at ([`Kind::settled_wait`]).
pub(crate) fn settled_wait(b: &Backoff) -> Nanos {
    b.settled_wait()
}

// ----- what several kinds share -------------------------------------------------

/// `min(cap, base · multiplier^(k−1))`, rounded to the nanosecond, saturating.
#[inline]
pub(crate) fn exponential_ceiling(base: Nanos, cap: Nanos, multiplier: f64, k: u32) -> Nanos {
    let exp = k.saturating_sub(1).min(4096) as i32;
    let e = base as f64 * multiplier.powi(exp);
    from_f64_ns(e).min(cap)
}

/// Uniform integer in `[lo, hi)`, or `lo` when the range is empty.
#[inline]
fn uniform<G: Rng + ?Sized>(rng: &mut G, lo: Nanos, hi: Nanos) -> Nanos {
    if hi > lo {
        rng.random_range(lo..hi)
    } else {
        lo
    }
}

/// `floor(u·n)`, below `n` for `n > 0` (a uniform integer in `[0, n)` from `u`).
#[inline]
fn scale(u: f64, n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    ((u * n as f64) as u64).min(n - 1)
}

/// Seconds (from Python) to nanoseconds, rounded up as `time.sleep` rounds a timeout.
fn secs_to_ns_ceil(s: f64) -> Nanos {
    let ns = s * SECOND as f64;
    if ns.is_nan() || ns <= 0.0 {
        0
    } else if ns >= u64::MAX as f64 {
        u64::MAX
    } else {
        ns.ceil() as u64
    }
}

/// `"capped at 1s"` or `"no cap"` (`None` = no cap).
fn cap_text(cap: Option<Nanos>) -> String {
    match cap {
        Some(m) => format!("capped at {}", fmt_time(m)),
        None => "no cap".to_string(),
    }
}

/// The longest total wait of one call's backoff schedule: the sum over k = 1 .. N−1
/// of the largest wait after failed attempt k, each raised to at least `floor` (a
/// Retry-After honoured after every failure; 0 for none).
pub(crate) fn backoff_total(b: &Backoff, max_attempts: Attempts, floor: Nanos) -> Bound {
    let term = |k: u32| max_wait(b, k).max(floor);
    let Some(max_attempts) = max_attempts.limit() else {
        // The waits never shrink (multiplier ≥ 1), so the first one decides.
        return if term(1) > 0 {
            Bound::Unbounded
        } else {
            Bound::Finite(0)
        };
    };
    // The wait every later term settles at, once reached.
    let limit = settled_wait(b).max(floor);
    let retries = max_attempts.saturating_sub(1);
    let mut sum = Bound::Finite(0);
    for k in 1..=retries {
        let t = term(k);
        if t == limit {
            let rest = u64::from(retries - k + 1);
            return sum + Bound::Finite(limit) * Bound::Finite(rest);
        }
        sum = sum + Bound::Finite(t);
        if sum == Bound::Unbounded {
            break;
        }
    }
    sum
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn backoff_example() {
        use crate::model::backoff::exponential::{Exponential, Jitter};
        use crate::model::backoff::{exponential_ceiling, wait, Backoff};
        let b = Backoff::Exponential(Exponential {
            base: 10,
            cap: 50,
            multiplier: 2.0,
            jitter: Jitter::None,
        });
        let mut rng = crate::engine::stream(1, "doc");
        let mut prev = 10;
        let waits: Vec<u64> = (1..=4).map(|k| wait(&b, k, &mut prev, &mut rng)).collect();
        assert_eq!(waits, vec![10, 20, 40, 50]);
        assert_eq!(exponential_ceiling(10, 50, 2.0, 3), 40);
    }
}
