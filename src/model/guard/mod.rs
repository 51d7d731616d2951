//! The guards of a stack's innermost layer: a bulkhead (`bulkhead.rs`) and a
//! connection pool (`pool.rs`), and how a call node passes them.
//!
//! Where they sit in the layer model: below the innermost retry layer of a fleet's
//! stack or of a service call's stack (one per callee), around each attempt that layer
//! sends, as a client library's bulkhead and HTTP connection pool sit under its retry
//! loop. Each attempt first takes a bulkhead slot, then a connection, then passes the
//! layer's limiter and inside breaker, and is sent. A call node waiting for either is
//! `Acquiring`; it is woken (by a `Retry` event at once) when it gets what it waits
//! for, or by an [`Event::GuardTimer`] when its pool wait or its deadline runs out.
//!
//! What a node holds is in its `guard` bits. The slot is given back when the attempt
//! ends (answer, timeout, a refusal after it, cancellation); the connection too, unless
//! the pool holds it through the backoff, and then when the call ends.
//!
//! Bulkheads and pools are one folder: their written form ([`written`]: the pool's
//! [`PoolFile`]; the bulkhead's keys sit flat in the fleet's or call's table), their
//! rules ([`validate`](mod@validate), with their rules for the layers they guard), their validated
//! form and memory bound ([`config`]), their text for explain ([`explain`]), and their
//! runtime: each one's state in `bulkhead.rs` and `pool.rs`, how a call passes them in
//! this file. Their lints are `explain/lint/guards.rs`, their columns
//! `metrics/columns/guards.rs` and `metrics/guards.rs`.

mod bulkhead;
pub(crate) mod config;
pub(crate) mod explain;
mod pool;
pub(crate) mod validate;
pub(crate) mod written;

pub(crate) use validate::validate;
pub(crate) use written::{
    PoolFile, DEFAULT_ACQUIRE_TIMEOUT, DEFAULT_BULKHEAD_QUEUE, DEFAULT_HOLD_DURING_BACKOFF,
};

use crate::engine::{Nanos, Scheduler};

use super::config::Guards;
use super::event::{Event, Packed};
use super::observe::{CallObserver, Refusal};
use super::outcome::Class;
use super::request::{Arena, NodeState};
use super::world::World;
use bulkhead::{Admit, Bulkhead};
use pool::Pool;

/// The node holds a bulkhead slot.
pub(super) const HOLDS_SLOT: u8 = 1;
/// The node holds a pooled connection.
pub(super) const HOLDS_CONN: u8 = 2;
/// The node waits for a bulkhead slot.
pub(super) const WAITS_SLOT: u8 = 4;
/// The node waits for a pooled connection.
pub(super) const WAITS_CONN: u8 = 8;

/// The live guards of one stack.
#[derive(Debug)]
pub(super) struct StackGuards {
    pub(super) bulkhead: Option<Bulkhead>,
    pub(super) pool: Option<Pool>,
}

impl StackGuards {
    /// The guards of `g`, or `None` when it has none.
    pub(super) fn new(g: &Guards) -> Option<Box<StackGuards>> {
        (!g.is_empty()).then(|| {
            Box::new(StackGuards {
                bulkhead: g.bulkhead.map(Bulkhead::new),
                pool: g.pool.map(Pool::new),
            })
        })
    }
}

/// Whether `(node, gen)` still waits with bit `waits`.
fn waiting(arena: &Arena, node: u32, gen: u32, waits: u8) -> bool {
    let n = &arena.nodes[node as usize];
    n.gen == gen && n.state == NodeState::Acquiring && n.guard & waits != 0
}

