//! `polly`: Polly v8 `RetryHelper.GetRetryDelay`, in .NET's 100 ns ticks.
//!
//! With the 0-based attempt `a = k − 1`: constant `d`, linear `(a+1)·d`, exponential
//! `2^a·d`; with jitter `d + 0.5·d·u − 0.25·d` for constant and linear,
//! DecorrelatedJitterBackoffV2 for exponential (its `prev` is the call's state, as the
//! bits of an `f64`; `prev = 0.0` has the bits 0); then `min(·, max_delay)`.

use serde::{Deserialize, Serialize};

use super::{Failure, Kind};
use crate::engine::time::SECOND;
use crate::engine::{math, Nanos};
use crate::model::field::{at_most_dur, Ctx, Dur, R};
use crate::model::text::fmt_time;

/// `Delay` when none is written.
pub(crate) const DEFAULT_DELAY: Nanos = 2 * SECOND;

/// `UseJitter` when `jitter` is not written.
pub(crate) const DEFAULT_JITTER: bool = false;
/// The longest `Delay` and `MaxDelay` Polly's options accept: one day.
pub(crate) const MAX_DELAY: Nanos = 86_400 * SECOND;

/// Polly's `DelayBackoffType`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BackoffType {
    /// The same delay every time (the default).
    #[default]
    Constant,
    /// `(k+1)·delay` for 0-based retry k.
    Linear,
    /// `2^k·delay`; with jitter, DecorrelatedJitterBackoffV2.
    Exponential,
}

/// `{ kind = "polly", delay = "2s", backoff_type = "exponential", jitter = true }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// `Delay`.
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_DELAY)))]
    pub delay: Option<Dur>,
    /// `"constant"` (default), `"linear"` or `"exponential"`.
    #[schemars(extend("default" = crate::model::field::default_of::<BackoffType>()))]
    pub backoff_type: Option<BackoffType>,
    /// `UseJitter` (default false).
    #[schemars(extend("default" = DEFAULT_JITTER))]
    pub jitter: Option<bool>,
    /// `MaxDelay` (default none).
    pub max_delay: Option<Dur>,
}

impl Written {
    /// Delays up to one day, as Polly's options accept.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Polly> {
        let f = |k: &str| format!("{p}.{k}");
        let delay = self.delay.map_or(DEFAULT_DELAY, |d| d.0);
        let delay = at_most_dur(c, &f("delay"), delay, MAX_DELAY)?;
        let max_delay = match self.max_delay {
            Some(m) => Some(at_most_dur(c, &f("max_delay"), m.0, MAX_DELAY)? / 100),
            None => None,
        };
        Ok(Polly {
            delay_ticks: delay / 100,
            backoff_type: self.backoff_type.unwrap_or_default(),
            jitter: self.jitter.unwrap_or(DEFAULT_JITTER),
            max_delay_ticks: max_delay,
        })
    }
}

/// Polly v8 retry delays, in 100 ns ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Polly {
    /// `Delay` in ticks.
    pub delay_ticks: u64,
    /// `BackoffType`.
    pub backoff_type: BackoffType,
    /// `UseJitter`.
    pub jitter: bool,
    /// `MaxDelay` in ticks.
    pub max_delay_ticks: Option<u64>,
}

impl Kind for Polly {
    fn draws(&self, _k: u32, _prev: Nanos, _f: &Failure) -> bool {
        self.jitter && self.delay_ticks > 0
    }

    fn wait_u(&self, k: u32, prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
        f.or_retry_after(self.ticks(k - 1, prev, u).saturating_mul(100))
    }

    fn max_wait(&self, k: u32) -> Nanos {
        let ticks = self.max_ticks(k);
        let ticks = self.max_delay_ticks.map_or(ticks, |m| ticks.min(m));
        ticks.saturating_mul(100)
    }

    fn settled_wait(&self) -> Nanos {
        let grows = self.delay_ticks > 0 && self.backoff_type != BackoffType::Constant;
        match (grows, self.max_delay_ticks) {
            (false, m) => {
                let t = self.max_ticks(1);
                m.map_or(t, |m| t.min(m)).saturating_mul(100)
            }
            (true, Some(m)) => m.saturating_mul(100),
            (true, None) => u64::MAX,
        }
    }

    fn is_jittered(&self) -> bool {
        self.jitter
    }

    fn describe(&self) -> String {
        let d = fmt_time(self.delay_ticks * 100);
        let shape = match (self.backoff_type, self.jitter) {
            (BackoffType::Constant, false) => format!("constant {d}"),
            (BackoffType::Constant, true) => format!("constant {d} ±25% jitter"),
            (BackoffType::Linear, false) => format!("linear (k+1)·{d}"),
            (BackoffType::Linear, true) => format!("linear (k+1)·{d} ±25% jitter"),
            (BackoffType::Exponential, false) => format!("exponential 2^k·{d}"),
            (BackoffType::Exponential, true) => {
                format!("exponential from {d} with DecorrelatedJitterBackoffV2")
            }
        };
        match self.max_delay_ticks {
            Some(m) => format!("Polly {shape}, capped at {}", fmt_time(m * 100)),
            None => format!("Polly {shape}"),
        }
    }
}

