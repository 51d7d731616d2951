//! Random delays: service times, hop latencies, think times.
//!
//! Every distribution samples integer nanoseconds. Parameters are held in nanoseconds as
//! `f64` only for the arithmetic of sampling; the result is rounded once.
//!
//! A measured distribution ([`Measured`]: a Prometheus histogram's buckets, or a list
//! of quantiles) is a piecewise-linear inverse CDF sampled from one uniform draw, so
//! the same draw gives the same nanoseconds on every platform.

use std::sync::Arc;

use rand::distr::Distribution;
use rand::Rng;
use rand::RngExt;

use crate::engine::time::from_f64_ns;
use crate::engine::variate::{Exp1, StandardNormal};
use crate::engine::{math, Nanos};

/// z-score of the 99th percentile of the standard normal.
pub(crate) const Z99: f64 = 2.326_347_874_040_840_8;

/// A distribution of delays.
#[derive(Debug, Clone, PartialEq)]
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
    /// Measured: a piecewise-linear inverse CDF (shared, so cloning a scenario is
    /// cheap).
    Measured(Arc<Measured>),
}

/// What a measured distribution was given as (explain's words for it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Source {
    /// A Prometheus classic histogram of `buckets` buckets (`+Inf` included) holding
    /// `observations` observations.
    Histogram {
        /// Buckets, the `+Inf` one included when given.
        buckets: usize,
        /// The last cumulative count.
        observations: f64,
    },
    /// A list of quantiles.
    Quantiles,
    /// An HdrHistogram interval log: `intervals` intervals merged, holding
    /// `observations` recorded values.
    Hdr {
        /// Intervals merged.
        intervals: usize,
        /// Recorded values, all intervals together.
        observations: u64,
    },
    /// Raw samples, resampled exactly.
    Empirical {
        /// Samples read.
        samples: usize,
    },
}

/// A measured distribution: the inverse CDF through `knots`, linear between them.
///
/// A knot is (cumulative probability, delay in ns). The first is at probability 0,
/// the last at 1; both coordinates never decrease. A draw `u` in `[0, 1)` falls in
/// the segment of the last knot at or below `u` and the first above it (a segment of
/// no probability, an empty bucket, is never drawn), and its delay is interpolated.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    knots: Box<[(f64, f64)]>,
    /// What it was given as.
    pub source: Source,
}

impl Measured {
    /// From Prometheus classic buckets: upper bounds `le` (ns, increasing, at least 0)
    /// and cumulative `counts` (non-decreasing, one per bound, then optionally the
    /// `+Inf` bucket's), `max` bounding the `+Inf` bucket. The CDF is the one
    /// `histogram_quantile` assumes: linear inside each bucket, the first bucket from
    /// 0 (or all at its bound when that is 0). Validation keeps the rules; the counts'
    /// total must be positive.
    pub fn histogram(le: &[f64], counts: &[f64], max: Option<f64>) -> Measured {
        let total = counts.last().copied().unwrap_or(0.0);
        let mut knots = Vec::with_capacity(counts.len() + 1);
        knots.push((0.0, 0.0));
        for (b, &c) in le.iter().zip(counts) {
            knots.push((c / total, *b));
        }
        if counts.len() > le.len() {
            let last = le.last().copied().unwrap_or(0.0);
            knots.push((1.0, max.unwrap_or(last).max(last)));
        }
        Measured::from_knots(
            knots,
            Source::Histogram {
                buckets: counts.len(),
                observations: total,
            },
        )
    }

    /// From quantiles: (probability, delay in ns) pairs, both increasing (validation
    /// keeps that), from 0 at probability 0 to `max` at 1.
    pub fn quantiles(points: &[(f64, f64)], max: f64) -> Measured {
        let mut knots = Vec::with_capacity(points.len() + 2);
        knots.push((0.0, 0.0));
        knots.extend_from_slice(points);
        knots.push((1.0, max));
        Measured::from_knots(knots, Source::Quantiles)
    }

    /// From HdrHistogram bins: (lowest, highest equivalent value in ns, count) in
    /// increasing order, counts positive; each bin's count is spread evenly over its
    /// values, so a quantile lies in the bin HdrHistogram's own `value_at_quantile`
    /// names.
    pub fn hdr(bins: &[(f64, f64, u64)], intervals: usize) -> Measured {
        let total: u64 = bins.iter().map(|b| b.2).sum();
        let mut knots = Vec::with_capacity(2 * bins.len());
        let mut seen = 0u64;
        for &(lo, hi, c) in bins {
            knots.push((seen as f64 / total as f64, lo));
            seen += c;
            knots.push((seen as f64 / total as f64, hi));
        }
        Measured::from_knots(
            knots,
            Source::Hdr {
                intervals,
                observations: total,
            },
        )
    }

