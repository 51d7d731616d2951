//! `exponential`: `e_k = min(cap, base · multiplier^(k−1))`, then by jitter:
//! - `none`: `e_k`;
//! - `full`: `uniform(0, e_k)`;
//! - `equal`: `e_k/2 + uniform(0, e_k/2)`;
//! - `decorrelated`: `d_k = min(cap, uniform(base, 3·d_(k−1)))`, `d_0 = base`
//!   (the previous wait is the caller's state).
//!
//! The model draws the integer directly ([`Exponential::wait`]); [`Kind::wait_u`]
//! takes `u` for the same law (`full`: `floor(u·e_k)`).

use rand::Rng;
use serde::{Deserialize, Serialize};

use super::{cap_text, exponential_ceiling, scale, uniform, Failure, Kind};
use crate::engine::time::from_f64_ns;
use crate::engine::Nanos;
use crate::model::field::{in_range, Ctx, Dur, R};
use crate::model::text::{fmt_num, fmt_time};

/// Growth factor when none is written.
pub(crate) const DEFAULT_MULTIPLIER: f64 = 2.0;

/// Jitter mode of exponential backoff.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Jitter {
    /// `e_k` (the default).
    #[default]
    None,
    /// `uniform(0, e_k)`.
    Full,
    /// `e_k/2 + uniform(0, e_k/2)`.
    Equal,
    /// `d_k = min(cap, uniform(base, 3 d_(k-1)))`, `d_0 = base`.
    Decorrelated,
}

impl Jitter {
    fn text(self) -> &'static str {
        match self {
            Jitter::None => "no jitter",
            Jitter::Full => "full jitter",
            Jitter::Equal => "equal jitter",
            Jitter::Decorrelated => "decorrelated jitter",
        }
    }
}

/// `{ kind = "exponential", base = "50ms", cap = "1s", multiplier = 2, jitter = "full" }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// First wait.
    pub base: Dur,
    /// Largest wait (default: none).
    pub cap: Option<Dur>,
    /// Growth factor.
    #[schemars(extend("default" = DEFAULT_MULTIPLIER))]
    pub multiplier: Option<f64>,
    /// Jitter mode (default none).
    #[schemars(extend("default" = crate::model::field::default_of::<Jitter>()))]
    pub jitter: Option<Jitter>,
}

impl Written {
    /// `base > 0` with decorrelated jitter (it starts from `base`), `multiplier` in
    /// `[1, 1000]`.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<Exponential> {
        let f = |k: &str| format!("{p}.{k}");
        let jitter = self.jitter.unwrap_or_default();
        let base = if jitter == Jitter::Decorrelated {
            c.positive_dur(&f("base"), self.base)?
        } else {
            self.base.0
        };
        let multiplier = self.multiplier.unwrap_or(DEFAULT_MULTIPLIER);
        let multiplier = in_range(c, &f("multiplier"), multiplier, 1.0, 1000.0)?;
        Ok(Exponential {
            base,
            cap: self.cap.map_or(u64::MAX, |d| d.0),
            multiplier,
            jitter,
        })
    }
}

/// `e_k = min(cap, base * multiplier^(k-1))`, then jitter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Exponential {
    /// First wait.
    pub base: Nanos,
    /// Largest wait (`u64::MAX`: none).
    pub cap: Nanos,
    /// Growth factor.
    pub multiplier: f64,
    /// Jitter mode.
    pub jitter: Jitter,
}

impl Exponential {
    /// The wait after failed attempt `k`, the jitter drawn as an integer; `prev` is the
    /// previous decorrelated wait (start it at `base`).
    #[inline]
    pub fn wait<G: Rng + ?Sized>(&self, k: u32, prev: &mut Nanos, rng: &mut G) -> Nanos {
        let (base, cap, multiplier) = (self.base, self.cap, self.multiplier);
        match self.jitter {
            Jitter::None => exponential_ceiling(base, cap, multiplier, k),
            Jitter::Full => uniform(rng, 0, exponential_ceiling(base, cap, multiplier, k)),
            Jitter::Equal => {
                let e = exponential_ceiling(base, cap, multiplier, k);
                let half = e / 2;
                half + uniform(rng, 0, e - half)
            }
            Jitter::Decorrelated => {
                let hi = prev.saturating_mul(3);
                let d = uniform(rng, base, hi).min(cap);
                *prev = d;
                d
            }
        }
    }
}

