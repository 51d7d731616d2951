//! One retry layer of one fleet at run time: its configuration, its random streams,
//! and per instance (client process) its retry budget, circuit breaker and
//! client-side limiter. The breakers' open count and their half-open timers
//! ([`Event::BreakerTimer`]) are kept here too.

use rand_chacha::ChaCha8Rng;

use crate::engine::{stream, Nanos, Scheduler};
use crate::model::breaker::{Placement, Trip};
use crate::model::config::LayerConfig;

use super::breaker::Breaker;
use super::budget::Budget;
use super::call::Calls;
use super::concurrency::client::ClientLimits;
use super::event::{Event, Packed};
use super::limiter::{Gate, Limiter};
use super::observe::CallObserver;
use super::outcome::Class;
use super::world::World;

/// Runtime of one retry layer of one fleet.
pub(super) struct Layer {
    pub(super) cfg: LayerConfig,
    /// Backoff jitter.
    pub(super) jitter: ChaCha8Rng,
    /// Hop latencies, both ways.
    pub(super) network: ChaCha8Rng,
    /// Per instance (empty without a budget).
    pub(super) budgets: Vec<Budget>,
    /// Per instance (empty without a breaker).
    pub(super) breakers: Vec<Breaker>,
    /// Client-side limiters, per instance, and their random stream.
    pub(super) limiters: Vec<Limiter>,
    pub(super) limiter_rng: Option<ChaCha8Rng>,
    /// Client-side concurrency limits, per instance.
    pub(super) climits: Option<ClientLimits>,
    /// Whether anything counts the attempts in flight or their answers (a budget, a
    /// limiter, a concurrency limit): otherwise an attempt's end skips them.
    pub(super) counts: bool,
    /// Global index (over all fleets): breaker timers and timeout lanes.
    pub(super) global: u16,
    /// The class byte its retries are lowered to (`retry_criticality`), or
    /// [`crate::model::criticality::NO_LOWERING`].
    pub(super) retry_crit: u8,
}

impl Layer {
    /// Layer `li` of fleet `fleet` from its configuration, with streams from `seed`.
    pub(super) fn new(l: &LayerConfig, fleet: &str, li: usize, seed: u64, global: u16) -> Layer {
        let n = l.instances as usize;
        Layer {
            cfg: l.clone(),
            jitter: stream(seed, &format!("jitter/{fleet}/{li}")),
            network: stream(seed, &format!("network/{fleet}/{li}")),
            budgets: l
                .budget
                .map_or(Vec::new(), |b| vec![Budget::for_instances(b, n as u64); n]),
            breakers: l.breaker.map_or(Vec::new(), |b| vec![Breaker::new(b); n]),
            limiters: l.limiter.map_or(Vec::new(), |c| vec![Limiter::new(c); n]),
            limiter_rng: l
                .limiter
                .map(|_| stream(seed, &format!("limiter/{fleet}/{li}"))),
            climits: l.concurrency_limit.map(|c| {
                ClientLimits::new(c, n, stream(seed, &format!("client_limit/{fleet}/{li}")))
            }),
            counts: l.budget.is_some() || l.limiter.is_some() || l.concurrency_limit.is_some(),
            global,
            retry_crit: l
                .retry_criticality
                .map_or(crate::model::criticality::NO_LOWERING, |c| c as u8),
        }
    }

    /// One hop's latency, drawn from the network stream (`None`: no hop latency).
    #[inline]
    pub(super) fn hop(&mut self) -> Option<Nanos> {
        let network = &mut self.network;
        self.cfg.hop_latency.as_ref().map(|d| d.sample(network))
    }

    /// When an attempt sent at `now` gives up: at its attempt timeout, or at its
    /// call's end `call_end` (the deadline or the call's `total_timeout`), the first.
    #[inline]
    pub(super) fn gives_up(&self, now: Nanos, call_end: Nanos) -> Nanos {
        self.cfg
            .attempt_timeout
            .map_or(call_end, |t| now.saturating_add(t).min(call_end))
    }

    /// Whether the layer has a breaker placed `p`.
    #[inline]
    pub(super) fn breaker_at(&self, p: Placement) -> bool {
        self.cfg.breaker.is_some_and(|b| b.placement == p)
    }

    /// Whether the breaker records a cancelled call (its caller gave up, or the
    /// request's deadline passed) as a success: Polly's does, since the default
    /// `ShouldHandle` does not handle `OperationCanceledException`
    /// (`OnUnhandledOutcomeAsync`: a success, which also closes a half-open circuit).
    pub(super) fn cancel_is_success(&self) -> bool {
        self.cfg
            .breaker
            .is_some_and(|b| matches!(b.trip, Trip::Polly { .. }))
    }

    /// The budget of instance `inst`, if the layer has budgets.
    #[inline]
    pub(super) fn budget(&mut self, inst: u32) -> Option<&mut Budget> {
        self.budgets.get_mut(inst as usize)
    }

    /// Asks instance `inst`'s limiter, if any, to send an attempt at `now`.
    #[inline]
    pub(super) fn limiter_gate(&mut self, inst: u32, now: Nanos) -> Gate {
        match (self.limiters.get_mut(inst as usize), &mut self.limiter_rng) {
            (Some(l), Some(rng)) => l.before_send(now, rng),
            _ => Gate::Pass,
        }
    }

