//! Simulated time: an integer count of nanoseconds, never a float clock.

/// Simulated time or a duration, in nanoseconds.
pub type Nanos = u64;

/// Nanoseconds in one microsecond.
pub const MICROSECOND: Nanos = 1_000;
/// Nanoseconds in one millisecond.
pub const MILLISECOND: Nanos = 1_000_000;
/// Nanoseconds in one second.
pub const SECOND: Nanos = 1_000_000_000;

/// Converts nanoseconds to (float) seconds, for output only.
#[inline]
pub fn to_secs(t: Nanos) -> f64 {
    t as f64 / SECOND as f64
}

/// Converts nanoseconds to (float) milliseconds, for output only.
#[inline]
pub fn to_millis(t: Nanos) -> f64 {
    t as f64 / MILLISECOND as f64
}

/// Rounds a non-negative float number of nanoseconds to integer time, saturating.
#[inline]
pub fn from_f64_ns(ns: f64) -> Nanos {
    if ns.is_nan() || ns <= 0.0 {
        0
    } else if ns >= u64::MAX as f64 {
        u64::MAX
    } else {
        // `+ 0.5` then truncate: round half up, without a libm call on the hot path.
        (ns + 0.5) as u64
    }
}

/// Formats a duration the way scenario files write it: `1.5s`, `250ms`, `0s`.
pub fn format(t: Nanos) -> String {
    const UNITS: [(Nanos, &str); 6] = [
        (3_600 * SECOND, "h"),
        (60 * SECOND, "m"),
        (SECOND, "s"),
        (MILLISECOND, "ms"),
        (MICROSECOND, "us"),
        (1, "ns"),
    ];
    if t == 0 {
        return "0s".to_string();
    }
    // Prefer seconds with a decimal fraction when it is exact to the microsecond.
    for (unit, name) in UNITS {
        if t.is_multiple_of(unit) {
            return format!("{}{}", t / unit, name);
        }
    }
    format!("{t}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_picks_the_largest_exact_unit() {
        assert_eq!(format(0), "0s");
        assert_eq!(format(1_500 * MILLISECOND), "1500ms");
        assert_eq!(format(2 * SECOND), "2s");
        assert_eq!(format(120 * SECOND), "2m");
        assert_eq!(format(7), "7ns");
    }

    #[test]
    fn float_conversion_saturates() {
        assert_eq!(from_f64_ns(-1.0), 0);
        assert_eq!(from_f64_ns(f64::NAN), 0);
        assert_eq!(from_f64_ns(1e30), u64::MAX);
        assert_eq!(from_f64_ns(2.5), 3);
    }
}
