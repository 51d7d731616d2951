//! How numbers, durations and bounds read in explain's text, shared by explain and
//! the policies that describe themselves.

use crate::engine::Nanos;

use super::bound::Bound;

/// A number for people: integers without decimals, otherwise up to three significant
/// digits after the point for small values; "unbounded" when not finite.
pub(crate) fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "unbounded".to_string();
    }
    let s = if (x - x.round()).abs() < 1e-9 || x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    };
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".to_string()
    } else {
        s
    }
}

/// A duration for people: `250ms`, `3.5s`, `16.3ms`, `2.5h` (rounded like [`fmt_num`]).
pub(crate) fn fmt_time_f(ns: f64) -> String {
    const UNITS: [(f64, &str); 4] = [(3.6e12, "h"), (1e9, "s"), (1e6, "ms"), (1e3, "us")];
    if !ns.is_finite() {
        return "unbounded".to_string();
    }
    if ns <= 0.0 {
        return "0s".to_string();
    }
    for (size, unit) in UNITS {
        if ns >= size {
            return format!("{}{unit}", fmt_num(ns / size));
        }
    }
    format!("{}ns", fmt_num(ns))
}

/// A duration in nanoseconds for people (see [`fmt_time_f`]).
pub(crate) fn fmt_time(ns: Nanos) -> String {
    fmt_time_f(ns as f64)
}

/// "150ms in all", or "without bound".
pub(crate) fn fmt_total(b: Bound) -> String {
    match b {
        Bound::Finite(n) => format!("{} in all", fmt_time(n)),
        Bound::Unbounded => "without bound".to_string(),
    }
}

/// A count, or "unbounded".
pub(crate) fn fmt_count(b: Bound) -> String {
    match b {
        Bound::Finite(n) => n.to_string(),
        Bound::Unbounded => "unbounded".to_string(),
    }
}

/// A duration as scenario files write it, or "unbounded".
pub(crate) fn fmt_duration(b: Bound) -> String {
    match b {
        Bound::Finite(n) => fmt_time(n),
        Bound::Unbounded => "unbounded".to_string(),
    }
}

/// `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`.
pub(crate) fn quoted_list(names: &[&str]) -> String {
    let q: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    match q.len() {
        0 => String::new(),
        1 => q[0].clone(),
        n => format!("{} and {}", q[..n - 1].join(", "), q[n - 1]),
    }
}

/// `n one` or `n many`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
