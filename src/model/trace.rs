//! Recording request traces (see [`crate::metrics::trace`]): the [`Tracer`], an observer
//! of the call lifecycle ([`CallObserver`]) that turns a traced request's calls and
//! attempts into spans as they move on.
//!
//! A run traces the logical requests whose ordinals (in the order they start) were
//! drawn beforehand ([`super::World::with_trace`]). Only a world that traces has a
//! tracer (see [`super::observe::NoTrace`]); the tracer asks whether the node's request
//! is traced, so tracing changes nothing else: no random draw, no event, no count.
//!
//! A node's span is found through a side table indexed by node slot, valid while the
//! node lives; a layer call finds the span of its current attempt (or of each copy of
//! a hedging call) in the call's own scratch, so a child's outcome can be recorded
//! after the child's slot was freed and reused.

use crate::engine::Nanos;
use crate::metrics::ordinal::End;
use crate::metrics::trace::{self, Budget, Fate, Span, SpanKind, TraceLog, TracedRequest, NO_SPAN};

use super::observe::{CallAt, CallObserver, Refusal, SvcAt};
use super::outcome::Class;
use super::request::{Arena, NodeState, NONE};

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
pub(crate) struct Tracer {
    /// The ordinals to trace, sorted, and the next one due.
    picks: Vec<u64>,
    next: usize,
    /// Logical requests started so far.
    started: u64,
    /// The span of each node slot (valid for the live nodes of traced requests).
    span_of: Vec<u32>,
    /// The traced request of each request slot, [`UNTRACED`] for one not traced (valid
    /// for the live requests: each start sets it).
    req_of: Vec<u32>,
    /// Per span, what its call keeps.
    scratch: Vec<Scratch>,
    log: TraceLog,
}

/// The slot's request is not traced.
const UNTRACED: u32 = u32::MAX;

/// Sets `v[i] = x`, growing `v` as needed.
fn put(v: &mut Vec<u32>, i: u32, x: u32) {
    let i = i as usize;
    if i >= v.len() {
        v.resize(i + 1, NO_SPAN);
    }
    v[i] = x;
}

impl Tracer {
    /// A tracer of the logical requests whose ordinals are `picks` (sorted; see
    /// [`trace::sample`]), into `log` (its run's names, no spans yet).
    pub(super) fn new(picks: Vec<u64>, log: TraceLog) -> Tracer {
        Tracer {
            picks,
            next: 0,
            started: 0,
            span_of: Vec::new(),
            req_of: Vec::new(),
            scratch: Vec::new(),
            log,
        }
    }

    /// Hands over the trace log, once the run is over (`end` is when it ended).
    pub(super) fn finish(&mut self, end: Nanos) -> TraceLog {
        let mut log = std::mem::take(&mut self.log);
        log.population = self.started;
        log.end = end;
        log
    }

    /// Whether the request in slot `req` is traced.
    #[inline]
    fn traced(&self, req: u32) -> bool {
        self.req_of
            .get(req as usize)
            .is_some_and(|&i| i != UNTRACED)
    }

    /// The span of `node`, if its request is traced.
    #[inline]
    fn span(&self, arena: &Arena, node: u32) -> Option<u32> {
        if !self.traced(arena.nodes[node as usize].req) {
            return None;
        }
        self.span_of
            .get(node as usize)
            .copied()
            .filter(|&s| s != NO_SPAN)
    }

