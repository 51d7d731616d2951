//! Hedged requests (gRPC's hedging policy, A6) on a layer with `hedging`: instead of
//! retrying after a failure, the layer sends a copy of its call below, then another
//! every `delay` until one succeeds or `max_attempts` copies are out. The first success
//! wins; a failure in `non_fatal` sends the next copy at once (and restarts the delay),
//! any other failure ends the call; when every copy has failed the call fails with the
//! last. Once the call is decided the copies still going are cancelled (work already in
//! service runs on) or, with `cancel_losers = false`, left running for nobody. Every
//! copy after the first asks the layer's budget as a retry would (gRPC's throttle gates
//! hedges too); a refused hedge is not sent.
//!
//! Every copy is an attempt of its ordinal (`attempts_by_ordinal.csv`): its answer's
//! class when it answers first, `cancelled` when it is a loser (still out when the call
//! was decided, cancelled or left running) or the call above cancels the call,
//! `in_flight` when still out as the run ends.
//!
//! The call node stays `Waiting` with one generation while its copies are out, so they
//! all point back at it; the copies of each node are kept in a side table, and an
//! answer carries its copy's index. A hedge timer carries the node's timer sequence
//! number, which moves on with every copy sent and when the call ends, so a stale
//! timer is known without a search.
//!
//! Hedging is one folder: its written form ([`written`]: [`HedgingFile`]), its rules
//! ([`validate`], the cross-rules with the layer and the guards included), its
//! validated form and bounds ([`config`]: [`HedgingConfig`]), its text for explain
//! ([`explain`]), its output columns ([`columns`], a row of the column-group registry)
//! and, in this file, its runtime state. Its lint is `explain/lint/hedge.rs` (the model
//! does not use `explain`).

pub(crate) mod columns;
pub(crate) mod config;
pub(crate) mod explain;
pub(crate) mod validate;
pub(crate) mod written;

pub(crate) use config::HedgingConfig;
pub(crate) use validate::{check_guarded, Host};
pub(crate) use written::{HedgingFile, DEFAULT_CANCEL_LOSERS, DEFAULT_DELAY};

use crate::engine::Scheduler;

use super::budget::RetryCause;
use super::event::{Event, Packed};
use super::observe::{CallObserver, Refusal};
use super::outcome::{Class, Outcome};
use super::request::{NodeState, NONE};
use super::world::World;

/// The copies of one hedging call node.
#[derive(Debug, Default, Clone)]
pub(super) struct HedgeSlot {
    /// Child node of each copy sent, [`NONE`] once it answered.
    copies: Vec<u32>,
    /// Copies still out.
    live: u32,
    /// Timer sequence number (see the module docs).
    seq: u32,
}

/// The copies of every hedging call node, by node index (grown on first use).
#[derive(Debug, Default)]
pub(super) struct Hedges {
    slots: Vec<HedgeSlot>,
}

impl Hedges {
    fn slot(&mut self, node: u32) -> &mut HedgeSlot {
        let i = node as usize;
        if i >= self.slots.len() {
            self.slots.resize(i + 1, HedgeSlot::default());
        }
        &mut self.slots[i]
    }

    /// The copy index of `child` among the copies of the hedging call `node` (0 when
    /// it is none of them: its answer is then an orphan's or the first copy's).
    pub(super) fn copy_of(&self, node: u32, child: u32) -> u8 {
        self.slots
            .get(node as usize)
            .and_then(|h| h.copies.iter().position(|&c| c == child))
            .map_or(0, |i| i as u8)
    }

    /// Forgets the copies of `node` (its timer goes stale) and returns those still out,
    /// each with its ordinal (copy k is attempt k).
    pub(super) fn clear(&mut self, node: u32) -> Vec<(u32, u32)> {
        let slot = self.slot(node);
        slot.seq = slot.seq.wrapping_add(1);
        slot.live = 0;
        let out = Self::out_of(slot);
        slot.copies.clear();
        out
    }

    /// The copies of `node` still out, each with its ordinal, without forgetting them.
    pub(super) fn copies_out(&self, node: u32) -> Vec<(u32, u32)> {
        self.slots
            .get(node as usize)
            .map_or_else(Vec::new, Self::out_of)
    }

