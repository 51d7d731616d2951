//! Measurements of a run: the per-bucket time series, the whole-run totals, the recovery
//! analysis and the summary row built from them.

pub mod recorder;
pub mod recovery;
pub mod summary;

pub use recorder::{BucketRow, Recorder, RunMetrics, Totals};
pub use summary::Summary;
