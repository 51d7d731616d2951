//! Number formats of the outputs, one function per format: the CSV cells, the check
//! table, the chart ticks and the percentages beside them.

/// A number as CSV cells, the check table and the report write it: at most 10
/// significant digits, shortest form, no exponent, so it is stable across platforms
/// and free of binary noise (`0.30000000000000004` → `0.3`).
pub(crate) fn shortest(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    // An integer of at most 10 digits is its own rounding, and `{}` of an integral
    // f64 writes its digits alone.
    if x.fract() == 0.0 && x.abs() < 1e10 {
        return (x as i64).to_string();
    }
    let sci = format!("{x:.9e}");
    match plain_from_sci(&sci) {
        Some(s) => s,
        None => {
            let rounded: f64 = sci.parse().unwrap_or(x);
            format!("{rounded}")
        }
    }
}

/// The text `{}` gives the f64 nearest to `sci`, a finite `{:.9e}` rendering, written
/// straight from its digits: `sci`'s 10 significant digits, trailing zeros dropped,
/// are that f64's shortest form, since two decimals of at most 10 digits lie farther
/// apart than the f64 spacing there. `None` (the caller parses and formats) for
/// exponents beyond ±15 (where `{}` writes long runs of zeros and the largest values
/// could round up past f64::MAX) and anything not of that shape (NaN, infinities).
fn plain_from_sci(sci: &str) -> Option<String> {
    let (mant, exp) = sci.split_once('e')?;
    let exp: i32 = exp.parse().ok()?;
    if !(-15..=15).contains(&exp) {
        return None;
    }
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    let mut digits: Vec<u8> = mant.bytes().filter(|b| *b != b'.').collect();
    if digits.len() != 10 || !digits.iter().all(u8::is_ascii_digit) || digits[0] == b'0' {
        return None;
    }
    while digits.last() == Some(&b'0') {
        digits.pop();
    }
    // The value is 0.d1d2d3... × 10^(exp + 1): `point` digits before the decimal point.
    let point = exp + 1;
    let mut out = String::with_capacity(digits.len() + 20);
    if neg {
        out.push('-');
    }
    if point <= 0 {
        out.push_str("0.");
        for _ in 0..-point {
            out.push('0');
        }
        out.extend(digits.iter().map(|&d| d as char));
    } else {
        let point = point as usize;
        for i in 0..point.max(digits.len()) {
            if i == point {
                out.push('.');
            }
            out.push(digits.get(i).map_or('0', |&d| d as char));
        }
    }
    Some(out)
}

/// A fraction as a percentage in [`shortest`] form (`0.05` → `5%`).
pub(crate) fn percent(fraction: f64) -> String {
    format!("{}%", shortest(fraction * 100.0))
}

/// A relative change as a signed percentage with two decimals (`-0.0566` → `-5.66%`).
pub(crate) fn signed_percent(change: f64) -> String {
    format!("{:+.2}%", 100.0 * change)
}

/// A chart tick, compactly (`1500` → `1500`, `0.25` → `0.25`, `2e-4` → `0.0002`).
pub(crate) fn tick(v: f64) -> String {
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
pub(crate) fn percent_tick(fraction: f64) -> String {
    format!("{:.0}", fraction * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The format as it was first written: round to 10 significant digits, parse, print.
    fn reference(x: f64) -> String {
        if x == 0.0 {
            return "0".to_string();
        }
        let rounded: f64 = format!("{x:.9e}").parse().unwrap_or(x);
        format!("{rounded}")
    }

    /// The direct rendering gives the reference's bytes: integers, ratios, every
    /// magnitude from 1e-20 to 1e20, both signs, ties and values next to powers of ten.
    #[test]
    fn shortest_matches_round_parse_print() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut xs = vec![
            1.0,
            -1.0,
            0.1 + 0.2,
            2.0 / 3.0,
            9_999_999_999.0,
            9_999_999_999.5,
            1e10,
            1e10 + 1.0,
            12_345_678_901.0,
            0.5,
            1.5,
            2.5,
            1e-7,
            1.5e-7,
            123_456.7,
            9.999_999_999_5,
            0.999_999_999_95,
            1e15,
            1e16,
            1e-15,
            1e-16,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            0.000_123,
            100.5,
            1000.0,
        ];
        for _ in 0..200_000 {
            let r = next();
            let mant = (r >> 11) as f64 / (1u64 << 53) as f64;
            let exp = (r % 41) as i32 - 20;
            let sign = if r & (1 << 10) != 0 { -1.0 } else { 1.0 };
            xs.push(sign * mant * 10f64.powi(exp));
            xs.push(f64::from_bits(next()));
            xs.push((next() % 100_000) as f64 / [1.0, 10.0, 100.0, 1000.0][(r % 4) as usize]);
        }
        for x in xs {
            assert_eq!(shortest(x), reference(x), "{x:e}");
        }
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn shortest_example() {
        use crate::metrics::format::shortest;
        assert_eq!(shortest(0.1 + 0.2), "0.3");
        assert_eq!(shortest(2.0), "2");
        assert_eq!(shortest(1234.56789012345), "1234.56789");
    }

    #[test]
    fn percent_example() {
        use crate::metrics::format::percent;
        assert_eq!(percent(0.05), "5%");
    }

    #[test]
    fn signed_percent_example() {
        use crate::metrics::format::signed_percent;
        assert_eq!(signed_percent(-0.05661), "-5.66%");
        assert_eq!(signed_percent(0.0), "+0.00%");
    }

    #[test]
    fn tick_example() {
        use crate::metrics::format::tick;
        assert_eq!(tick(1500.0), "1500");
        assert_eq!(tick(0.00025), "0.0003");
    }

    #[test]
    fn percent_tick_example() {
        use crate::metrics::format::percent_tick;
        assert_eq!(percent_tick(0.255), "26");
    }
}
