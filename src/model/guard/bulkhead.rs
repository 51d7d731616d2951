//! A bulkhead (`max_concurrent`, `bulkhead_queue`): a cap on the attempts in flight
//! through one call, so a slow callee cannot take every thread of its caller.
//!
//! An attempt the innermost layer of the guarded stack is about to send takes a slot;
//! it gives the slot back when it ends (its answer, its timeout, its cancellation), not
//! during the backoff after it. With every slot taken, up to `queue` attempts wait in
//! FIFO order (a freed slot goes to the first); beyond that the attempt is refused
//! locally with `bulkhead_full`, before any work.

use std::collections::VecDeque;

use crate::model::config::BulkheadConfig;

/// The live state of one bulkhead.
#[derive(Debug)]
pub(in crate::model) struct Bulkhead {
    cfg: BulkheadConfig,
    /// Slots taken.
    taken: u32,
    /// Waiting call nodes `(node, gen)`, oldest first; an entry whose node has moved
    /// on (cancelled, its deadline passed) is stale and skipped.
    waiters: VecDeque<(u32, u32)>,
    /// Live waiters (the queue may also hold stale entries).
    waiting: u32,
}

/// What a bulkhead says to an attempt that asks for a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Admit {
    /// It has a slot.
    Go,
    /// It waits in the queue.
    Wait,
    /// Full, and so is the queue: `bulkhead_full`.
    Full,
}

impl Bulkhead {
    /// An empty bulkhead.
    pub(super) fn new(cfg: BulkheadConfig) -> Bulkhead {
        Bulkhead {
            cfg,
            taken: 0,
            waiters: VecDeque::new(),
            waiting: 0,
        }
    }

    /// Node `node` (generation `gen`) asks for a slot.
    pub(super) fn ask(&mut self, node: u32, gen: u32) -> Admit {
        if self.taken < self.cfg.max_concurrent {
            self.taken += 1;
            Admit::Go
        } else if self.waiting < self.cfg.queue {
            self.waiters.push_back((node, gen));
            self.waiting += 1;
            Admit::Wait
        } else {
            Admit::Full
        }
    }

    /// A slot is given back: the next waiter `live` accepts (`(node, gen)` still
    /// waiting) takes it and is returned.
    pub(super) fn give_back(&mut self, mut live: impl FnMut(u32, u32) -> bool) -> Option<u32> {
        while let Some((node, gen)) = self.waiters.pop_front() {
            if live(node, gen) {
                self.waiting -= 1;
                return Some(node);
            }
        }
        self.taken -= 1;
        None
    }

    /// A waiter left the queue without a slot (its entry goes stale).
    pub(super) fn leave(&mut self) {
        self.waiting -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_then_queue_then_full_and_freed_slots_go_first_come_first_served() {
        let mut b = Bulkhead::new(BulkheadConfig {
            max_concurrent: 2,
            queue: 2,
        });
        assert_eq!(b.ask(1, 0), Admit::Go);
        assert_eq!(b.ask(2, 0), Admit::Go);
        assert_eq!(b.ask(3, 0), Admit::Wait);
        assert_eq!(b.ask(4, 0), Admit::Wait);
        assert_eq!(b.ask(5, 0), Admit::Full);
        // Node 3 left (its deadline passed): the slot goes to node 4.
        b.leave();
        assert_eq!(b.give_back(|n, _| n != 3), Some(4));
        assert_eq!(b.give_back(|_, _| true), None);
        assert_eq!(b.give_back(|_, _| true), None);
        assert_eq!(b.ask(6, 0), Admit::Go);
    }
}
