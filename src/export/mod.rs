//! Output files: CSV tables, the manifest, written atomically (temporary file, then
//! rename), so a reader never sees half a file.

pub mod atomic;
pub mod csv;
pub mod manifest;

pub use atomic::{write_atomic, AtomicFile};
