//! Recording request traces (see [`crate::metrics::trace`]): the hooks the retry state
//! machine, the services and the fleets call as a traced request's calls and attempts
//! move on.
//!
//! A run traces the logical requests whose ordinals (in the order they start) were
//! drawn beforehand ([`World::with_trace`]). Every hook first asks whether the run
//! traces at all, one test of a field that is `None` in every other run, then whether
//! the node's request is traced, so tracing changes nothing else: no random draw, no
//! event, no count.
//!
//! A node's span is found through a side table indexed by node slot, valid while the
//! node lives; a layer call finds the span of its current attempt (or of each copy of
//! a hedging call) in the call's own scratch, so a child's outcome can be recorded
//! after the child's slot was freed and reused.

use crate::engine::Nanos;
use crate::metrics::ordinal::End;
use crate::metrics::trace::{
    self, Budget, Fate, Span, SpanKind, StackNames, TraceLog, TraceWindow, TracedRequest, NO_SPAN,
};

use super::outcome::Class;
use super::request::NONE;
use super::world::World;

/// Most spans a run keeps (some 200 bytes each with their scratch, 200 MB in all): the
/// spans past it are not recorded and the log says it was truncated.
pub(super) const MAX_SPANS: usize = 1_000_000;

/// What a span's call keeps for its next attempt's span.
#[derive(Debug, Clone, Default)]
struct Scratch {
    /// The span of its current attempt ([`NO_SPAN`]: none yet).
    current: u32,
    /// The spans of a hedging call's copies, by copy index.
    copies: Vec<u32>,
    /// When its last attempt ended (or it arrived): where the next one's wait starts.
    since: Nanos,
    /// Why the next attempt waits ([`trace::wait`] bits).
    reason: u8,
    /// What the budget decided about the next attempt.
    budget: Option<Budget>,
    /// What the inside breaker decided about it ([`trace::breaker`] bits).
    breaker: u8,
}

/// The tracing state of a run.
#[derive(Debug)]
pub(super) struct Tracer {
    /// The ordinals to trace, sorted, and the next one due.
    picks: Vec<u64>,
    next: usize,
    /// Logical requests started so far.
    started: u64,
    /// The span of each node slot (valid for the live nodes of traced requests).
    span_of: Vec<u32>,
    /// The traced request of each request slot (valid while its request is traced).
    req_of: Vec<u32>,
    /// Per span, what its call keeps.
    scratch: Vec<Scratch>,
    log: TraceLog,
}

/// Sets `v[i] = x`, growing `v` as needed.
fn put(v: &mut Vec<u32>, i: u32, x: u32) {
    let i = i as usize;
    if i >= v.len() {
        v.resize(i + 1, NO_SPAN);
    }
    v[i] = x;
}

impl World {
    /// Traces the logical requests of this run whose ordinals are `picks` (sorted;
    /// see [`trace::sample`]), into a log that records `sample_seed` and the run's
    /// `seed`.
    pub fn with_trace(&mut self, picks: Vec<u64>, seed: u64, sample_seed: u64) {
        let svc_name = |i: u16| self.services[i as usize].name.clone();
        let mut callers: Vec<String> = self.fleets.iter().map(|f| f.cfg.name.clone()).collect();
        callers.resize(self.stacks.len(), String::new());
        for (sv, calls) in self.call_stacks.iter().enumerate() {
            for &st in calls.iter().flatten() {
                callers[st as usize] = self.services[sv].name.clone();
            }
        }
        let stacks = self
            .stacks
            .iter()
            .zip(callers)
            .map(|(st, caller)| StackNames {
                caller,
                service: svc_name(st.target),
                layers: st.layers.iter().map(|l| l.cfg.name.clone()).collect(),
            })
            .collect();
        let windows = self
            .windows
            .iter()
            .map(|w| TraceWindow {
                start: w.start,
                end: w.end,
                service: w.target.map(svc_name),
            })
            .collect();
        let log = TraceLog {
            seed,
            sample_seed,
            population: 0,
            fleets: self.fleets.iter().map(|f| f.cfg.name.clone()).collect(),
            services: self.services.iter().map(|s| s.name.clone()).collect(),
            stacks,
            windows,
            requests: Vec::new(),
            spans: Vec::new(),
            end: 0,
            truncated: false,
        };
        self.trace = Some(Box::new(Tracer {
            picks,
            next: 0,
            started: 0,
            span_of: Vec::new(),
            req_of: Vec::new(),
            scratch: Vec::new(),
            log,
        }));
    }

