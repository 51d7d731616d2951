//! Measurements of a run: the per-bucket time series, the whole-run totals, the recovery
//! analysis and the summary row built from them; the catalog of the columns they are
//! written in, and the number formats.

pub mod bins;
pub mod collapse;
pub mod columns;
pub mod format;
pub mod guards;
pub mod interval;
pub mod ordinal;
pub mod quantiles;
pub mod queue;
pub mod recorder;
pub mod recovery;
pub mod reject;
pub mod services;
pub mod summary;
pub mod trace;

pub use recorder::{BucketRow, Recorder, RunMetrics, Totals};
pub use summary::Summary;
