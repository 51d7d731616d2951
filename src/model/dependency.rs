//! A capacity-limited service (MODEL.md §4): servers, a bounded queue served FIFO or
//! LIFO, service times and errors, or an optimistic-concurrency record; and the outage
//! windows (MODEL.md §5) whose combined effect fails, slows, shrinks or blackholes it.
//!
//! With `[dependency]` there is one such service and it answers once its service time
//! is over. In a service graph every tier is one; a tier with calls goes on to make
//! them after its own work (see [`super::service`]) and answers when they are done.

use std::collections::VecDeque;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::engine::{stream, Nanos, Scheduler};
use crate::model::config::{
    DependencyConfig, DependencyKind, Discipline, OnFailure, ServiceConfig,
};

use crate::metrics::trace::Fate;

use super::event::{Event, Packed};
use super::observe::{CallObserver, SvcAt};
use super::outage::{Effect, Window};
use super::outcome::{Class, Outcome};
use super::request::{Halves, Memo, NodeState};
use super::service::Visits;
use super::world::World;

/// A service's live state.
pub(super) struct Service {
    pub(super) cfg: DependencyConfig,
    /// Whether it makes downstream calls after its own work.
    pub(super) calls: bool,
    /// Whether a thread stays busy until the request is answered.
    pub(super) hold_threads: bool,
    /// How a failed request is answered.
    pub(super) on_failure: OnFailure,
    /// Whether a capacity rejection is answered `overloaded`.
    pub(super) overloaded_status: bool,
    /// Requests holding a server (thread).
    pub(super) busy: u32,
    /// Queued attempts as (node, generation); cancelled ones stay until popped.
    queue: VecDeque<(u32, u32)>,
    /// Attempts in the queue that are still live.
    pub(super) queued: u64,
    service: ChaCha8Rng,
    errors: ChaCha8Rng,
    /// The combined effect of the active outage windows that hit it.
    effect: Effect,
    /// The record's version, for an OCC dependency.
    version: Option<u64>,
    /// The indices of the active windows that hit it.
    active: Vec<u32>,
    /// Its limiter (`admission`), checked before the queue.
    admission: Option<super::admission::Admission>,
    /// The limiter's random stream, for a limiter that draws (`probabilistic`):
    /// `admission/<name>`, or `admission` for `[dependency]`.
    admission_rng: Option<Box<ChaCha8Rng>>,
    /// Rejections waiting for a server to spend `reject_cost` on them, as (node,
    /// generation); served before the queue.
    rejecting: VecDeque<(u32, u32)>,
    /// Whether it defends itself before the queue (`admission`,
    /// `shed_by_criticality` or `concurrency_limit`): one test per arrival when it
    /// does not.
    defended: bool,
    /// Its queue policy (`queue_policy`): one test per dispatch with a queue, and
    /// per attempt queued, when it has none.
    policy: Option<crate::model::queue_policy::QueuePolicy>,
    /// Its concurrency limit (`concurrency_limit`), checked first on arrival, with
    /// its stream `concurrency_limit/<name>` (`concurrency_limit` for `[dependency]`).
    pub(super) limit: Option<Box<super::concurrency::TierLimit>>,
    /// Whether it has a concurrency limit to give samples to: one test per answer
    /// when it has not.
    pub(super) limited: bool,
}

