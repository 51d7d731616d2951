//! Output files: CSV tables, the manifest, the request traces, written atomically (temporary file, then
//! rename), so a reader never sees half a file; and reading them back ([`read`]).

pub(crate) mod atomic;
pub mod csv;
pub mod json;
pub mod manifest;
pub mod markdown;
pub mod owner;
pub mod read;
pub mod trace;

pub use atomic::{write_atomic, AtomicFile};

/// Largest `manifest.toml` retrysim reads back (it holds the scenario, itself capped).
pub const MAX_MANIFEST_BYTES: u64 = 64 << 20;