    /// The trace log of this run, once it is over (`end` is when it ended).
    pub(super) fn take_trace(&mut self, end: Nanos) -> Option<TraceLog> {
        let tr = self.trace.take()?;
        let mut log = tr.log;
        log.population = tr.started;
        log.end = end;
        Some(log)
    }

    /// The span of `node`, if its request is traced.
    #[inline]
    fn span(&self, node: u32) -> Option<u32> {
        let tr = self.trace.as_deref()?;
        let n = &self.arena.nodes[node as usize];
        if !self.arena.reqs[n.req as usize].traced {
            return None;
        }
        tr.span_of
            .get(node as usize)
            .copied()
            .filter(|&s| s != NO_SPAN)
    }

    /// A logical request started at `now` in slot `req`: traced if its ordinal was
    /// drawn.
    #[inline(always)]
    pub(super) fn trace_request(&mut self, req: u32, now: Nanos) {
        if self.trace.is_some() {
            self.trace_request_on(req, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_request_on(&mut self, req: u32, now: Nanos) {
        let Some(tr) = self.trace.as_deref_mut() else {
            return;
        };
        let k = tr.started;
        tr.started += 1;
        if tr.picks.get(tr.next) != Some(&k) {
            return;
        }
        tr.next += 1;
        let r = &mut self.arena.reqs[req as usize];
        r.traced = true;
        put(&mut tr.req_of, req, tr.log.requests.len() as u32);
        tr.log.requests.push(TracedRequest {
            ordinal: k,
            fleet: r.fleet,
            client: r.client,
            arrival: now,
            end: None,
            outcome: None,
            root: NO_SPAN,
        });
    }

    /// Node `node` was made at `now`: a call (a request's root or a service's
    /// downstream call), or attempt `attempt` of the call at its parent.
    #[inline(always)]
    pub(super) fn trace_node(&mut self, node: u32, kind: SpanKind, attempt: u32, now: Nanos) {
        if self.trace.is_some() {
            self.trace_node_on(node, kind, attempt, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_node_on(&mut self, node: u32, kind: SpanKind, attempt: u32, now: Nanos) {
        let Some(tr) = self.trace.as_deref_mut() else {
            return;
        };
        let n = self.arena.nodes[node as usize];
        if !self.arena.reqs[n.req as usize].traced {
            return;
        }
        let request = tr.req_of[n.req as usize];
        let id = tr.log.spans.len() as u32;
        let parent = if n.parent == NONE {
            NO_SPAN
        } else {
            tr.span_of[n.parent as usize]
        };
        let full = tr.log.spans.len() >= MAX_SPANS;
        if full || (n.parent != NONE && parent == NO_SPAN) {
            // Past the cap (or below a span not kept): untraced from here down.
            tr.log.truncated |= full;
            put(&mut tr.span_of, node, NO_SPAN);
            return;
        }
        if n.parent == NONE {
            tr.log.requests[request as usize].root = id;
        }
        let mut span = Span::new(request, parent, kind, (n.stack, n.depth), attempt, now);
        if kind != SpanKind::Call && parent != NO_SPAN {
            let sc = &mut tr.scratch[parent as usize];
            span.wait = now.saturating_sub(sc.since);
            span.wait_reason = std::mem::take(&mut sc.reason);
            span.budget = sc.budget.take();
            span.breaker = std::mem::take(&mut sc.breaker);
            sc.current = id;
        }
        tr.log.spans.push(span);
        tr.scratch.push(Scratch {
            current: NO_SPAN,
            since: now,
            ..Scratch::default()
        });
        put(&mut tr.span_of, node, id);
    }

    /// The hedging call at `node` just made its next copy: its answers name it by
    /// copy index.
    #[inline(always)]
    pub(super) fn trace_hedge_copy(&mut self, node: u32) {
        if self.trace.is_some() {
            self.trace_hedge_copy_on(node);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_hedge_copy_on(&mut self, node: u32) {
        if let Some(sp) = self.span(node) {
            let tr = self.trace.as_deref_mut().expect("tracing");
            let sc = &mut tr.scratch[sp as usize];
            sc.copies.push(sc.current);
        }
    }

    /// Attempt `attempt` of the call at `node` was refused at `now` before it left
    /// (`class`), with the budget's and breakers' decisions.
    #[inline(always)]
    pub(super) fn trace_refused(
        &mut self,
        node: u32,
        attempt: u32,
        class: Class,
        budget: Option<Budget>,
        breaker: u8,
        now: Nanos,
    ) {
        if self.trace.is_some() {
            self.trace_refused_on(node, attempt, class, budget, breaker, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_refused_on(
        &mut self,
        node: u32,
        attempt: u32,
        class: Class,
        budget: Option<Budget>,
        breaker: u8,
        now: Nanos,
    ) {
        let Some(parent) = self.span(node) else {
            return;
        };
        let n = self.arena.nodes[node as usize];
        let tr = self.trace.as_deref_mut().expect("tracing");
        if tr.log.spans.len() >= MAX_SPANS {
            tr.log.truncated = true;
            return;
        }
        let sc = &mut tr.scratch[parent as usize];
        let request = tr.log.spans[parent as usize].request;
        let span = Span {
            end: Some(now),
            outcome: Some(End::Class(class)),
            wait: now.saturating_sub(sc.since),
            wait_reason: std::mem::take(&mut sc.reason),
            budget: budget.or(sc.budget.take()),
            breaker: breaker | std::mem::take(&mut sc.breaker),
            ..Span::new(
                request,
                parent,
                SpanKind::Attempt,
                (n.stack, n.depth + 1),
                attempt,
                now,
            )
        };
        sc.since = now;
        tr.log.spans.push(span);
        tr.scratch.push(Scratch::default());
    }

    /// The call at `node` will wait before its next attempt, for `reason`
    /// ([`trace::wait`] bits).
    #[inline(always)]
    pub(super) fn trace_wait(&mut self, node: u32, reason: u8) {
        if self.trace.is_some() {
            self.trace_wait_on(node, reason);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_wait_on(&mut self, node: u32, reason: u8) {
        if let Some(sp) = self.span(node) {
            let tr = self.trace.as_deref_mut().expect("tracing");
            tr.scratch[sp as usize].reason |= reason;
        }
    }

    /// The budget decided `b` about the next attempt of the call at `node`.
    #[inline(always)]
    pub(super) fn trace_budget(&mut self, node: u32, b: Budget) {
        if self.trace.is_some() {
            self.trace_budget_on(node, b);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_budget_on(&mut self, node: u32, b: Budget) {
        if let Some(sp) = self.span(node) {
            let tr = self.trace.as_deref_mut().expect("tracing");
            tr.scratch[sp as usize].budget = Some(b);
        }
    }

    /// A breaker decided about `node`: its outside breaker about the call itself, or
    /// its inside breaker about its next attempt ([`trace::breaker`] bits).
    #[inline(always)]
    pub(super) fn trace_breaker(&mut self, node: u32, bits: u8) {
        if self.trace.is_some() {
            self.trace_breaker_on(node, bits);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_breaker_on(&mut self, node: u32, bits: u8) {
        if let Some(sp) = self.span(node) {
            let tr = self.trace.as_deref_mut().expect("tracing");
            if bits & (trace::breaker::INSIDE_ADMITTED | trace::breaker::INSIDE_REJECTED) != 0 {
                tr.scratch[sp as usize].breaker |= bits;
            } else {
                tr.log.spans[sp as usize].breaker |= bits;
            }
        }
    }

    /// `node` reached its layer or service at `now`.
    #[inline(always)]
    pub(super) fn trace_arrive(&mut self, node: u32, now: Nanos) {
        if self.trace.is_some() {
            self.trace_arrive_on(node, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_arrive_on(&mut self, node: u32, now: Nanos) {
        if let Some(sp) = self.span(node) {
            let tr = self.trace.as_deref_mut().expect("tracing");
            tr.log.spans[sp as usize].arrive = Some(now);
            tr.scratch[sp as usize].since = now;
        }
    }

    /// A service started serving `node` at `now`.
    #[inline(always)]
    pub(super) fn trace_start(&mut self, node: u32, now: Nanos) {
        if self.trace.is_some() {
            self.trace_start_on(node, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_start_on(&mut self, node: u32, now: Nanos) {
        if let Some(sp) = self.span(node) {
            let tr = self.trace.as_deref_mut().expect("tracing");
            tr.log.spans[sp as usize].start = Some(now);
        }
    }

    /// The callee finished with `node` at `now` (`fate`); called before its slot is
    /// freed.
    #[inline(always)]
    pub(super) fn trace_done(&mut self, node: u32, fate: Fate, now: Nanos) {
        if self.trace.is_some() {
            self.trace_done_on(node, fate, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_done_on(&mut self, node: u32, fate: Fate, now: Nanos) {
        if let Some(sp) = self.span(node) {
            let tr = self.trace.as_deref_mut().expect("tracing");
            let s = &mut tr.log.spans[sp as usize];
            if s.done.is_none() {
                s.done = Some(now);
                s.fate = Some(fate);
            }
        }
    }

    /// The maker of span `sp` learned at `now` that it ended with `end` (the first
    /// word is the one kept).
    fn settle(tr: &mut Tracer, sp: u32, end: End, now: Nanos) {
        if sp == NO_SPAN {
            return;
        }
        let s = &mut tr.log.spans[sp as usize];
        if s.outcome.is_some() {
            return;
        }
        s.end = Some(now);
        s.outcome = Some(end);
        if s.parent != NO_SPAN {
            tr.scratch[s.parent as usize].since = now;
        }
    }

    /// The call at `node` learned at `now` how its current attempt (or, hedging, its
    /// copy `copy`) ended.
    #[inline(always)]
    pub(super) fn trace_attempt_end(&mut self, node: u32, copy: Option<u8>, end: End, now: Nanos) {
        if self.trace.is_some() {
            self.trace_attempt_end_on(node, copy, end, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_attempt_end_on(&mut self, node: u32, copy: Option<u8>, end: End, now: Nanos) {
        if let Some(sp) = self.span(node) {
            let tr = self.trace.as_deref_mut().expect("tracing");
            let sc = &tr.scratch[sp as usize];
            let child = match copy {
                Some(c) => sc.copies.get(usize::from(c)).copied().unwrap_or(NO_SPAN),
                None => sc.current,
            };
            Self::settle(tr, child, end, now);
        }
    }

    /// `node` itself ended at `now` as its maker sees it: cancelled, or (a service's
    /// downstream call) answered to the visit that waits for it.
    #[inline(always)]
    pub(super) fn trace_settle(&mut self, node: u32, end: End, now: Nanos) {
        if self.trace.is_some() {
            self.trace_settle_on(node, end, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_settle_on(&mut self, node: u32, end: End, now: Nanos) {
        if let Some(sp) = self.span(node) {
            let tr = self.trace.as_deref_mut().expect("tracing");
            Self::settle(tr, sp, end, now);
        }
    }

    /// The traced request in slot `req` completed at `now` with `class`.
    #[inline(always)]
    pub(super) fn trace_request_done(&mut self, req: u32, class: Class, now: Nanos) {
        if self.trace.is_some() {
            self.trace_request_done_on(req, class, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn trace_request_done_on(&mut self, req: u32, class: Class, now: Nanos) {
        let Some(tr) = self.trace.as_deref_mut() else {
            return;
        };
        if !self.arena.reqs[req as usize].traced {
            return;
        }
        let i = tr.req_of[req as usize] as usize;
        let r = &mut tr.log.requests[i];
        r.end = Some(now);
        r.outcome = Some(class);
        let root = r.root;
        Self::settle(tr, root, End::Class(class), now);
    }
}