impl Service {
    /// The service `cfg` with streams from `seed`. The one service of a `[dependency]`
    /// scenario keeps the stream names it always had (`graph` false).
    pub(super) fn new(cfg: &ServiceConfig, seed: u64, graph: bool) -> Service {
        let (service, errors) = if graph {
            (
                stream(seed, &format!("service/{}", cfg.name)),
                stream(seed, &format!("errors/{}", cfg.name)),
            )
        } else {
            (stream(seed, "service"), stream(seed, "errors"))
        };
        let c = &cfg.capacity;
        Service {
            cfg: c.clone(),
            calls: !cfg.calls.is_empty(),
            hold_threads: cfg.hold_threads,
            on_failure: cfg.on_failure,
            overloaded_status: cfg.overloaded_status,
            busy: 0,
            queue: VecDeque::new(),
            queued: 0,
            service,
            errors,
            effect: Effect::default(),
            version: (c.kind == DependencyKind::Occ).then_some(0),
            active: Vec::new(),
            admission: c.admission.map(super::admission::Admission::new),
            admission_rng: c.admission.filter(|a| a.draws()).map(|_| {
                Box::new(if graph {
                    stream(seed, &format!("admission/{}", cfg.name))
                } else {
                    stream(seed, "admission")
                })
            }),
            rejecting: VecDeque::new(),
            defended: c.admission.is_some()
                || c.shed_by_criticality.is_some()
                || c.concurrency_limit.is_some(),
            limit: c.concurrency_limit.map(|l| {
                let rng = if graph {
                    stream(seed, &format!("concurrency_limit/{}", cfg.name))
                } else {
                    stream(seed, "concurrency_limit")
                };
                Box::new(super::concurrency::TierLimit::new(l, rng))
            }),
            limited: c.concurrency_limit.is_some(),
            policy: c
                .queue_policy
                .map(crate::model::queue_policy::QueuePolicy::new),
        }
    }

    /// Servers available now: the configured ones, fewer during a capacity outage.
    pub(super) fn capacity(&self) -> u32 {
        let base = self.cfg.servers.unwrap_or(u32::MAX);
        self.effect.capacity.map_or(base, |c| c.min(base))
    }

    /// Draws an attempt's service time and outcome class, at its start.
    #[inline(always)] // in both worlds, traced and untraced (see `World`)
    fn draw_service(&mut self) -> (Nanos, Class) {
        match self.effect.fail_after {
            Some(after) => (after, Class::Error),
            None => {
                // A slow outage stretches the whole service time, coordination cost
                // (per_concurrent) included: the dependency is `slow` times slower.
                let base = self.cfg.service_time.sample(&mut self.service);
                let mut t = base
                    .saturating_add(self.cfg.per_concurrent.saturating_mul(u64::from(self.busy)));
                if self.effect.slow != 1.0 {
                    t = crate::engine::time::from_f64_ns(t as f64 * self.effect.slow);
                }
                let p = 1.0 - (1.0 - self.cfg.error_rate) * (1.0 - self.effect.error_p);
                let failed = p > 0.0 && self.errors.random::<f64>() < p;
                (t, if failed { Class::Error } else { Class::Success })
            }
        }
    }

    /// The answer to a request the service could not complete.
    pub(super) fn failure(&self) -> Class {
        match self.on_failure {
            OnFailure::Error => Class::Error,
            OnFailure::Overloaded => Class::Overloaded,
        }
    }
}

/// The services' part of the world: their live state and configuration, the visits
/// of graph services, and the outage windows that act on them.
pub(super) struct Services {
    /// Each service's live state.
    pub(super) list: Vec<Service>,
    /// Each service's configuration.
    pub(super) cfgs: Vec<ServiceConfig>,
    /// The service fleet 0 calls: the whole-run columns describe it.
    pub(super) primary: usize,
    /// Visits of graph services making their calls.
    pub(super) visits: Visits,
    /// The outage windows of the run.
    pub(super) windows: Vec<Window>,
}

impl Services {
    /// Service `sv` as the observers see it.
    #[inline]
    pub(super) fn at(&self, sv: usize) -> SvcAt {
        SvcAt {
            sv,
            primary: sv == self.primary,
        }
    }

