//! Ctrl-C. During a sweep, the first lets running runs finish and starts no new one
//! (the library watches the flag); a second exits at once (finished runs are on disk
//! either way). During a run, Ctrl-C discards the results being written and exits:
//! the output folder keeps what it held before.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the Ctrl-C handler.
static STOP: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler of a sweep (once) and returns the flag it sets.
pub(crate) fn install() -> &'static AtomicBool {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                std::process::exit(crate::error::exit::INTERRUPTED);
            }
            eprintln!("\nstopping: finishing the runs in progress (Ctrl-C again to quit now)");
        });
    });
    &STOP
}

/// Installs the Ctrl-C handler of `run` into `out`: it removes the new results being
/// written beside the old ones (a swap in progress finishes first) and exits with 130.
pub(crate) fn install_for_run(out: PathBuf) {
    let _ = ctrlc::set_handler(move || {
        if crate::export::owner::discard_staged() {
            eprintln!(
                "\ninterrupted: the unfinished run was discarded; '{}' holds its earlier results unchanged",
                out.display()
            );
        } else {
            eprintln!("\ninterrupted");
        }
        std::process::exit(crate::error::exit::INTERRUPTED);
    });
}
