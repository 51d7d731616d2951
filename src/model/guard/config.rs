//! Guards as validated: a bulkhead, a connection pool, and which calls have them;
//! their bound for the memory estimate.

use crate::engine::Nanos;
use crate::model::config::Scenario;

/// A bulkhead (`max_concurrent`, `bulkhead_queue`): at most `max_concurrent`
/// attempts in flight through it; up to `queue` more wait FIFO for a slot, the rest
/// are refused locally with `bulkhead_full`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkheadConfig {
    /// Attempts in flight at once.
    pub max_concurrent: u32,
    /// Attempts that may wait for a slot.
    pub queue: u32,
}

/// A connection pool (`pool = { size, acquire_timeout, hold_during_backoff }`): an
/// attempt holds one of `size` connections from before it is sent until its answer
/// or its timeout (with `hold_during_backoff`, through the backoff after it too);
/// waiting for one is FIFO and gives up after `acquire_timeout` with `pool_exhausted`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Connections.
    pub size: u32,
    /// Longest wait for a connection (0: fail at once when none is free).
    pub acquire_timeout: Nanos,
    /// Whether a call keeps its connection through the backoff to its next attempt.
    pub hold_during_backoff: bool,
}

/// What guards the attempts a stack's innermost layer sends: a bulkhead, then a
/// connection pool (an attempt takes a bulkhead slot first, then a connection).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Guards {
    /// Bulkhead, if any.
    pub bulkhead: Option<BulkheadConfig>,
    /// Connection pool, if any.
    pub pool: Option<PoolConfig>,
}

impl Guards {
    /// Whether there is neither a bulkhead nor a pool.
    pub fn is_empty(&self) -> bool {
        self.bulkhead.is_none() && self.pool.is_none()
    }
}

impl Scenario {
    /// Whether a fleet or a service call has a bulkhead or a connection pool.
    pub fn uses_guards(&self) -> bool {
        self.all_guards().any(|g| !g.is_empty())
    }

    /// Whether a fleet or a service call has a bulkhead.
    pub fn uses_bulkheads(&self) -> bool {
        self.all_guards().any(|g| g.bulkhead.is_some())
    }

    /// Whether a fleet or a service call has a connection pool.
    pub fn uses_pools(&self) -> bool {
        self.all_guards().any(|g| g.pool.is_some())
    }

    /// The guards of every fleet and service call.
    fn all_guards(&self) -> impl Iterator<Item = &Guards> {
        self.fleets.iter().map(|f| &f.guards).chain(
            self.services
                .iter()
                .flat_map(|s| &s.calls)
                .map(|c| &c.guards),
        )
    }

    /// Bytes per time-series bucket the guards add to the memory estimate: the
    /// connections in use, with a bulkhead or a pool.
    pub fn guard_bytes_per_bucket(&self) -> u64 {
        if self.uses_guards() {
            16
        } else {
            0
        }
    }
}