    /// `(ordinal, child)` of each copy of `slot` still out.
    fn out_of(slot: &HedgeSlot) -> Vec<(u32, u32)> {
        (1..)
            .zip(slot.copies.iter().copied())
            .filter(|&(_, c)| c != NONE)
            .collect()
    }
}

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// The hedging call `node` starts: its first copy.
    pub(super) fn hedge_start(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let slot = self.calls.hedge.slot(node);
        slot.copies.clear();
        slot.live = 0;
        slot.seq = slot.seq.wrapping_add(1);
        self.arena.nodes[node as usize].state = NodeState::Waiting;
        if !self.hedge_send(node, s) {
            // Not even the first copy could go: the deadline had passed.
            self.abandon(node, s);
        }
    }

    /// Sends the next copy of `node`'s call, if another may go now: copies left, the
    /// deadline not passed, and for a hedge the budget's consent. Arms the timer of
    /// the copy after it.
    fn hedge_send(&mut self, node: u32, s: &mut Scheduler<Packed>) -> bool {
        let now = s.now();
        let n = self.arena.nodes[node as usize];
        let (st, depth) = (n.stack as usize, n.depth as usize);
        let call = self.calls.at(node, &n);
        let deadline = self.deadline_of(node);
        let layer = &mut self.calls.stacks[st].layers[depth];
        let Some(h) = layer.cfg.hedging else {
            return false;
        };
        if n.attempts >= h.max_attempts || now >= deadline {
            return false;
        }
        let mut cost = n.retry_cost;
        let mut granted = false;
        if n.attempts >= 1 {
            if let Some(b) = layer.budget(n.instance) {
                let cause = RetryCause {
                    timeout: false,
                    throttled: false,
                };
                match b.ask(now, cause) {
                    Some(c) => {
                        cost = c;
                        b.on_retry_scheduled(now);
                        granted = true;
                    }
                    None => {
                        // The refused hedge is an attempt: its outcome arises here.
                        self.obs.attempt_refused(
                            &self.arena,
                            call,
                            n.attempts + 1,
                            Refusal::Budget,
                            now,
                        );
                        return false;
                    }
                }
            }
        }
        let attempts = n.attempts + 1;
        if let Some(b) = layer.budget(n.instance) {
            b.on_sent(attempts >= 2);
        }
        let child = self
            .arena
            .alloc_node(n.req, depth as u8 + 1, st as u16, node, n.gen);
        let child_gen = self.arena.nodes[child as usize].gen;
        {
            let nm = &mut self.arena.nodes[node as usize];
            nm.attempts = attempts;
            nm.child = child;
            nm.retry_cost = cost;
        }
        if self.calls.classes {
            self.classify_attempt(child);
        }
        self.obs
            .copy_sent(&self.arena, call, child, attempts, granted, now);
        if self.calls.deadlines {
            let call_end = self.calls.call_deadline_of(node, st, depth, deadline);
            let stack = &self.calls.stacks[st];
            let gives_up = stack.layers[depth].gives_up(now, call_end);
            let d = stack.child_deadline(depth + 1, deadline, gives_up);
            self.calls.times.set_deadline(child, d);
        }
        let slot = self.calls.hedge.slot(node);
        slot.copies.push(child);
        slot.live += 1;
        slot.seq = slot.seq.wrapping_add(1);
        let seq = slot.seq;
        if attempts < h.max_attempts {
            s.after(h.delay, Event::HedgeTimer { node, seq });
        }
        self.send_down(st, depth, child, child_gen, s);
        true
    }

    /// [`Event::HedgeTimer`]: the delay since `node`'s last copy is over.
    pub(super) fn on_hedge_timer(&mut self, node: u32, seq: u32, s: &mut Scheduler<Packed>) {
        let n = self.arena.nodes[node as usize];
        let live = self
            .calls
            .hedge
            .slots
            .get(node as usize)
            .is_some_and(|h| h.seq == seq);
        if live
            && n.state == NodeState::Waiting
            && self.calls.hedges(n.stack as usize, n.depth as usize)
        {
            self.hedge_send(node, s);
        }
    }

    /// Copy `copy` of the hedging call `node` answered `outcome`.
    pub(super) fn hedge_answer(
        &mut self,
        node: u32,
        copy: u8,
        outcome: Outcome,
        s: &mut Scheduler<Packed>,
    ) {
        let now = s.now();
        let n = self.arena.nodes[node as usize];
        let (st, depth) = (n.stack as usize, n.depth as usize);
        {
            let slot = self.calls.hedge.slot(node);
            match slot.copies.get_mut(usize::from(copy)) {
                Some(c) if *c != NONE => *c = NONE,
                _ => return,
            }
            slot.live -= 1;
        }
        let call = self.calls.at(node, &n);
        self.obs
            .copy_answered(&self.arena, call, copy, outcome.class, now);
        self.attempt_over(st, depth, node, n.instance, now, Some(outcome.class));
        let status = self.services.list[self.calls.stacks[st].target as usize]
            .cfg
            .status_of(outcome.class);
        let layer = &mut self.calls.stacks[st].layers[depth];
        let Some(h) = layer.cfg.hedging else {
            return;
        };
        if outcome.class == Class::Success {
            if let Some(b) = layer.budget(n.instance) {
                b.on_succeeded(now, n.retry_cost);
            }
            self.hedge_decide(node, outcome, s);
            return;
        }
        let non_fatal = h.non_fatal.retries(outcome.class, status);
        if let Some(b) = layer.budget(n.instance) {
            b.on_failed(now, outcome.class, non_fatal);
        }
        if non_fatal && self.hedge_send(node, s) {
            return;
        }
        if !non_fatal || self.calls.hedge.slot(node).live == 0 {
            self.hedge_decide(node, outcome, s);
        }
    }

    /// The hedging call `node` is decided with `outcome`: the copies still going are
    /// losers, cancelled or left running, and the call ends.
    fn hedge_decide(&mut self, node: u32, outcome: Outcome, s: &mut Scheduler<Packed>) {
        let gen = self.arena.nodes[node as usize].gen;
        let losers = self.calls.hedge.clear(node);
        let n = self.arena.nodes[node as usize];
        let call = self.calls.at(node, &n);
        let cancel = self.calls.stacks[n.stack as usize].layers[call.depth]
            .cfg
            .hedging
            .is_some_and(|h| h.cancel_losers);
        for &(ordinal, c) in &losers {
            // The call no longer waits for it: the copy ended, for the call, here.
            self.obs.copy_lost(call, ordinal);
            if cancel {
                self.cancel(c, node, gen, s);
            }
        }
        // Answers of copies left running are orphans' from now on.
        self.arena.nodes[node as usize].gen = gen.wrapping_add(1);
        self.finish_call(node, outcome, s);
    }
}
