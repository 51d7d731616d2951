//! `aggregate.csv` and `aggregate_long.csv`: per grid cell, the mean of every numeric
//! summary column over the replications with a 95% interval that stays inside the
//! metric's domain ([`crate::metrics::interval`]; the catalog's
//! [`interval_method`] says which): Wilson on the pooled counts for a fraction whose
//! counts are columns (its mean is the pooled ratio `Σnumerator / Σdenominator`, so
//! the mean lies inside its interval), Wilson over the runs for a flag, Student t
//! clipped to `[0, 1]` for another fraction and at 0 for the rest.
//!
//! `aggregate.csv` is wide (one line per cell, three columns per metric);
//! `aggregate_long.csv` holds the same numbers as `cell, metric, n, mean, ci_low,
//! ci_high`, one line per cell and metric in summary column order. Both are computed
//! from the summary rows *as written* (parsed back from CSV), so a merged set of
//! shards gives the same bytes as one unsharded sweep.

use crate::export::csv::record;
use crate::metrics::columns::{
    aggregate_columns, interval_method, pooled_counts, AGGREGATE_LONG_COLUMNS, CELL, PARAM_PREFIX,
    RUN, RUNS,
};
use crate::metrics::interval::{wilson, Method, Moments};
use crate::metrics::summary::Cell;

pub(crate) use crate::metrics::interval::mean_ci;

/// Whether a summary column is aggregated: every column but the run identity and the
/// swept parameters (the catalog's [`is_metric`](crate::metrics::columns::is_metric)).
pub(crate) use crate::metrics::columns::is_metric;

fn parse(field: &str) -> Option<f64> {
    match field {
        "" => None,
        "true" => Some(1.0),
        "false" => Some(0.0),
        s => s.parse::<f64>().ok().filter(|x| x.is_finite()),
    }
}

/// The two tables of [`render`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Rendered {
    /// `aggregate.csv`.
    pub wide: String,
    /// `aggregate_long.csv`.
    pub long: String,
}

/// Renders `aggregate.csv` and `aggregate_long.csv` from summary rows (as CSV fields,
/// in plan order), each in the cell of its run index (`run / replications`).
pub(crate) fn render(columns: &[String], rows: &[Vec<String>], replications: usize) -> Rendered {
    let mut a = Aggregator::new(columns, replications);
    let mut out = Rendered {
        wide: a.header(),
        long: a.long_header(),
    };
    let mut add = |l: CellLines| {
        out.wide.push_str(&l.wide);
        out.long.push_str(&l.long);
    };
    for r in rows {
        a.push(r).map(&mut add);
    }
    a.finish().map(add);
    out
}

/// One metric's running state within a cell.
#[derive(Debug, Clone)]
struct Metric {
    /// Its summary column.
    col: usize,
    method: Method,
    /// The numerator and denominator columns of a pooled fraction.
    pool: Option<(usize, usize)>,
    /// The values (Student t).
    moments: Moments,
    /// Successes and trials: pooled counts, or runs true and runs with a flag.
    k: u64,
    n: u64,
}

impl Metric {
    fn push(&mut self, row: &[String]) {
        let field = |i: usize| row.get(i).map_or("", String::as_str);
        match self.method {
            Method::WilsonPooled => {
                let (a, b) = self.pool.expect("a pooled metric has its counts");
                if let (Ok(k), Ok(n)) = (field(a).parse::<u64>(), field(b).parse::<u64>()) {
                    self.k = self.k.saturating_add(k);
                    self.n = self.n.saturating_add(n);
                }
            }
            Method::WilsonRuns => {
                if let Some(x) = parse(field(self.col)) {
                    self.k += u64::from(x != 0.0);
                    self.n += 1;
                }
            }
            Method::StudentT(_) => {
                if let Some(x) = parse(field(self.col)) {
                    self.moments.push(x);
                }
            }
        }
    }

    /// `n` (values, or pooled trials) and `(mean, low, high)` when there are values.
    fn estimate(&self) -> (u64, Option<(f64, f64, f64)>) {
        match self.method {
            Method::WilsonPooled | Method::WilsonRuns => (self.n, wilson(self.k, self.n)),
            Method::StudentT(d) => (self.moments.n(), self.moments.student_t(d)),
        }
    }

    fn reset(&mut self) {
        self.moments = Moments::default();
        self.k = 0;
        self.n = 0;
    }
}

/// The lines a finished cell adds to each table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CellLines {
    /// Its `aggregate.csv` line.
    pub wide: String,
    /// Its `aggregate_long.csv` lines, one per metric.
    pub long: String,
}