impl Polly {
    /// `GetRetryDelay` in ticks for 0-based attempt `a`.
    fn ticks(&self, a: u32, prev: &mut Nanos, u: f64) -> u64 {
        let delay = self.delay_ticks;
        if delay == 0 {
            return 0;
        }
        let a_f = f64::from(a);
        let core: Result<u64, ()> = if self.jitter {
            match self.backoff_type {
                BackoffType::Constant => jitter(delay, u),
                BackoffType::Linear => {
                    let ms = (a_f + 1.0) * (delay as f64 / 10_000.0);
                    dotnet_ticks(ms * 10_000.0).and_then(|t| jitter(t, u))
                }
                BackoffType::Exponential => {
                    const P_FACTOR: f64 = 4.0;
                    const RP_SCALING: f64 = 1.0 / 1.4;
                    let max_ticks = i64::MAX as f64 - 1_000.0;
                    let mut p = f64::from_bits(*prev);
                    let t = a_f + u;
                    let next = math::pow(2.0, t) * math::tanh((P_FACTOR * t).sqrt());
                    let ticks = if next.is_infinite() {
                        p = next;
                        max_ticks as i64 as u64
                    } else {
                        let v = next - p;
                        p = next;
                        ((v * RP_SCALING * delay as f64).min(max_ticks) as i64).max(0) as u64
                    };
                    *prev = p.to_bits();
                    Ok(ticks)
                }
            }
        } else {
            // TimeSpan * double: Math.Round (to even) of ticks·factor.
            let factor = match self.backoff_type {
                BackoffType::Constant => 1.0,
                BackoffType::Linear => a_f + 1.0,
                BackoffType::Exponential => math::pow(2.0, a_f),
            };
            dotnet_ticks((delay as f64 * factor).round_ties_even())
        };
        match (core, self.max_delay_ticks) {
            (Ok(t), Some(m)) => t.min(m),
            (Ok(t), None) => t,
            (Err(()), Some(m)) => m,
            (Err(()), None) => i64::MAX as u64,
        }
    }

    /// The largest delay for retry `k` (ticks, before `MaxDelay`).
    fn max_ticks(&self, k: u32) -> u64 {
        let a = f64::from(k - 1);
        let d = self.delay_ticks as f64;
        let t = match (self.backoff_type, self.jitter) {
            (BackoffType::Constant, false) => d,
            (BackoffType::Constant, true) => 1.25 * d,
            (BackoffType::Linear, false) => (a + 1.0) * d,
            (BackoffType::Linear, true) => 1.25 * (a + 1.0) * d,
            (BackoffType::Exponential, false) => math::pow(2.0, a) * d,
            (BackoffType::Exponential, true) => {
                // next(t) = 2^t·tanh(√(4t)) grows with t; t ∈ [a, a+1), the previous one
                // in [a−1, a): the difference stays below next(a+1) − next(a−1).
                let next = |t: f64| {
                    if t <= 0.0 {
                        0.0
                    } else {
                        math::pow(2.0, t) * math::tanh((4.0 * t).sqrt())
                    }
                };
                (next(a + 1.0) - next(a - 1.0)) / 1.4 * d
            }
        };
        if t >= u64::MAX as f64 {
            u64::MAX
        } else {
            t.ceil() as u64
        }
    }
}

/// .NET `IntervalFromDoubleTicks`: `Err` on overflow, `TimeSpan.MaxValue` at 2^63,
/// otherwise truncation toward zero.
fn dotnet_ticks(ticks: f64) -> Result<u64, ()> {
    const MAX: f64 = 9_223_372_036_854_775_807.0; // long.MaxValue as a double: 2^63
    if ticks.is_nan() || !(-MAX..=MAX).contains(&ticks) {
        Err(())
    } else if ticks == MAX {
        Ok(i64::MAX as u64)
    } else {
        Ok((ticks as i64).max(0) as u64)
    }
}

/// Polly's `ApplyJitter`: `d + (d·0.5·u − d·0.5/2)` in milliseconds, back to ticks.
fn jitter(ticks: u64, u: f64) -> Result<u64, ()> {
    let ms = ticks as f64 / 10_000.0;
    let offset = (ms * 0.5) / 2.0;
    let random_delay = (ms * 0.5 * u) - offset;
    dotnet_ticks((ms + random_delay) * 10_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_the_one_day_limit() {
        let w = Written {
            delay: None,
            backoff_type: None,
            jitter: None,
            max_delay: None,
        };
        let p = w.validate(&Ctx, "b").unwrap();
        assert_eq!(p.delay_ticks, 20_000_000);
        assert_eq!(p.backoff_type, BackoffType::Constant);
        assert_eq!(p.max_wait(3), DEFAULT_DELAY);
        let long = Written {
            delay: Some(Dur(MAX_DELAY + 1)),
            ..w
        };
        assert_eq!(long.validate(&Ctx, "b").unwrap_err().field, "b.delay");
    }
}