    /// An attempt in flight ended (`answer`: its class, or `None` when cancelled): the
    /// budget's count of attempts in flight, the limiter's view of the answers
    /// (`throttled`: the dependency rejects with 429) and the concurrency limit's
    /// slot and sample (of `node`'s attempt).
    #[inline]
    pub(super) fn attempt_over(
        &mut self,
        inst: u32,
        node: u32,
        now: Nanos,
        answer: Option<Class>,
        throttled: bool,
    ) {
        if let Some(c) = self.climits.as_mut() {
            c.release(inst, node, now, answer);
        }
        if let Some(b) = self.budgets.get_mut(inst as usize) {
            b.on_done();
        }
        if let (Some(l), Some(c)) = (self.limiters.get_mut(inst as usize), answer) {
            let rejected = matches!(c, Class::Rejected | Class::RateLimited);
            l.on_answer(now, c == Class::Success, rejected, rejected && throttled);
        }
    }
}

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// The attempt of `node` at layer `depth` in flight ended: see
    /// [`Layer::attempt_over`].
    #[inline(always)]
    pub(super) fn attempt_over(
        &mut self,
        st: usize,
        depth: usize,
        node: u32,
        inst: u32,
        now: Nanos,
        answer: Option<Class>,
    ) {
        let stack = &mut self.calls.stacks[st];
        let layer = &mut stack.layers[depth];
        if !layer.counts {
            return; // nothing counts attempts in flight or answers
        }
        let cfg = &self.services.list[stack.target as usize].cfg;
        let throttled = answer.map_or(cfg.reject_status, |c| cfg.status_of(c)) == 429;
        layer.attempt_over(inst, node, now, answer, throttled);
    }

    /// Asks the client concurrency limit of layer `depth` (instance `inst`) to send
    /// the attempt of `node` at `now`: `None` if it may, else the status it refuses
    /// with.
    #[cold]
    #[inline(never)]
    pub(super) fn client_limit_refuses(
        &mut self,
        st: usize,
        depth: usize,
        inst: u32,
        node: u32,
        now: Nanos,
    ) -> Option<u16> {
        let layer = &mut self.calls.stacks[st].layers[depth];
        let climits = layer.climits.as_mut()?;
        if climits.acquire(inst, node, now) {
            return None;
        }
        Some(match layer.cfg.concurrency_limit.map(|c| c.status()) {
            Some(crate::model::concurrency::Rejected::Status(s)) => s,
            _ => 503,
        })
    }

    /// Records an admitted call's or attempt's result (`ok`) in its breaker, timed
    /// from when `node` was admitted.
    pub(super) fn breaker_record(
        &mut self,
        st: usize,
        depth: usize,
        inst: u32,
        ok: bool,
        node: u32,
        s: &mut Scheduler<Packed>,
    ) {
        let since = self.calls.times.started(node);
        self.calls
            .breaker_op(st, depth, inst, &mut self.obs, s, |b, now| {
                b.record_timed(now, ok, now.saturating_sub(since))
            });
    }

    /// [`Event::BreakerTimer`]: an open breaker's timer ran out.
    pub(super) fn on_breaker_timer(&mut self, layer: u16, inst: u32, s: &mut Scheduler<Packed>) {
        let (st, depth) = self.calls.layer_index[layer as usize];
        self.calls.breaker_op(
            st as usize,
            depth as usize,
            inst,
            &mut self.obs,
            s,
            |b, now| b.tick(now),
        );
    }
}

impl Calls {
    /// The budget level averaged over every budget instance (`None`: no budgets).
    pub(super) fn budget_level_at(&self, now: Nanos) -> Option<f64> {
        if self.budget_instances == 0 {
            return None;
        }
        let mut sum = 0.0;
        for st in &self.stacks[..self.n_top] {
            for l in &st.layers {
                for b in &l.budgets {
                    sum += b.level(now);
                }
            }
        }
        Some(sum / self.budget_instances as f64)
    }

    /// Whether the breaker of instance `inst` admits a call or an attempt now.
    pub(super) fn breaker_allow(
        &mut self,
        st: usize,
        depth: usize,
        inst: u32,
        obs: &mut impl CallObserver,
        s: &mut Scheduler<Packed>,
    ) -> bool {
        self.breaker_op(st, depth, inst, obs, s, |b, now| b.allow(now))
    }

    /// Runs `op` on a breaker, keeping the open count and the half-open timer right.
    pub(super) fn breaker_op<T>(
        &mut self,
        st: usize,
        depth: usize,
        inst: u32,
        obs: &mut impl CallObserver,
        s: &mut Scheduler<Packed>,
        op: impl FnOnce(&mut Breaker, Nanos) -> T,
    ) -> T {
        let now = s.now();
        let top = st < self.n_top;
        let layer = &mut self.stacks[st].layers[depth];
        let global = layer.global;
        let b = &mut layer.breakers[inst as usize];
        let was_open = matches!(b.state(), super::breaker::State::Open { .. });
        let trips_before = b.times_opened();
        let out = op(b, now);
        let is_open = matches!(b.state(), super::breaker::State::Open { .. });
        let tripped = b.times_opened() > trips_before;
        if tripped {
            if let super::breaker::State::Open { until } = b.state() {
                s.at(
                    until,
                    Event::BreakerTimer {
                        layer: global,
                        instance: inst,
                    },
                );
            }
            if top {
                obs.breaker_tripped();
            }
        }
        if top && was_open != is_open {
            if is_open {
                self.open_breakers += 1;
            } else {
                self.open_breakers -= 1;
            }
            obs.breakers_open(self.open_breakers, now);
        }
        out
    }
}
