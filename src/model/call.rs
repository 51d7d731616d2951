//! The retry state machine of one layer call (MODEL.md §3).
//!
//! A call node arrives at its layer ([`World::begin_call`]), makes attempts
//! ([`World::start_attempt`]), each a child node one level down, and reacts to each
//! attempt's end: an answer, or a timeout. A failed attempt
//! ([`World::attempt_failed`]) is retried after backoff, or ends the call. The call
//! ends in [`World::finish_call`], which reports the outcome to the caller: the layer
//! above after the hop back, or the logical request.
//!
//! Outcomes are counted once, where they arise: an outcome the call itself decides
//! (its breaker is open, its budget refuses, its deadline passes) goes through
//! [`World::fail_call`] or [`World::fail_attempt`], which count it; an outcome that
//! comes from below is passed on uncounted.
//!
//! Each attempt is also counted once by its ordinal, when it ends, as this call sees
//! it end (see [`crate::metrics::ordinal`]): an answer or a timer here, a refusal
//! before it left (breaker, budget, limiter, deadline), a cancellation from above, or
//! at the end of the run [`World::count_attempts_in_flight`].

use crate::engine::{Nanos, Scheduler};
use crate::metrics::trace::{self as tr, Fate};
use crate::model::breaker::Placement;

use super::backoff::{self, Failure};
use super::budget::RetryCause;
use super::event::{Event, Packed};
use super::hedge::Hedges;
use super::limiter::Gate;
use super::observe::{CallAt, CallObserver, Refusal};
use super::outcome::{Class, Outcome};
use super::request::{Halves, Memo, Node, NodeState, NONE};
use super::stack::Stack;
use super::timers::Lanes;
use super::world::World;

/// The calls' part of the world: the layer stacks (their breakers, budgets, limiters
/// and guards) and what their calls keep beside their nodes.
pub(super) struct Calls {
    /// Layer stacks: the fleets' first (index = fleet), then the service calls'.
    pub(super) stacks: Vec<Stack>,
    /// The fleets' stacks are `0..n_top` (their counts are the whole-run columns).
    pub(super) n_top: usize,
    /// The stack of each (service, call, callee).
    pub(super) call_stacks: Vec<Vec<Vec<u16>>>,
    /// (stack, depth) of each global layer index.
    pub(super) layer_index: Vec<(u16, u8)>,
    /// Per-node times of layer calls.
    pub(super) times: CallTimes,
    /// The copies of hedging calls.
    pub(super) hedge: Hedges,
    /// Breakers of the fleets' stacks that are open.
    pub(super) open_breakers: u64,
    /// Budget instances of the fleets' stacks.
    pub(super) budget_instances: u64,
    /// Whether any layer hedges: one test of a well-predicted flag keeps the hedging
    /// code off the hot path of scenarios without it.
    pub(super) any_hedging: bool,
    /// Whether any fleet or call has a bulkhead or a pool (likewise).
    pub(super) any_guards: bool,
    /// Whether attempts carry deadlines to services (a graph, or a fleet that
    /// propagates its deadline): nodes then keep theirs in [`CallTimes`].
    pub(super) deadlines: bool,
    /// Whether a tier sheds by criticality: only then is a node's class read, so
    /// only then is it kept (one test per node made, the work in
    /// `super::criticality`).
    pub(super) classes: bool,
}

impl Calls {
    /// `node` (read as `n`) as the observers see it.
    #[inline]
    pub(super) fn at(&self, node: u32, n: &Node) -> CallAt {
        CallAt {
            node,
            depth: n.depth as usize,
            top: (n.stack as usize) < self.n_top,
        }
    }

    /// Whether the breaker of layer `depth` records a cancelled call as a success
    /// (false below the last layer: a dependency attempt has no breaker).
    pub(super) fn cancel_is_success(&self, st: usize, depth: usize) -> bool {
        self.stacks[st]
            .layers
            .get(depth)
            .is_some_and(|l| l.cancel_is_success())
    }

    /// The end of the call at `node`: the request's deadline, or earlier the end of
    /// the layer's `total_timeout`.
    pub(super) fn call_deadline_of(
        &self,
        node: u32,
        st: usize,
        depth: usize,
        deadline: Nanos,
    ) -> Nanos {
        if self.stacks[st].layers[depth].cfg.total_timeout.is_some() {
            self.times.deadline[node as usize].min(deadline)
        } else {
            deadline
        }
    }

