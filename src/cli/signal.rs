//! Ctrl-C: the first lets running runs finish and starts no new one (the library
//! watches the flag); a second exits at once (finished runs are on disk either way).

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the Ctrl-C handler.
static STOP: AtomicBool = AtomicBool::new(false);

/// Installs the Ctrl-C handler (once) and returns the flag it sets.
pub fn install() -> &'static AtomicBool {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            if STOP.swap(true, Ordering::SeqCst) {
                std::process::exit(retrysim::error::exit::INTERRUPTED);
            }
            eprintln!("\nstopping: finishing the runs in progress (Ctrl-C again to quit now)");
        });
    });
    &STOP
}
