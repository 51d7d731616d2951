//! Runs that stopped early at one of their `[limits]`, and the one message that says so.

use std::fmt;
use std::path::Path;

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
    }
}
