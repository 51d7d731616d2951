//! 95% intervals that stay inside their metric's domain.
//!
//! `aggregate.csv` gives every summary metric of a grid cell a mean and a 95%
//! interval over the cell's replications. Which interval depends on the metric
//! ([`Method`], chosen by the catalog:
//! [`interval_method`](crate::metrics::columns::interval_method)):
//!
//! - a fraction whose counts are in the summary row (`success_fraction` =
//!   `succeeded / logical`) pools the counts of all the cell's runs and takes the
//!   Wilson score interval of `Σ numerator` successes out of `Σ denominator` trials
//!   ([`wilson`]);
//! - a flag (`metastable`) takes the Wilson interval of `k` runs true out of `n`;
//! - every other metric takes the Student t interval of the runs' mean
//!   ([`Moments::student_t`]), clipped to its [`Domain`]: `[0, 1]` for a fraction,
//!   `[0, ∞)` for the rest (counts, times and rates are never negative).
//!
//! So no interval leaves its metric's domain, and every interval contains its mean.

/// The 0.975 quantile of the standard normal distribution.
pub(crate) const Z975: f64 = 1.959_963_985;

/// Two-sided 95% Student t quantiles for 1..=30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The 0.975 quantile of Student's t with `df` degrees of freedom.
pub(crate) fn t975(df: u64) -> f64 {
    match df {
        0 => f64::NAN,
        1..=30 => T975[df as usize - 1],
        // Beyond the table: the Cornish–Fisher expansion around the normal quantile.
        _ => {
            let z = Z975;
            let d = df as f64;
            z + (z.powi(3) + z) / (4.0 * d)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * d * d)
        }
    }
}

/// The values a metric can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Domain {
    /// `[0, 1]`.
    Fraction,
    /// `[0, ∞)`.
    NonNegative,
}

impl Domain {
    /// `x` moved into the domain (the nearest bound when outside).
    pub(crate) fn clip(self, x: f64) -> f64 {
        match self {
            Domain::Fraction => x.clamp(0.0, 1.0),
            Domain::NonNegative => x.max(0.0),
        }
    }
}

/// Which 95% interval a metric gets in `aggregate.csv`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Method {
    /// Wilson score interval of the cell's pooled counts (`Σ numerator / Σ denominator`
    /// over all its runs); the mean is the pooled ratio.
    WilsonPooled,
    /// Wilson score interval of `k` runs true out of `n` (a flag).
    WilsonRuns,
    /// Student t interval of the runs' mean, clipped to the domain.
    StudentT(Domain),
}

impl Method {
    /// The method's name, as the column dictionary writes it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Method::WilsonPooled => "wilson pooled counts",
            Method::WilsonRuns => "wilson over runs",
            Method::StudentT(Domain::Fraction) => "student t, clipped to [0, 1]",
            Method::StudentT(Domain::NonNegative) => "student t, clipped at 0",
        }
    }
}

/// The Wilson score interval at 95% of `k` successes out of `n` trials:
/// `(p̂, low, high)` with `p̂ = k / n`; `None` when `n = 0` or `k > n`.
///
/// With `z` = [`Z975`] (Wilson, 1927; Brown, Cai & DasGupta, *Statistical Science*
/// 16(2), 2001, eq. 4):
///
/// ```text
///            p̂ + z²/2n  ±  z · √( p̂(1 − p̂)/n + z²/4n² )
/// low/high = ──────────────────────────────────────────
///                          1 + z²/n
/// ```
///
/// It lies within `[0, 1]` and contains `p̂` (both hold exactly; the bounds are
/// clamped against rounding, so `k = 0` gives `low = 0` and `k = n` gives `high = 1`).
/// A single trial still has its width: one run says little.
pub(crate) fn wilson(k: u64, n: u64) -> Option<(f64, f64, f64)> {
    if n == 0 || k > n {
        return None;
    }
    let nf = n as f64;
    let p = k as f64 / nf;
    let z2 = Z975 * Z975;
    let denom = 1.0 + z2 / nf;
    let center = (p + z2 / (2.0 * nf)) / denom;
    let half = Z975 / denom * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
    let low = if k == 0 {
        0.0
    } else {
        (center - half).clamp(0.0, p)
    };
    let high = if k == n {
        1.0
    } else {
        (center + half).clamp(p, 1.0)
    };
    Some((p, low, high))
}

