//! Guards as written: a fleet's or a service call's `max_concurrent` and
//! `bulkhead_queue` (a bulkhead; they sit flat in its table) and its
//! `pool = { size, acquire_timeout, hold_during_backoff }` ([`PoolFile`]). Defaults:
//! no bulkhead (`"unlimited"` turns one off), `bulkhead_queue` 0 (refuse at once),
//! `acquire_timeout` 0s (fail at once), connections given back during the backoff.

use serde::{Deserialize, Serialize};

use crate::model::field::Dur;

/// A connection pool (`pool = { size, acquire_timeout, hold_during_backoff }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolFile {
    /// Connections.
    pub size: u64,
    /// Longest wait for a connection (default 0s: fail at once).
    pub acquire_timeout: Option<Dur>,
    /// Whether a call keeps its connection through its backoff (default false).
    pub hold_during_backoff: Option<bool>,
}
