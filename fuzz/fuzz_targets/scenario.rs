//! libFuzzer target: arbitrary bytes as a scenario file, through parse, validate,
//! explain, the sweep plan (small grids) and, when valid, a short run and its CSV
//! rows (`retrysim::dev_hooks::exercise`). A clean error or a result is fine; a panic, a
//! hang or an out-of-memory is a finding (commit it as a regression test in
//! `src/tests/fuzz/mod.rs`).
//!
//! ```sh
//! cargo +nightly fuzz run scenario fuzz/corpus/scenario scenarios -- -max_total_time=600
//! ```

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        retrysim::dev_hooks::exercise(text);
    }
});
