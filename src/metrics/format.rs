//! Number formats of the outputs, one function per format: the CSV cells, the check
//! table, the chart ticks and the percentages beside them.

/// A number as CSV cells, the check table and the report write it: at most 10
/// significant digits, shortest form, no exponent, so it is stable across platforms
/// and free of binary noise (`0.30000000000000004` → `0.3`).
///
/// ```
/// use retrysim::metrics::format::shortest;
/// assert_eq!(shortest(0.1 + 0.2), "0.3");
/// assert_eq!(shortest(2.0), "2");
/// assert_eq!(shortest(1234.56789012345), "1234.56789");
/// ```
pub fn shortest(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    let rounded: f64 = format!("{x:.9e}").parse().unwrap_or(x);
    format!("{rounded}")
}

/// A fraction as a percentage in [`shortest`] form (`0.05` → `5%`).
///
/// ```
/// use retrysim::metrics::format::percent;
/// assert_eq!(percent(0.05), "5%");
/// ```
pub fn percent(fraction: f64) -> String {
    format!("{}%", shortest(fraction * 100.0))
}

/// A relative change as a signed percentage with two decimals (`-0.0566` → `-5.66%`).
///
/// ```
/// use retrysim::metrics::format::signed_percent;
/// assert_eq!(signed_percent(-0.05661), "-5.66%");
/// assert_eq!(signed_percent(0.0), "+0.00%");
/// ```
pub fn signed_percent(change: f64) -> String {
    format!("{:+.2}%", 100.0 * change)
}

/// A chart tick, compactly (`1500` → `1500`, `0.25` → `0.25`, `2e-4` → `0.0002`).
///
/// ```
/// use retrysim::metrics::format::tick;
/// assert_eq!(tick(1500.0), "1500");
/// assert_eq!(tick(0.00025), "0.0003");
/// ```
pub fn tick(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    let s = if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A fraction as a whole percentage for a chart axis (`0.255` → `26`).
///
/// ```
/// use retrysim::metrics::format::percent_tick;
/// assert_eq!(percent_tick(0.255), "26");
/// ```
pub fn percent_tick(fraction: f64) -> String {
    format!("{:.0}", fraction * 100.0)
}