/// What the guards said to an attempt.
enum Pass {
    Go,
    Wait(Nanos),
    Refused(Class),
}

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// Whether the call `node` of stack `st` (its innermost layer) may send its next
    /// attempt now. When not, it waits (`Acquiring`) or has been failed with
    /// `bulkhead_full` or `pool_exhausted`.
    pub(super) fn guards_pass(&mut self, node: u32, st: usize, s: &mut Scheduler<Packed>) -> bool {
        let now = s.now();
        let deadline = self.deadline_of(node);
        let Some(g) = self.calls.stacks[st].guards.as_deref_mut() else {
            return true;
        };
        let n = self.arena.nodes[node as usize];
        let mut flags = n.guard;
        let mut pass = Pass::Go;
        if let Some(b) = &mut g.bulkhead {
            if flags & HOLDS_SLOT == 0 {
                match b.ask(node, n.gen) {
                    Admit::Go => flags |= HOLDS_SLOT,
                    Admit::Wait => {
                        flags |= WAITS_SLOT;
                        pass = Pass::Wait(deadline);
                    }
                    Admit::Full => pass = Pass::Refused(Class::BulkheadFull),
                }
            }
        }
        if let (Pass::Go, Some(p)) = (&pass, &mut g.pool) {
            if flags & HOLDS_CONN == 0 {
                if p.take() {
                    flags |= HOLDS_CONN;
                    self.obs.pool_acquired(now);
                } else if p.cfg.acquire_timeout > 0 {
                    p.wait(node, n.gen, now);
                    flags |= WAITS_CONN;
                    pass = Pass::Wait(now.saturating_add(p.cfg.acquire_timeout).min(deadline));
                } else {
                    pass = Pass::Refused(Class::PoolExhausted);
                }
            }
        }
        self.arena.nodes[node as usize].guard = flags;
        match pass {
            Pass::Go => true,
            Pass::Wait(at) => {
                self.arena.nodes[node as usize].state = NodeState::Acquiring;
                if at < Nanos::MAX {
                    s.at(at, Event::GuardTimer { node, gen: n.gen });
                }
                false
            }
            Pass::Refused(class) => {
                self.arena.nodes[node as usize].attempts += 1;
                self.fail_attempt(node, Refusal::Guard(class), s);
                false
            }
        }
    }

    /// [`Event::GuardTimer`]: the wait of `node` for a slot or a connection ran out:
    /// its deadline passed, or else its pool's `acquire_timeout` (`pool_exhausted`).
    pub(super) fn on_guard_timer(&mut self, node: u32, gen: u32, s: &mut Scheduler<Packed>) {
        let n = self.arena.nodes[node as usize];
        if n.gen != gen || n.state != NodeState::Acquiring {
            return;
        }
        let now = s.now();
        let st = n.stack as usize;
        if let Some(g) = self.calls.stacks[st].guards.as_deref_mut() {
            if n.guard & WAITS_SLOT != 0 {
                if let Some(b) = &mut g.bulkhead {
                    b.leave();
                }
            }
        }
        // Out of the queue (its entry is stale now), between attempts.
        let nm = &mut self.arena.nodes[node as usize];
        nm.guard &= !(WAITS_SLOT | WAITS_CONN);
        nm.gen = gen.wrapping_add(1);
        nm.state = NodeState::Sleeping;
        if now >= self.deadline_of(node) {
            let call = self.calls.at(node, &n);
            self.obs.attempt_past_deadline(call, n.attempts + 1);
            self.abandon(node, s);
            return;
        }
        let timeout = self.calls.stacks[st]
            .guards
            .as_ref()
            .and_then(|g| g.pool.as_ref())
            .map_or(0, |p| p.cfg.acquire_timeout);
        self.obs.pool_wait_ended(timeout);
        self.arena.nodes[node as usize].attempts += 1;
        self.fail_attempt(node, Refusal::Guard(Class::PoolExhausted), s);
    }

    /// The attempt of `node` ended: its bulkhead slot is given back, and its
    /// connection unless the pool holds it through the backoff.
    pub(super) fn attempt_left_guards(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let n = self.arena.nodes[node as usize];
        let st = n.stack as usize;
        if n.guard & HOLDS_SLOT != 0 {
            self.release_slot(node, st, s);
        }
        let hold = self.calls.stacks[st]
            .guards
            .as_ref()
            .and_then(|g| g.pool.as_ref())
            .is_some_and(|p| p.cfg.hold_during_backoff);
        if n.guard & HOLDS_CONN != 0 && !hold {
            self.release_conn(node, st, s);
        }
    }

    /// The call `node` is over: it gives back what it holds and stops waiting.
    pub(super) fn release_guards(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let n = self.arena.nodes[node as usize];
        let st = n.stack as usize;
        if n.guard & WAITS_SLOT != 0 {
            if let Some(b) = self.calls.stacks[st]
                .guards
                .as_deref_mut()
                .and_then(|g| g.bulkhead.as_mut())
            {
                b.leave();
            }
        }
        if n.guard & HOLDS_SLOT != 0 {
            self.release_slot(node, st, s);
        }
        if n.guard & HOLDS_CONN != 0 {
            self.release_conn(node, st, s);
        }
        self.arena.nodes[node as usize].guard = 0;
    }

    /// `node` gives its bulkhead slot back; the first waiter gets it.
    fn release_slot(&mut self, node: u32, st: usize, s: &mut Scheduler<Packed>) {
        self.arena.nodes[node as usize].guard &= !HOLDS_SLOT;
        let arena = &self.arena;
        let Some(b) = self.calls.stacks[st]
            .guards
            .as_deref_mut()
            .and_then(|g| g.bulkhead.as_mut())
        else {
            return;
        };
        if let Some(w) = b.give_back(|n, g| waiting(arena, n, g, WAITS_SLOT)) {
            self.wake(w, WAITS_SLOT, HOLDS_SLOT, s);
        }
    }

    /// `node` gives its connection back; the first waiter gets it.
    fn release_conn(&mut self, node: u32, st: usize, s: &mut Scheduler<Packed>) {
        let now = s.now();
        self.arena.nodes[node as usize].guard &= !HOLDS_CONN;
        let arena = &self.arena;
        let Some(p) = self.calls.stacks[st]
            .guards
            .as_deref_mut()
            .and_then(|g| g.pool.as_mut())
        else {
            return;
        };
        match p.give_back(|n, g| waiting(arena, n, g, WAITS_CONN)) {
            Some((w, since)) => {
                self.obs.pool_wait_ended(now - since);
                self.wake(w, WAITS_CONN, HOLDS_CONN, s);
            }
            None => self.obs.pool_released(now),
        }
    }

    /// Waiter `node` got what it waited for (`waits` becomes `holds`): it tries its
    /// attempt again at once.
    fn wake(&mut self, node: u32, waits: u8, holds: u8, s: &mut Scheduler<Packed>) {
        let nm = &mut self.arena.nodes[node as usize];
        nm.guard = (nm.guard & !waits) | holds;
        nm.gen = nm.gen.wrapping_add(1);
        nm.state = NodeState::Sleeping;
        s.after(0, Event::Retry { node, gen: nm.gen });
    }
}
