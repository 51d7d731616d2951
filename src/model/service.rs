//! A request at a service of a graph that makes downstream calls (`[[services.calls]]`).
//!
//! After its own service time the request (the *visit*, the attempt node that reached
//! the service) makes its calls one after another. A call to one callee is one child
//! node; a fan-out is one child per callee, all at once, each through its own copy of
//! the call's layers ([`super::stack`]). The call is decided as soon as its `join` is
//! met (success) or can no longer be met (failure); the callees still going are then
//! cancelled, or left running when `cancel_rest = false`. A failed call fails the
//! request, which the service answers `error` (or `overloaded`); when every call
//! succeeded it answers `success`. With `hold_threads` the visit's thread stays busy
//! until then.
//!
//! The visit's generation moves on with each call, so an answer from a callee of an
//! earlier call (left running) is recognised as an orphan's.

use crate::engine::{Nanos, Scheduler};

use crate::metrics::trace::Fate;

use super::event::{Event, Packed};
use super::observe::CallObserver;
use super::outcome::{Class, Outcome};
use super::request::{Halves, Memo, NodeState};
use super::world::World;

/// The bookkeeping of one visit making its calls.
#[derive(Debug, Default)]
struct Visit {
    /// The call being made (index into the service's calls).
    call: u16,
    /// Callees of the current call that answered with success, and with a failure.
    ok: u16,
    failed: u16,
    /// Callees of the current call still going.
    pending: u16,
    /// When the visit's service started, and its own service time.
    started: Nanos,
    own: Nanos,
    /// The child nodes of the current call.
    children: Vec<u32>,
}

/// The visits making calls, in reusable slots.
#[derive(Debug, Default)]
pub(super) struct Visits {
    slots: Vec<Visit>,
    free: Vec<u32>,
}

impl Visits {
    fn alloc(&mut self, started: Nanos, own: Nanos) -> u32 {
        let v = Visit {
            started,
            own,
            ..Visit::default()
        };
        match self.free.pop() {
            Some(i) => {
                let slot = &mut self.slots[i as usize];
                let children = std::mem::take(&mut slot.children);
                *slot = Visit { children, ..v };
                slot.children.clear();
                i
            }
            None => {
                self.slots.push(v);
                (self.slots.len() - 1) as u32
            }
        }
    }
}

