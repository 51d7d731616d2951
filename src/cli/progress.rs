//! The progress bar of a sweep, on stderr (it hides itself when stderr is not a
//! terminal).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A [`retrysim::sweep::Progress`] drawn as a bar from its start (never when quiet).
#[derive(Debug)]
pub struct Bar {
    bar: ProgressBar,
    quiet: bool,
}

impl Bar {
    /// A bar, or none when `quiet`.
    pub fn new(quiet: bool) -> Bar {
        let b = ProgressBar::hidden();
        b.set_style(
            ProgressStyle::with_template(
                "{bar:40} {pos}/{len} runs  {per_sec}  {elapsed_precise} elapsed, ~{eta_precise} left",
            )
            .expect("valid template"),
        );
        Bar { bar: b, quiet }
    }
}

impl retrysim::sweep::Progress for Bar {
    fn start(&self, done: u64, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
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
