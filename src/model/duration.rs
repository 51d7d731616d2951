//! Durations as scenario files write them (`"250ms"`, `"1.5s"`, `"2m"`), parsed exactly
//! into integer nanoseconds: the decimal digits are scaled by integer arithmetic, never
//! through a float, so `"0.1s"` is exactly 100 000 000 ns.

use crate::engine::Nanos;

/// Units accepted after the number, with their size in nanoseconds.
pub(crate) const UNITS: [(&str, Nanos); 8] = [
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Parses a duration string into nanoseconds.
pub(crate) fn parse(text: &str) -> Result<Nanos, String> {
    let s = text.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .ok_or_else(|| {
            format!("duration \"{text}\" has no unit (write e.g. \"{s}ms\" or \"{s}s\")")
        })?;
    let (num, unit) = s.split_at(split);
    let unit = unit.trim();
    if num.is_empty() {
        return Err(format!(
            "duration \"{text}\" must start with a non-negative number followed by a unit \
             (ns, us, ms, s, m, h)"
        ));
    }
    let scale = UNITS
        .iter()
        .find(|(name, _)| *name == unit)
        .map(|(_, n)| *n)
        .ok_or_else(|| {
            format!(
                "duration \"{text}\" has unknown unit \"{unit}\" (allowed: ns, us, ms, s, m, h)"
            )
        })?;
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num, ""),
    };
    if frac_part.contains('.') || (int_part.is_empty() && frac_part.is_empty()) {
        return Err(format!(
            "duration \"{text}\" is not a number followed by a unit"
        ));
    }
    let too_big = || format!("duration \"{text}\" is too large (at most about 584 years)");
    let int: Nanos = if int_part.is_empty() {
        0
    } else {
        int_part.parse::<u64>().map_err(|_| too_big())?
    };
    let mut total = int.checked_mul(scale).ok_or_else(too_big)?;
    // Fraction: digits beyond the unit's nanosecond resolution must be zero.
    let mut place = scale;
    for (i, d) in frac_part.bytes().enumerate() {
        let d = u64::from(d - b'0');
        place /= 10;
        if place == 0 {
            if d != 0 || frac_part.as_bytes()[i..].iter().any(|&c| c != b'0') {
                return Err(format!("duration \"{text}\" is finer than one nanosecond"));
            }
            break;
        }
        total = total.checked_add(d * place).ok_or_else(too_big)?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_unit_exactly() {
        assert_eq!(parse("7ns"), Ok(7));
        assert_eq!(parse("3us"), Ok(3_000));
        assert_eq!(parse("3µs"), Ok(3_000));
        assert_eq!(parse("2.25ms"), Ok(2_250_000));
        assert_eq!(parse("1m"), Ok(60_000_000_000));
        assert_eq!(parse("1min"), Ok(60_000_000_000));
        assert_eq!(parse("0.5h"), Ok(1_800_000_000_000));
        assert_eq!(parse(".5s"), Ok(500_000_000));
        assert_eq!(parse("0s"), Ok(0));
        assert_eq!(parse(" 10 ms "), Ok(10_000_000));
    }

    #[test]
    fn rejects_bad_and_overflowing_text() {
        for bad in [
            "",
            "s",
            "10",
            "1.2.3s",
            "5 parsecs",
            "-3s",
            "1e3s",
            "1.0000000001s",
            "99999999999999999999s",
            "6000000h",
        ] {
            assert!(parse(bad).is_err(), "{bad} should fail");
        }
        assert_eq!(parse("1.500000000s"), Ok(1_500_000_000));
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn parse_example() {
        use crate::model::duration::parse;
        assert_eq!(parse("250ms"), Ok(250_000_000));
        assert_eq!(parse("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse("0.1s"), Ok(100_000_000));
        assert!(parse("10").is_err());
        assert!(parse("-1s").is_err());
    }
}
