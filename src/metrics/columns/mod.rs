//! The output schema: every column of every results file (`summary.csv`,
//! `timeseries.csv`, `herd.csv`, `attempts_by_ordinal.csv`, `aggregate.csv`,
//! `aggregate_long.csv`, `services.csv`, `traces.csv`), with its unit, its kind and how
//! `retrysim check` compares it.
//!
//! This catalog is the one place that names a column. The writers lay their rows out
//! on it ([`crate::metrics::summary::Layout::columns`], [`TIMESERIES_COLUMNS`]), the
//! aggregate and the checks pick metrics by [`Kind`] and [`Column::compared`] (and the
//! interval by [`interval_method`]), the baseline's drift uses [`Column::floor`], the
//! charts label axes with [`Column::unit`], and [`dictionary`] lists it all for
//! `retrysim columns` and each folder's `columns.csv`. Templated summary columns
//! (`attempts_layer_<i>`, `fleet_<name>_<k>`) are looked up by [`summary_column`].
//!
//! - [`summary`](self::summary): `summary.csv`, one row per run;
//! - [`series`](self::series): `timeseries.csv` and `herd.csv`, rows per bucket;
//! - [`ordinals`](self::ordinals): `attempts_by_ordinal.csv`;
//! - `trace`: `traces.csv`, the spans of the sampled requests;
//! - [`aggregate`](self::aggregate): `aggregate.csv`, `aggregate_long.csv`, and which
//!   interval each metric gets;
//! - `group`: the optional column groups ([`GROUPS`]): a mechanism's
//!   columns, written only when a scenario uses it, and how a run fills them;
//! - [`dictionary`](self::dictionary()): the catalog as rows.

mod admission;
mod aggregate;
mod codel;
mod dictionary;
mod graph;
mod group;
mod guards;
mod limit;
mod ordinals;
mod queue;
mod reject;
mod series;
mod summary;
mod trace;

pub(crate) use crate::model::criticality::columns::*;
pub(crate) use crate::model::hedge::columns::*;
pub(crate) use admission::*;
pub(crate) use aggregate::*;
pub(crate) use codel::*;
pub use dictionary::*;
pub(crate) use graph::*;
pub(crate) use group::*;
pub(crate) use guards::*;
pub(crate) use limit::*;
pub(crate) use ordinals::*;
pub(crate) use queue::*;
pub(crate) use reject::*;
pub(crate) use series::*;
pub(crate) use summary::*;
pub(crate) use trace::*;

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Which run a row is (`run`, `replication`, `seed`): not a metric.
    Identity,
    /// A whole number of things.
    Count,
    /// A measured quantity (a rate, a time, a fraction).
    Measure,
    /// `true` / `false` (a mean of it is a fraction of runs).
    Flag,
}

/// One column of an output table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Column {
    /// The header name (for a template, the part after its prefix: see
    /// [`LAYER_COLUMN`], [`FLEET_COLUMNS`]).
    pub name: &'static str,
    /// The unit, as axis labels show it.
    pub unit: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// Whether `retrysim check --baseline` compares it by default (otherwise only when
    /// `[check.tolerance]` names it).
    pub compared: bool,
    /// The absolute floor under `|old|` in the baseline's relative drift.
    pub floor: f64,
    /// One line of what it is.
    pub description: &'static str,
}

/// Floors of the drift (see [`crate::check::baseline`]).
const FRACTION: f64 = 0.01;
const TIME: f64 = 1.0;
const AMOUNT: f64 = 10.0;

const fn id(name: &'static str, unit: &'static str, description: &'static str) -> Column {
    Column {
        name,
        unit,
        kind: Kind::Identity,
        compared: false,
        floor: AMOUNT,
        description,
    }
}

pub(crate) const fn count(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        unit: "count",
        kind: Kind::Count,
        compared: true,
        floor: AMOUNT,
        description,
    }
}

const fn measure(
    name: &'static str,
    unit: &'static str,
    floor: f64,
    description: &'static str,
) -> Column {
    Column {
        name,
        unit,
        kind: Kind::Measure,
        compared: true,
        floor,
        description,
    }
}

const fn flag(name: &'static str, description: &'static str) -> Column {
    Column {
        name,
        unit: "fraction of runs",
        kind: Kind::Flag,
        compared: true,
        floor: FRACTION,
        description,
    }
}

/// Units shared by several columns.
const PER_REQUEST: &str = "attempts per logical request";

/// The same column, written to a baseline but compared only when named.
const fn not_compared(c: Column) -> Column {
    Column {
        compared: false,
        ..c
    }
}

impl Column {
    /// The same column with another unit.
    const fn with_unit(self, unit: &'static str) -> Column {
        Column { unit, ..self }
    }

    /// Whether the column is a metric (aggregated, checked, charted).
    pub fn is_metric(&self) -> bool {
        self.kind != Kind::Identity
    }
}

/// The names of `columns`, in order.
pub(crate) const fn names<const N: usize>(columns: &[Column; N]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = columns[i].name;
        i += 1;
    }
    out
}

/// The prefix of a swept parameter's summary column (`param_<dotted key>`).
pub(crate) const PARAM_PREFIX: &str = "param_";

