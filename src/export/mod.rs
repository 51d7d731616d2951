//! Output files: CSV tables, the manifest, the request traces, written atomically (temporary file, then
//! rename), so a reader never sees half a file; and reading them back ([`read`]).

pub(crate) mod atomic;
pub(crate) mod csv;
pub(crate) mod json;
pub(crate) mod manifest;
pub(crate) mod markdown;
pub(crate) mod owner;
pub(crate) mod read;
pub(crate) mod trace;

pub(crate) use atomic::{write_atomic, AtomicFile};

/// Largest `manifest.toml` retrysim reads back (it holds the scenario, itself capped).
pub(crate) const MAX_MANIFEST_BYTES: u64 = 64 << 20;
