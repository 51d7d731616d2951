//! Random delays: service times, hop latencies, think times.
//!
//! Every distribution samples integer nanoseconds. Parameters are held in nanoseconds as
//! `f64` only for the arithmetic of sampling; the result is rounded once.

use rand::distr::Distribution;
use rand::Rng;
use rand::RngExt;

use crate::engine::time::from_f64_ns;
use crate::engine::variate::{Exp1, StandardNormal};
use crate::engine::{math, Nanos};

/// z-score of the 99th percentile of the standard normal.
pub const Z99: f64 = 2.326_347_874_040_840_8;

/// A distribution of delays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    /// Exponential with mean `mean` ns: `mean · Exp(1)`.
    Exponential {
        /// Mean in ns.
        mean: f64,
    },
    /// Always the same value.
    Deterministic(Nanos),
    /// `exp(mu + sigma · Z)` ns; from a median `m` and 99th percentile `p`:
    /// `mu = ln m`, `sigma = (ln p − ln m) / z_0.99`.
    LogNormal {
        /// Log of the median in ns.
        mu: f64,
        /// Log-scale standard deviation.
        sigma: f64,
    },
    /// Uniform integer on `[min, max]`.
    Uniform {
        /// Lower bound.
        min: Nanos,
        /// Upper bound.
        max: Nanos,
    },
    /// `|mean + sd · Z|` ns.
    Normal {
        /// Mean in ns.
        mean: f64,
        /// Standard deviation in ns.
        sd: f64,
    },
}

impl Dist {
    /// A log-normal distribution from its median and 99th percentile.
    ///
    /// ```
    /// use retrysim::model::dist::Dist;
    /// let d = Dist::lognormal(10_000_000, 50_000_000);
    /// assert!((d.mean_ns() - 1.2704e7).abs() < 1e4); // median · exp(σ²/2)
    /// ```
    pub fn lognormal(median: Nanos, p99: Nanos) -> Dist {
        let mu = math::ln(median as f64);
        let sigma = (math::ln(p99 as f64) - mu) / Z99;
        Dist::LogNormal { mu, sigma }
    }

    /// Draws one delay.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        match *self {
            Dist::Exponential { mean } => {
                let x: f64 = Exp1.sample(rng);
                from_f64_ns(mean * x)
            }
            Dist::Deterministic(v) => v,
            Dist::LogNormal { mu, sigma } => {
                let z: f64 = StandardNormal.sample(rng);
                from_f64_ns(math::exp(mu + sigma * z))
            }
            Dist::Uniform { min, max } => {
                if max <= min {
                    min
                } else {
                    rng.random_range(min..=max)
                }
            }
            Dist::Normal { mean, sd } => {
                let z: f64 = StandardNormal.sample(rng);
                from_f64_ns((mean + sd * z).abs())
            }
        }
    }

    /// The mean in nanoseconds.
    pub fn mean_ns(&self) -> f64 {
        match *self {
            Dist::Exponential { mean } => mean,
            Dist::Deterministic(v) => v as f64,
            Dist::LogNormal { mu, sigma } => math::exp(mu + sigma * sigma / 2.0),
            Dist::Uniform { min, max } => (min as f64 + max as f64) / 2.0,
            Dist::Normal { mean, sd } => {
                if sd == 0.0 {
                    return mean.abs();
                }
                // Mean of the folded normal.
                let r = mean / sd;
                sd * (2.0 / std::f64::consts::PI).sqrt() * math::exp(-r * r / 2.0)
                    + mean * (1.0 - 2.0 * normal_cdf(-r))
            }
        }
    }

    /// Whether every draw is the same value.
    pub fn is_deterministic(&self) -> bool {
        match *self {
            Dist::Deterministic(_) => true,
            Dist::Uniform { min, max } => min == max,
            Dist::LogNormal { sigma, .. } => sigma == 0.0,
            Dist::Normal { sd, .. } => sd == 0.0,
            Dist::Exponential { .. } => false,
        }
    }
}

/// Standard normal CDF (Abramowitz–Stegun 7.1.26 erf, |error| < 1.5e-7).
pub fn normal_cdf(x: f64) -> f64 {
    let z = x / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * math::exp(-z * z);
    let erf = if z >= 0.0 { y } else { -y };
    0.5 * (1.0 + erf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;

    fn sample_mean(d: Dist, n: usize) -> f64 {
        let mut r = stream(3, "t");
        (0..n).map(|_| d.sample(&mut r) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn sample_means_match_the_formulas() {
        // 200k draws: relative standard error of the mean ≤ 0.3% for these; allow 1.5%.
        let n = 200_000;
        for d in [
            Dist::Exponential { mean: 1e7 },
            Dist::lognormal(10_000_000, 40_000_000),
            Dist::Uniform {
                min: 1_000,
                max: 9_000,
            },
            Dist::Normal { mean: 1e7, sd: 2e6 },
            Dist::Normal { mean: 0.0, sd: 1e6 },
        ] {
            let m = sample_mean(d, n);
            assert!(
                (m / d.mean_ns() - 1.0).abs() < 0.015,
                "{d:?}: {m} vs {}",
                d.mean_ns()
            );
        }
        assert_eq!(sample_mean(Dist::Deterministic(5), 10), 5.0);
    }

    #[test]
    fn lognormal_quantiles_match_median_and_p99() {
        let d = Dist::lognormal(10_000_000, 100_000_000);
        let mut r = stream(9, "q");
        let mut v: Vec<u64> = (0..100_001).map(|_| d.sample(&mut r)).collect();
        v.sort_unstable();
        let med = v[50_000] as f64;
        let p99 = v[99_000] as f64;
        assert!((med / 1e7 - 1.0).abs() < 0.03, "median {med}");
        assert!((p99 / 1e8 - 1.0).abs() < 0.06, "p99 {p99}");
    }

    #[test]
    fn normal_cdf_is_accurate() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(Z99) - 0.99).abs() < 1e-6);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 1e-6);
    }
}
