//! "Did you mean" for a misspelt key or choice: serde names what it expected
//! ("unknown field `servic_time`, expected one of `servers`, `service_time`, ..."), and
//! the closest of those names by edit distance is offered when it is close enough to
//! be a typo.

/// The message with `; did you mean `x`?` appended when it rejects an unknown field or
/// variant and one expected name is within typo distance of it.
pub(crate) fn did_you_mean(message: &str) -> String {
    match suggestion(message) {
        Some(s) => format!("{message}; did you mean `{s}`?"),
        None => message.to_string(),
    }
}

/// The expected name closest to the unknown one, if it is close enough.
fn suggestion(message: &str) -> Option<String> {
    let rest = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| message.find(p).map(|i| &message[i + p.len()..]))?;
    let end = rest.find('`')?;
    let (wrong, expected) = (&rest[..end], &rest[end + 1..]);
    if !expected.trim_start().starts_with(", expected") {
        return None;
    }
    // The expected names are the backquoted words after "expected".
    let names: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    let limit = (wrong.chars().count() / 3).max(1);
    let (best, d) = names
        .iter()
        .map(|n| (*n, distance(&wrong.to_lowercase(), &n.to_lowercase())))
        .min_by_key(|(_, d)| *d)?;
    (best != wrong && d <= limit).then(|| best.to_string())
}

/// Optimal string alignment distance: insertions, deletions, substitutions and
/// transpositions of neighbours each cost 1.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let (n, m) = (a.len(), b.len());
    let mut d = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=n {
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[n][m]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_get_the_closest_name_and_other_errors_nothing() {
        assert_eq!(distance("arival", "arrival"), 1);
        assert_eq!(distance("sevrers", "servers"), 1);
        assert_eq!(distance("abc", "abc"), 0);
        let m = "unknown field `arival`, expected one of `name`, `arrival`, `layers`";
        assert!(did_you_mean(m).ends_with("did you mean `arrival`?"));
        let v = "unknown variant `expnential`, expected one of `none`, `fixed`, `exponential`";
        assert!(did_you_mean(v).ends_with("did you mean `exponential`?"));
        let two = "unknown variant `lifo2`, expected `fifo` or `lifo`";
        assert!(did_you_mean(two).ends_with("did you mean `lifo`?"));
        // A difference of case alone is offered too.
        let case = "unknown field `Servers`, expected `servers` or `name`";
        assert!(did_you_mean(case).ends_with("did you mean `servers`?"));
        for unchanged in [
            "invalid type: string \"x\", expected u64",
            "unknown field `zzzzzz`, expected one of `name`, `arrival`",
            "missing field `duration`",
        ] {
            assert_eq!(did_you_mean(unchanged), unchanged);
        }
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn did_you_mean_example() {
        use crate::scenario::suggest::did_you_mean;
        let m = "unknown field `servic_time`, expected one of `servers`, `service_time`";
        assert_eq!(
            did_you_mean(m),
            "unknown field `servic_time`, expected one of `servers`, `service_time`; did you mean `service_time`?"
        );
        // Nothing close: the message is left as it is.
        let far = "unknown field `colour`, expected `name` or `servers`";
        assert_eq!(did_you_mean(far), far);
    }
}
