//! The progress bar of a sweep, on stderr (it hides itself when stderr is not a
//! terminal). Its rate and time left count only the runs done by this invocation: a
//! resumed sweep's runs already on disk are in the position, not in the rate.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

/// A [`crate::sweep::Progress`] drawn as a bar from its start (never when quiet).
#[derive(Debug)]
pub(crate) struct Bar {
    bar: ProgressBar,
    quiet: bool,
    /// Runs already on disk when the sweep started (resumed).
    before: Arc<AtomicU64>,
}

/// Runs per second and the time left, from the runs done now: `pos - before` runs in
/// `elapsed`, `len - pos` to go. No rate (and no estimate) before the first run now.
pub(crate) fn rate_and_eta(
    before: u64,
    pos: u64,
    len: u64,
    elapsed: Duration,
) -> Option<(f64, Duration)> {
    let now = pos.saturating_sub(before);
    let secs = elapsed.as_secs_f64();
    if now == 0 || secs <= 0.0 {
        return None;
    }
    let rate = now as f64 / secs;
    let left = len.saturating_sub(pos) as f64 / rate;
    Some((rate, Duration::from_secs_f64(left.min(1e9))))
}

/// `h:mm:ss`.
fn clock(d: Duration) -> String {
    let s = d.as_secs();
    format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

impl Bar {
    /// A bar, or none when `quiet`; coloured when stderr gets colours (`--color`).
    pub(crate) fn new(quiet: bool) -> Bar {
        let b = ProgressBar::hidden();
        let before = Arc::new(AtomicU64::new(0));
        let (b1, b2) = (Arc::clone(&before), Arc::clone(&before));
        let now_rate = move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let est = rate_and_eta(
                b1.load(Ordering::Relaxed),
                s.pos(),
                s.len().unwrap_or(0),
                s.elapsed(),
            );
            let _ = match est {
                Some((r, _)) => write!(w, "{r:.1} runs/s"),
                None => write!(w, "- runs/s"),
            };
        };
        let left = move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let est = rate_and_eta(
                b2.load(Ordering::Relaxed),
                s.pos(),
                s.len().unwrap_or(0),
                s.elapsed(),
            );
            let _ = match est {
                Some((_, eta)) => write!(w, "{}", clock(eta)),
                None => write!(w, "-:--:--"),
            };
        };
        b.set_style(
            ProgressStyle::with_template(
                "{bar:40.cyan/blue} {pos}/{len} runs  {now_rate}  {elapsed_precise} elapsed, ~{left} left",
            )
            .expect("valid template")
            .with_key("now_rate", now_rate)
            .with_key("left", left),
        );
        Bar {
            bar: b,
            quiet,
            before,
        }
    }
}

impl crate::sweep::Progress for Bar {
    fn start(&self, done: u64, total: u64) {
        self.before.store(done, Ordering::Relaxed);
        self.bar.set_length(total);
        self.bar.set_position(done);
        // The elapsed time is this invocation's, from the first run it starts.
        self.bar.reset_elapsed();
        if !self.quiet {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn advance(&self) {
        self.bar.inc(1);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resumed_sweep_counts_only_the_runs_done_now() {
        // 90 of 100 runs were on disk; 5 more in 10 s: 0.5 runs/s, 5 left in 10 s.
        let (rate, eta) = rate_and_eta(90, 95, 100, Duration::from_secs(10)).unwrap();
        assert_eq!(rate, 0.5);
        assert_eq!(eta, Duration::from_secs(10));
        // Counting the resumed runs would say 9.5 runs/s and about half a second left.
        assert!(rate_and_eta(90, 90, 100, Duration::from_secs(10)).is_none());
        assert!(rate_and_eta(0, 0, 100, Duration::ZERO).is_none());
        let (rate, eta) = rate_and_eta(0, 20, 100, Duration::from_secs(4)).unwrap();
        assert_eq!((rate, eta), (5.0, Duration::from_secs(16)));
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }
}