/// The visit slot of a node making calls.
fn slot_of(memo: Memo) -> usize {
    match memo {
        Memo::Visit(slot) => slot.get() as usize,
        other => unreachable!("a visit's memo is its slot, not {other:?}"),
    }
}

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// The visit at `node` finished its own work (`own` ns) at service `sv`: it starts
    /// its first call.
    pub(super) fn begin_visit(
        &mut self,
        node: u32,
        _sv: usize,
        own: Nanos,
        s: &mut Scheduler<Packed>,
    ) {
        let now = s.now();
        let slot = self.services.visits.alloc(now.saturating_sub(own), own);
        let nm = &mut self.arena.nodes[node as usize];
        nm.state = NodeState::Calling;
        nm.memo = Memo::Visit(Halves::new(u64::from(slot)));
        self.start_step(node, s);
    }

    /// Starts the visit's current call: a child per callee, delivered at once (by
    /// event, so that no answer arrives while the children are being made).
    fn start_step(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let sv = self.service_of(node);
        let slot = slot_of(self.arena.nodes[node as usize].memo);
        // A new generation per call: answers of earlier calls' callees are orphans'.
        let nm = &mut self.arena.nodes[node as usize];
        nm.gen = nm.gen.wrapping_add(1);
        let (gen, req, crit) = (nm.gen, nm.req, nm.crit);
        let classes = self.calls.classes;
        let deadline = if self.calls.deadlines {
            self.calls.times.deadline_at(node)
        } else {
            Nanos::MAX
        };
        let v = &mut self.services.visits.slots[slot];
        let branches = &self.calls.call_stacks[sv][v.call as usize];
        v.ok = 0;
        v.failed = 0;
        v.pending = branches.len() as u16;
        v.children.clear();
        for &st in branches {
            let child = self.arena.alloc_node(req, 0, st, node, gen);
            if classes {
                self.arena.nodes[child as usize].crit = crit;
            }
            // The visit gives up on its call at its own deadline.
            let d = self.calls.stacks[st as usize].child_deadline(0, deadline, deadline);
            self.calls.times.set_deadline(child, d);
            v.children.push(child);
            let child_gen = self.arena.nodes[child as usize].gen;
            s.after(
                0,
                Event::Deliver {
                    node: child,
                    gen: child_gen,
                },
            );
        }
        let now = s.now();
        for &child in &self.services.visits.slots[slot].children {
            self.obs.call_made(&self.arena, child, now);
        }
    }

    /// A callee's call (the child at the top of a service call's stack) of the visit
    /// `visit`, made in its generation `gen`, ended with `outcome`.
    pub(super) fn on_child_done(
        &mut self,
        visit: u32,
        gen: u32,
        outcome: Outcome,
        s: &mut Scheduler<Packed>,
    ) {
        let p = self.arena.nodes[visit as usize];
        if p.gen != gen || p.state != NodeState::Calling {
            return; // an orphan's answer
        }
        let sv = self.service_of(visit);
        let slot = slot_of(p.memo);
        let v = &mut self.services.visits.slots[slot];
        v.pending -= 1;
        if outcome.class == Class::Success {
            v.ok += 1;
        } else {
            v.failed += 1;
        }
        let call = &self.services.cfgs[sv].calls[v.call as usize];
        let need = call.join.needed(call.to.len() as u32);
        let (ok, pending) = (u32::from(v.ok), u32::from(v.pending));
        let success = ok >= need;
        if !success && ok + pending >= need {
            return; // still undecided
        }
        if pending > 0 && call.cancel_rest {
            self.cancel_children(visit, slot, s);
        }
        let v = &mut self.services.visits.slots[slot];
        if success && usize::from(v.call) + 1 < self.services.cfgs[sv].calls.len() {
            v.call += 1;
            self.start_step(visit, s);
        } else {
            self.finish_visit(visit, success, s);
        }
    }

    /// Cancels the visit's callees still going.
    fn cancel_children(&mut self, visit: u32, slot: usize, s: &mut Scheduler<Packed>) {
        let gen = self.arena.nodes[visit as usize].gen;
        let children = std::mem::take(&mut self.services.visits.slots[slot].children);
        for &c in &children {
            self.cancel(c, visit, gen, s);
        }
        self.services.visits.slots[slot].children = children;
    }

    /// The visit is over: its thread (if held) is freed and the service answers, or,
    /// when its propagated deadline has passed, drops it (nobody waits).
    fn finish_visit(&mut self, visit: u32, ok: bool, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let sv = self.service_of(visit);
        let slot = slot_of(self.arena.nodes[visit as usize].memo);
        let (started, own) = {
            let v = &self.services.visits.slots[slot];
            (v.started, v.own)
        };
        self.services.visits.free.push(slot as u32);
        let held = self.services.list[sv].hold_threads;
        if held {
            self.services.release_thread(sv, now, &mut self.obs);
        }
        if !ok && self.calls.deadlines && now >= self.calls.times.deadline_at(visit) {
            if self.services.list[sv].limited {
                self.limit_sample(visit, sv, now, true, s);
            }
            self.drop_expired(visit, sv, now);
        } else {
            let outcome = if ok {
                Outcome::of(Class::Success)
            } else {
                Outcome::of(self.services.list[sv].failure())
            };
            let thread_time = if held { now - started } else { own };
            self.answer(visit, sv, thread_time, outcome, s);
        }
        if held {
            self.dispatch(sv, s);
        }
    }

    /// The caller of the visit at `visit` cancelled it: its callees are cancelled and
    /// its thread (if held) is freed.
    pub(super) fn cancel_visit(&mut self, visit: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let sv = self.service_of(visit);
        let slot = slot_of(self.arena.nodes[visit as usize].memo);
        self.cancel_children(visit, slot, s);
        self.services.visits.free.push(slot as u32);
        self.obs.node_done(&self.arena, visit, Fate::Cancelled, now);
        self.arena.free_node(visit);
        if self.services.list[sv].hold_threads {
            self.services.release_thread(sv, now, &mut self.obs);
            self.dispatch(sv, s);
        }
    }
}
