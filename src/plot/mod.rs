//! Plots and the HTML report of a result folder, drawn from its CSV files alone.
//!
//! This module reads a result folder back ([`data`]), with a bundled font ([`font`]),
//! stable colours ([`palette`]) and the drawing plumbing every chart shares ([`canvas`]).
//! The same CSVs give byte-identical SVG files: nothing depends on time, hashing
//! order or the machine's fonts.

pub mod canvas;
pub mod data;
pub mod font;
pub mod palette;

use std::path::PathBuf;

/// Image format of plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// PNG bitmaps.
    Png,
    /// SVG vector images.
    Svg,
}

impl Format {
    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Svg => "svg",
        }
    }
}

/// Why a folder could not be plotted.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// A file could not be read.
    #[error("cannot read '{}': {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A CSV file is malformed.
    #[error("cannot read '{}': {message}", path.display())]
    Csv {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A CSV file lacks a column the plots need.
    #[error("cannot read '{}': the file has no column '{column}'", path.display())]
    MissingColumn {
        /// The file.
        path: PathBuf,
        /// The column.
        column: String,
    },
    /// A CSV cell holds something other than what its column needs.
    #[error("cannot read '{}': line {line}, column '{column}': expected {expected} (found '{found}')", path.display())]
    BadValue {
        /// The file.
        path: PathBuf,
        /// 1-based line in the file.
        line: u64,
        /// The column.
        column: String,
        /// What the column holds.
        expected: &'static str,
        /// The cell's text.
        found: String,
    },
    /// The manifest is malformed.
    #[error("cannot read '{}': {message}", path.display())]
    Manifest {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// Drawing a chart failed.
    #[error("cannot draw '{}': {message}", path.display())]
    Draw {
        /// The chart's file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// Writing a file failed.
    #[error("cannot write '{}': {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}
