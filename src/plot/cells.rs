//! The grid cells of a sweep folder: each cell's metrics with their 95% intervals, from
//! `aggregate.csv`, or the cell means of `summary.csv` when it has none.

use std::collections::BTreeMap;

use crate::metrics::columns::{
    aggregate_columns, is_metric, param_column, MEAN_SUFFIX, REPLICATION, RUN, RUNS,
};

use super::table::CsvTable;
use super::PlotError;

/// A mean with its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stat {
    /// Mean over the replications.
    pub mean: f64,
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

/// One grid cell of a sweep.
#[derive(Debug, Clone)]
pub(crate) struct SweepCell {
    /// The swept values, as written, in the order of [`Sweep::keys`].
    pub values: Vec<String>,
    /// Replications aggregated.
    pub runs: u64,
    /// Metric name → statistic (over the runs where it has a value).
    pub metrics: BTreeMap<String, Stat>,
    /// Metric name → runs of the cell where it is empty (`recovery_time_s` of a run
    /// that never recovered); metrics never empty are absent.
    pub empty: BTreeMap<String, u64>,
}

/// A sweep's cells, from `aggregate.csv` (or from `summary.csv` without intervals).
#[derive(Debug, Clone)]
pub(crate) struct Sweep {
    /// Swept dotted keys.
    pub keys: Vec<String>,
    /// Cells in grid order.
    pub cells: Vec<SweepCell>,
    /// Metric names, in column order.
    pub metrics: Vec<String>,
    /// Whether the intervals come from `aggregate.csv` (false: means of `summary.csv`).
    pub has_intervals: bool,
    /// `(run, replication, cell index)` for every summary row.
    pub runs: Vec<(u64, u64, usize)>,
}

impl Sweep {
    /// Reads the cells of a sweep folder: `aggregate.csv` when present, else cell means
    /// of `summary.csv`.
    pub(crate) fn read(
        keys: &[String],
        summary: &CsvTable,
        aggregate: Option<&CsvTable>,
    ) -> Result<Sweep, PlotError> {
        let mut cells = match aggregate {
            Some(a) => Self::cells_of_aggregate(keys, a)?,
            None => Self::cells_of_summary(keys, summary)?,
        };
        let mut metrics: Vec<String> = Vec::new();
        match aggregate {
            Some(a) => {
                for h in &a.headers {
                    if let Some(m) = h.strip_suffix(MEAN_SUFFIX) {
                        metrics.push(m.to_string());
                    }
                }
            }
            None => {
                for h in &summary.headers {
                    if is_metric(h) {
                        metrics.push(h.clone());
                    }
                }
            }
        }
        let value_cols: Vec<Vec<&str>> = keys
            .iter()
            .map(|k| summary.texts(&param_column(k)))
            .collect::<Result<_, _>>()?;
        let run_ids = summary.integers(RUN.name)?;
        let reps = summary.integers(REPLICATION.name)?;
        let mut runs = Vec::new();
        let mut row_cell = vec![None; run_ids.len()];
        for (i, run) in run_ids.iter().enumerate() {
            let vals: Vec<&str> = value_cols.iter().map(|c| c[i]).collect();
            if let Some(ci) = cells.iter().position(|c| c.values == vals) {
                runs.push((*run, reps[i], ci));
                row_cell[i] = Some(ci);
            }
        }
        // The runs where each metric is empty, cell by cell.
        for m in &metrics {
            let Ok(col) = summary.numbers(m) else {
                continue;
            };
            for (v, ci) in col.iter().zip(&row_cell) {
                if let (None, Some(ci)) = (v, ci) {
                    *cells[*ci].empty.entry(m.clone()).or_insert(0) += 1;
                }
            }
        }
        metrics.retain(|m| {
            cells
                .iter()
                .any(|c| c.metrics.contains_key(m) || c.empty.contains_key(m))
        });
        Ok(Sweep {
            keys: keys.to_vec(),
            cells,
            metrics,
            has_intervals: aggregate.is_some(),
            runs,
        })
    }