    /// Node `node` was made at `now`: a call (a request's root or a service's
    /// downstream call), or attempt `attempt` of the call at its parent.
    fn node(&mut self, arena: &Arena, node: u32, kind: SpanKind, attempt: u32, now: Nanos) {
        let n = arena.nodes[node as usize];
        if !self.traced(n.req) {
            return;
        }
        let request = self.req_of[n.req as usize];
        let id = self.log.spans.len() as u32;
        let parent = if n.parent == NONE {
            NO_SPAN
        } else {
            self.span_of[n.parent as usize]
        };
        let full = self.log.spans.len() >= MAX_SPANS;
        if full || (n.parent != NONE && parent == NO_SPAN) {
            // Past the cap (or below a span not kept): untraced from here down.
            self.log.truncated |= full;
            put(&mut self.span_of, node, NO_SPAN);
            return;
        }
        if n.parent == NONE {
            self.log.requests[request as usize].root = id;
        }
        let mut span = Span::new(request, parent, kind, (n.stack, n.depth), attempt, now);
        if kind != SpanKind::Call && parent != NO_SPAN {
            let sc = &mut self.scratch[parent as usize];
            span.wait = now.saturating_sub(sc.since);
            span.wait_reason = std::mem::take(&mut sc.reason);
            span.budget = sc.budget.take();
            span.breaker = std::mem::take(&mut sc.breaker);
            sc.current = id;
        }
        self.log.spans.push(span);
        self.scratch.push(Scratch {
            current: NO_SPAN,
            since: now,
            ..Scratch::default()
        });
        put(&mut self.span_of, node, id);
    }

    /// Attempt `attempt` of the call at `node` was refused at `now` before it left
    /// (`why`), with the budget's and breakers' decisions.
    fn refused(&mut self, arena: &Arena, node: u32, attempt: u32, why: Refusal, now: Nanos) {
        let Some(parent) = self.span(arena, node) else {
            return;
        };
        let (budget, breaker) = match why {
            Refusal::Limiter => (Some(Budget::LimiterRefused), 0),
            Refusal::Budget => (Some(Budget::Refused), 0),
            Refusal::Breaker => (None, trace::breaker::INSIDE_REJECTED),
            Refusal::Guard(_) | Refusal::Deadline | Refusal::ClientLimit(_) => (None, 0),
        };
        let n = arena.nodes[node as usize];
        if self.log.spans.len() >= MAX_SPANS {
            self.log.truncated = true;
            return;
        }
        let sc = &mut self.scratch[parent as usize];
        let request = self.log.spans[parent as usize].request;
        let span = Span {
            end: Some(now),
            outcome: Some(End::Class(why.class())),
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
        self.log.spans.push(span);
        self.scratch.push(Scratch::default());
    }

    /// The call at `node` will wait before its next attempt, for `reason`
    /// ([`trace::wait`] bits).
    fn wait(&mut self, arena: &Arena, node: u32, reason: u8) {
        if let Some(sp) = self.span(arena, node) {
            self.scratch[sp as usize].reason |= reason;
        }
    }

    /// The budget granted the next attempt of the call at `node`.
    fn granted(&mut self, arena: &Arena, node: u32) {
        if let Some(sp) = self.span(arena, node) {
            self.scratch[sp as usize].budget = Some(Budget::Granted);
        }
    }

    /// A breaker decided about `node`: its outside breaker about the call itself, or
    /// its inside breaker about its next attempt ([`trace::breaker`] bits).
    fn breaker(&mut self, arena: &Arena, node: u32, bits: u8) {
        if let Some(sp) = self.span(arena, node) {
            if bits & (trace::breaker::INSIDE_ADMITTED | trace::breaker::INSIDE_REJECTED) != 0 {
                self.scratch[sp as usize].breaker |= bits;
            } else {
                self.log.spans[sp as usize].breaker |= bits;
            }
        }
    }

    /// `node` reached its layer or service at `now`.
    fn arrive(&mut self, arena: &Arena, node: u32, now: Nanos) {
        if let Some(sp) = self.span(arena, node) {
            self.log.spans[sp as usize].arrive = Some(now);
            self.scratch[sp as usize].since = now;
        }
    }

    /// A service started serving `node` at `now`.
    fn start(&mut self, arena: &Arena, node: u32, now: Nanos) {
        if let Some(sp) = self.span(arena, node) {
            self.log.spans[sp as usize].start = Some(now);
        }
    }

    /// The callee finished with `node` at `now` (`fate`); called before its slot is
    /// freed.
    fn done(&mut self, arena: &Arena, node: u32, fate: Fate, now: Nanos) {
        if let Some(sp) = self.span(arena, node) {
            let s = &mut self.log.spans[sp as usize];
            if s.done.is_none() {
                s.done = Some(now);
                s.fate = Some(fate);
            }
        }
    }

    /// The maker of span `sp` learned at `now` that it ended with `end` (the first
    /// word is the one kept).
    fn settle(&mut self, sp: u32, end: End, now: Nanos) {
        if sp == NO_SPAN {
            return;
        }
        let s = &mut self.log.spans[sp as usize];
        if s.outcome.is_some() {
            return;
        }
        s.end = Some(now);
        s.outcome = Some(end);
        if s.parent != NO_SPAN {
            self.scratch[s.parent as usize].since = now;
        }
    }

    /// The call at `node` learned at `now` how its current attempt (or, hedging, its
    /// copy `copy`) ended.
    fn attempt_end(&mut self, arena: &Arena, node: u32, copy: Option<u8>, end: End, now: Nanos) {
        if let Some(sp) = self.span(arena, node) {
            let sc = &self.scratch[sp as usize];
            let child = match copy {
                Some(c) => sc.copies.get(usize::from(c)).copied().unwrap_or(NO_SPAN),
                None => sc.current,
            };
            self.settle(child, end, now);
        }
    }

    /// `node` itself ended at `now` as its maker sees it: cancelled, or (a service's
    /// downstream call) answered to the visit that waits for it.
    fn settle_node(&mut self, arena: &Arena, node: u32, end: End, now: Nanos) {
        if let Some(sp) = self.span(arena, node) {
            self.settle(sp, end, now);
        }
    }
}

/// The transitions a trace records, each out of line: a run that traces is rare, and
/// its world's code stays small.
impl CallObserver for Tracer {
    #[inline(never)]
    fn request_started(&mut self, req: u32, fleet: usize, client: u32, now: Nanos) {
        let k = self.started;
        self.started += 1;
        if self.picks.get(self.next) != Some(&k) {
            put(&mut self.req_of, req, UNTRACED);
            return;
        }
        self.next += 1;
        put(&mut self.req_of, req, self.log.requests.len() as u32);
        self.log.requests.push(TracedRequest {
            ordinal: k,
            fleet: fleet as u16,
            client,
            arrival: now,
            end: None,
            outcome: None,
            root: NO_SPAN,
        });
    }