impl Kind for Exponential {
    fn initial_state(&self) -> Nanos {
        self.base
    }

    fn draws(&self, _k: u32, _prev: Nanos, _f: &Failure) -> bool {
        self.jitter != Jitter::None
    }

    #[inline]
    fn next_wait<G: Rng + ?Sized>(
        &self,
        k: u32,
        prev: &mut Nanos,
        f: &Failure,
        rng: &mut G,
    ) -> Nanos {
        f.or_retry_after(self.wait(k, prev, rng))
    }

    fn wait_u(&self, k: u32, prev: &mut Nanos, f: &Failure, u: f64) -> Nanos {
        let e = exponential_ceiling(self.base, self.cap, self.multiplier, k);
        let w = match self.jitter {
            Jitter::None => e,
            Jitter::Full => scale(u, e),
            Jitter::Equal => e / 2 + scale(u, e - e / 2),
            Jitter::Decorrelated => {
                let hi = prev.saturating_mul(3);
                let d = if hi > self.base {
                    self.base + scale(u, hi - self.base)
                } else {
                    self.base
                };
                let d = d.min(self.cap);
                *prev = d;
                d
            }
        };
        f.or_retry_after(w)
    }

    fn max_wait(&self, k: u32) -> Nanos {
        match self.jitter {
            Jitter::Decorrelated => {
                let three_k = 3f64.powi(k.min(4096) as i32);
                from_f64_ns(self.base as f64 * three_k).min(self.cap)
            }
            _ => exponential_ceiling(self.base, self.cap, self.multiplier, k),
        }
    }

    fn settled_wait(&self) -> Nanos {
        self.cap
    }

    fn is_jittered(&self) -> bool {
        self.jitter != Jitter::None
    }

    fn describe(&self) -> String {
        let cap = cap_text((self.cap != u64::MAX).then_some(self.cap));
        format!(
            "exponential from {}, ×{}, {cap}, {}",
            fmt_time(self.base),
            fmt_num(self.multiplier),
            self.jitter.text()
        )
    }

    fn short(&self) -> String {
        let cap = if self.cap == u64::MAX {
            String::new()
        } else {
            format!(" up to {}", fmt_time(self.cap))
        };
        format!(
            "{} {}×{}{cap}",
            self.jitter.text(),
            fmt_time(self.base),
            fmt_num(self.multiplier)
        )
    }

