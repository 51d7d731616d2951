//! Reading a result folder back: the manifest, the CSV files into typed columns
//! ([`super::table`]), the per-run series ([`super::series`]) and a sweep's cells
//! ([`super::cells`]).
//!
//! The CSVs are the plots' only input, so a folder can be redrawn long after its run.

use std::path::Path;

pub(crate) use super::cells::{Stat, Sweep, SweepCell};
pub(crate) use super::series::{read_herd, read_timeseries, HerdSeries, RunSeries};
pub(crate) use super::table::{parse_number, CsvTable};
pub(crate) use crate::export::manifest::{FolderKind, Manifest};

use crate::export::manifest::ReadError;

use super::PlotError;

/// Reads and checks the manifest at `path`: the typed manifest, and its text without
/// its `[output]` file list and its `[plot]` table (what the report shows: what
/// produced the files; the list changes as charts are drawn, and `[plot]` is what
/// they are drawn from).
pub(crate) fn read_manifest(path: &Path) -> Result<(Manifest, String), PlotError> {
    let text = crate::export::read::read_to_string(path, crate::export::MAX_MANIFEST_BYTES)
        .map_err(|source| PlotError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let m = parse_manifest(path, &text)?;
    let shown = crate::export::manifest::without_plot(crate::export::owner::without_output(&text));
    Ok((m, shown.to_string()))
}

/// Parses manifest text, naming `path` in errors.
pub(crate) fn parse_manifest(path: &Path, text: &str) -> Result<Manifest, PlotError> {
    let bad = |message: String| PlotError::Manifest {
        path: path.to_path_buf(),
        message,
    };
    let m = Manifest::parse(text).map_err(|e| match e {
        ReadError::NoRun => bad("has no [run] table".into()),
        ReadError::Syntax(e) | ReadError::Field(e) => bad(e),
    })?;
    if m.run.kind == FolderKind::Sweep && m.run.params.is_empty() {
        return Err(bad("a sweep's run.params must name at least one key".into()));
    }
    Ok(m)
}
