//! Guards as written: a fleet's or a service call's `max_concurrent` and
//! `bulkhead_queue` (a bulkhead; they sit flat in its table) and its
//! `pool = { size, acquire_timeout, hold_during_backoff }` ([`PoolFile`]). Defaults:
//! no bulkhead (`"unlimited"` turns one off), `bulkhead_queue` 0 (refuse at once),
//! `acquire_timeout` 0s (fail at once), connections given back during the backoff.

use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::field::Dur;

/// Attempts that may wait for a bulkhead slot when `bulkhead_queue` is not written:
/// none (refuse at once).
pub(crate) const DEFAULT_BULKHEAD_QUEUE: u64 = 0;

/// Longest wait for a pooled connection when `acquire_timeout` is not written: none.
pub(crate) const DEFAULT_ACQUIRE_TIMEOUT: Nanos = 0;

/// Whether a call keeps its connection through its backoff when
/// `hold_during_backoff` is not written.
pub(crate) const DEFAULT_HOLD_DURING_BACKOFF: bool = false;

/// A connection pool (`pool = { size, acquire_timeout, hold_during_backoff }`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolFile {
    /// Connections.
    pub size: u64,
    /// Longest wait for a connection (default 0s: fail at once).
    #[schemars(extend("default" = crate::model::field::duration_text(DEFAULT_ACQUIRE_TIMEOUT)))]
    pub acquire_timeout: Option<Dur>,
    /// Whether a call keeps its connection through its backoff (default false).
    #[schemars(extend("default" = DEFAULT_HOLD_DURING_BACKOFF))]
    pub hold_during_backoff: Option<bool>,
}
