//! Netflix's Vegas limit (`Netflix/concurrency-limits` HEAD 78a74b9,
//! `limit/VegasLimit.java` and `limit/functions/Log10RootIntFunction.java`), as its
//! code does it, not as its comments say.
//!
//! `f(L) = max(1, floor(log10 L))` on the integer limit (`Log10RootIntFunction`; its
//! Javadoc says "baseline + sqrt(limit)" and VegasLimit's class comment says
//! "alpha = max(3, 10% of the current limit)": the code computes neither).
//! `alpha = 3·f(L)`, `beta = 6·f(L)`, `threshold = f(L)`, `increase(L) = L + f(L)`,
//! `decrease(L) = L − f(L)`; `alpha` and `beta` may be fixed numbers and the decrease
//! a ratio (the builder's `alpha(int)`, `beta(int)` and `decreaseFunction`).
//!
//! ```text
//! on sample(rtt > 0, inflight, didDrop):
//!   probeCount += 1
//!   if probeJitter·probeMultiplier·L ≤ probeCount:   # probeJitter ~ U[0.5, 1), redrawn
//!       probeJitter = U[0.5,1); probeCount = 0; rtt_noload = rtt; return
//!   if rtt_noload == 0 or rtt < rtt_noload: rtt_noload = rtt; return
//!   queue = ceil(L · (1 − rtt_noload / rtt))
//!   if didDrop:               L' = decrease(L)
//!   else if inflight·2 < L:   return                 # app-limited
//!   else if queue ≤ threshold: L' = L + beta
//!   else if queue < alpha:     L' = increase(L)
//!   else if queue > beta:      L' = decrease(L)
//!   else return
//!   L' = clamp(L', 1, max_concurrency); L = (1 − smoothing)·L + smoothing·L'
//! ```
//!
//! The limit is `(int) L`, truncated. Defaults `initial_limit 20, max_concurrency
//! 1000, smoothing 1.0, probe_multiplier 30`. The limit has no floor but 1 and grows
//! by `beta` per sample whenever the RTT matches the no-load RTT: behind a queue it
//! keeps the RTT it first saw until the next probe.

use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use super::status::{rejected_of, Rejected, StatusFile};
use super::window::{self, WindowFile};
use super::{java_int, ConcurrencyLimitConfig};
use crate::engine::Nanos;
use crate::model::field::{Ctx, R};
use crate::model::text::fmt_num;

/// Default initial limit.
pub(crate) const DEFAULT_INITIAL_LIMIT: u64 = 20;
/// Default upper clamp.
pub(crate) const DEFAULT_MAX_CONCURRENCY: u64 = 1000;
/// Default smoothing (1: the new estimate replaces the old).
pub(crate) const DEFAULT_SMOOTHING: f64 = 1.0;
/// Default probe period, in multiples of the limit.
pub(crate) const DEFAULT_PROBE_MULTIPLIER: u64 = 30;

/// `floor(log10 t)` floored at 1, as `Log10RootIntFunction.applyAsInt` computes it:
/// `max(1, (int) Math.log10(t))` for `t < 1000` (a table), `(int) Math.log10(t)`
/// above. Java's `log10` is exact at powers of ten, so this is the digit count less
/// one, computed here on integers (no float logarithm, the same on every platform).
pub(crate) fn log10_int(t: i32) -> i32 {
    if t < 10 {
        return 1;
    }
    let mut digits = 0;
    let mut v = t;
    while v > 0 {
        v /= 10;
        digits += 1;
    }
    (digits - 1).max(1)
}

