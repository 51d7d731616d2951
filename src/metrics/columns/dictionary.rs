//! The catalog as rows: the column dictionary `retrysim columns` prints and every
//! results folder keeps as `columns.csv`, one row per column of each file the folder
//! holds, in file order and header order.

use super::*;
use crate::metrics::summary::Layout;

/// One row of the column dictionary: a column of one output file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The file (`summary.csv`, `timeseries.csv`, ...).
    pub file: &'static str,
    /// The header name, or its template (`attempts_layer_<i>`) without a scenario.
    pub column: String,
    /// The unit.
    pub unit: &'static str,
    /// What it holds (`Kind::name`).
    pub kind: &'static str,
    /// One line of what it is.
    pub description: String,
}

/// The header of the dictionary as `retrysim columns` prints it.
pub(crate) const DICTIONARY_HEADER: [&str; 5] = ["file", "column", "unit", "kind", "description"];

/// The dictionary's own file name in a results folder.
pub(crate) const COLUMNS_FILE: &str = "columns.csv";

/// What a results folder holds, as far as its columns go.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Contents<'a> {
    /// Its runs' layers and fleets; `None` writes the templated columns as templates
    /// (`attempts_layer_<i>`, `fleet_<name>_logical`).
    pub layout: Option<&'a Layout>,
    /// Its swept keys (`param_<key>` columns), in plan order; `None` writes the
    /// template `param_<key>`.
    pub params: Option<&'a [String]>,
    /// Whether it holds `aggregate.csv` and `aggregate_long.csv`.
    pub aggregate: bool,
    /// Whether it holds `traces.csv` (a run with `--trace N` or a `trace` table).
    pub traces: bool,
}

fn entry(file: &'static str, column: String, c: &Column) -> Entry {
    Entry {
        file,
        column,
        unit: c.unit,
        kind: c.kind.name(),
        description: c.description.to_string(),
    }
}

/// The groups a folder of `layout` writes, with their instances; every group, with
/// its template instance, without a layout.
fn groups(layout: Option<&Layout>) -> Vec<(&'static Group, Vec<String>)> {
    match layout {
        Some(l) => l
            .used_groups()
            .map(|(g, names)| (g, names.to_vec()))
            .collect(),
        None => GROUPS
            .iter()
            .map(|g| (*g, vec![g.template().to_string()]))
            .collect(),
    }
}

/// Entry `e` of group `g`, with the group's note when the dictionary lists templates.
fn noted(mut e: Entry, g: &Group, layout: Option<&Layout>) -> Entry {
    if layout.is_none() && !g.note.is_empty() {
        e.description = format!("{} ({})", e.description, g.note);
    }
    e
}

/// The rows of `summary.csv`: its columns, then the `param_` ones.
fn summary(layout: Option<&Layout>, params: Option<&[String]>) -> Vec<Entry> {
    let file = "summary.csv";
    let mut out: Vec<Entry> = SUMMARY_BASE
        .iter()
        .map(|c| entry(file, c.name.to_string(), c))
        .collect();
    match layout {
        Some(l) => out.extend((0..l.max_layers).map(|i| {
            let mut e = entry(file, layer_column(i), &LAYER_COLUMN);
            e.description = format!(
                "{} (layer {i}, 0 = the outermost)",
                LAYER_COLUMN.description
            );
            e
        })),
        None => out.push(entry(
            file,
            format!("{}<i>", LAYER_COLUMN.name),
            &LAYER_COLUMN,
        )),
    }
    out.extend(
        SUMMARY_EXTRA
            .iter()
            .map(|c| entry(file, c.name.to_string(), c)),
    );
    for (g, names) in groups(layout) {
        for name in &names {
            out.extend(
                g.summary
                    .iter()
                    .map(|c| noted(entry(file, g.column(name, c), c), g, layout)),
            );
        }
    }
    let param = |column: String, description: String| Entry {
        file,
        column,
        unit: "the key's unit",
        kind: Kind::Identity.name(),
        description,
    };
    match params {
        Some(keys) => out.extend(keys.iter().map(|k| {
            param(
                param_column(k),
                format!("the value of swept key {k} in the run's grid cell"),
            )
        })),
        None => out.push(param(
            param_column("<key>"),
            "the value of each swept key in the run's grid cell (sweep folders only)".into(),
        )),
    }
    out
}

/// The three template rows of `aggregate.csv` for every metric (without a scenario).
fn aggregate_templates(file: &'static str) -> Vec<Entry> {
    let pooled: Vec<String> = POOLED_FRACTIONS
        .iter()
        .map(|(m, a, b)| format!("{m} (Σ{a} / Σ{b})"))
        .collect();
    let pooled = pooled.join(", ");
    let methods = format!(
        "Wilson on the cell's pooled counts for {pooled}; Wilson over the runs for a flag; Student t clipped to [0, 1] for another fraction, at 0 for the rest"
    );
    let row = |column: &str, description: String| Entry {
        file,
        column: column.to_string(),
        unit: "the metric's unit",
        kind: Kind::Measure.name(),
        description,
    };
    vec![
        row(
            "<metric>_mean",
            format!(
                "mean of each summary metric over the cell's runs (the pooled ratio for {pooled})"
            ),
        ),
        row(
            "<metric>_ci_low",
            format!("95% interval, low end: {methods}"),
        ),
        row("<metric>_ci_high", "95% interval, high end".to_string()),
    ]
}