    /// From raw samples in ns, any order: each draw is one of them, each equally
    /// likely (a step inverse CDF, no interpolation).
    pub fn empirical(mut samples: Vec<f64>) -> Measured {
        let n = samples.len();
        samples.sort_by(f64::total_cmp);
        let mut knots: Vec<(f64, f64)> = Vec::new();
        let mut i = 0;
        while i < n {
            let v = samples[i];
            let mut j = i + 1;
            while j < n && samples[j] == v {
                j += 1;
            }
            knots.push((i as f64 / n as f64, v));
            knots.push((j as f64 / n as f64, v));
            i = j;
        }
        Measured::from_knots(knots, Source::Empirical { samples: n })
    }

    fn from_knots(mut knots: Vec<(f64, f64)>, source: Source) -> Measured {
        // The last knot is at probability 1 exactly, whatever the division gave.
        if let Some(k) = knots.last_mut() {
            k.0 = 1.0;
        }
        Measured {
            knots: knots.into_boxed_slice(),
            source,
        }
    }

    /// The delay in ns at cumulative probability `u` in `[0, 1]`: what a draw of `u`
    /// gives, before rounding.
    pub fn quantile(&self, u: f64) -> f64 {
        let k = &self.knots;
        // The first knot above `u`; the one before it is at or below (knot 0 is at 0).
        let i = k.partition_point(|&(p, _)| p <= u).clamp(1, k.len() - 1);
        let ((p0, x0), (p1, x1)) = (k[i - 1], k[i]);
        if p1 <= p0 {
            return x1;
        }
        x0 + (x1 - x0) * ((u - p0) / (p1 - p0))
    }

    /// The mean in ns: each segment's probability times its midpoint.
    pub fn mean_ns(&self) -> f64 {
        self.knots
            .windows(2)
            .map(|w| (w[1].0 - w[0].0) * (w[0].1 + w[1].1) / 2.0)
            .sum()
    }

    /// What it was given as and its quantiles as sampled, for explain: `measured as
    /// a histogram of 4 buckets (19 observations), sampled as p50 350ms, ...`.
    pub fn describe(&self) -> String {
        let given = match self.source {
            Source::Histogram {
                buckets,
                observations,
            } => format!(
                "measured as a histogram of {buckets} buckets ({} observations)",
                super::text::fmt_num(observations)
            ),
            Source::Quantiles => "measured as quantiles".to_string(),
            Source::Hdr {
                intervals,
                observations,
            } => format!(
                "measured by HdrHistogram ({intervals} interval{} merged, {observations} values)",
                if intervals == 1 { "" } else { "s" }
            ),
            Source::Empirical { samples } => format!("measured as {samples} raw samples"),
        };
        let how = match self.source {
            Source::Hdr { .. } => "sampled evenly within each recorded bin",
            Source::Empirical { .. } => "resampled exactly",
            _ => "sampled linearly between them",
        };
        let at = |u: f64| super::text::fmt_time_f(self.quantile(u));
        format!(
            "{given}, {how} as p50 {}, p90 {}, p99 {}, p99.9 {}, max {}",
            at(0.5),
            at(0.9),
            at(0.99),
            at(0.999),
            at(1.0)
        )
    }

    /// Whether every draw is the same value.
    fn is_deterministic(&self) -> bool {
        let drawn = |w: &[(f64, f64)]| w[1].0 > w[0].0;
        let mut values = self
            .knots
            .windows(2)
            .filter(|w| drawn(w))
            .flat_map(|w| [w[0].1, w[1].1]);
        let first = values.next();
        values.all(|v| Some(v) == first)
    }

    /// One uniform draw in `[0, 1)` from the top 53 bits of one `u64`.
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        let u = (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64);
        from_f64_ns(self.quantile(u))
    }
}

impl Dist {
    /// A log-normal distribution from its median and 99th percentile.
    pub fn lognormal(median: Nanos, p99: Nanos) -> Dist {
        let mu = math::ln(median as f64);
        let sigma = (math::ln(p99 as f64) - mu) / Z99;
        Dist::LogNormal { mu, sigma }
    }

    /// Draws one delay.
    #[inline]
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Nanos {
        match *self {
            Dist::Measured(ref m) => m.sample(rng),
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
            Dist::Measured(ref m) => m.mean_ns(),
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
            Dist::Measured(ref m) => m.is_deterministic(),
        }
    }
}