/// `{ kind = "vegas", ... }` as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// The limit before the first update.
    #[schemars(extend("default" = DEFAULT_INITIAL_LIMIT))]
    pub initial_limit: Option<u64>,
    /// The highest limit.
    #[schemars(extend("default" = DEFAULT_MAX_CONCURRENCY))]
    pub max_concurrency: Option<u64>,
    /// Weight of the new estimate, in (0, 1].
    #[schemars(extend("default" = DEFAULT_SMOOTHING))]
    pub smoothing: Option<f64>,
    /// A new no-load RTT is probed every probe_multiplier·limit samples (jittered).
    #[schemars(extend("default" = DEFAULT_PROBE_MULTIPLIER))]
    pub probe_multiplier: Option<u64>,
    /// A fixed alpha instead of 3·log10(limit).
    pub alpha: Option<u64>,
    /// A fixed beta instead of 6·log10(limit).
    pub beta: Option<u64>,
    /// Decrease by multiplying the limit by this ratio in (0, 1) instead of
    /// subtracting log10(limit).
    pub decrease_ratio: Option<f64>,
    /// Aggregate samples per window first (Netflix's WindowedLimit).
    pub window: Option<WindowFile>,
    /// What a refused caller sees: 429 (default), 503 or "unavailable".
    #[schemars(extend("default" = 429))]
    pub status: Option<StatusFile>,
}

impl Written {
    /// The validated limit; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<ConcurrencyLimitConfig> {
        let f = |k: &str| format!("{p}.{k}");
        let initial = self.initial_limit.unwrap_or(DEFAULT_INITIAL_LIMIT);
        let initial_limit = java_int(
            c,
            &f("initial_limit"),
            c.at_least(&f("initial_limit"), initial, 1)?,
        )?;
        let max = self.max_concurrency.unwrap_or(DEFAULT_MAX_CONCURRENCY);
        let max_concurrency = java_int(
            c,
            &f("max_concurrency"),
            c.at_least(&f("max_concurrency"), max, 1)?,
        )?;
        let smoothing = c.finite(&f("smoothing"), self.smoothing.unwrap_or(DEFAULT_SMOOTHING))?;
        if !(smoothing > 0.0 && smoothing <= 1.0) {
            return c.err(
                f("smoothing"),
                format!("must be above 0 and at most 1 (found {smoothing})"),
            );
        }
        let probe = self.probe_multiplier.unwrap_or(DEFAULT_PROBE_MULTIPLIER);
        let probe_multiplier = java_int(
            c,
            &f("probe_multiplier"),
            c.at_least(&f("probe_multiplier"), probe, 1)?,
        )?;
        let alpha = self
            .alpha
            .map(|a| java_int(c, &f("alpha"), a))
            .transpose()?;
        let beta = self.beta.map(|b| java_int(c, &f("beta"), b)).transpose()?;
        let decrease_ratio = match self.decrease_ratio {
            None => None,
            Some(r) => {
                let r = c.finite(&f("decrease_ratio"), r)?;
                if !(r > 0.0 && r < 1.0) {
                    return c.err(
                        f("decrease_ratio"),
                        format!("must be above 0 and below 1 (found {r})"),
                    );
                }
                Some(r)
            }
        };
        Ok(ConcurrencyLimitConfig::Vegas(Config {
            initial_limit,
            max_concurrency,
            smoothing,
            probe_multiplier,
            alpha,
            beta,
            decrease_ratio,
            window: window::validate(c, p, &self.window)?,
            status: rejected_of(c, p, &self.status, Rejected::Status(429))?,
        }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// The limit before the first update.
    pub initial_limit: i32,
    /// Upper clamp.
    pub max_concurrency: i32,
    /// Weight of the new estimate.
    pub smoothing: f64,
    /// Probe period, in multiples of the limit.
    pub probe_multiplier: i32,
    /// A fixed alpha, else 3·f(L).
    pub alpha: Option<i32>,
    /// A fixed beta, else 6·f(L).
    pub beta: Option<i32>,
    /// A multiplicative decrease, else L − f(L).
    pub decrease_ratio: Option<f64>,
    /// WindowedLimit aggregation, if any.
    pub window: Option<window::Config>,
    /// What a refused caller sees.
    pub status: Rejected,
}

impl Default for Config {
    /// Netflix's defaults, unwindowed, answering 429.
    fn default() -> Config {
        Config {
            initial_limit: DEFAULT_INITIAL_LIMIT as i32,
            max_concurrency: DEFAULT_MAX_CONCURRENCY as i32,
            smoothing: DEFAULT_SMOOTHING,
            probe_multiplier: DEFAULT_PROBE_MULTIPLIER as i32,
            alpha: None,
            beta: None,
            decrease_ratio: None,
            window: None,
            status: Rejected::Status(429),
        }
    }
}

impl Config {
    /// What explain says of the limit.
    pub(super) fn describe(&self) -> String {
        let alpha = self.alpha.map_or("3·f(L)".to_string(), |a| a.to_string());
        let beta = self.beta.map_or("6·f(L)".to_string(), |b| b.to_string());
        let decrease = self
            .decrease_ratio
            .map_or("L − f(L)".to_string(), |r| format!("L·{}", fmt_num(r)));
        format!(
            "Vegas concurrency limit (Netflix VegasLimit, 78a74b9): starts at {}, at most {}; with f(L) = max(1, floor(log10 L)) as the code computes it (not the documented sqrt or 10% of the limit), queue = ceil(L·(1 − noload RTT / RTT)); a drop or a queue above beta = {beta} sets L to {decrease}, a queue at most f(L) adds beta, below alpha = {alpha} adds f(L); no growth while fewer than L/2 are in flight; smoothing {}; the no-load RTT is the lowest seen, re-probed every {}·L samples (jittered ×[0.5, 1)){}; refused callers are answered {}",
            self.initial_limit,
            self.max_concurrency,
            fmt_num(self.smoothing),
            self.probe_multiplier,
            window::describe(&self.window),
            self.status
        )
    }
}

/// Vegas' state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Vegas {
    cfg: Config,
    estimated: f64,
    limit: i32,
    rtt_noload: Nanos,
    probe_count: i32,
    probe_jitter: f64,
}

/// `ThreadLocalRandom.nextDouble(0.5, 1)`: a uniform draw in `[0.5, 1)`.
fn jitter<G: Rng + ?Sized>(rng: &mut G) -> f64 {
    0.5 + 0.5 * rng.random::<f64>()
}

impl Vegas {
    /// The limit before any sample; draws the first probe jitter from `rng`.
    pub(crate) fn new<G: Rng + ?Sized>(cfg: Config, rng: &mut G) -> Vegas {
        Vegas {
            cfg,
            estimated: f64::from(cfg.initial_limit),
            limit: cfg.initial_limit,
            rtt_noload: 0,
            probe_count: 0,
            probe_jitter: jitter(rng),
        }
    }

