//! The numbers a run folder's charts draw (`timeseries`, `phase`, `herd`), without
//! drawing them: read from a run's `timeseries.csv` and `herd.csv` text by the code
//! that reads a folder's files, and cut as the charts cut them. The playground draws
//! these in the browser, so its charts show what `retrysim plot` draws from the files.

use std::path::Path;

use super::series::{herd_of_text, timeseries_of_text, HerdSeries, RunSeries};
use super::trajectory::{branches, Branch};
use super::PlotError;

/// What the run charts of one run draw.
#[derive(Debug, Clone)]
pub struct RunCharts {
    /// The run's time series (`timeseries` and `phase`).
    pub series: RunSeries,
    /// Its attempt arrivals in fine buckets (`herd`; no buckets when it has none).
    pub herd: HerdSeries,
    /// The phase portrait's branches: before, during and after the outages, or while
    /// the load rises and falls.
    pub phase: Vec<Branch>,
    /// Spans `[start, end)` in seconds of the buckets outages cover (shaded).
    pub outages: Vec<(f64, f64)>,
    /// Spans where a breaker was open (the `timeseries` chart's strip).
    pub breaker_open: Vec<(f64, f64)>,
    /// Spans where a retry budget denied retries (the `timeseries` chart's strip).
    pub budget_exhausted: Vec<(f64, f64)>,
    /// The dependency's capacity, attempts per second (the dashed line), when finite.
    pub capacity: Option<f64>,
}

/// The charts' numbers of the first run in `timeseries` and `herd` (the text of a
/// `timeseries.csv` and a `herd.csv`, headers included), as a run folder's charts
/// show its first run; `capacity` is the dependency's, attempts per second.
pub fn run_charts(
    timeseries: &str,
    herd: &str,
    capacity: Option<f64>,
) -> Result<RunCharts, PlotError> {
    let series = timeseries_of_text(Path::new("timeseries.csv"), timeseries)?
        .into_iter()
        .next()
        .unwrap_or_default();
    let herd = herd_of_text(Path::new("herd.csv"), herd)?
        .into_iter()
        .find(|h| h.run == series.run)
        .unwrap_or_default();
    Ok(RunCharts {
        phase: branches(&series),
        outages: series.outage_spans(),
        breaker_open: series.breaker_spans(),
        budget_exhausted: series.budget_spans(),
        capacity: capacity.filter(|c| c.is_finite()),
        series,
        herd,
    })
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn run_charts_example() {
        let loaded = crate::load_scenario(None, &Default::default()).unwrap();
        let t = crate::run_tables(&loaded, 0).unwrap();
        let c = crate::plot::run_charts(&t.timeseries, &t.herd, Some(1000.0)).unwrap();
        assert_eq!(c.outages, vec![(20.0, 30.0)]);
        assert_eq!(c.phase.len(), 3);
        assert!(!c.herd.t.is_empty());
    }
}
