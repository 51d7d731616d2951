//! Writes a result folder: `summary.csv`, `timeseries.csv`, `herd.csv` and
//! `manifest.toml`, each atomically.

use std::path::Path;

use crate::metrics::summary::Layout;
use crate::run::RunResult;
use crate::scenario::Loaded;

use super::csv::{
    herd_rows, summary_header, summary_row, timeseries_rows, HERD_COLUMNS, TIMESERIES_COLUMNS,
};
use super::{manifest, write_atomic};

/// The files of a finished set of runs, rendered.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    /// `summary.csv`.
    pub summary: String,
    /// `timeseries.csv`.
    pub timeseries: String,
    /// `herd.csv`.
    pub herd: String,
}

/// Renders the CSV files of `results` (in the order given).
pub fn render(
    results: &[RunResult],
    layout: &Layout,
    servers: Option<u32>,
    params: &[String],
) -> Rendered {
    let mut cols = layout.columns();
    cols.extend(params.iter().map(|p| format!("param_{p}")));
    let mut out = Rendered {
        summary: summary_header(&cols),
        timeseries: super::csv::record(TIMESERIES_COLUMNS),
        herd: super::csv::record(HERD_COLUMNS),
    };
    for r in results {
        out.summary.push_str(&summary_row(&r.summary, &cols));
        out.timeseries.push_str(&timeseries_rows(r, servers));
        out.herd.push_str(&herd_rows(r));
    }
    out
}

/// Writes the rendered files and the manifest into `dir`.
pub fn write(dir: &Path, loaded: &Loaded, rendered: &Rendered, runs: u64) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    write_atomic(&dir.join("summary.csv"), rendered.summary.as_bytes())?;
    write_atomic(&dir.join("timeseries.csv"), rendered.timeseries.as_bytes())?;
    write_atomic(&dir.join("herd.csv"), rendered.herd.as_bytes())?;
    write_atomic(
        &dir.join("manifest.toml"),
        manifest::render(loaded, runs, &[]).as_bytes(),
    )?;
    Ok(())
}
