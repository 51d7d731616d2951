//! Portable random variates: `Exp(1)` and `N(0, 1)` by the ziggurat method.
//!
//! These are rand_distr's `Exp1` and `StandardNormal`, step for step and with the same
//! tables (so a stream gives the draws it always gave), except that the rare wedge and
//! tail steps compute `exp` and `ln` with [`crate::engine::math`] rather than the
//! platform's C library. rand_distr reaches those functions through `num-traits`,
//! whose `std` feature other crates of the build switch on; through it a draw could
//! differ in its last bit between Linux and WebAssembly. Here it cannot.
//!
//! ```
//! use rand::RngExt;
//! use retrysim::engine::{stream, variate::{Exp1, StandardNormal}};
//! let mut rng = stream(1, "doc");
//! let n = 20_000;
//! let mean_exp: f64 = (0..n).map(|_| rng.sample::<f64, _>(Exp1)).sum::<f64>() / n as f64;
//! let mean_norm: f64 = (0..n).map(|_| rng.sample::<f64, _>(StandardNormal)).sum::<f64>() / n as f64;
//! assert!((mean_exp - 1.0).abs() < 0.03);
//! assert!(mean_norm.abs() < 0.03);
//! ```

use rand::distr::{Distribution, Open01};
use rand::{Rng, RngExt};

use super::math;
use super::ziggurat_tables as zig;

/// The standard exponential distribution, `Exp(1)`: mean 1.
#[derive(Debug, Clone, Copy, Default)]
pub struct Exp1;

/// The standard normal distribution, `N(0, 1)`.
#[derive(Debug, Clone, Copy, Default)]
pub struct StandardNormal;

/// The float in `[1, 2) · 2^e` whose mantissa is the low 52 bits of `bits`.
#[inline(always)]
fn with_exponent(bits: u64, e: i32) -> f64 {
    f64::from_bits(bits | (((1023 + e) as u64) << 52))
}

/// One ziggurat draw (rand_distr's `utils::ziggurat`).
#[inline(always)]
fn ziggurat<R: Rng + ?Sized>(
    rng: &mut R,
    symmetric: bool,
    x_tab: zig::ZigTable,
    f_tab: zig::ZigTable,
    pdf: fn(f64) -> f64,
    zero_case: fn(&mut R, f64) -> f64,
) -> f64 {
    loop {
        // The low 8 bits choose the layer; the top 52 make the uniform.
        let bits = rng.next_u64();
        let i = bits as usize & 0xff;
        let u = if symmetric {
            with_exponent(bits >> 12, 1) - 3.0
        } else {
            with_exponent(bits >> 12, 0) - (1.0 - f64::EPSILON / 2.0)
        };
        let x = u * x_tab[i];
        let test_x = if symmetric { x.abs() } else { x };
        if test_x < x_tab[i + 1] {
            return x;
        }
        if i == 0 {
            return zero_case(rng, u);
        }
        if f_tab[i + 1] + (f_tab[i] - f_tab[i + 1]) * rng.random::<f64>() < pdf(x) {
            return x;
        }
    }
}

impl Distribution<f64> for Exp1 {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        fn pdf(x: f64) -> f64 {
            math::exp(-x)
        }
        fn zero_case<R: Rng + ?Sized>(rng: &mut R, _u: f64) -> f64 {
            zig::ZIG_EXP_R - math::ln(rng.random::<f64>())
        }
        ziggurat(rng, false, &zig::ZIG_EXP_X, &zig::ZIG_EXP_F, pdf, zero_case)
    }
}

impl Distribution<f64> for StandardNormal {
    #[inline]
    fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        fn pdf(x: f64) -> f64 {
            math::exp(-x * x / 2.0)
        }
        fn zero_case<R: Rng + ?Sized>(rng: &mut R, u: f64) -> f64 {
            // The tail beyond R, by Marsaglia's method.
            let mut x = 1.0f64;
            let mut y = 0.0f64;
            while -2.0 * y < x * x {
                let x_: f64 = rng.sample(Open01);
                let y_: f64 = rng.sample(Open01);
                x = math::ln(x_) / zig::ZIG_NORM_R;
                y = math::ln(y_);
            }
            if u < 0.0 {
                x - zig::ZIG_NORM_R
            } else {
                zig::ZIG_NORM_R - x
            }
        }
        ziggurat(
            rng,
            true,
            &zig::ZIG_NORM_X,
            &zig::ZIG_NORM_F,
            pdf,
            zero_case,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::stream;

    /// Draw for draw the same values as rand_distr, to within an ulp (they differ only
    /// where glibc's and musl's exp or ln round differently), consuming the same
    /// random numbers: the streams stay in step over a million draws.
    #[test]
    fn same_draws_as_rand_distr() {
        let mut a = stream(9, "variate");
        let mut b = stream(9, "variate");
        for _ in 0..1_000_000 {
            let x: f64 = a.sample(Exp1);
            let y: f64 = b.sample(rand_distr::Exp1);
            assert!((x - y).abs() <= f64::EPSILON * x.abs().max(1.0), "{x} {y}");
            let x: f64 = a.sample(StandardNormal);
            let y: f64 = b.sample(rand_distr::StandardNormal);
            assert!((x - y).abs() <= f64::EPSILON * x.abs().max(1.0), "{x} {y}");
        }
        assert_eq!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn moments() {
        let mut rng = stream(3, "moments");
        let n = 400_000;
        let xs: Vec<f64> = (0..n).map(|_| rng.sample(Exp1)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        // Standard error of the mean 1/sqrt(n) = 0.0016; 5 of them.
        assert!((mean - 1.0).abs() < 0.008, "{mean}");
        assert!((var - 1.0).abs() < 0.03, "{var}");
        let zs: Vec<f64> = (0..n).map(|_| rng.sample(StandardNormal)).collect();
        let mean = zs.iter().sum::<f64>() / n as f64;
        let var = zs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.008, "{mean}");
        assert!((var - 1.0).abs() < 0.03, "{var}");
        // The tail beyond R (3.654) holds 2.6e-4 of the mass: about 103 draws.
        let tail = zs.iter().filter(|z| z.abs() > zig::ZIG_NORM_R).count();
        assert!((60..160).contains(&tail), "{tail}");
    }
}
