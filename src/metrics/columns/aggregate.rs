//! `aggregate.csv` and `aggregate_long.csv`: their fixed columns, and which 95%
//! interval each summary metric gets.

use super::*;
use crate::metrics::interval::{Domain, Method};

/// The first column of `aggregate.csv` and of a baseline: the grid cell's index.
pub(crate) const CELL: &str = "cell";

/// The column of `aggregate.csv` after the parameters: replications aggregated.
pub(crate) const RUNS: &str = "runs";

/// Suffixes of `aggregate.csv`'s three columns per metric: the mean and its 95% interval.
pub(crate) const MEAN_SUFFIX: &str = "_mean";
/// See [`MEAN_SUFFIX`].
pub(crate) const CI_LOW_SUFFIX: &str = "_ci_low";
/// See [`MEAN_SUFFIX`].
pub(crate) const CI_HIGH_SUFFIX: &str = "_ci_high";

/// `aggregate.csv`'s columns of metric `m`: mean, interval low, interval high.
pub(crate) fn aggregate_columns(m: &str) -> [String; 3] {
    [
        format!("{m}{MEAN_SUFFIX}"),
        format!("{m}{CI_LOW_SUFFIX}"),
        format!("{m}{CI_HIGH_SUFFIX}"),
    ]
}

/// Fractions whose counts are summary columns, `(metric, numerator, denominator)`:
/// `aggregate.csv` pools their counts over a cell's runs (one line adds a pair).
pub(crate) const POOLED_FRACTIONS: [(&str, &str, &str); 3] = [
    (SUCCESS_FRACTION.name, SUCCEEDED.name, LOGICAL.name),
    (BLOCKING_FRACTION.name, BLOCKED.name, ATTEMPTS.name),
    (P_WAIT.name, WAITED.name, ADMITTED.name),
];

/// The `(numerator, denominator)` columns of pooled fraction `metric`, when `has` says
/// the row has both.
pub(crate) fn pooled_counts(
    metric: &str,
    has: impl Fn(&str) -> bool,
) -> Option<(&'static str, &'static str)> {
    POOLED_FRACTIONS
        .iter()
        .find(|(m, a, b)| *m == metric && has(a) && has(b))
        .map(|&(_, a, b)| (a, b))
}

/// The 95% interval `aggregate.csv` gives summary metric `metric` in a row whose
/// columns `has` tells: Wilson on the pooled counts of a [`POOLED_FRACTIONS`] entry
/// (its mean is the pooled ratio), Wilson over the runs for a flag, else Student t
/// clipped to `[0, 1]` for a fraction and at 0 for the rest.
pub(crate) fn interval_method(metric: &str, has: impl Fn(&str) -> bool) -> Method {
    if pooled_counts(metric, has).is_some() {
        return Method::WilsonPooled;
    }
    match summary_column(metric) {
        Some(c) if c.kind == Kind::Flag => Method::WilsonRuns,
        Some(c) if c.unit == "fraction" => Method::StudentT(Domain::Fraction),
        _ => Method::StudentT(Domain::NonNegative),
    }
}

/// One line saying which interval `metric` gets, for the dictionary's aggregate
/// columns (`has` as in [`interval_method`]).
pub(crate) fn interval_note(metric: &str, has: impl Fn(&str) -> bool) -> String {
    match pooled_counts(metric, &has) {
        Some((a, b)) => format!(
            "95% interval: {} (Σ{a} / Σ{b} over the cell's runs)",
            Method::WilsonPooled.name()
        ),
        None => format!("95% interval: {}", interval_method(metric, has).name()),
    }
}

/// `aggregate_long.csv`: one row per grid cell and summary metric.
pub(crate) const AGGREGATE_LONG: [Column; 6] = [
    id(CELL, "index", "grid cell index, as in aggregate.csv"),
    id("metric", "name", "the summary column aggregated"),
    not_compared(count(
        "n",
        "values behind the interval: runs with a value, or for wilson pooled counts the pooled denominator (Σlogical for success_fraction)",
    ))
    .with_unit("runs, or trials when pooled"),
    not_compared(measure(
        "mean",
        "the metric's unit",
        FRACTION,
        "mean over the cell's runs; for wilson pooled counts Σnumerator / Σdenominator",
    )),
    not_compared(measure(
        "ci_low",
        "the metric's unit",
        FRACTION,
        "95% interval low (the method: wilson or student t, inside the metric's domain)",
    )),
    not_compared(measure(
        "ci_high",
        "the metric's unit",
        FRACTION,
        "95% interval high (the method: wilson or student t, inside the metric's domain)",
    )),
];

/// Header of `aggregate_long.csv`.
pub(crate) const AGGREGATE_LONG_COLUMNS: [&str; 6] = names(&AGGREGATE_LONG);

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn interval_method_example() {
        use crate::metrics::columns::interval_method;
        use crate::metrics::interval::{Domain, Method};
        let all = |_: &str| true;
        assert_eq!(
            interval_method("success_fraction", all),
            Method::WilsonPooled
        );
        assert_eq!(interval_method("metastable", all), Method::WilsonRuns);
        assert_eq!(
            interval_method("wasted_fraction", all),
            Method::StudentT(Domain::Fraction)
        );
        // Without its counts in the row, a fraction falls back to the clipped t.
        assert_eq!(
            interval_method("success_fraction", |c: &str| c != "logical"),
            Method::StudentT(Domain::Fraction)
        );
        assert_eq!(
            interval_method("latency_p99_ms", all).name(),
            "student t, clipped at 0"
        );
    }

    #[test]
    fn interval_note_example() {
        use crate::metrics::columns::interval_note;
        assert_eq!(
            interval_note("success_fraction", |_: &str| true),
            "95% interval: wilson pooled counts (Σsucceeded / Σlogical over the cell's runs)"
        );
    }
}