/// Standard normal CDF (Abramowitz–Stegun 7.1.26 erf, |error| < 1.5e-7).
pub(crate) fn normal_cdf(x: f64) -> f64 {
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

    fn sample_mean(d: &Dist, n: usize) -> f64 {
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
            let m = sample_mean(&d, n);
            assert!(
                (m / d.mean_ns() - 1.0).abs() < 0.015,
                "{d:?}: {m} vs {}",
                d.mean_ns()
            );
        }
        assert_eq!(sample_mean(&Dist::Deterministic(5), 10), 5.0);
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

    /// Prometheus' `histogram_quantile` on classic buckets `(le, cumulative count)`,
    /// the last `+Inf` (promql/quantile.go's bucketQuantile; prometheus.io's
    /// functions page: the lowest bucket starts at 0 when its bound is above 0, else
    /// its bound is the answer; a quantile in `+Inf` answers the last finite bound):
    /// the reference the sampled quantiles are held to.
    fn histogram_quantile(q: f64, buckets: &[(f64, f64)]) -> f64 {
        let total = buckets[buckets.len() - 1].1;
        let rank = q * total;
        let b = buckets.iter().position(|&(_, c)| c >= rank).unwrap();
        if b == buckets.len() - 1 {
            return buckets[b - 1].0;
        }
        if b == 0 && buckets[0].0 <= 0.0 {
            return buckets[0].0;
        }
        let (start, below) = if b == 0 { (0.0, 0.0) } else { buckets[b - 1] };
        let (end, count) = buckets[b];
        start + (end - start) * ((rank - below) / (count - below))
    }

    /// Whether the `q` quantile of `n` sorted draws `v` of `m` is where `m` puts the
    /// probabilities within 5 binomial standard errors of `q`.
    fn sampled_quantile_fits(m: &Measured, v: &[Nanos], q: f64) -> bool {
        let n = v.len() as f64;
        let se = (q * (1.0 - q) / n).sqrt();
        let got = v[(q * n) as usize] as f64;
        let (lo, hi) = (
            m.quantile((q - 5.0 * se).max(0.0)),
            m.quantile((q + 5.0 * se).min(1.0)),
        );
        (lo - 1.0..=hi + 1.0).contains(&got)
    }

    /// `n` draws of `d`, sorted.
    fn sorted_draws(d: &Dist, n: usize) -> Vec<Nanos> {
        let mut r = stream(43, "measured");
        let mut v: Vec<Nanos> = (0..n).map(|_| d.sample(&mut r)).collect();
        v.sort_unstable();
        v
    }

    /// The example of ClickHouse's quantilePrometheusHistogram docs, which computes
    /// as `histogram_quantile` does (buckets (0, 6), (0.5, 11), (1, 14), (+Inf, 19)
    /// in seconds; median 0.35), with `max` 2 s bounding the `+Inf` bucket.
    fn prometheus_example() -> Measured {
        Measured::histogram(&[0.0, 0.5e9, 1e9], &[6.0, 11.0, 14.0, 19.0], Some(2e9))
    }

    #[test]
    fn a_histogram_sampled_a_million_times_reproduces_its_bucket_fractions() {
        let d = Dist::Measured(Arc::new(prometheus_example()));
        let n = 1_000_000;
        let v = sorted_draws(&d, n);
        // Per bucket (lower bound exclusive, upper inclusive; the first is the point
        // mass at 0): observed fraction against count / total, within 5 binomial
        // standard errors.
        let edges = [
            (None, 0.0),
            (Some(0.0), 0.5e9),
            (Some(0.5e9), 1e9),
            (Some(1e9), 2e9),
        ];
        let expected = [6.0 / 19.0, 5.0 / 19.0, 3.0 / 19.0, 5.0 / 19.0];
        for ((lo, hi), p) in edges.into_iter().zip(expected) {
            let inside = v
                .iter()
                .filter(|&&x| lo.is_none_or(|lo| x as f64 > lo) && x as f64 <= hi)
                .count();
            let f = inside as f64 / n as f64;
            let se = (p * (1.0 - p) / n as f64).sqrt();
            assert!((f - p).abs() < 5.0 * se, "({lo:?}, {hi}]: {f} vs {p}");
        }
        assert!(*v.last().unwrap() <= 2_000_000_000);
    }

    #[test]
    fn a_histograms_sampled_quantiles_are_histogram_quantiles() {
        let buckets = [(0.0, 6.0), (0.5, 11.0), (1.0, 14.0), (f64::INFINITY, 19.0)];
        // The example's stated answer: the median is 0.35.
        assert!((histogram_quantile(0.5, &buckets) - 0.35).abs() < 1e-12);
        let m = prometheus_example();
        let d = Dist::Measured(Arc::new(m.clone()));
        let n = 1_000_000;
        let v = sorted_draws(&d, n);
        // Below the +Inf bucket (where histogram_quantile answers the last bound and
        // `max` spreads the observations instead).
        for q in [0.1, 0.3, 0.35, 0.5, 0.6, 0.7] {
            let want = histogram_quantile(q, &buckets) * 1e9;
            assert!(
                (m.quantile(q) - want).abs() < 1.0,
                "q {q}: {} vs {want}",
                m.quantile(q)
            );
            let got = v[(q * n as f64) as usize];
            assert!(sampled_quantile_fits(&m, &v, q), "q {q}: sampled {got}");
        }
        // The median's standard error: sqrt(0.25 / n) / (5/19 per 0.5 s) = 0.95 ms.
        assert!(
            (v[n / 2] as f64 - 0.35e9).abs() < 5e6,
            "median {}",
            v[n / 2]
        );
        // The +Inf bucket runs from the last bound to max.
        assert_eq!(m.quantile(1.0), 2e9);
        assert_eq!(m.quantile(14.0 / 19.0), 1e9);
    }

    #[test]
    fn a_first_bucket_above_zero_starts_at_zero_and_no_inf_bucket_needs_no_max() {
        let m = Measured::histogram(&[10.0, 20.0], &[5.0, 10.0], None);
        assert_eq!(m.quantile(0.0), 0.0);
        assert_eq!(m.quantile(0.25), 5.0);
        assert_eq!(m.quantile(0.75), 15.0);
        assert_eq!(m.quantile(1.0), 20.0);
        assert_eq!(m.mean_ns(), 0.5 * 5.0 + 0.5 * 15.0);
        // An empty bucket is never drawn: its segment has no probability.
        let gap = Measured::histogram(&[10.0, 20.0, 30.0], &[5.0, 5.0, 10.0], None);
        assert_eq!(gap.quantile(0.5), 20.0);
        assert_eq!(gap.quantile(0.75), 25.0);
    }

    #[test]
    fn a_quantiles_distribution_returns_its_own_points_as_its_quantiles() {
        let points = [(0.5, 10e6), (0.9, 25e6), (0.99, 80e6), (0.999, 200e6)];
        let m = Measured::quantiles(&points, 1e9);
        for (q, x) in points {
            assert_eq!(m.quantile(q), x);
        }
        assert_eq!(m.quantile(0.0), 0.0);
        assert_eq!(m.quantile(1.0), 1e9);
        assert_eq!(m.quantile(0.25), 5e6);
        let d = Dist::Measured(Arc::new(m.clone()));
        let n = 1_000_000;
        let v = sorted_draws(&d, n);
        for (q, x) in points {
            let got = v[(q * n as f64) as usize];
            assert!(
                sampled_quantile_fits(&m, &v, q),
                "q {q}: sampled {got} vs {x}"
            );
        }
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        assert!(
            (mean / d.mean_ns() - 1.0).abs() < 0.01,
            "{mean} vs {}",
            d.mean_ns()
        );
    }

    #[test]
    fn a_measured_draw_is_one_u64_and_the_same_on_every_platform() {
        let d = Dist::Measured(Arc::new(prometheus_example()));
        let mut r = stream(1, "pin");
        let draws: Vec<Nanos> = (0..4).map(|_| d.sample(&mut r)).collect();
        let mut r = stream(1, "pin");
        let by_hand: Vec<Nanos> = (0..4)
            .map(|_| {
                let u = (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                from_f64_ns(prometheus_example().quantile(u))
            })
            .collect();
        assert_eq!(draws, by_hand);
        assert_eq!(draws, PINNED);
    }

    /// The first draws of [`prometheus_example`] from `stream(1, "pin")`.
    const PINNED: [Nanos; 4] = [0, 0, 1_291_303_797, 0];

    #[test]
    fn normal_cdf_is_accurate() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_cdf(Z99) - 0.99).abs() < 1e-6);
        assert!((normal_cdf(-1.0) - 0.158_655_25).abs() < 1e-6);
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn measured_example() {
        use crate::model::dist::Measured;
        // Buckets (0, 6), (0.5, 11), (1, 14), (+Inf, 19) in seconds: histogram_quantile's
        // median is 0.35 (ClickHouse's quantilePrometheusHistogram example).
        let m = Measured::histogram(&[0.0, 0.5e9, 1e9], &[6.0, 11.0, 14.0, 19.0], Some(2e9));
        assert!((m.quantile(0.5) - 0.35e9).abs() < 1.0);
    }

    #[test]
    fn lognormal_example() {
        use crate::model::dist::Dist;
        let d = Dist::lognormal(10_000_000, 50_000_000);
        assert!((d.mean_ns() - 1.2704e7).abs() < 1e4); // median · exp(σ²/2)
    }
}