    /// The current limit, `(int) L`.
    pub(crate) fn limit(&self) -> i32 {
        self.limit
    }

    /// The no-load RTT (ns; 0 before the first sample).
    #[cfg(test)]
    pub(crate) fn rtt_noload(&self) -> Nanos {
        self.rtt_noload
    }

    /// One sample (`rtt > 0`; a zero RTT is ignored where Java throws); `rng` is drawn
    /// from only when a probe happens.
    pub(crate) fn on_sample<G: Rng + ?Sized>(
        &mut self,
        rtt: Nanos,
        inflight: u32,
        dropped: bool,
        rng: &mut G,
    ) {
        if rtt == 0 {
            return;
        }
        self.probe_count = self.probe_count.saturating_add(1);
        if self.probe_jitter * f64::from(self.cfg.probe_multiplier) * self.estimated
            <= f64::from(self.probe_count)
        {
            self.probe_jitter = jitter(rng);
            self.probe_count = 0;
            self.rtt_noload = rtt;
            return;
        }
        if self.rtt_noload == 0 || rtt < self.rtt_noload {
            self.rtt_noload = rtt;
            return;
        }
        self.update(rtt, inflight, dropped);
    }

    fn update(&mut self, rtt: Nanos, inflight: u32, dropped: bool) {
        let l = self.estimated;
        let queue = (l * (1.0 - self.rtt_noload as f64 / rtt as f64)).ceil() as i32;
        let li = l as i32;
        let new = if dropped {
            self.decrease(l)
        } else if ((i64::from(inflight) * 2) as f64) < l {
            return;
        } else {
            let alpha = self.cfg.alpha.unwrap_or_else(|| 3 * log10_int(li));
            let beta = self.cfg.beta.unwrap_or_else(|| 6 * log10_int(li));
            let threshold = log10_int(li);
            if queue <= threshold {
                l + f64::from(beta)
            } else if queue < alpha {
                l + f64::from(log10_int(li))
            } else if queue > beta {
                self.decrease(l)
            } else {
                return;
            }
        };
        let new = new.min(f64::from(self.cfg.max_concurrency)).max(1.0);
        let new = (1.0 - self.cfg.smoothing) * l + self.cfg.smoothing * new;
        self.estimated = new;
        self.limit = new as i32;
    }