/// Running count, mean and sum of squared deviations (Welford), summed in push
/// order: deterministic.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    /// Adds a value.
    pub(crate) fn push(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// Values pushed.
    pub(crate) fn n(&self) -> u64 {
        self.n
    }

    /// The Student t 95% interval of the mean, `(mean, low, high)`, unclipped; `None`
    /// without values. A single value gives `low = high = mean`: there is no spread to
    /// estimate the width from.
    pub(crate) fn ci(&self) -> Option<(f64, f64, f64)> {
        match self.n {
            0 => None,
            1 => Some((self.mean, self.mean, self.mean)),
            n => {
                let var = self.m2 / (n - 1) as f64;
                let half = t975(n - 1) * (var / n as f64).sqrt();
                Some((self.mean, self.mean - half, self.mean + half))
            }
        }
    }

    /// [`Moments::ci`] with its bounds clipped to `domain` (the mean of values in the
    /// domain is in it, so the interval still contains the mean).
    pub(crate) fn student_t(&self, domain: Domain) -> Option<(f64, f64, f64)> {
        self.ci()
            .map(|(m, lo, hi)| (m, domain.clip(lo), domain.clip(hi)))
    }
}

/// Mean and unclipped Student t 95% interval `(mean, low, high)` of a sample; a single
/// value gives `low = high = mean`.
pub(crate) fn mean_ci(xs: &[f64]) -> Option<(f64, f64, f64)> {
    let n = xs.len();
    if n == 0 {
        return None;
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n == 1 {
        return Some((mean, mean, mean));
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
    let half = t975(n as u64 - 1) * (var / n as f64).sqrt();
    Some((mean, mean - half, mean + half))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::stream;
    use rand::RngExt;
    use rand_distr::StandardNormal;

    /// Coverage of the 95% interval on normal samples of 5: over 4000 trials the
    /// fraction covering the true mean is 0.95 ± 0.0034 (sd); accept 0.93..0.97.
    #[test]
    fn the_t_interval_covers_the_true_mean_95_percent_of_the_time() {
        let mut rng = stream(11, "ci");
        let trials = 4000;
        let mut covered = 0;
        for _ in 0..trials {
            let xs: Vec<f64> = (0..5)
                .map(|_| 10.0 + 3.0 * rng.sample::<f64, _>(StandardNormal))
                .collect();
            let (_, lo, hi) = mean_ci(&xs).unwrap();
            if lo <= 10.0 && 10.0 <= hi {
                covered += 1;
            }
        }
        let f = covered as f64 / trials as f64;
        assert!((0.93..=0.97).contains(&f), "coverage {f}");
    }

    #[test]
    fn welford_agrees_with_the_two_pass_interval() {
        let xs = [3.0, 7.5, 1.25, 9.0, 4.0];
        let mut m = Moments::default();
        xs.iter().for_each(|&x| m.push(x));
        let (a, b) = (m.ci().unwrap(), mean_ci(&xs).unwrap());
        assert!((a.0 - b.0).abs() < 1e-12 && (a.1 - b.1).abs() < 1e-12);
        assert!((a.2 - b.2).abs() < 1e-12 && m.n() == 5);
    }

    /// Hand-computed with z = 1.959963985, z² = 3.841459: for k = 0 of 10 the upper
    /// bound is (z²/10) / (1 + z²/10) = 0.27753; k = 5 of 10 gives
    /// 0.5 ± (z / 1.3841459) · √(0.025 + z²/400) = 0.5 ± 0.26340.
    #[test]
    fn wilson_matches_hand_computed_values() {
        let close = |a: f64, b: f64| (a - b).abs() < 5e-5;
        let (p, lo, hi) = wilson(0, 10).unwrap();
        assert!(p == 0.0 && lo == 0.0 && close(hi, 0.2775), "{lo} {hi}");
        let (p, lo, hi) = wilson(10, 10).unwrap();
        assert!(p == 1.0 && close(lo, 0.7225) && hi == 1.0, "{lo} {hi}");
        let (p, lo, hi) = wilson(5, 10).unwrap();
        assert!(
            p == 0.5 && close(lo, 0.2366) && close(hi, 0.7634),
            "{lo} {hi}"
        );
        // k = 1 of 1: (1 + z²/2) ± z·√(z²/4) over 1 + z², low = 1 / (1 + z²).
        let (_, lo, hi) = wilson(1, 1).unwrap();
        assert!(close(lo, 1.0 / (1.0 + Z975 * Z975)) && hi == 1.0, "{lo}");
        assert_eq!(wilson(3, 2), None);
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn wilson_stays_in_0_1_and_contains_its_estimate() {
        for n in (1..=200).chain([1_000, 123_457, 10_000_000_000]) {
            let step = (n / 97).max(1);
            for k in (0..=n).step_by(step as usize).chain([n - 1, n]) {
                let (p, lo, hi) = wilson(k, n).unwrap();
                assert!(0.0 <= lo && lo <= p && p <= hi && hi <= 1.0, "{k}/{n}");
                assert!(hi - lo > 0.0, "{k}/{n} has no width");
            }
        }
    }

    /// The exact coverage of the Wilson interval at n = 60, p = 0.3 (the binomial
    /// probability of the k whose interval holds p) is near 95%; 20,000 binomial
    /// samples estimate it with sd √(0.95 · 0.05 / 20000) = 0.0015: accept ±0.006 (4 sd).
    #[test]
    fn wilson_covers_the_true_fraction_as_often_as_its_exact_coverage() {
        let (n, p) = (60u64, 0.3f64);
        // Binomial pmf by recurrence: pmf(k+1) = pmf(k) · (n − k)/(k + 1) · p/(1 − p).
        let mut pmf = (1.0 - p).powi(n as i32);
        let mut exact = 0.0;
        for k in 0..=n {
            let (_, lo, hi) = wilson(k, n).unwrap();
            if lo <= p && p <= hi {
                exact += pmf;
            }
            pmf *= (n - k) as f64 / (k + 1) as f64 * p / (1.0 - p);
        }
        assert!((0.93..=0.97).contains(&exact), "exact coverage {exact}");
        let mut rng = stream(7, "wilson");
        let trials = 20_000;
        let mut covered = 0;
        for _ in 0..trials {
            let k = (0..n).filter(|_| rng.random::<f64>() < p).count() as u64;
            let (_, lo, hi) = wilson(k, n).unwrap();
            if lo <= p && p <= hi {
                covered += 1;
            }
        }
        let f = covered as f64 / trials as f64;
        assert!((f - exact).abs() < 0.006, "coverage {f}, exact {exact}");
    }

    #[test]
    fn clipped_t_intervals_stay_in_their_domain_and_hold_the_mean() {
        let mut rng = stream(3, "clip");
        for _ in 0..2000 {
            let len = 2 + (rng.random::<f64>() * 4.0) as usize;
            // Fractions bunched at the bounds, where the raw interval overshoots.
            let xs: Vec<f64> = (0..len)
                .map(|_| (rng.random::<f64>() * 1.6 - 0.3).clamp(0.0, 1.0))
                .collect();
            let mut m = Moments::default();
            xs.iter().for_each(|&x| m.push(x));
            let (mean, lo, hi) = m.student_t(Domain::Fraction).unwrap();
            assert!(0.0 <= lo && lo <= mean && mean <= hi && hi <= 1.0, "{xs:?}");
            let mut m = Moments::default();
            xs.iter().for_each(|&x| m.push(1e3 * x));
            let (mean, lo, hi) = m.student_t(Domain::NonNegative).unwrap();
            assert!(0.0 <= lo && lo <= mean && mean <= hi, "{xs:?}");
        }
        // Two runs at 0 and 1: the raw interval is 0.5 ± 6.353.
        let (_, lo, hi) = mean_ci(&[0.0, 1.0]).unwrap();
        assert!(lo < -5.8 && hi > 6.8);
    }

    #[test]
    fn method_names_differ() {
        let all = [
            Method::WilsonPooled,
            Method::WilsonRuns,
            Method::StudentT(Domain::Fraction),
            Method::StudentT(Domain::NonNegative),
        ];
        for (i, a) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|b| b.name() != a.name()));
        }
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn t975_example() {
        use crate::metrics::interval::t975;
        assert_eq!(t975(1), 12.706);
        assert!((t975(1000) - 1.962).abs() < 0.001);
    }

    #[test]
    fn clip_example() {
        use crate::metrics::interval::Domain;
        assert_eq!(Domain::Fraction.clip(1.7), 1.0);
        assert_eq!(Domain::NonNegative.clip(-3.0), 0.0);
        assert_eq!(Domain::NonNegative.clip(1e9), 1e9);
    }

    #[test]
    fn name_example() {
        use crate::metrics::interval::{Domain, Method};
        assert_eq!(
            Method::StudentT(Domain::Fraction).name(),
            "student t, clipped to [0, 1]"
        );
    }

    #[test]
    fn wilson_example() {
        use crate::metrics::interval::wilson;
        let (p, lo, hi) = wilson(5, 10).unwrap();
        assert_eq!(p, 0.5);
        assert!((lo - 0.2366).abs() < 5e-5 && (hi - 0.7634).abs() < 5e-5);
        assert_eq!(wilson(0, 10).unwrap().1, 0.0);
        assert_eq!(wilson(0, 0), None);
    }

    #[test]
    fn student_t_example() {
        use crate::metrics::interval::{Domain, Moments};
        let mut m = Moments::default();
        m.push(0.0);
        m.push(1.0);
        assert_eq!(m.student_t(Domain::Fraction), Some((0.5, 0.0, 1.0)));
    }

    #[test]
    fn mean_ci_example() {
        use crate::metrics::interval::mean_ci;
        let (m, _lo, hi) = mean_ci(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(m, 2.0);
        assert!((hi - m - 4.303 / 3f64.sqrt()).abs() < 1e-12);
        assert_eq!(mean_ci(&[]), None);
    }
}