    fn cells_of_aggregate(keys: &[String], a: &CsvTable) -> Result<Vec<SweepCell>, PlotError> {
        let value_cols: Vec<Vec<&str>> = keys
            .iter()
            .map(|k| a.texts(&param_column(k)))
            .collect::<Result<_, _>>()?;
        let runs = a.numbers_or_empty(RUNS)?;
        // (metric, means, lows, highs)
        type Columns = (String, Vec<Option<f64>>, Vec<Option<f64>>, Vec<Option<f64>>);
        let mut stats: Vec<Columns> = Vec::new();
        for h in &a.headers {
            if let Some(m) = h.strip_suffix(MEAN_SUFFIX) {
                let [_, low, high] = aggregate_columns(m);
                stats.push((
                    m.to_string(),
                    a.numbers(h)?,
                    a.numbers_or_empty(&low)?,
                    a.numbers_or_empty(&high)?,
                ));
            }
        }
        let mut cells = Vec::with_capacity(a.rows.len());
        for i in 0..a.rows.len() {
            let mut metrics = BTreeMap::new();
            for (name, mean, low, high) in &stats {
                if let Some(m) = mean[i] {
                    let lo = low[i].unwrap_or(m).min(m);
                    let hi = high[i].unwrap_or(m).max(m);
                    metrics.insert(
                        name.clone(),
                        Stat {
                            mean: m,
                            low: lo,
                            high: hi,
                        },
                    );
                }
            }
            cells.push(SweepCell {
                values: value_cols.iter().map(|c| c[i].to_string()).collect(),
                runs: runs[i].map_or(1, |r| r.max(0.0) as u64),
                metrics,
                empty: BTreeMap::new(),
            });
        }
        Ok(cells)
    }

    fn cells_of_summary(keys: &[String], s: &CsvTable) -> Result<Vec<SweepCell>, PlotError> {
        let value_cols: Vec<Vec<&str>> = keys
            .iter()
            .map(|k| s.texts(&param_column(k)))
            .collect::<Result<_, _>>()?;
        let mut columns: Vec<(String, Vec<Option<f64>>)> = Vec::new();
        for h in &s.headers {
            if !is_metric(h) {
                continue;
            }
            // Text columns (none today) are left out rather than failing the plots.
            if let Ok(v) = s.numbers(h) {
                columns.push((h.clone(), v));
            }
        }
        let mut cells: Vec<SweepCell> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        for i in 0..s.rows.len() {
            let vals: Vec<String> = value_cols.iter().map(|c| c[i].to_string()).collect();
            match cells.iter().position(|c| c.values == vals) {
                Some(ci) => members[ci].push(i),
                None => {
                    cells.push(SweepCell {
                        values: vals,
                        runs: 0,
                        metrics: BTreeMap::new(),
                        empty: BTreeMap::new(),
                    });
                    members.push(vec![i]);
                }
            }
        }
        for (cell, rows) in cells.iter_mut().zip(&members) {
            cell.runs = rows.len() as u64;
            for (name, col) in &columns {
                let xs: Vec<f64> = rows.iter().filter_map(|&r| col[r]).collect();
                if xs.is_empty() {
                    continue;
                }
                let mean = xs.iter().sum::<f64>() / xs.len() as f64;
                cell.metrics.insert(
                    name.clone(),
                    Stat {
                        mean,
                        low: mean,
                        high: mean,
                    },
                );
            }
        }
        Ok(cells)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn summary_fallback_groups_runs_into_cells_in_order() {
        let s = CsvTable::parse(
            Path::new("d/x.csv"),
            "run,replication,seed,success_fraction,param_a\n0,0,1,0.5,1\n1,1,2,1,1\n2,0,1,0.25,2\n"
                .as_bytes(),
        )
        .unwrap();
        let sw = Sweep::read(&["a".into()], &s, None).unwrap();
        assert_eq!(sw.cells.len(), 2);
        assert_eq!(sw.cells[0].runs, 2);
        assert_eq!(sw.cells[0].metrics["success_fraction"].mean, 0.75);
        assert_eq!(sw.runs, vec![(0, 0, 0), (1, 1, 0), (2, 0, 1)]);
        assert!(!sw.has_intervals);
        assert_eq!(sw.metrics, vec!["success_fraction".to_string()]);
    }
}
