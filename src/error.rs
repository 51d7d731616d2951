//! The library's error, by what it means to whoever called: bad input, runs stopped at
//! their limits, a file that could not be written, an internal failure, an
//! interruption. Each kind has its process exit code ([`Error::exit_code`]); the
//! message is the one of the error it wraps, so the kind changes no message.
//!
//! Modules keep their own errors ([`ScenarioError`], `SweepError`, `PlotError`...);
//! the entry points of [`crate::api`] turn them into an [`Error`] of the right kind.

use std::path::Path;

use crate::check::CheckError;
use crate::explain::lint::UnknownLint;
use crate::export::owner::OwnerError;
use crate::plot::PlotError;
use crate::scenario::ScenarioError;
use crate::sweep::SweepError;

/// Process exit codes (MODEL.md §8, the book's command-line page).
pub mod exit {
    /// Success.
    pub const OK: i32 = 0;
    /// An expectation failed (`check`), or a denied lint fired (`explain`).
    pub const FAILED: i32 = 1;
    /// Bad input: a file, field, value or argument.
    pub const BAD_INPUT: i32 = 2;
    /// A run stopped at one of its `[limits]`: its results are incomplete.
    pub const STOPPED: i32 = 2;
    /// A file or folder could not be written (or read back) by the file system.
    pub const IO: i32 = 3;
    /// Something that should not fail did (a thread pool, a chart backend).
    pub const INTERNAL: i32 = 4;
    /// A sweep interrupted by Ctrl-C.
    pub const INTERRUPTED: i32 = 130;
}

/// The cause an [`Error`] wraps.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// What went wrong, by kind; its message is the cause's.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A scenario, baseline, result folder or argument is not usable (exit 2).
    #[error(transparent)]
    BadInput(Cause),
    /// Runs stopped early at one of their `[limits]` (exit 2): what they wrote is
    /// marked truncated.
    #[error("{0}")]
    Stopped(Truncation),
    /// The file system refused a write (exit 3): an output folder under a file, a
    /// read-only folder, a full disk.
    #[error(transparent)]
    Io(Cause),
    /// A failure that is no fault of the input (exit 4).
    #[error(transparent)]
    Internal(Cause),
    /// A sweep was stopped by its stop flag (exit 130); finished runs are on disk.
    #[error(transparent)]
    Interrupted(Cause),
}

impl Error {
    /// Bad input, with its message.
    pub fn bad_input(message: impl Into<String>) -> Error {
        Error::BadInput(message.into().into())
    }

    /// A failed write of `path` (`what`: "cannot write baseline").
    pub fn io(what: &str, path: &Path, source: std::io::Error) -> Error {
        Error::Io(format!("{what} '{}': {source}", path.display()).into())
    }

    /// The process exit code of this kind of error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::BadInput(_) => exit::BAD_INPUT,
            Error::Stopped(_) => exit::STOPPED,
            Error::Io(_) => exit::IO,
            Error::Internal(_) => exit::INTERNAL,
            Error::Interrupted(_) => exit::INTERRUPTED,
        }
    }
}

impl From<ScenarioError> for Error {
    fn from(e: ScenarioError) -> Error {
        Error::BadInput(e.into())
    }
}

impl From<CheckError> for Error {
    fn from(e: CheckError) -> Error {
        Error::BadInput(e.into())
    }
}

impl From<UnknownLint> for Error {
    fn from(e: UnknownLint) -> Error {
        Error::BadInput(e.into())
    }
}

impl From<OwnerError> for Error {
    fn from(e: OwnerError) -> Error {
        match e {
            OwnerError::Io { .. } => Error::Io(e.into()),
            _ => Error::BadInput(e.into()),
        }
    }
}

impl From<SweepError> for Error {
    fn from(e: SweepError) -> Error {
        match e {
            SweepError::Scenario(e) => e.into(),
            SweepError::Output(e) => e.into(),
            // A file retrysim reads back that is not what it wrote (a FIFO, a device,
            // a file over its cap, text that is not its CSV) is bad input, not a
            // failure of the file system.
            SweepError::Io { ref source, .. }
                if matches!(
                    source.kind(),
                    std::io::ErrorKind::InvalidInput | std::io::ErrorKind::InvalidData
                ) =>
            {
                Error::BadInput(e.into())
            }
            SweepError::Io { .. } => Error::Io(e.into()),
            SweepError::Occupied { .. } | SweepError::Merge(_) => Error::BadInput(e.into()),
            SweepError::Interrupted { .. } => Error::Interrupted(e.into()),
            SweepError::Pool(_) => Error::Internal(e.into()),
        }
    }
}

impl From<PlotError> for Error {
    fn from(e: PlotError) -> Error {
        match &e {
            PlotError::Write { .. }
            | PlotError::Owner {
                source: OwnerError::Io { .. },
                ..
            } => Error::Io(e.into()),
            PlotError::Draw { .. } => Error::Internal(e.into()),
            _ => Error::BadInput(e.into()),
        }
    }
}

pub use crate::truncation::{Truncation, RUNS_LISTED};

/// The message of an error and its causes, each said once (a cause whose text an
/// earlier part already holds is left out), joined by `: `: what `retrysim` prints
/// after `error:`, and what the playground shows.
///
/// ```
/// let e = retrysim::Error::bad_input("scenario 'x.toml': duration: must be positive");
/// assert_eq!(retrysim::error::chain(&e), "scenario 'x.toml': duration: must be positive");
/// ```
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut at = Some(e);
    while let Some(cause) = at {
        let s = cause.to_string();
        if !parts.iter().any(|p| p.contains(&s)) {
            parts.push(s);
        }
        at = cause.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopped_runs_exit_with_the_stopped_code() {
        let t = Truncation::of("s".into(), 1, vec![(0, None)], "c".into()).unwrap();
        assert_eq!(Error::Stopped(t).exit_code(), exit::STOPPED);
    }
}