    fn unjittered(&self, max_attempts: crate::model::attempts::Attempts) -> Option<String> {
        if self.jitter != Jitter::None || self.max_wait(1) == 0 {
            return None;
        }
        let retries = max_attempts.limit().map_or(u32::MAX, |n| n - 1);
        let shown = retries.min(3);
        let mut waits: Vec<String> = (1..=shown).map(|k| fmt_time(self.max_wait(k))).collect();
        if retries > shown {
            waits.push("…".to_string());
        }
        Some(format!(
            "exponential backoff without jitter (waits {})",
            waits.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;
    use crate::model::attempts::Attempts;
    use crate::model::backoff::{wait, Backoff};
    use crate::model::{backoff::backoff_total, bound::Bound};

    const MS: u64 = 1_000_000;

    fn exp(jitter: Jitter) -> Backoff {
        Backoff::Exponential(Exponential {
            base: 1_000_000,
            cap: 64_000_000,
            multiplier: 2.0,
            jitter,
        })
    }

    #[test]
    fn unjittered_exponential_doubles_to_the_cap() {
        let b = exp(Jitter::None);
        let mut r = stream(1, "x");
        let mut prev = 0;
        let w: Vec<_> = (1..=9).map(|k| wait(&b, k, &mut prev, &mut r)).collect();
        assert_eq!(
            w,
            [1, 2, 4, 8, 16, 32, 64, 64, 64]
                .map(|m: u64| m * 1_000_000)
                .to_vec()
        );
        assert_eq!(exponential_ceiling(3, u64::MAX, 1.5, 3), 7); // 6.75 rounds to 7
        assert_eq!(exponential_ceiling(1, u64::MAX, 2.0, 100_000), u64::MAX);
    }

    /// Each jitter mode: every draw in its range, and the sample mean within 1% of the
    /// formula's mean (100k draws; the standard error is below 0.2%).
    #[test]
    fn jitter_modes_have_their_ranges_and_means() {
        let n = 100_000;
        let k = 4; // e_4 = 8 ms
        let e = 8_000_000f64;
        for (jitter, lo, hi, mean) in [
            (Jitter::Full, 0.0, e, e / 2.0),
            (Jitter::Equal, e / 2.0, e, 0.75 * e),
        ] {
            let b = exp(jitter);
            let mut r = stream(5, "j");
            let mut sum = 0.0;
            for _ in 0..n {
                let mut prev = 0;
                let w = wait(&b, k, &mut prev, &mut r) as f64;
                assert!(w >= lo && w < hi, "{jitter:?}: {w}");
                sum += w;
            }
            let m = sum / n as f64;
            assert!(
                (m / mean - 1.0).abs() < 0.01,
                "{jitter:?}: mean {m} vs {mean}"
            );
        }
    }

    #[test]
    fn decorrelated_jitter_stays_between_base_and_three_times_previous_and_the_cap() {
        let b = exp(Jitter::Decorrelated);
        let mut r = stream(8, "d");
        let mut sum_first = 0.0;
        let n = 100_000;
        for _ in 0..n {
            let mut prev = 1_000_000;
            let first = wait(&b, 1, &mut prev, &mut r);
            assert!((1_000_000..3_000_000).contains(&first));
            sum_first += first as f64;
            let mut last = first;
            for k in 2..12 {
                let w = wait(&b, k, &mut prev, &mut r);
                assert!((1_000_000..=64_000_000).contains(&w));
                assert!(w <= (3 * last).max(1_000_000));
                last = w;
            }
        }
        // First wait: uniform(base, 3 base) has mean 2 base.
        let m = sum_first / n as f64;
        assert!((m / 2_000_000.0 - 1.0).abs() < 0.01, "mean {m}");
    }

    #[test]
    fn backoff_total_sums_the_largest_wait_after_each_failed_attempt_but_the_last() {
        let exp = Backoff::Exponential(Exponential {
            base: 10 * MS,
            cap: 50 * MS,
            multiplier: 2.0,
            jitter: Jitter::Full,
        });
        // 10 + 20 + 40 + 50 + 50 = 170 ms for 6 attempts.
        assert_eq!(
            backoff_total(&exp, Attempts::Limited(6), 0),
            Bound::Finite(170 * MS)
        );
        assert_eq!(
            backoff_total(&exp, Attempts::Limited(1), 0),
            Bound::Finite(0)
        );
        // A million attempts: 10 + 20 + 40 + 50 · 999,996.
        assert_eq!(
            backoff_total(&exp, Attempts::Limited(1_000_000), 0),
            Bound::Finite((70 + 50 * 999_996) * MS)
        );
        // Retry-After raises every wait to at least it.
        assert_eq!(
            backoff_total(&exp, Attempts::Limited(4), 30 * MS),
            Bound::Finite(100 * MS)
        );
        assert_eq!(
            backoff_total(&exp, Attempts::Unlimited, 0),
            Bound::Unbounded
        );
        let uncapped = Backoff::Exponential(Exponential {
            base: 1,
            cap: u64::MAX,
            multiplier: 1000.0,
            jitter: Jitter::None,
        });
        assert_eq!(
            backoff_total(&uncapped, Attempts::Limited(1_000_000), 0),
            Bound::Unbounded
        );
    }

    #[test]
    fn written_defaults_and_rules() {
        let c = Ctx;
        let w = Written {
            base: Dur(10 * MS),
            cap: None,
            multiplier: None,
            jitter: None,
        };
        let v = w.validate(&c, "b").unwrap();
        assert_eq!(
            (v.cap, v.multiplier, v.jitter),
            (u64::MAX, 2.0, Jitter::None)
        );
        let bad = Written {
            multiplier: Some(0.5),
            ..w.clone()
        };
        let e = bad.validate(&c, "b").unwrap_err();
        assert_eq!(e.field, "b.multiplier");
        assert_eq!(e.message, "must be between 1 and 1000 (found 0.5)");
        let zero = Written {
            base: Dur(0),
            jitter: Some(Jitter::Decorrelated),
            ..w
        };
        assert_eq!(zero.validate(&c, "b").unwrap_err().field, "b.base");
    }
}
