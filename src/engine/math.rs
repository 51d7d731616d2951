//! Portable floating-point functions: the same bits on every platform.
//!
//! `f64::ln`, `exp`, `powf` and `tanh` call the platform's C library (glibc on Linux),
//! whose last bit differs from other platforms' (WebAssembly's, macOS's) for some
//! arguments. A run must give the same numbers wherever it runs (the browser
//! playground and the command line compare summaries byte for byte), so the model
//! draws and computes through these functions, which are the `libm` crate's pure-Rust
//! ports of musl's, on every target. `sqrt` and the basic operations are exact in IEEE
//! 754 and need no wrapper.
//!
//! ```
//! use retrysim::engine::math;
//! assert_eq!(math::exp(0.0), 1.0);
//! assert_eq!(math::ln(1.0), 0.0);
//! assert_eq!(math::pow(2.0, 10.0), 1024.0);
//! ```

/// The natural logarithm, portable.
#[inline]
pub fn ln(x: f64) -> f64 {
    libm::log(x)
}

/// `e^x`, portable.
#[inline]
pub fn exp(x: f64) -> f64 {
    libm::exp(x)
}

/// `x^y`, portable.
#[inline]
pub fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

/// The hyperbolic tangent, portable.
#[inline]
pub fn tanh(x: f64) -> f64 {
    libm::tanh(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agree_with_std_to_an_ulp() {
        // Not a test of bits (that is the point of the module), but of the functions'
        // identity: each agrees with std to within 2 ulp over a spread of arguments.
        let close = |a: f64, b: f64| (a - b).abs() <= 2.0 * f64::EPSILON * a.abs().max(b.abs());
        for i in 1..2000 {
            let x = i as f64 * 0.0137;
            assert!(close(ln(x), x.ln()), "ln {x}");
            assert!(close(exp(-x), (-x).exp()), "exp {x}");
            assert!(close(pow(x, 1.0 / 3.0), x.powf(1.0 / 3.0)), "pow {x}");
            assert!(close(tanh(x), x.tanh()), "tanh {x}");
        }
    }
}