/// The rows of `aggregate.csv` and `aggregate_long.csv`, from those of `summary.csv`
/// (with `templates`, one template per aggregate column instead of three per metric).
fn aggregates(summary: &[Entry], templates: bool) -> Vec<Entry> {
    let file = "aggregate.csv";
    let has = |c: &str| summary.iter().any(|e| e.column == c);
    let mut out = vec![Entry {
        file,
        column: CELL.to_string(),
        unit: "index",
        kind: Kind::Identity.name(),
        description: "grid cell index, in plan order".into(),
    }];
    out.extend(
        summary
            .iter()
            .filter(|e| e.column.starts_with(PARAM_PREFIX))
            .map(|e| Entry { file, ..e.clone() }),
    );
    out.push(Entry {
        file,
        column: RUNS.to_string(),
        unit: "count",
        kind: Kind::Count.name(),
        description: "replications aggregated in the cell".into(),
    });
    if templates {
        out.extend(aggregate_templates(file));
    }
    for e in summary
        .iter()
        .filter(|e| !templates && is_metric(&e.column))
    {
        let m = &e.column;
        let note = interval_note(m, has);
        let pooled = pooled_counts(m, has).is_some();
        let [mean, low, high] = aggregate_columns(m);
        let row = |column: String, description: String| Entry {
            file,
            column,
            unit: e.unit,
            kind: Kind::Measure.name(),
            description,
        };
        out.push(row(
            mean,
            if pooled {
                format!("pooled {m} over the cell's runs")
            } else {
                format!("mean of {m} over the cell's runs")
            },
        ));
        out.push(row(low, format!("{note}: low end")));
        out.push(row(high, format!("{note}: high end")));
    }
    out.extend(
        AGGREGATE_LONG
            .iter()
            .map(|c| entry("aggregate_long.csv", c.name.to_string(), c)),
    );
    out
}

/// The dictionary of a folder with `contents`: every column of each file it holds,
/// in file order (`summary.csv`, `timeseries.csv`, `herd.csv`,
/// `attempts_by_ordinal.csv`, `services.csv` for a service graph, `traces.csv` when
/// traced, then with replications `aggregate.csv` and `aggregate_long.csv`, and last
/// `columns.csv` itself).
pub(crate) fn folder_dictionary(contents: Contents<'_>) -> Vec<Entry> {
    let mut out = summary(contents.layout, contents.params);
    let templates = contents.layout.is_none();
    let aggregate = contents.aggregate.then(|| aggregates(&out, templates));
    out.extend(
        TIMESERIES
            .iter()
            .map(|c| entry("timeseries.csv", c.name.to_string(), c)),
    );
    for (g, _) in groups(contents.layout) {
        out.extend(g.series.iter().map(|c| {
            noted(
                entry("timeseries.csv", c.name.to_string(), c),
                g,
                contents.layout,
            )
        }));
    }
    out.extend(
        HERD.iter()
            .map(|c| entry("herd.csv", c.name.to_string(), c)),
    );
    out.extend(
        ATTEMPTS_BY_ORDINAL
            .iter()
            .map(|c| entry("attempts_by_ordinal.csv", c.name.to_string(), c)),
    );
    for (g, _) in groups(contents.layout) {
        if let Some(f) = g.file {
            out.extend(
                f.columns
                    .iter()
                    .map(|c| noted(entry(f.name, c.name.to_string(), c), g, contents.layout)),
            );
        }
    }
    if contents.traces {
        out.extend(
            TRACE_COLUMNS
                .iter()
                .map(|c| entry(TRACES_FILE, c.name.to_string(), c)),
        );
    }
    out.extend(aggregate.into_iter().flatten());
    out.extend(
        DICTIONARY_HEADER
            .iter()
            .zip(DICTIONARY_DESCRIPTIONS)
            .map(|(name, description)| Entry {
                file: COLUMNS_FILE,
                column: name.to_string(),
                unit: "text",
                kind: Kind::Identity.name(),
                description: description.to_string(),
            }),
    );
    out
}

/// What each column of the dictionary says.
const DICTIONARY_DESCRIPTIONS: [&str; 5] = [
    "the results file the column is in",
    "the column's header name",
    "its unit",
    "identity (which run, cell or row), count, measure, or flag (true/false)",
    "what it holds",
];

/// Every column of every results file (`traces.csv` included; a folder lists it when
/// it holds it, [`Contents::traces`]): for a scenario's layout (its layers and fleets
/// by name), or with the templated columns written as templates
/// (`attempts_layer_<i>`, `fleet_<name>_logical`, `param_<key>`) when `None`.
pub(crate) fn dictionary(layout: Option<&Layout>) -> Vec<Entry> {
    folder_dictionary(Contents {
        layout,
        params: None,
        aggregate: true,
        traces: true,
    })
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn dictionary_example() {
        use crate::metrics::columns::dictionary;
        let d = dictionary(None);
        assert!(d
            .iter()
            .any(|e| e.file == "summary.csv" && e.column == "attempts_layer_<i>"));
        assert!(d
            .iter()
            .any(|e| e.file == "aggregate.csv" && e.column == "<metric>_ci_low"));
        assert!(d
            .iter()
            .all(|e| !e.unit.is_empty() && !e.description.is_empty()));
    }
}