    #[inline(never)]
    fn request_finished(&mut self, req: u32, _: usize, class: Class, _: Nanos, now: Nanos) {
        if !self.traced(req) {
            return;
        }
        let i = self.req_of[req as usize] as usize;
        let r = &mut self.log.requests[i];
        r.end = Some(now);
        r.outcome = Some(class);
        let root = r.root;
        self.settle(root, End::Class(class), now);
    }

    #[inline(never)]
    fn call_made(&mut self, arena: &Arena, node: u32, now: Nanos) {
        self.node(arena, node, SpanKind::Call, 1, now);
    }

    #[inline(never)]
    fn call_arrived(&mut self, arena: &Arena, node: u32, now: Nanos) {
        self.arrive(arena, node, now);
    }

    #[inline(never)]
    fn breaker_admitted(&mut self, arena: &Arena, call: CallAt, inside: bool) {
        let bits = if inside {
            trace::breaker::INSIDE_ADMITTED
        } else {
            trace::breaker::OUTSIDE_ADMITTED
        };
        self.breaker(arena, call.node, bits);
    }

    #[inline(never)]
    fn breaker_refused_call(&mut self, arena: &Arena, call: CallAt) {
        self.breaker(arena, call.node, trace::breaker::OUTSIDE_REJECTED);
    }

    #[inline(never)]
    fn attempt_waits(&mut self, arena: &Arena, node: u32, reason: u8) {
        self.wait(arena, node, reason);
    }

    #[inline(never)]
    fn attempt_refused(
        &mut self,
        arena: &Arena,
        call: CallAt,
        ordinal: u32,
        why: Refusal,
        now: Nanos,
    ) {
        self.refused(arena, call.node, ordinal, why, now);
    }