    /// Whether layer `depth` of stack `st` hedges.
    #[inline]
    pub(super) fn hedges(&self, st: usize, depth: usize) -> bool {
        self.any_hedging
            && self.stacks[st]
                .layers
                .get(depth)
                .is_some_and(|l| l.cfg.hedging.is_some())
    }
}

/// Per-node times of calls, in side tables (most layers need neither).
#[derive(Debug, Default)]
pub(super) struct CallTimes {
    /// When the node's current attempt (inside breaker) or call (outside) started.
    started: Vec<Nanos>,
    /// The end of the node's call's `total_timeout`, for layers that have one.
    deadline: Vec<Nanos>,
    /// The deadline a node knows when it is not its request's: an attempt at a
    /// service (what its caller propagated, or none) and a service call's node (its
    /// service's). Kept only when [`Calls::deadlines`] is set.
    known: Vec<Nanos>,
}

impl CallTimes {
    /// When `node`'s breaker admitted it (0 if never recorded).
    #[inline]
    pub(super) fn started(&self, node: u32) -> Nanos {
        self.started.get(node as usize).copied().unwrap_or(0)
    }

    /// Sets the deadline `node` knows.
    #[inline]
    pub(super) fn set_deadline(&mut self, node: u32, t: Nanos) {
        set_at(&mut self.known, node, t);
    }

    /// The deadline `node` knows (see [`CallTimes::known`]).
    #[inline]
    pub(super) fn deadline_at(&self, node: u32) -> Nanos {
        self.known.get(node as usize).copied().unwrap_or(Nanos::MAX)
    }
}