    /// Frees a server (thread) of service `sv`.
    #[inline(always)] // in both worlds, traced and untraced (see `World`)
    pub(super) fn release_thread(&mut self, sv: usize, now: Nanos, obs: &mut impl CallObserver) {
        self.list[sv].busy -= 1;
        let (at, busy) = (self.at(sv), self.list[sv].busy);
        obs.thread_released(at, busy, now);
    }
}

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// The service an attempt at `node` (depth = its stack's length) reaches.
    #[inline]
    pub(super) fn service_of(&self, node: u32) -> usize {
        if self.services.list.len() == 1 {
            return 0; // `[dependency]`: no lookup on the hot path
        }
        self.calls.stacks[self.arena.nodes[node as usize].stack as usize].target as usize
    }

    /// An attempt arrives at its service: read (OCC), swallowed (blackhole), dropped
    /// (its propagated deadline passed), served, queued or rejected.
    #[inline(always)]
    pub(super) fn svc_arrive(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let sv = self.service_of(node);
        let at = self.services.at(sv);
        let fi = self.fleet_of(node);
        self.obs.service_reached(&self.arena, node, at, fi, now);
        let svc = &self.services.list[sv];
        if let Some(version) = svc.version {
            self.occ_read(node, fi, version, s);
            return;
        }
        if svc.effect.blackhole {
            self.obs.node_done(&self.arena, node, Fate::Swallowed, now);
            self.arena.free_node(node); // swallowed: no answer, ever
            return;
        }
        if self.calls.deadlines && now >= self.calls.times.deadline_at(node) {
            self.drop_expired(node, sv, now);
            return;
        }
        if self.services.list[sv].defended && !self.defend(node, sv, now, s) {
            return;
        }
        self.enter(node, sv, now, s);
    }

    /// An attempt past the limiter enters service `sv`: served at once, queued, or
    /// rejected by the full queue.
    #[inline(always)]
    fn enter(&mut self, node: u32, sv: usize, now: Nanos, s: &mut Scheduler<Packed>) {
        let at = self.services.at(sv);
        let svc = &mut self.services.list[sv];
        if svc.busy < svc.capacity() {
            if let Some(p) = svc.policy.as_mut() {
                served_at_once(p, now);
            }
            self.obs.admitted(at, None, now);
            self.start_service(node, sv, 0, s);
        } else if svc.cfg.queue_limit.is_none_or(|l| svc.queued < l) {
            let nm = &mut self.arena.nodes[node as usize];
            nm.state = NodeState::Queued;
            nm.memo = Memo::Queued(Halves::new(now));
            let gen = nm.gen;
            if let Some(p) = svc.policy.as_mut() {
                queue_joined(p, svc.queued, now);
            }
            svc.queue.push_back((node, gen));
            svc.queued += 1;
            self.obs.admitted(at, Some(svc.queued), now);
        } else {
            let class = if svc.overloaded_status {
                Class::Overloaded
            } else {
                Class::Rejected
            };
            let outcome = Outcome::configured(class, svc.cfg.retry_after.is_some());
            self.obs.rejected(at, now);
            self.reject(node, sv, outcome, s);
        }
    }

    /// A defended service `sv`'s checks before the queue on the attempt at `node`
    /// arriving at `now`: its limiter, then its priority shedding. `true` lets it on
    /// to the queue now; otherwise it was rejected, or delayed by the limiter.
    #[cold]
    fn defend(&mut self, node: u32, sv: usize, now: Nanos, s: &mut Scheduler<Packed>) -> bool {
        self.within_limit(node, sv, now, s)
            && self.admit(node, sv, now, s)
            && self.pass_shedding(node, sv, now, s)
    }

    /// Service `sv`'s concurrency limit on the attempt at `node` arriving at `now`:
    /// `true` lets it on (stamped for its sample), else it is rejected `rate_limited`
    /// with the limit's status.
    fn within_limit(
        &mut self,
        node: u32,
        sv: usize,
        now: Nanos,
        s: &mut Scheduler<Packed>,
    ) -> bool {
        let svc = &mut self.services.list[sv];
        let Some(l) = svc.limit.as_mut() else {
            return true;
        };
        let inflight = u32::try_from(u64::from(svc.busy) + svc.queued).unwrap_or(u32::MAX);
        if l.arrive(node, now, inflight) {
            return true;
        }
        if let Some(c) = self.obs.rec.limits.as_mut() {
            c.refuse(sv, now);
        }
        self.reject(node, sv, Outcome::of(Class::RateLimited), s);
        false
    }

    /// The attempt at `node`, which service `sv`'s concurrency limit let through, is
    /// finished at `now` (`dropped`: nobody waits for it any more): the limit's sample,
    /// and the timer event the limit may now need.
    #[cold]
    pub(super) fn limit_sample(
        &mut self,
        node: u32,
        sv: usize,
        now: Nanos,
        dropped: bool,
        s: &mut Scheduler<Packed>,
    ) {
        let Some(l) = self.services.list[sv].limit.as_mut() else {
            return;
        };
        l.finish(node, now, dropped);
        self.limit_moved(sv, now, s);
    }

    /// Service `sv`'s limit may have changed at `now`: recorded, and its next timer
    /// scheduled if it needs one not pending.
    pub(super) fn limit_moved(&mut self, sv: usize, now: Nanos, s: &mut Scheduler<Packed>) {
        let Some(l) = self.services.list[sv].limit.as_mut() else {
            return;
        };
        let (limit, tick) = (l.limit(), l.tick_to_schedule(now));
        if let Some(c) = self.obs.rec.limits.as_mut() {
            c.set(sv, now, limit);
        }
        if let Some(t) = tick {
            s.at(t, Event::LimitTick { tier: sv as u32 });
        }
    }

    /// [`Event::LimitTick`]: service `sv`'s limit's timer (Envoy's) is due.
    #[cold]
    pub(super) fn on_limit_tick(&mut self, sv: usize, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let Some(l) = self.services.list[sv].limit.as_mut() else {
            return;
        };
        if l.on_tick(now) {
            self.limit_moved(sv, now, s);
        }
    }

    /// Service `sv`'s priority shedding on the attempt at `node`, past its limiter:
    /// `true` lets it on, else it is rejected `priority_shed`.
    fn pass_shedding(
        &mut self,
        node: u32,
        sv: usize,
        now: Nanos,
        s: &mut Scheduler<Packed>,
    ) -> bool {
        match self.shed_by_criticality(node, sv, now) {
            None => true,
            Some(outcome) => {
                self.reject(node, sv, outcome, s);
                false
            }
        }
    }

    /// Asks service `sv`'s limiter about the attempt at `node` arriving at `now`:
    /// whether it goes on to the queue now. A refused attempt is rejected
    /// `rate_limited`; a delayed one goes on at [`Event::AdmissionDelay`].
    #[cold]
    fn admit(&mut self, node: u32, sv: usize, now: Nanos, s: &mut Scheduler<Packed>) -> bool {
        let svc = &mut self.services.list[sv];
        let Some(a) = svc.admission.as_mut() else {
            return true;
        };
        let verdict = a.admit(now, svc.admission_rng.as_deref_mut());
        let counts = self.obs.rec.admission.as_mut();
        match verdict {
            super::admission::Verdict::Admit => {
                if let Some(c) = counts {
                    c.admit(now, sv);
                }
                true
            }
            super::admission::Verdict::Delay(d) => {
                if let Some(c) = counts {
                    c.admit(now, sv);
                    c.delay(sv, d);
                }
                // Still in transit to the servers: a cancel ends it silently, and
                // frees the slot, so the event finds another generation.
                let gen = self.arena.nodes[node as usize].gen;
                s.after(d, Event::AdmissionDelay { node, gen });
                false
            }
            super::admission::Verdict::Limit(secs) => {
                if let Some(c) = counts {
                    c.limit(now, sv);
                }
                let outcome = match secs {
                    Some(secs) => Outcome::computed(Class::RateLimited, secs),
                    None => Outcome::of(Class::RateLimited),
                };
                self.reject(node, sv, outcome, s);
                false
            }
        }
    }

    /// [`Event::AdmissionDelay`]: the attempt at `node`, which its limiter admitted
    /// with a delay, is done waiting: dropped if its propagated deadline passed
    /// meanwhile, else on to the servers or the queue.
    #[cold]
    pub(super) fn on_admission_delay(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let sv = self.service_of(node);
        if self.calls.deadlines && now >= self.calls.times.deadline_at(node) {
            if self.services.list[sv].limited {
                self.limit_sample(node, sv, now, true, s);
            }
            self.drop_expired(node, sv, now);
            return;
        }
        if self.pass_shedding(node, sv, now, s) {
            self.enter(node, sv, now, s);
        }
    }

    /// Service `sv` rejects the attempt at `node` with `outcome`: at once, or after a
    /// server has spent the tier's `reject_cost` on it (waiting for one, ahead of the
    /// queue, when none is free).
    fn reject(&mut self, node: u32, sv: usize, outcome: Outcome, s: &mut Scheduler<Packed>) {
        let svc = &mut self.services.list[sv];
        let cost = svc.cfg.reject_cost;
        if cost == 0 {
            self.deliver_rejection(node, sv, outcome, s);
            return;
        }
        let nm = &mut self.arena.nodes[node as usize];
        // In service from here: a cancel leaves it be, as work in service runs on.
        nm.state = NodeState::InService;
        nm.memo = Memo::Service {
            time: Halves::new(0),
            outcome,
        };
        let gen = nm.gen;
        if svc.busy < svc.capacity() {
            self.start_rejection(node, sv, s);
        } else {
            svc.rejecting.push_back((node, gen));
        }
    }

    /// A server starts spending `reject_cost` on the rejection at `node`.
    fn start_rejection(&mut self, node: u32, sv: usize, s: &mut Scheduler<Packed>) {
        let svc = &mut self.services.list[sv];
        svc.busy += 1;
        let (busy, cost) = (svc.busy, svc.cfg.reject_cost);
        let at = self.services.at(sv);
        self.obs.rejection_started(at, busy, s.now());
        let gen = self.arena.nodes[node as usize].gen;
        s.after(cost, Event::RejectDone { node, gen });
    }

    /// [`Event::RejectDone`]: the server spent `reject_cost` on the rejection at
    /// `node`; the caller gets it and the server takes the next waiting work.
    #[cold]
    pub(super) fn on_reject_done(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let sv = self.service_of(node);
        let Memo::Service { outcome, .. } = self.arena.nodes[node as usize].memo else {
            unreachable!("a rejection's memo is its outcome")
        };
        self.services.list[sv].busy -= 1;
        let (at, busy) = (self.services.at(sv), self.services.list[sv].busy);
        self.obs.rejection_done(at, busy, s.now());
        self.deliver_rejection(node, sv, outcome, s);
        self.dispatch(sv, s);
    }

    /// Sends a rejection to the caller of `node`.
    fn deliver_rejection(
        &mut self,
        node: u32,
        sv: usize,
        outcome: Outcome,
        s: &mut Scheduler<Packed>,
    ) {
        if self.services.at(sv).primary {
            self.fail_call(node, outcome, s);
        } else {
            self.finish_call(node, outcome, s);
        }
    }

    /// Drops an attempt whose propagated deadline has passed: nobody waits for it.
    pub(super) fn drop_expired(&mut self, node: u32, sv: usize, now: Nanos) {
        let at = self.services.at(sv);
        self.obs.shed(&self.arena, node, at, now);
        self.arena.free_node(node);
    }

    /// A queued attempt was cancelled: it leaves the queue's count now, its entry
    /// when it is popped.
    pub(super) fn leave_queue(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let sv = self.service_of(node);
        self.services.list[sv].queued -= 1;
        let (at, queued) = (self.services.at(sv), self.services.list[sv].queued);
        self.obs.queue_left(&self.arena, node, at, queued, s.now());
        self.arena.free_node(node);
    }

    /// Starts serving the attempt at `node`, which waited `wait` ns for its server.
    #[inline]
    fn start_service(&mut self, node: u32, sv: usize, wait: Nanos, s: &mut Scheduler<Packed>) {
        let svc = &mut self.services.list[sv];
        let (service, class) = svc.draw_service();
        svc.busy += 1;
        let busy = svc.busy;
        let at = self.services.at(sv);
        self.obs
            .service_started(&self.arena, node, at, wait, busy, s.now());
        let nm = &mut self.arena.nodes[node as usize];
        nm.state = NodeState::InService;
        nm.memo = Memo::Service {
            time: Halves::new(service),
            outcome: Outcome::of(class),
        };
        s.after(service, Event::ServiceDone { node, gen: nm.gen });
    }

    /// [`Event::ServiceDone`]: the service finished its own work on the attempt at
    /// `node`. A service with calls goes on to make them; otherwise it answers.
    #[inline]
    pub(super) fn on_service_done(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let sv = self.service_of(node);
        let n = self.arena.nodes[node as usize];
        let Memo::Service { time, outcome } = n.memo else {
            unreachable!("a served attempt's memo is its service, not {:?}", n.memo)
        };
        if self.services.list[sv].calls
            && outcome.class == Class::Success
            && !self.services.list[sv].effect.blackhole
        {
            let held = self.services.list[sv].hold_threads;
            if !held {
                self.services.release_thread(sv, now, &mut self.obs);
            }
            self.begin_visit(node, sv, time.get(), s);
            if !held {
                self.dispatch(sv, s);
            }
            return;
        }
        self.services.release_thread(sv, now, &mut self.obs);
        let outcome = if outcome.class == Class::Success {
            outcome
        } else {
            Outcome::of(self.services.list[sv].failure())
        };
        self.answer(node, sv, time.get(), outcome, s);
        self.dispatch(sv, s);
    }

    /// The service `sv` answers the attempt at `node` with `outcome` after `held` ns
    /// of its threads' time: counted, then sent to the caller (lost in a blackhole).
    #[inline]
    pub(super) fn answer(
        &mut self,
        node: u32,
        sv: usize,
        held: Nanos,
        outcome: Outcome,
        s: &mut Scheduler<Packed>,
    ) {
        let now = s.now();
        let n = self.arena.nodes[node as usize];
        let useful = self.arena.useful(node, now);
        let at = self.services.at(sv);
        self.obs.served(at, held, outcome.class, useful, now);
        if at.primary && outcome.class == Class::Success && self.arena.reqs[n.req as usize].is_write
        {
            let fi = self.fleet_of(node);
            let keys = self.fleets.list[fi].cfg.idempotency_keys;
            let r = &mut self.arena.reqs[n.req as usize];
            // A queue handler applies its message: one logical write over
            // every delivery (see `super::broker`).
            let applied = match self.fleets.broker.as_mut() {
                Some(b) => b.applied_of(n.req, r.gen).unwrap_or(&mut r.applied),
                None => &mut r.applied,
            };
            if !(keys && *applied > 0) {
                *applied += 1;
                if *applied >= 2 {
                    let first = *applied == 2;
                    self.obs.duplicate_applied(first);
                }
            }
        }
        if self.services.list[sv].limited {
            self.limit_answered(node, sv, now, s);
        }
        if self.services.list[sv].effect.blackhole {
            self.obs.node_done(&self.arena, node, Fate::Lost, now);
            self.arena.free_node(node); // the answer is lost
        } else {
            self.finish_call(node, outcome, s);
        }
    }

    /// A limited service `sv` answered the attempt at `node` at `now`: its limit's
    /// sample, dropped when nobody waits for the answer. Out of line, so an unlimited
    /// tier's answers pay one test.
    #[cold]
    #[inline(never)]
    fn limit_answered(&mut self, node: u32, sv: usize, now: Nanos, s: &mut Scheduler<Packed>) {
        let dropped = !self.arena.useful(node, now);
        self.limit_sample(node, sv, now, dropped, s);
    }

    /// An OCC attempt reads the record's version; its conditional write arrives after
    /// the read's answer travels back and the write travels out (two more legs).
    fn occ_read(&mut self, node: u32, fi: usize, version: u64, s: &mut Scheduler<Packed>) {
        let depth = self.arena.nodes[node as usize].depth as usize;
        let legs = match depth.checked_sub(1) {
            Some(d) => {
                let layer = &mut self.calls.stacks[fi].layers[d];
                match layer.hop() {
                    Some(back) => back.saturating_add(layer.hop().unwrap_or(0)),
                    None => 0,
                }
            }
            None => 0,
        };
        self.obs.occ_read(&self.arena, node, s.now());
        let nm = &mut self.arena.nodes[node as usize];
        nm.state = NodeState::InService;
        nm.memo = Memo::Read(Halves::new(version));
        s.after(legs, Event::OccWrite { node, gen: nm.gen });
    }

    /// [`Event::OccWrite`]: the conditional write succeeds only if nobody wrote since
    /// this attempt's read.
    pub(super) fn occ_write(&mut self, node: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let memo = self.arena.nodes[node as usize].memo;
        let Memo::Read(read) = memo else {
            unreachable!("an OCC attempt's memo is its read, not {memo:?}")
        };
        let version = self.services.list[0]
            .version
            .as_mut()
            .expect("occ dependency");
        let won = *version == read.get();
        if won {
            *version += 1;
        }
        self.obs.occ_written(won, now);
        if won {
            self.finish_call(node, Outcome::of(Class::Success), s);
        } else {
            self.fail_call(node, Outcome::of(Class::Conflict), s);
        }
    }

    /// Starts queued attempts of service `sv` while servers are free.
    pub(super) fn dispatch(&mut self, sv: usize, s: &mut Scheduler<Packed>) {
        let svc = &self.services.list[sv];
        // One test for both: the usual case below capacity is that nothing waits.
        if (svc.queue.len() | svc.rejecting.len()) == 0 {
            return;
        }
        if !svc.rejecting.is_empty() && !self.dispatch_rejections(sv, s) {
            return;
        }
        if self.services.list[sv].policy.is_some() {
            self.dispatch_policed(sv, s);
            return;
        }
        let now = s.now();
        let at = self.services.at(sv);
        loop {
            let svc = &mut self.services.list[sv];
            if svc.busy >= svc.capacity() {
                break;
            }
            let next = match svc.cfg.discipline {
                Discipline::Fifo => svc.queue.pop_front(),
                Discipline::Lifo => svc.queue.pop_back(),
            };
            let Some((node, gen)) = next else { break };
            let n = self.arena.nodes[node as usize];
            if n.gen != gen || n.state != NodeState::Queued {
                continue; // cancelled while queued
            }
            svc.queued -= 1;
            let (queued, drop) = (svc.queued, svc.cfg.drop_expired);
            self.obs.dequeued(at, queued, now);
            if (drop && !self.arena.useful(node, now))
                || (self.calls.deadlines && now >= self.calls.times.deadline_at(node))
            {
                if self.services.list[sv].limited {
                    self.limit_sample(node, sv, now, true, s);
                }
                self.drop_expired(node, sv, now);
                continue;
            }
            let Memo::Queued(since) = n.memo else {
                unreachable!("a queued attempt's memo is its arrival, not {:?}", n.memo)
            };
            self.start_service(node, sv, now - since.get(), s);
        }
    }

    /// [`Self::dispatch`] for a service `sv` with a queue policy: adaptive LIFO picks
    /// the end of the queue, CoDel judges the wait of each attempt a server takes and
    /// drops it as the full queue rejects an arrival (the tier's `reject_status`,
    /// `retry_after` and `overloaded_status`), through [`Self::reject`], so the
    /// server that dequeued it spends the tier's `reject_cost` on the answer.
    #[cold]
    fn dispatch_policed(&mut self, sv: usize, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let at = self.services.at(sv);
        loop {
            let svc = &mut self.services.list[sv];
            if svc.busy >= svc.capacity() {
                break;
            }
            let Some(policy) = svc.policy.as_mut() else {
                unreachable!("dispatch_policed is for a service with a queue policy")
            };
            let lifo = match svc.cfg.discipline {
                Discipline::Fifo => policy.lifo(svc.queued as usize),
                Discipline::Lifo => true,
            };
            let next = if lifo {
                svc.queue.pop_back()
            } else {
                svc.queue.pop_front()
            };
            let Some((node, gen)) = next else { break };
            let n = self.arena.nodes[node as usize];
            if n.gen != gen || n.state != NodeState::Queued {
                continue; // cancelled while queued
            }
            svc.queued -= 1;
            let (queued, drop) = (svc.queued, svc.cfg.drop_expired);
            self.obs.dequeued(at, queued, now);
            if (drop && !self.arena.useful(node, now))
                || (self.calls.deadlines && now >= self.calls.times.deadline_at(node))
            {
                self.drop_expired(node, sv, now);
                continue;
            }
            let Memo::Queued(since) = n.memo else {
                unreachable!("a queued attempt's memo is its arrival, not {:?}", n.memo)
            };
            let svc = &mut self.services.list[sv];
            let dropped = svc
                .policy
                .as_mut()
                .is_some_and(|p| p.drops(now, since.get()));
            if dropped {
                let class = if svc.overloaded_status {
                    Class::Overloaded
                } else {
                    Class::Rejected
                };
                let outcome = Outcome::configured(class, svc.cfg.retry_after.is_some());
                if let Some(c) = self.obs.rec.codel.as_mut() {
                    c.drop_at(now, sv);
                }
                self.reject(node, sv, outcome, s);
                continue;
            }
            self.start_service(node, sv, now - since.get(), s);
        }
    }

    /// Starts waiting rejections of service `sv` while servers are free; whether a
    /// server is left for the queue.
    #[cold]
    fn dispatch_rejections(&mut self, sv: usize, s: &mut Scheduler<Packed>) -> bool {
        loop {
            let svc = &mut self.services.list[sv];
            if svc.busy >= svc.capacity() {
                return false;
            }
            let Some((node, gen)) = svc.rejecting.pop_front() else {
                return true;
            };
            if self.arena.nodes[node as usize].gen == gen {
                self.start_rejection(node, sv, s);
            }
        }
    }

    /// [`Event::OutageStart`] / [`Event::OutageEnd`]: window `window` starts (`true`)
    /// or ends; each service it hits takes the combined effect of its active windows.
    pub(super) fn on_outage(&mut self, window: u32, starts: bool, s: &mut Scheduler<Packed>) {
        let target = self.services.windows[window as usize].target;
        for sv in 0..self.services.list.len() {
            if target.is_some_and(|t| t as usize != sv) {
                continue;
            }
            let windows: &[Window] = &self.services.windows;
            let svc = &mut self.services.list[sv];
            if starts {
                svc.active.push(window);
            } else {
                svc.active.retain(|&w| w != window);
            }
            svc.effect = Effect::combine(svc.active.iter().map(|&i| &windows[i as usize].mode));
            self.dispatch(sv, s);
        }
    }
}

/// An attempt reaches a free server of a service with queue policy `p` at `now`: it
/// passes through the queue without waiting, as every request does in folly's
/// executor, so CoDel sees its wait of 0 (never dropped).
#[cold]
fn served_at_once(p: &mut crate::model::queue_policy::QueuePolicy, now: Nanos) {
    let dropped = p.drops(now, now);
    debug_assert!(!dropped, "a wait of 0 is never dropped");
}

/// An attempt joins the queue of a service with queue policy `p` at `now`, `queued`
/// live attempts waiting before it: the policy learns when the queue formed.
#[cold]
fn queue_joined(p: &mut crate::model::queue_policy::QueuePolicy, queued: u64, now: Nanos) {
    if queued == 0 {
        p.on_queue_formed(now);
    }
}