/// The summary column `name`: a fixed column, `attempts_layer_<i>`, or a column of
/// an optional group ([`GROUPS`]: `hedges`, `fleet_<name>_<column>`). `None` for a
/// `param_` column or an unknown name.
pub(crate) fn summary_column(name: &str) -> Option<&'static Column> {
    if let Some(c) = SUMMARY_BASE
        .iter()
        .chain(&SUMMARY_EXTRA)
        .find(|c| c.name == name)
    {
        return Some(c);
    }
    if let Some(i) = name.strip_prefix(LAYER_COLUMN.name) {
        if !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit()) {
            return Some(&LAYER_COLUMN);
        }
    }
    GROUPS.iter().find_map(|g| g.find(name))
}

/// The name of the per-layer column of depth `i`.
pub(crate) fn layer_column(i: usize) -> String {
    format!("{}{i}", LAYER_COLUMN.name)
}

/// The name of fleet `fleet`'s column `c` (one of [`FLEET_COLUMNS`]).
#[cfg(test)]
pub(crate) fn fleet_column(fleet: &str, c: &Column) -> String {
    FLEET_GROUP.column(fleet, c)
}

/// Whether summary column `name` is a metric: not the run's identity, not a swept
/// parameter.
pub(crate) fn is_metric(name: &str) -> bool {
    !name.starts_with(PARAM_PREFIX) && summary_column(name).is_none_or(Column::is_metric)
}

/// Whether summary column `name` identifies a run (`run`, `replication`, `seed`).
pub(crate) fn is_identity(name: &str) -> bool {
    summary_column(name).is_some_and(|c| c.kind == Kind::Identity)
}

/// The unit of a summary metric, for axis labels (`count` for a name not in the
/// catalog).
pub(crate) fn unit(name: &str) -> &'static str {
    summary_column(name).map_or("count", |c| c.unit)
}

/// Summary columns shown first wherever a few stand for a run (the report's cell
/// table).
pub(crate) const HEADLINE: [&str; 6] = [
    SUCCESS_FRACTION.name,
    AMPLIFICATION.name,
    SUCCESS_LATENCY_P99_MS.name,
    PEAK_INBOUND_RATIO.name,
    RECOVERY_TIME_S.name,
    METASTABLE.name,
];

/// The summary column of swept key `key`.
pub(crate) fn param_column(key: &str) -> String {
    format!("{PARAM_PREFIX}{key}")
}

impl Kind {
    /// The kind as the dictionary writes it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Identity => "identity",
            Kind::Count => "count",
            Kind::Measure => "measure",
            Kind::Flag => "flag",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_within_each_table() {
        let once = || {
            GROUPS
                .iter()
                .filter(|g| matches!(g.instances, Instances::Once(_)))
        };
        let summary: Vec<&str> = SUMMARY_BASE
            .iter()
            .chain(&SUMMARY_EXTRA)
            .chain(once().flat_map(|g| g.summary))
            .map(|c| c.name)
            .collect();
        let series: Vec<&str> = TIMESERIES_COLUMNS
            .iter()
            .copied()
            .chain(once().flat_map(|g| g.series).map(|c| c.name))
            .collect();
        for t in [
            &summary[..],
            &series[..],
            &HERD_COLUMNS[..],
            &TRACES_COLUMNS[..],
        ] {
            let mut sorted = t.to_vec();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), t.len(), "{t:?}");
        }
        assert!(HEADLINE.iter().all(|h| summary_column(h).is_some()));
    }

    #[test]
    fn a_traced_folder_lists_traces_csv_and_an_untraced_one_does_not() {
        let contents = |traces| Contents {
            layout: None,
            params: None,
            aggregate: true,
            traces,
        };
        let plain = folder_dictionary(contents(false));
        assert!(plain.iter().all(|e| e.file != TRACES_FILE));
        // The whole catalog (`retrysim columns`) lists traces.csv too.
        assert_eq!(folder_dictionary(contents(true)), dictionary(None));
        let traced = folder_dictionary(contents(true));
        let listed: Vec<&str> = traced
            .iter()
            .filter(|e| e.file == TRACES_FILE)
            .map(|e| e.column.as_str())
            .collect();
        assert_eq!(listed, TRACES_COLUMNS);
        // The same rows otherwise, in the same order.
        let others: Vec<&Entry> = traced.iter().filter(|e| e.file != TRACES_FILE).collect();
        assert_eq!(others, plain.iter().collect::<Vec<_>>());
        let times = TRACE_COLUMNS.iter().filter(|c| c.unit == "s");
        assert!(times
            .map(|c| c.name)
            .eq(["send", "arrive", "start", "end", "done", "wait"]));
    }

    #[test]
    fn templates_resolve_and_identity_is_not_a_metric() {
        assert_eq!(
            summary_column("fleet_a_b_success_fraction").unwrap().name,
            "success_fraction"
        );
        assert!(summary_column("fleet__logical").is_none());
        assert!(summary_column("attempts_layer_").is_none());
        for c in ["run", "replication", "seed"] {
            assert!(is_identity(c) && !is_metric(c), "{c}");
        }
        assert!(is_metric("some_future_column"));
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn summary_column_example() {
        use crate::metrics::columns::summary_column;
        assert_eq!(summary_column("latency_p99_ms").unwrap().unit, "ms");
        assert_eq!(summary_column("attempts_layer_2").unwrap().floor, 0.01);
        assert_eq!(summary_column("fleet_web_failed").unwrap().name, "failed");
        assert!(summary_column("param_x").is_none());
    }

    #[test]
    fn is_metric_example() {
        use crate::metrics::columns::is_metric;
        assert!(is_metric("amplification"));
        assert!(!is_metric("seed"));
        assert!(!is_metric("param_fleets.0.arrival.rate"));
    }
}