/// `aggregate.csv` and `aggregate_long.csv` computed row by row: one cell's state at a
/// time, so memory does not grow with the number of runs or replications. A row
/// belongs to the cell of its run index (`run / replications`), not to its position:
/// a missing run leaves its cell short, never moves a run into another cell.
#[derive(Debug, Clone)]
pub(crate) struct Aggregator {
    columns: Vec<String>,
    params: Vec<usize>,
    metrics: Vec<Metric>,
    replications: usize,
    /// The `run` column.
    run: Option<usize>,
    /// Rows pushed so far (the run index of a row without one).
    seen: usize,
    cell: usize,
    rows: usize,
    first: Vec<String>,
}

impl Aggregator {
    /// An aggregator of summary rows with `columns`, `replications` rows per cell.
    pub(crate) fn new(columns: &[String], replications: usize) -> Aggregator {
        let params: Vec<usize> = (0..columns.len())
            .filter(|&i| columns[i].starts_with(PARAM_PREFIX))
            .collect();
        let index = |name: &str| columns.iter().position(|c| c == name);
        let has = |name: &str| index(name).is_some();
        let metrics = (0..columns.len())
            .filter(|&i| is_metric(&columns[i]))
            .map(|col| {
                let name = &columns[col];
                Metric {
                    col,
                    method: interval_method(name, has),
                    pool: pooled_counts(name, has).and_then(|(a, b)| Some((index(a)?, index(b)?))),
                    moments: Moments::default(),
                    k: 0,
                    n: 0,
                }
            })
            .collect();
        Aggregator {
            columns: columns.to_vec(),
            params,
            metrics,
            replications: replications.max(1),
            run: index(RUN.name),
            seen: 0,
            cell: 0,
            rows: 0,
            first: Vec::new(),
        }
    }

    /// The header line of `aggregate.csv`.
    pub(crate) fn header(&self) -> String {
        let mut header = vec![CELL.to_string()];
        header.extend(self.params.iter().map(|&i| self.columns[i].clone()));
        header.push(RUNS.into());
        for m in &self.metrics {
            header.extend(aggregate_columns(&self.columns[m.col]));
        }
        record(&header)
    }

    /// The header line of `aggregate_long.csv`.
    pub(crate) fn long_header(&self) -> String {
        record(AGGREGATE_LONG_COLUMNS)
    }

    /// Adds a summary row (its fields; rows in run order); returns the lines of the
    /// previous cell when the row starts another.
    pub(crate) fn push(&mut self, row: &[String]) -> Option<CellLines> {
        let run = self
            .run
            .and_then(|i| row.get(i))
            .and_then(|r| r.parse::<usize>().ok())
            .unwrap_or(self.seen);
        self.seen += 1;
        let cell = run / self.replications;
        let done = (self.rows > 0 && cell != self.cell).then(|| self.lines());
        if self.rows == 0 {
            self.cell = cell;
            self.first = self
                .params
                .iter()
                .map(|&i| row.get(i).cloned().unwrap_or_default())
                .collect();
        }
        self.metrics.iter_mut().for_each(|m| m.push(row));
        self.rows += 1;
        done
    }

    /// The lines of the last cell (`None` when no row is pending).
    pub(crate) fn finish(&mut self) -> Option<CellLines> {
        (self.rows > 0).then(|| self.lines())
    }

