//! Measurements of a run: the per-bucket time series, the whole-run totals, the recovery
//! analysis and the summary row built from them; the catalog of the columns they are
//! written in, and the number formats.

pub(crate) mod bins;
pub(crate) mod collapse;
pub(crate) mod columns;
pub(crate) mod format;
pub(crate) mod guards;
pub(crate) mod interval;
pub(crate) mod ordinal;
pub(crate) mod quantiles;
pub(crate) mod queue;
pub(crate) mod recorder;
pub(crate) mod recovery;
pub(crate) mod reject;
pub(crate) mod services;
pub(crate) mod summary;
pub(crate) mod trace;

pub(crate) use recorder::{BucketRow, Recorder, RunMetrics};
pub(crate) use summary::Summary;