/// Sets `v[node] = t`, growing `v` as needed.
fn set_at(v: &mut Vec<Nanos>, node: u32, t: Nanos) {
    let i = node as usize;
    if i >= v.len() {
        v.resize(i + 1, 0);
    }
    v[i] = t;
}

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// The fleet of `node`'s request.
    #[inline]
    pub(super) fn fleet_of(&self, node: u32) -> usize {
        let req = self.arena.nodes[node as usize].req;
        self.arena.reqs[req as usize].fleet as usize
    }

    /// The stack of `node`.
    #[inline]
    fn stack_of(&self, node: u32) -> usize {
        self.arena.nodes[node as usize].stack as usize
    }

    /// The deadline of the call at `node`: its request's in a fleet's stack, else its
    /// service's (`Nanos::MAX` when none was propagated).
    #[inline]
    pub(super) fn deadline_of(&self, node: u32) -> Nanos {
        self.deadline_for(node, &self.arena.nodes[node as usize])
    }

    /// [`World::deadline_of`] for a node already read (`n` is node `node`).
    #[inline]
    fn deadline_for(&self, node: u32, n: &Node) -> Nanos {
        if (n.stack as usize) < self.calls.n_top {
            self.arena.reqs[n.req as usize].deadline
        } else {
            self.calls.times.deadline_at(node)
        }
    }

    /// A node has arrived: at its layer, or below the last layer at its service.
    pub(super) fn deliver(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let st = self.stack_of(node);
        if self.arena.nodes[node as usize].depth as usize == self.calls.stacks[st].layers.len() {
            self.svc_arrive(node, s);
        } else {
            self.begin_call(node, s);
        }
    }

    /// A call node has arrived at its layer.
    pub(super) fn begin_call(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        self.obs.call_arrived(&self.arena, node, now);
        let n = self.arena.nodes[node as usize];
        let st = n.stack as usize;
        let call = self.calls.at(node, &n);
        let depth = call.depth;
        if now >= self.deadline_for(node, &n) {
            self.obs.attempt_past_deadline(call, 1);
            self.abandon(node, s);
            return;
        }
        let layer = &mut self.calls.stacks[st].layers[depth];
        // One instance (the usual case) needs no division, nor the request's client.
        let instance = match layer.cfg.instances {
            1 => 0,
            k => (u64::from(self.arena.reqs[n.req as usize].client) % k) as u32,
        };
        {
            let nm = &mut self.arena.nodes[node as usize];
            nm.instance = instance;
            nm.memo = Memo::Backoff(Halves::new(backoff::initial_state(&layer.cfg.backoff)));
            nm.state = NodeState::Waiting;
        }
        if let Some(b) = layer.budget(instance) {
            b.on_call(now);
        }
        if let Some(t) = layer.cfg.total_timeout {
            set_at(&mut self.calls.times.deadline, node, now.saturating_add(t));
        }
        if layer.breaker_at(Placement::Outside) {
            if !self
                .calls
                .breaker_allow(st, depth, instance, &mut self.obs, s)
            {
                self.obs.breaker_refused_call(&self.arena, call);
                self.fail_call(node, Outcome::of(Class::BreakerOpen), s);
                return;
            }
            self.obs.breaker_admitted(&self.arena, call, false);
            self.arena.nodes[node as usize].outside_admitted = true;
            set_at(&mut self.calls.times.started, node, now);
        }
        if self.calls.any_hedging && self.calls.stacks[st].layers[depth].cfg.hedging.is_some() {
            self.hedge_start(node, s);
            return;
        }
        self.start_attempt(node, s);
    }

    /// Makes the next attempt of a call node.
    pub(super) fn start_attempt(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let n = self.arena.nodes[node as usize];
        let st = n.stack as usize;
        let call = self.calls.at(node, &n);
        let deadline = self.deadline_for(node, &n);
        let depth = call.depth;
        if now >= deadline {
            // The next attempt could not be sent: the deadline passed first.
            self.obs.attempt_past_deadline(call, n.attempts + 1);
            self.abandon(node, s);
            return;
        }
        if self.calls.any_guards {
            let stack = &self.calls.stacks[st];
            if stack.guards.is_some()
                && depth + 1 == stack.layers.len()
                && !self.guards_pass(node, st, s)
            {
                if self.arena.nodes[node as usize].state == NodeState::Acquiring {
                    self.obs.attempt_waits(&self.arena, node, tr::wait::GUARD);
                }
                return;
            }
        }
        let layer = &mut self.calls.stacks[st].layers[depth];
        match layer.limiter_gate(n.instance, now) {
            Gate::Pass => {}
            Gate::Reject => {
                self.arena.nodes[node as usize].attempts += 1;
                self.fail_attempt(node, Refusal::Limiter, s);
                return;
            }
            Gate::Wait(d) => {
                self.obs.attempt_waits(&self.arena, node, tr::wait::LIMITER);
                let nm = &mut self.arena.nodes[node as usize];
                nm.state = NodeState::Sleeping;
                s.after(d, Event::Retry { node, gen: nm.gen });
                return;
            }
        }
        // What the rest needs of the layer, read once.
        let (attempt_timeout, total_timeout, global) = (
            layer.cfg.attempt_timeout,
            layer.cfg.total_timeout,
            layer.global,
        );
        let inside = layer.breaker_at(Placement::Inside);
        let limited = layer.climits.is_some();
        let attempts = n.attempts + 1;
        self.arena.nodes[node as usize].attempts = attempts;
        if inside {
            if !self
                .calls
                .breaker_allow(st, depth, n.instance, &mut self.obs, s)
            {
                self.arena.nodes[node as usize].inside_admitted = false;
                self.fail_attempt(node, Refusal::Breaker, s);
                return;
            }
            self.arena.nodes[node as usize].inside_admitted = true;
            set_at(&mut self.calls.times.started, node, now);
            self.obs.breaker_admitted(&self.arena, call, true);
        }
        if limited {
            if let Some(status) = self.client_limit_refuses(st, depth, n.instance, node, now) {
                self.fail_attempt(node, Refusal::ClientLimit(status), s);
                return;
            }
        }
        let gen = n.gen;
        let child_depth = depth as u8 + 1;
        let child = self
            .arena
            .alloc_node(n.req, child_depth, st as u16, node, gen);
        if self.calls.classes {
            self.classify_attempt(child);
        }
        let child_gen = {
            let nodes = &mut self.arena.nodes;
            let nm = &mut nodes[node as usize];
            nm.child = child;
            nm.state = NodeState::Waiting;
            nodes[child as usize].gen
        };
        self.obs
            .attempt_sent(&self.arena, call, child, attempts, now);
        let call_deadline = match total_timeout {
            Some(_) => self.calls.times.deadline[node as usize].min(deadline),
            None => deadline,
        };
        if self.calls.deadlines {
            let gives_up = self.calls.stacks[st].layers[depth].gives_up(now, call_deadline);
            let d = self.calls.stacks[st].child_deadline(depth + 1, deadline, gives_up);
            self.calls.times.set_deadline(child, d);
        }
        if let Some(b) = self.calls.stacks[st].layers[depth].budget(n.instance) {
            b.on_sent(attempts >= 2);
        }
        if let Some(t) = attempt_timeout {
            let at = now.saturating_add(t);
            if at <= call_deadline {
                let lane = Lanes::timeout_lane(global);
                self.run.lanes.set(lane, at, node, gen, &self.arena, s);
            } else {
                s.at(call_deadline, Event::Timeout { node, gen });
            }
        } else if call_deadline < deadline {
            s.at(call_deadline, Event::Timeout { node, gen });
        }
        self.send_down(st, depth, child, child_gen, s);
    }

    /// Sends the attempt `child` of a call at (`st`, `depth`) to the layer or service
    /// below: after the layer's hop latency, or at once.
    #[inline(always)]
    pub(super) fn send_down(
        &mut self,
        st: usize,
        depth: usize,
        child: u32,
        child_gen: u32,
        s: &mut Scheduler<Packed>,
    ) {
        let stack = &mut self.calls.stacks[st];
        match stack.layers[depth].hop() {
            Some(delay) => s.after(
                delay,
                Event::Deliver {
                    node: child,
                    gen: child_gen,
                },
            ),
            // What `deliver` decides, known here: the child is one level down.
            None if depth + 1 == stack.layers.len() => self.svc_arrive(child, s),
            None => self.begin_call(child, s),
        }
    }

    /// The current attempt of `node` timed out.
    pub(super) fn on_timeout(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let n = self.arena.nodes[node as usize];
        let st = n.stack as usize;
        let call = self.calls.at(node, &n);
        let depth = call.depth;
        self.attempt_over(st, depth, node, n.instance, now, Some(Class::Timeout));
        // The deadline, not the attempt timeout: counted once, at the request.
        let past_deadline = now >= self.deadline_of(node);
        self.obs
            .attempt_timed_out(&self.arena, call, n.attempts, past_deadline, now);
        // The attempt is over: the child is orphaned (or cancelled).
        self.arena.nodes[node as usize].gen = n.gen.wrapping_add(1);
        if self.calls.stacks[st].layers[depth].cfg.cancel_on_timeout {
            self.cancel(n.child, node, n.gen, s);
        }
        if past_deadline {
            // It cancels the attempt.
            if n.inside_admitted {
                let ok = self.calls.cancel_is_success(st, depth);
                self.breaker_record(st, depth, n.instance, ok, node, s);
            }
            self.abandon(node, s);
            return;
        }
        if n.inside_admitted {
            self.breaker_record(st, depth, n.instance, false, node, s);
        }
        self.attempt_failed(node, Outcome::of(Class::Timeout), s);
    }

    /// The outcome of `node`'s current attempt has arrived.
    pub(super) fn on_answer(
        &mut self,
        node: u32,
        gen: u32,
        outcome: Outcome,
        copy: u8,
        s: &mut Scheduler<Packed>,
    ) {
        let n = self.arena.nodes[node as usize];
        if n.gen != gen || n.state != NodeState::Waiting {
            return; // the attempt already timed out: an orphan's answer
        }
        if self.calls.any_hedging
            && self.calls.stacks[n.stack as usize].layers[n.depth as usize]
                .cfg
                .hedging
                .is_some()
        {
            self.hedge_answer(node, copy, outcome, s);
            return;
        }
        self.arena.nodes[node as usize].gen = gen.wrapping_add(1);
        let st = n.stack as usize;
        let depth = n.depth as usize;
        let ok = outcome.class == Class::Success;
        let now = s.now();
        let call = self.calls.at(node, &n);
        self.obs
            .attempt_answered(&self.arena, call, n.attempts, outcome.class, now);
        self.attempt_over(st, depth, node, n.instance, now, Some(outcome.class));
        if n.inside_admitted {
            self.breaker_record(st, depth, n.instance, ok, node, s);
        }
        if ok {
            if let Some(b) = self.calls.stacks[st].layers[depth].budget(n.instance) {
                b.on_succeeded(now, n.retry_cost);
            }
            self.finish_call(node, outcome, s);
        } else {
            self.attempt_failed(node, outcome, s);
        }
    }

    /// Counts an attempt refused here before it left (`why`: the limiter, the inside
    /// breaker, a guard), whose failure arises at this layer, then decides what
    /// follows it.
    pub(super) fn fail_attempt(&mut self, node: u32, why: Refusal, s: &mut Scheduler<Packed>) {
        let n = self.arena.nodes[node as usize];
        let call = self.calls.at(node, &n);
        self.obs
            .attempt_refused(&self.arena, call, n.attempts, why, s.now());
        self.attempt_failed_as(node, Outcome::of(why.class()), why.status(), s);
    }

    /// Decides what follows a failed attempt: a retry after backoff, or the end of the call.
    #[inline(always)]
    fn attempt_failed(&mut self, node: u32, outcome: Outcome, s: &mut Scheduler<Packed>) {
        self.attempt_failed_as(node, outcome, None, s);
    }

    /// [`World::attempt_failed`] of an attempt answered `status` (`None`: the status
    /// the callee answers its class with).
    fn attempt_failed_as(
        &mut self,
        node: u32,
        outcome: Outcome,
        status: Option<u16>,
        s: &mut Scheduler<Packed>,
    ) {
        let now = s.now();
        let n = self.arena.nodes[node as usize];
        let r = self.arena.reqs[n.req as usize];
        let fi = r.fleet as usize;
        let st = n.stack as usize;
        let call = self.calls.at(node, &n);
        let depth = call.depth;
        let deadline = self.deadline_of(node);
        let keys = self.fleets.list[fi].cfg.idempotency_keys;
        let callee = &self.services.list[self.calls.stacks[st].target as usize].cfg;
        let (dep_retry_after, reject_status) = (
            callee.retry_after,
            status.unwrap_or_else(|| callee.status_of(outcome.class)),
        );
        let call_deadline = self.calls.call_deadline_of(node, st, depth, deadline);
        let cls = outcome.class;
        if n.guard != 0 {
            self.attempt_left_guards(node, s);
        }
        let throttled = matches!(cls, Class::Rejected | Class::RateLimited) && reject_status == 429;
        // A retry granted before this attempt is resolved by its outcome.
        self.release_retry(node);
        let layer = &mut self.calls.stacks[st].layers[depth];
        let ambiguous_write =
            cls == Class::Timeout && r.is_write && !keys && !layer.cfg.retry_ambiguous_writes;
        let retryable = layer.cfg.retry_on.retries(cls, reject_status) && !ambiguous_write;
        let refused = match layer.budget(n.instance) {
            Some(b) => {
                b.on_failed(now, cls, retryable);
                b.refused_failure()
            }
            None => false,
        };
        // A retry refused here is how the next ordinal ended.
        let next = n.attempts + 1;
        if refused {
            self.obs
                .retry_refused(&self.arena, call, next, Refusal::Budget, now);
            self.fail_call(node, Outcome::of(Class::BudgetExhausted), s);
            return;
        }
        let out_of_time = call_deadline < deadline && now >= call_deadline;
        if !retryable || !layer.cfg.max_attempts.allows_another(n.attempts) || out_of_time {
            self.finish_call(node, outcome, s);
            return;
        }
        let mut prev = n.memo.backoff();
        let failure = Failure {
            throttled,
            retry_after: (outcome.retry_after() && layer.cfg.respect_retry_after)
                .then(|| outcome.retry_after_ns(dep_retry_after)),
        };
        let wait = backoff::next_wait(
            &layer.cfg.backoff,
            n.attempts,
            &mut prev,
            &failure,
            &mut layer.jitter,
        );
        let wake = now.saturating_add(wait);
        let reason = match (failure.retry_after, &layer.cfg.backoff) {
            (None, _) => tr::wait::BACKOFF,
            (Some(_), backoff::Backoff::Grpc(_)) => tr::wait::PUSHBACK,
            (Some(_), _) => tr::wait::RETRY_AFTER,
        };
        if wake > deadline || (call_deadline < deadline && wake >= call_deadline) {
            self.obs
                .retry_refused(&self.arena, call, next, Refusal::Deadline, now);
            if now >= deadline {
                self.abandon(node, s);
            } else {
                self.fail_call(node, Outcome::of(Class::DeadlineExceeded), s);
            }
            return;
        }
        let mut cost = 0;
        let mut granted = false;
        if let Some(b) = layer.budget(n.instance) {
            let cause = RetryCause {
                timeout: cls == Class::Timeout,
                throttled,
            };
            match b.ask(now, cause) {
                Some(c) => {
                    cost = c;
                    b.on_retry_scheduled(wake);
                    granted = true;
                }
                None => {
                    self.obs
                        .retry_refused(&self.arena, call, next, Refusal::Budget, now);
                    self.fail_call(node, Outcome::of(Class::BudgetExhausted), s);
                    return;
                }
            }
        }
        self.obs.retry_scheduled(&self.arena, node, reason, granted);
        let nm = &mut self.arena.nodes[node as usize];
        nm.memo = Memo::Backoff(Halves::new(prev));
        nm.retry_cost = cost;
        nm.state = NodeState::Sleeping;
        s.at(wake, Event::Retry { node, gen: nm.gen });
    }

    /// The one place where an outcome that arises here (not one passed up from
    /// below) is counted and ends the call at `node`.
    #[inline]
    pub(super) fn fail_call(&mut self, node: u32, outcome: Outcome, s: &mut Scheduler<Packed>) {
        self.end_call(node, outcome, true, s);
    }

    /// The call at `node` is over with `outcome`, which came from below (counted where
    /// it arose): report it to the caller.
    #[inline]
    pub(super) fn finish_call(&mut self, node: u32, outcome: Outcome, s: &mut Scheduler<Packed>) {
        self.end_call(node, outcome, false, s);
    }

    /// The call at `node` is over with `outcome`, which arose `here` or below: report
    /// it to the caller.
    fn end_call(&mut self, node: u32, outcome: Outcome, here: bool, s: &mut Scheduler<Packed>) {
        let n = self.arena.nodes[node as usize];
        let st = n.stack as usize;
        let depth = n.depth as usize;
        if n.outside_admitted {
            let ok = outcome.class == Class::Success;
            self.breaker_record(st, depth, n.instance, ok, node, s);
        }
        if n.guard != 0 {
            self.release_guards(node, s);
        }
        let call = self.calls.at(node, &n);
        self.obs
            .call_finished(&self.arena, call, outcome.class, here, s.now());
        self.arena.free_node(node);
        if n.parent == NONE {
            self.finish_request(n.req, outcome, s);
            return;
        }
        if depth == 0 {
            // The top of a service call's stack: its caller is a service's visit.
            self.on_child_done(n.parent, n.parent_gen, outcome, s);
            return;
        }
        let p = self.arena.nodes[n.parent as usize];
        if p.gen != n.parent_gen || p.state != NodeState::Waiting {
            return; // nobody waits for this answer
        }
        let copy = if self.calls.any_hedging
            && self.calls.stacks[st].layers[depth - 1]
                .cfg
                .hedging
                .is_some()
        {
            self.calls.hedge.copy_of(n.parent, node)
        } else {
            0
        };
        match self.calls.stacks[st].layers[depth - 1].hop() {
            Some(delay) => s.after(
                delay,
                Event::Answer {
                    node: n.parent,
                    gen: n.parent_gen,
                    outcome,
                    copy,
                },
            ),
            None => self.on_answer(n.parent, n.parent_gen, outcome, copy, s),
        }
    }

    /// Ends a call whose request's deadline has passed. The deadline is counted once,
    /// at the request (here if its timer has not fired yet at this instant); a caller
    /// that still waits gets `deadline_exceeded` as the attempt's outcome, so its
    /// breakers and budgets see the failure instead of waiting forever.
    /// In a service call's stack the deadline is its service's: the call fails
    /// with `deadline_exceeded` and the service drops the request.
    pub(super) fn abandon(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let req = self.arena.nodes[node as usize].req;
        if self.stack_of(node) < self.calls.n_top && !self.arena.reqs[req as usize].done {
            self.expire_request(req, s);
        }
        self.release_retry(node);
        self.finish_call(node, Outcome::of(Class::DeadlineExceeded), s);
    }

    /// Ends a node that its caller cancelled: nobody waits for its answer. An attempt
    /// its inside breaker admitted is recorded, so a half-open probe slot is not held
    /// forever: as a failure, or as a success for a Polly breaker (see
    /// [`super::layer::Layer::cancel_is_success`]).
    fn end_silently(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let n = self.arena.nodes[node as usize];
        let st = n.stack as usize;
        let depth = n.depth as usize;
        let ok = self.calls.cancel_is_success(st, depth);
        self.release_retry(node);
        if n.inside_admitted && n.state == NodeState::Waiting {
            self.breaker_record(st, depth, n.instance, ok, node, s);
        }
        if n.outside_admitted {
            self.breaker_record(st, depth, n.instance, ok, node, s);
        }
        if n.guard != 0 {
            self.release_guards(node, s);
        }
        self.obs
            .node_done(&self.arena, node, Fate::Cancelled, s.now());
        self.arena.free_node(node);
    }

    /// Returns a retry granted to `node` and not yet resolved to its budget.
    fn release_retry(&mut self, node: u32) {
        let n = self.arena.nodes[node as usize];
        if n.retry_cost == 0 {
            return;
        }
        if let Some(b) = self.calls.stacks[n.stack as usize]
            .layers
            .get_mut(n.depth as usize)
            .and_then(|l| l.budget(n.instance))
        {
            b.release(n.retry_cost, n.state == NodeState::Waiting);
        }
        self.arena.nodes[node as usize].retry_cost = 0;
    }

    /// Cancels `node`, the attempt `parent` made in its generation `parent_gen`, and
    /// below it its current attempt, down to the dependency. Work in service runs on.
    ///
    /// The node is known by what it points back at, not by its own generation: that
    /// moves on with each of its own attempts, and a call below on its 2nd attempt is
    /// still the attempt above. A freed slot, or one reused by another node, does not
    /// point back at this attempt of `parent`.
    pub(super) fn cancel(
        &mut self,
        node: u32,
        parent: u32,
        parent_gen: u32,
        s: &mut Scheduler<Packed>,
    ) {
        if node == NONE {
            return;
        }
        let n = self.arena.nodes[node as usize];
        if n.state == NodeState::Free || n.parent != parent || n.parent_gen != parent_gen {
            return;
        }
        self.obs.node_cancelled(&self.arena, node, s.now());
        match n.state {
            NodeState::Free | NodeState::InService => {}
            NodeState::Waiting => {
                let st = n.stack as usize;
                let call = self.calls.at(node, &n);
                self.attempt_over(st, call.depth, node, n.instance, s.now(), None);
                if self.calls.hedges(st, call.depth) {
                    // Every copy still out is an attempt cancelled at its ordinal.
                    for (ordinal, c) in self.calls.hedge.clear(node) {
                        self.obs.attempt_cancelled(call, ordinal);
                        self.cancel(c, node, n.gen, s);
                    }
                } else {
                    self.obs.attempt_cancelled(call, n.attempts);
                    self.cancel(n.child, node, n.gen, s);
                }
                self.end_silently(node, s);
            }
            NodeState::Sleeping | NodeState::InTransit | NodeState::Acquiring => {
                self.end_silently(node, s)
            }
            NodeState::Queued => self.leave_queue(node, s),
            NodeState::Calling => self.cancel_visit(node, s),
        }
    }

    /// Counts, as the run ends, every attempt still in flight (a call waiting for its
    /// attempt, or each copy out of a hedging call; a dependency attempt is never
    /// `Waiting`).
    pub(super) fn count_attempts_in_flight(&mut self) {
        for (i, n) in self.arena.nodes.iter().enumerate() {
            if n.state != NodeState::Waiting || (n.stack as usize) >= self.calls.n_top {
                continue;
            }
            let call = self.calls.at(i as u32, n);
            if self.calls.hedges(n.stack as usize, call.depth) {
                for (ordinal, _) in self.calls.hedge.copies_out(i as u32) {
                    self.obs.attempt_in_flight(call, ordinal);
                }
            } else {
                self.obs.attempt_in_flight(call, n.attempts);
            }
        }
    }
}
