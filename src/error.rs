//! The library's error, by what it means to whoever called: bad input, runs stopped at
//! their limits, a file that could not be written, an internal failure, an
//! interruption. Each kind has its process exit code ([`Error::exit_code`]); the
//! message is the one of the error it wraps, so the kind changes no message.
//!
//! Modules keep their own errors ([`ScenarioError`], [`SweepError`], [`PlotError`]...);
//! the entry points of [`crate::api`] turn them into an [`Error`] of the right kind.

use std::fmt;
use std::path::Path;

use crate::check::CheckError;
use crate::explain::lint::UnknownLint;
use crate::export::owner::OwnerError;
use crate::plot::PlotError;
use crate::scenario::ScenarioError;
use crate::sweep::SweepError;

/// Process exit codes (MODEL.md §8, README "Exit codes").
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

/// Most stopped runs a [`Truncation`] message lists one by one.
pub const RUNS_LISTED: usize = 10;

/// Runs that stopped early at one of their `[limits]`, and the one message that says so
/// (`run`, `sweep`, `merge` and `check` alike).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// What ran: `scenario 'x.toml'`, `sweep 'name'`.
    pub subject: String,
    /// Runs in all.
    pub runs: u64,
    /// The runs that stopped, in run order, with why when it is known (a run read back
    /// from disk says only that it stopped).
    pub stopped: Vec<(u64, Option<String>)>,
    /// What it means for the results (`the results written are marked truncated in
    /// 'out'`).
    pub consequence: String,
}

impl Truncation {
    /// The stopped runs of `subject`, or `None` when none stopped.
    pub fn of(
        subject: String,
        runs: u64,
        stopped: Vec<(u64, Option<String>)>,
        consequence: String,
    ) -> Option<Truncation> {
        (!stopped.is_empty()).then_some(Truncation {
            subject,
            runs,
            stopped,
            consequence,
        })
    }

    /// The consequence for results written in `dir`.
    pub fn marked_in(dir: &Path) -> String {
        format!(
            "the results written are marked truncated in '{}'",
            dir.display()
        )
    }
}

fn why(w: &Option<String>) -> &str {
    w.as_deref().unwrap_or(
        "stopped early at limits.max_in_flight or limits.max_events when it ran (truncated = true in its summary row)",
    )
}

impl fmt::Display for Truncation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(first) = self.stopped.first() else {
            return write!(f, "{}: no run stopped early", self.subject);
        };
        if self.runs == 1 {
            return write!(
                f,
                "{}: run stopped early: {}; {}",
                self.subject,
                why(&first.1),
                self.consequence
            );
        }
        let n = self.stopped.len();
        write!(
            f,
            "{}: {n} of {} runs stopped early at a limit; {}:",
            self.subject, self.runs, self.consequence
        )?;
        for (run, w) in self.stopped.iter().take(RUNS_LISTED) {
            write!(f, "\n  run {run}: {}", why(w))?;
        }
        if n > RUNS_LISTED {
            write!(
                f,
                "\n  ... and {} more (the truncated column of summary.csv)",
                n - RUNS_LISTED
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_run_says_why_and_many_list_each_run() {
        let one = Truncation::of(
            "scenario 's'".into(),
            1,
            vec![(0, Some("x".into()))],
            "c".into(),
        );
        assert_eq!(
            one.unwrap().to_string(),
            "scenario 's': run stopped early: x; c"
        );
        let stopped = (0..12).map(|r| (r, (r == 0).then(|| "x".into()))).collect();
        let many = Truncation::of("sweep 'w'".into(), 20, stopped, "c".into()).unwrap();
        let text = many.to_string();
        assert!(text.starts_with("sweep 'w': 12 of 20 runs stopped early at a limit; c:\n  run 0: x\n  run 1: stopped early at"), "{text}");
        assert!(text.ends_with("... and 2 more (the truncated column of summary.csv)"));
        assert!(Truncation::of("s".into(), 1, vec![], "c".into()).is_none());
        assert_eq!(Error::Stopped(many).exit_code(), exit::STOPPED);
    }
}