    #[inline(never)]
    fn attempt_sent(&mut self, arena: &Arena, _: CallAt, child: u32, ordinal: u32, now: Nanos) {
        self.node(arena, child, SpanKind::Attempt, ordinal, now);
    }

    #[inline(never)]
    fn copy_sent(
        &mut self,
        arena: &Arena,
        call: CallAt,
        child: u32,
        ordinal: u32,
        granted: bool,
        now: Nanos,
    ) {
        if granted {
            self.granted(arena, call.node);
        }
        let kind = if ordinal == 1 {
            SpanKind::Attempt
        } else {
            SpanKind::Hedge
        };
        self.node(arena, child, kind, ordinal, now);
        // Its answers name it by copy index.
        if let Some(sp) = self.span(arena, call.node) {
            let sc = &mut self.scratch[sp as usize];
            sc.copies.push(sc.current);
        }
    }

    #[inline(never)]
    fn attempt_answered(&mut self, arena: &Arena, call: CallAt, _: u32, class: Class, now: Nanos) {
        self.attempt_end(arena, call.node, None, End::Class(class), now);
    }

    #[inline(never)]
    fn copy_answered(&mut self, arena: &Arena, call: CallAt, copy: u8, class: Class, now: Nanos) {
        self.attempt_end(arena, call.node, Some(copy), End::Class(class), now);
    }

    #[inline(never)]
    fn attempt_timed_out(
        &mut self,
        arena: &Arena,
        call: CallAt,
        _: u32,
        past_deadline: bool,
        now: Nanos,
    ) {
        let seen = if past_deadline {
            Class::DeadlineExceeded
        } else {
            Class::Timeout
        };
        self.attempt_end(arena, call.node, None, End::Class(seen), now);
    }

    #[inline(never)]
    fn retry_scheduled(&mut self, arena: &Arena, node: u32, reason: u8, granted: bool) {
        if granted {
            self.granted(arena, node);
        }
        self.wait(arena, node, reason);
    }

    #[inline(never)]
    fn retry_refused(
        &mut self,
        arena: &Arena,
        call: CallAt,
        ordinal: u32,
        why: Refusal,
        now: Nanos,
    ) {
        self.refused(arena, call.node, ordinal, why, now);
    }

    #[inline(never)]
    fn call_finished(&mut self, arena: &Arena, call: CallAt, class: Class, _: bool, now: Nanos) {
        let node = call.node;
        self.done(arena, node, Fate::Answered(class), now);
        let n = arena.nodes[node as usize];
        if call.depth == 0 && n.parent != NONE {
            // A service's downstream call: the visit learns its outcome now.
            let p = arena.nodes[n.parent as usize];
            if p.gen == n.parent_gen && p.state == NodeState::Calling {
                self.settle_node(arena, node, End::Class(class), now);
            }
        }
    }

    #[inline(never)]
    fn node_cancelled(&mut self, arena: &Arena, node: u32, now: Nanos) {
        self.settle_node(arena, node, End::Cancelled, now);
    }

    #[inline(never)]
    fn node_done(&mut self, arena: &Arena, node: u32, fate: Fate, now: Nanos) {
        self.done(arena, node, fate, now);
    }

    #[inline(never)]
    fn service_reached(&mut self, arena: &Arena, node: u32, _: SvcAt, _: usize, now: Nanos) {
        self.arrive(arena, node, now);
    }

    #[inline(never)]
    fn shed(&mut self, arena: &Arena, node: u32, _: SvcAt, now: Nanos) {
        self.done(arena, node, Fate::Shed, now);
    }

    #[inline(never)]
    fn queue_left(&mut self, arena: &Arena, node: u32, _: SvcAt, _: u64, now: Nanos) {
        self.done(arena, node, Fate::Cancelled, now);
    }

    #[inline(never)]
    fn service_started(
        &mut self,
        arena: &Arena,
        node: u32,
        _: SvcAt,
        _: Nanos,
        _: u32,
        now: Nanos,
    ) {
        self.start(arena, node, now);
    }

    #[inline(never)]
    fn occ_read(&mut self, arena: &Arena, node: u32, now: Nanos) {
        self.start(arena, node, now);
    }
}