    fn lines(&mut self) -> CellLines {
        let cell = self.cell.to_string();
        let mut wide = vec![cell.clone()];
        wide.append(&mut self.first);
        wide.push(self.rows.to_string());
        let mut long = String::new();
        for m in &mut self.metrics {
            let (n, est) = m.estimate();
            let fields = match est {
                Some((mean, lo, hi)) => [mean, lo, hi].map(|x| Cell::float(x).render()),
                None => Default::default(),
            };
            let mut row = vec![cell.clone(), self.columns[m.col].clone(), n.to_string()];
            row.extend(fields.iter().cloned());
            long.push_str(&record(&row));
            wide.extend(fields);
            m.reset();
        }
        self.rows = 0;
        CellLines {
            wide: record(&wide),
            long,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings<const N: usize>(rows: &[[&str; N]]) -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.to_string()).collect())
            .collect()
    }

    #[test]
    fn cells_group_consecutive_rows_and_skip_empty_values() {
        let cols = &strings(&[["run", "replication", "seed", "x", "metastable", "param_k"]])[0];
        let rows = strings(&[
            ["0", "0", "1", "1", "true", "a"],
            ["1", "1", "2", "3", "false", "a"],
            ["2", "0", "1", "", "true", "b"],
            ["3", "1", "2", "", "true", "b"],
        ]);
        let out = render(cols, &rows, 2);
        let lines: Vec<&str> = out.wide.lines().collect();
        assert_eq!(
            lines[0],
            "cell,param_k,runs,x_mean,x_ci_low,x_ci_high,metastable_mean,metastable_ci_low,metastable_ci_high"
        );
        // x: 2 ± 12.706 · √2 / √2, clipped at 0.
        assert_eq!(lines[1], "0,a,2,2,0,14.706,0.5,0.0945312057,0.9054687943");
        // Two runs true: Wilson of 2 of 2, low = 2 / (2 + z²).
        let (_, lo, _) = wilson(2, 2).unwrap();
        let lo = Cell::float(lo).render();
        assert_eq!(lines[2], format!("1,b,2,,,,1,{lo},1"));
        let long: Vec<&str> = out.long.lines().collect();
        assert_eq!(
            long,
            [
                "cell,metric,n,mean,ci_low,ci_high",
                "0,x,2,2,0,14.706",
                "0,metastable,2,0.5,0.0945312057,0.9054687943",
                "1,x,0,,,",
                &format!("1,metastable,2,1,{lo},1"),
            ]
        );
    }

    /// success_fraction pools Σsucceeded / Σlogical; a fraction without counts gets
    /// the t interval clipped to [0, 1].
    #[test]
    fn a_pooled_fraction_is_the_ratio_of_the_summed_counts_inside_its_interval() {
        let cols = &strings(&[[
            "run",
            "logical",
            "succeeded",
            "success_fraction",
            "wasted_fraction",
        ]])[0];
        let rows = strings(&[
            ["0", "100", "100", "1", "0"],
            ["1", "300", "299", "0.996666667", "0.9"],
            ["2", "0", "0", "", "1"],
        ]);
        let out = render(cols, &rows, 3);
        let long: Vec<Vec<&str>> = out.long.lines().map(|l| l.split(',').collect()).collect();
        let sf = long.iter().find(|r| r[1] == "success_fraction").unwrap();
        let (p, lo, hi) = wilson(399, 400).unwrap();
        assert_eq!(sf[2], "400");
        assert_eq!(sf[3], Cell::float(p).render());
        assert_eq!(sf[3], "0.9975");
        // By hand: (0.9975 + z²/800 ± z·√(0.9975 · 0.0025/400 + z²/640000)) / (1 + z²/400).
        assert_eq!((sf[4], sf[5]), ("0.9859767149", "0.9995585522"));
        assert_eq!(sf[4], Cell::float(lo).render());
        assert!(lo < p && p < hi && hi < 1.0);
        let wf = long.iter().find(|r| r[1] == "wasted_fraction").unwrap();
        let w: Vec<f64> = wf[3..].iter().map(|s| s.parse().unwrap()).collect();
        // 0.633 ± 4.303 · 0.551 / √3 = 0.633 ± 1.369, clipped to [0, 1].
        assert_eq!((wf[2], w[1], w[2]), ("3", 0.0, 1.0));
        // Counts: a plain t, clipped at 0 (mean 133.3, raw low far below 0).
        let lg = long.iter().find(|r| r[1] == "logical").unwrap();
        assert_eq!(lg[4], "0");
    }

    /// Run 1 is missing: cell 0 holds run 0 alone, and cell 1 both its runs (grouping
    /// adjacent rows put run 2 into cell 0 and left cell 1 one run).
    #[test]
    fn rows_group_by_the_cell_of_their_run_index_not_by_position() {
        let cols = &strings(&[["run", "x", "param_k"]])[0];
        let rows = strings(&[["0", "1", "a"], ["2", "10", "b"], ["3", "20", "b"]]);
        let out = render(cols, &rows, 2);
        let lines: Vec<&str> = out.wide.lines().collect();
        assert_eq!(lines[0], "cell,param_k,runs,x_mean,x_ci_low,x_ci_high");
        assert_eq!(lines[1], "0,a,1,1,1,1");
        assert!(lines[2].starts_with("1,b,2,15,"), "{}", lines[2]);
        assert_eq!(lines.len(), 3);
        let long: Vec<&str> = out.long.lines().collect();
        assert_eq!(long[1], "0,x,1,1,1,1");
        assert!(long[2].starts_with("1,x,2,15,"), "{}", long[2]);
        // A whole cell missing: the next keeps its own index.
        let rows = strings(&[["0", "1", "a"], ["1", "1", "a"], ["4", "7", "c"]]);
        let out = render(cols, &rows, 2);
        let cells: Vec<&str> = out
            .wide
            .lines()
            .skip(1)
            .map(|l| &l[..l.find(',').unwrap()])
            .collect();
        assert_eq!(cells, ["0", "2"]);
    }

    #[test]
    fn a_partial_last_cell_is_written_by_finish() {
        let cols = &strings(&[["run", "x"]])[0];
        let out = render(cols, &strings(&[["0", "1"], ["1", "2"], ["2", "5"]]), 2);
        assert_eq!(out.wide.lines().last(), Some("1,1,5,5,5"));
        assert_eq!(out.long.lines().count(), 3);
    }
}
