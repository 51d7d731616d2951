//! `grpc`: grpc-java `RetriableStream.makeRetryDecision` and `intervalWithJitter`.
//!
//! With a pushback `p`, wait `p` and reset the interval to `initial`; otherwise wait
//! `(long)(interval·(0.4·u + 0.8))` ns (the current formula; `(long)(interval·u)` with
//! `formula = "pre_2024"`) and set `interval = min((long)(interval·multiplier), max)`:
//! the jitter comes after the cap, so a wait can exceed `max` by up to 20%.

use serde::{Deserialize, Serialize};

use super::{Failure, Kind, MAX_BACKOFF_PARAM};
use crate::engine::time::from_f64_ns;
use crate::engine::Nanos;
use crate::model::field::{at_most_dur, in_range, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// Which jitter of gRPC's retry backoff (gRFC A6).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum Formula {
    /// gRFC A6 since its 2024-08-29 update, and C-core, grpc-go ≥ 1.69, grpc-java ≥ 1.71:
    /// `interval · U[0.8, 1.2)`, the jitter applied after the cap (the default).
    #[default]
    #[serde(rename = "current")]
    Current,
    /// The original A6 text and the clients before that update: `U[0, interval)`.
    #[serde(rename = "pre_2024")]
    Pre2024,
}

/// `{ kind = "grpc", initial = "100ms", max = "1s", multiplier = 2 }` (all required, as
/// in gRFC A6).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// `initialBackoff`.
    pub initial: Dur,
    /// `maxBackoff`.
    pub max: Dur,
    /// `backoffMultiplier`.
    pub multiplier: f64,
    /// `"current"` (default: `interval · U[0.8, 1.2)`, gRFC A6 since 2024) or
    /// `"pre_2024"` (`U[0, interval)`, clients before grpc-go 1.69 / grpc-java 1.71).
    #[schemars(extend("default" = crate::model::field::default_of::<Formula>()))]
    pub formula: Option<Formula>,
}

impl Written {
    /// Positive durations up to [`MAX_BACKOFF_PARAM`], `multiplier` in `(0, 1000]`.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Grpc> {
        let f = |k: &str| format!("{p}.{k}");
        let initial = c.positive_dur(&f("initial"), self.initial)?;
        let max = c.positive_dur(&f("max"), self.max)?;
        at_most_dur(c, &f("initial"), initial, MAX_BACKOFF_PARAM)?;
        at_most_dur(c, &f("max"), max, MAX_BACKOFF_PARAM)?;
        let multiplier = c.positive(&f("multiplier"), self.multiplier)?;
        let multiplier = in_range(c, &f("multiplier"), multiplier, 0.0, 1000.0)?;
        Ok(Grpc {
            initial,
            max,
            multiplier,
            formula: self.formula.unwrap_or_default(),
        })
    }
}

/// gRPC retry (grpc-java `RetriableStream`): `interval · U[0.8, 1.2)` (or, with the
/// pre-2024 formula, `U(0, interval)`), then `interval = min(interval·multiplier, max)`;
/// a server pushback is the wait and resets the interval to `initial`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Grpc {
    /// `initialBackoff`.
    pub initial: Nanos,
    /// `maxBackoff`.
    pub max: Nanos,
    /// `backoffMultiplier`.
    pub multiplier: f64,
    /// Current (2024) jitter or the original one.
    pub formula: Formula,
}

impl Kind for Grpc {
    fn initial_state(&self) -> Nanos {
        self.initial
    }

    fn draws(&self, _k: u32, _prev: Nanos, f: &Failure) -> bool {
        f.retry_after.is_none()
    }

    fn wait_u(&self, _k: u32, prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
        if let Some(p) = f.retry_after {
            *prev = self.initial;
            return p;
        }
        let interval = *prev;
        let factor = match self.formula {
            Formula::Current => 0.4 * u + 0.8,
            Formula::Pre2024 => u,
        };
        let w = (interval as f64 * factor) as u64;
        *prev = ((interval as f64 * self.multiplier) as u64).min(self.max);
        w
    }

    fn max_wait(&self, k: u32) -> Nanos {
        let i = interval(self.initial, self.max, self.multiplier, k);
        match self.formula {
            Formula::Pre2024 => i,
            Formula::Current => jitter_bound(i),
        }
    }

    fn settled_wait(&self) -> Nanos {
        match self.formula {
            Formula::Pre2024 => self.max,
            Formula::Current => jitter_bound(self.max),
        }
    }

    fn is_jittered(&self) -> bool {
        true
    }

    fn describe(&self) -> String {
        match self.formula {
            Formula::Current => format!(
                "gRPC (gRFC A6 since 2024): interval × uniform [0.8, 1.2), interval from {} ×{} up to {} (the jitter comes after the cap: waits up to 1.2 × {}); a server pushback (Retry-After) is the wait and resets the interval",
                fmt_time(self.initial),
                fmt_num(self.multiplier),
                fmt_time(self.max),
                fmt_time(self.max)
            ),
            Formula::Pre2024 => format!(
                "gRPC pre-2024 full jitter: uniform in [0, interval), interval from {} ×{} up to {}; a server pushback (Retry-After) is the wait and resets the interval",
                fmt_time(self.initial),
                fmt_num(self.multiplier),
                fmt_time(self.max)
            ),
        }
    }

    fn short(&self) -> String {
        format!(
            "{} {}×{} up to {} with pushback",
            match self.formula {
                Formula::Current => "×U[0.8, 1.2)",
                Formula::Pre2024 => "full jitter",
            },
            fmt_time(self.initial),
            fmt_num(self.multiplier),
            fmt_time(self.max)
        )
    }
}

/// gRPC's interval before retry `k`: `initial`, then `min((long)(i·m), max)` each retry.
fn interval(initial: Nanos, max: Nanos, multiplier: f64, k: u32) -> Nanos {
    let mut i = initial;
    for _ in 1..k {
        let next = ((i as f64 * multiplier) as u64).min(max);
        if next == i {
            break;
        }
        i = next;
    }
    i
}

/// A bound no current-formula gRPC wait of `interval` exceeds: `interval · 1.2`,
/// rounded up.
fn jitter_bound(interval: Nanos) -> Nanos {
    from_f64_ns((interval as f64 * 1.2).ceil())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn the_interval_grows_to_max_and_the_current_jitter_can_exceed_it() {
        let g = Grpc {
            initial: 100 * MS,
            max: 1000 * MS,
            multiplier: 2.0,
            formula: Formula::Current,
        };
        let mut prev = g.initial_state();
        let none = Failure::default();
        // u = 0.5: factor 1.0, the interval itself.
        let w: Vec<u64> = (1..=5)
            .map(|k| g.wait_u(k, &mut prev, &none, 0.5) / MS)
            .collect();
        assert_eq!(w, [100, 200, 400, 800, 1000]);
        assert_eq!(g.max_wait(5), 1200 * MS);
        assert_eq!(g.settled_wait(), 1200 * MS);
    }

    #[test]
    fn formula_defaults_to_current() {
        let w = Written {
            initial: Dur(MS),
            max: Dur(10 * MS),
            multiplier: 2.0,
            formula: None,
        };
        assert_eq!(w.validate(&Ctx, "b").unwrap().formula, Formula::Current);
    }
}
