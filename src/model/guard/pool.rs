//! A connection pool (`pool = { size, acquire_timeout, hold_during_backoff }`) on the
//! attempts of one call.
//!
//! An attempt the innermost layer of the guarded stack is about to send first takes a
//! connection; it gives it back when its answer arrives or it times out, or, with
//! `hold_during_backoff`, only when its call makes no further attempt (the next attempt
//! reuses it). With every connection taken, attempts wait in FIFO order; a waiter that
//! gets none within `acquire_timeout` fails with `pool_exhausted`. So `size`
//! connections each held `h` serve at most `size / h` attempts per second, and while
//! the dependency fails and each failure is followed by a backoff `b` held through,
//! at most `size / (h + b)`.

use std::collections::VecDeque;

use crate::engine::Nanos;
use crate::model::config::PoolConfig;

/// The live state of one pool.
#[derive(Debug)]
pub(in crate::model) struct Pool {
    pub(super) cfg: PoolConfig,
    /// Connections taken.
    pub(super) in_use: u32,
    /// Waiting call nodes `(node, gen, since)`, oldest first; stale entries (the
    /// node gave up or moved on) are skipped.
    waiters: VecDeque<(u32, u32, Nanos)>,
}

impl Pool {
    /// A pool with every connection free.
    pub(super) fn new(cfg: PoolConfig) -> Pool {
        Pool {
            cfg,
            in_use: 0,
            waiters: VecDeque::new(),
        }
    }

    /// Takes a free connection, if there is one.
    pub(super) fn take(&mut self) -> bool {
        if self.in_use < self.cfg.size {
            self.in_use += 1;
            true
        } else {
            false
        }
    }

    /// Node `node` (generation `gen`) waits for a connection from `now`.
    pub(super) fn wait(&mut self, node: u32, gen: u32, now: Nanos) {
        self.waiters.push_back((node, gen, now));
    }

    /// A connection is given back: the next waiter `live` accepts takes it, and is
    /// returned with when it started waiting.
    pub(super) fn give_back(
        &mut self,
        mut live: impl FnMut(u32, u32) -> bool,
    ) -> Option<(u32, Nanos)> {
        while let Some((node, gen, since)) = self.waiters.pop_front() {
            if live(node, gen) {
                return Some((node, since));
            }
        }
        self.in_use -= 1;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_pass_to_waiters_in_arrival_order() {
        let mut p = Pool::new(PoolConfig {
            size: 1,
            acquire_timeout: 10,
            hold_during_backoff: false,
        });
        assert!(p.take());
        assert!(!p.take());
        p.wait(7, 0, 100);
        p.wait(8, 0, 150);
        p.wait(9, 0, 160);
        // Node 7 gave up: the connection goes to 8, then 9, then back to the pool.
        assert_eq!(p.give_back(|n, _| n != 7), Some((8, 150)));
        assert_eq!(p.give_back(|_, _| true), Some((9, 160)));
        assert_eq!(p.in_use, 1);
        assert_eq!(p.give_back(|_, _| true), None);
        assert_eq!(p.in_use, 0);
    }
}