    fn decrease(&self, l: f64) -> f64 {
        match self.cfg.decrease_ratio {
            Some(r) => l * r,
            None => l - f64::from(log10_int(l as i32)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::time::{MILLISECOND, SECOND};
    use rand::SeedableRng;

    fn rng() -> rand_chacha::ChaCha8Rng {
        rand_chacha::ChaCha8Rng::seed_from_u64(7)
    }

    /// `VegasLimitTest.create()`: alpha 3, beta 6, smoothing 1, initial 10, max 20.
    fn create() -> Vegas {
        Vegas::new(
            Config {
                alpha: Some(3),
                beta: Some(6),
                initial_limit: 10,
                max_concurrency: 20,
                ..Config::default()
            },
            &mut rng(),
        )
    }

    /// `VegasLimitTest` increaseLimit, decreaseLimit, noChangeIfWithinThresholds
    /// (vector VA1 of ADMISSION.md §14).
    #[test]
    fn netflix_vegas_increase_decrease_and_hold_are_replayed() {
        let r = &mut rng();
        let mut v = create();
        v.on_sample(10 * MILLISECOND, 10, false, r);
        assert_eq!(v.limit(), 10);
        v.on_sample(10 * MILLISECOND, 11, false, r);
        assert_eq!(v.limit(), 16);

        let mut v = create();
        v.on_sample(10 * MILLISECOND, 10, false, r);
        assert_eq!(v.limit(), 10);
        v.on_sample(50 * MILLISECOND, 11, false, r);
        assert_eq!(v.limit(), 9);

        let mut v = create();
        v.on_sample(10 * MILLISECOND, 10, false, r);
        assert_eq!(v.limit(), 10);
        v.on_sample(14 * MILLISECOND, 14, false, r);
        assert_eq!(v.limit(), 10);
    }

    /// `VegasLimitTest.largeLimitIncrease` (VA1b): f(10000) = 4, beta = 24.
    #[test]
    fn netflix_vegas_large_limit_increase_is_replayed() {
        let r = &mut rng();
        let mut v = Vegas::new(
            Config {
                initial_limit: 10000,
                max_concurrency: 20000,
                ..Config::default()
            },
            r,
        );
        v.on_sample(10 * SECOND, 5000, false, r);
        assert_eq!(v.limit(), 10000);
        v.on_sample(10 * SECOND, 6000, false, r);
        assert_eq!(v.limit(), 10024);
    }

    /// `VegasLimitTest` decreaseSmoothing and decreaseWithoutSmoothing (VA1c).
    #[test]
    fn netflix_vegas_smoothing_is_replayed() {
        let r = &mut rng();
        for (smoothing, want) in [(0.5, [100, 75, 56]), (1.0, [100, 50, 25])] {
            let mut v = Vegas::new(
                Config {
                    decrease_ratio: Some(0.5),
                    smoothing,
                    initial_limit: 100,
                    max_concurrency: 200,
                    ..Config::default()
                },
                r,
            );
            v.on_sample(10 * MILLISECOND, 100, false, r);
            assert_eq!(v.limit(), want[0]);
            v.on_sample(20 * MILLISECOND, 100, false, r);
            assert_eq!(v.limit(), want[1]);
            v.on_sample(20 * MILLISECOND, 100, false, r);
            assert_eq!(v.limit(), want[2], "smoothing {smoothing}");
        }
    }

    /// ADMISSION.md §13: the Javadoc's "baseline + sqrt(limit)" and "alpha = max(3,
    /// 10% of the limit)" are not what the code computes; Quarkus' copy uses
    /// `1 + floor(log10 L)`, twice Netflix's for 10 ≤ L < 100.
    #[test]
    fn vegas_thresholds_are_the_codes_log10_not_the_documented_sqrt_or_ten_percent() {
        let cases = [
            (0, 1),
            (1, 1),
            (9, 1),
            (10, 1),
            (99, 1),
            (100, 2),
            (999, 2),
            (1000, 3),
            (9999, 3),
            (10000, 4),
            (i32::MAX, 9),
        ];
        for (t, f) in cases {
            assert_eq!(log10_int(t), f, "f({t})");
        }
        // At L = 100 the code's alpha is 3·2 = 6; the Javadoc's max(3, 10%) would be 10
        // and sqrt(100) would be 10.
        assert_eq!(3 * log10_int(100), 6);
        // At L = 50 Quarkus' 1 + floor(log10 L) = 2, Netflix's f = 1.
        assert_eq!(log10_int(50), 1);
        // Behaviour: L = 100, noload 10ms, RTT 10.9ms: queue = ceil(100·0.0826) = 9,
        // above beta = 12? no; below alpha = 6? no: the code holds, where alpha = 10
        // (10% of L) would increase.
        let r = &mut rng();
        let mut v = Vegas::new(
            Config {
                initial_limit: 100,
                ..Config::default()
            },
            r,
        );
        v.on_sample(10 * MILLISECOND, 100, false, r);
        v.on_sample(10_900_000, 100, false, r);
        assert_eq!(v.limit(), 100);
        // queue 5 < alpha 6: + f(100) = 102
        v.on_sample(10_500_000, 100, false, r);
        assert_eq!(v.limit(), 102);
    }

    #[test]
    fn an_app_limited_sample_does_not_grow_the_limit_but_a_drop_still_shrinks_it() {
        let r = &mut rng();
        let mut v = create();
        v.on_sample(10 * MILLISECOND, 10, false, r);
        v.on_sample(10 * MILLISECOND, 4, false, r); // 8 < 10
        assert_eq!(v.limit(), 10);
        v.on_sample(10 * MILLISECOND, 5, false, r); // 10 is not < 10
        assert_eq!(v.limit(), 16);
        v.on_sample(10 * MILLISECOND, 1, true, r); // drop: 16 − 1
        assert_eq!(v.limit(), 15);
    }

    #[test]
    fn a_probe_resets_the_noload_rtt_after_jitter_times_multiplier_times_limit_samples() {
        let r = &mut rng();
        let cfg = Config {
            initial_limit: 10,
            max_concurrency: 10,
            ..Config::default()
        };
        let mut v = Vegas::new(cfg, r);
        let due = (v.probe_jitter * 30.0 * 10.0).ceil() as i32;
        assert!((150..=300).contains(&due));
        v.on_sample(10 * MILLISECOND, 10, false, r); // noload 10ms
                                                     // queue = ceil(10·(1 − 10/10.1)) = 1: + beta, clamped to 10: L stays 10
        for _ in 2..due {
            v.on_sample(10_100_000, 10, false, r);
            assert_eq!(v.rtt_noload(), 10 * MILLISECOND);
        }
        assert_eq!(v.limit(), 10);
        v.on_sample(10_100_000, 10, false, r); // the probe
        assert_eq!(v.rtt_noload(), 10_100_000);
        assert_eq!(v.probe_count, 0);
    }
}
