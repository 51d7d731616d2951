//! The call lifecycle as its observers see it: one method per transition of a logical
//! request, a layer call, an attempt or a service's work ([`CallObserver`]). The
//! metrics' [`crate::metrics::Recorder`] and the request traces'
//! [`super::trace::Tracer`] both implement it; the model makes one call per transition,
//! to [`Observers`], which hands it to the recorder and then to the tracer. Dispatch is
//! static: the world is generic over its tracer, [`NoTrace`] (every transition an empty
//! body) in a run that traces nothing, so that run's code has no test of tracing left.
//!
//! Budgets see the same calls and attempts, but they are policy, not observers: what
//! they are told decides later retries, so they keep their own hooks in the model.

use crate::engine::Nanos;
use crate::metrics::trace::Fate;

use super::outcome::Class;
use super::request::Arena;

/// A layer call, or an attempt at a service, where a transition happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CallAt {
    /// Its node.
    pub node: u32,
    /// Its depth in its stack (the stack's length for an attempt at its service).
    pub depth: usize,
    /// Whether its stack is a fleet's, whose counts are the whole-run columns.
    pub top: bool,
}

/// A service where a transition happens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SvcAt {
    /// Its index.
    pub sv: usize,
    /// Whether it is the service fleet 0 calls, which the whole-run columns describe.
    pub primary: bool,
}

/// Why an attempt was refused before it left its layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The layer's client-side limiter.
    Limiter,
    /// The layer's inside breaker.
    Breaker,
    /// A bulkhead or a pool (its class: `bulkhead_full` or `pool_exhausted`).
    Guard(Class),
    /// The budget denied the retry or the hedge.
    Budget,
    /// The backoff would pass the deadline or the call's `total_timeout`.
    Deadline,
    /// The layer's client-side concurrency limit, answering with this status.
    ClientLimit(u16),
}

impl Refusal {
    /// The outcome class of the refused attempt.
    pub(crate) fn class(self) -> Class {
        match self {
            Refusal::Limiter | Refusal::Budget => Class::BudgetExhausted,
            Refusal::Breaker => Class::BreakerOpen,
            Refusal::Guard(c) => c,
            Refusal::Deadline => Class::DeadlineExceeded,
            Refusal::ClientLimit(_) => Class::RateLimited,
        }
    }

    /// The status the refused attempt is answered with, when the refusal gives one
    /// (else the callee's for its class).
    pub(crate) fn status(self) -> Option<u16> {
        match self {
            Refusal::ClientLimit(s) => Some(s),
            _ => None,
        }
    }
}

/// Defines [`CallObserver`], one method per transition with an empty default body, and
/// its forwarding by [`Observers`]: the list of transitions is written once.
macro_rules! transitions {
    ($(
        $(#[$doc:meta])*
        fn $name:ident(&mut self $(, $arg:ident: $ty:ty)* $(,)?);
    )*) => {
        /// What observes the call lifecycle: each method is one transition, called once
        /// where it happens, with what the observers need to know of it. An observer
        /// implements the transitions it records; the others do nothing.
        pub(crate) trait CallObserver {
            $(
                $(#[$doc])*
                #[inline(always)]
                fn $name(&mut self $(, $arg: $ty)*) {
                    let _ = ($($arg,)*);
                }
            )*
        }

        impl<R: CallObserver, T: CallObserver> CallObserver for Observers<R, T> {
            $(
                #[inline(always)]
                fn $name(&mut self $(, $arg: $ty)*) {
                    self.rec.$name($($arg),*);
                    self.trace.$name($($arg),*);
                }
            )*
        }
    };
}

transitions! {
    /// A logical request of `fleet` from `client` started at `now` in slot `req`.
    fn request_started(&mut self, req: u32, fleet: usize, client: u32, now: Nanos);
    /// The deadline of a request passed while it was going (before it finishes).
    fn request_expired(&mut self);
    /// The logical request in slot `req` of `fleet` finished at `now` with `class`,
    /// `latency` after it started.
    fn request_finished(&mut self, req: u32, fleet: usize, class: Class, latency: Nanos, now: Nanos);

    /// The call at `node` was made: a request's first node, or a service's downstream
    /// call.
    fn call_made(&mut self, arena: &Arena, node: u32, now: Nanos);
    /// The call at `node` arrived at its layer.
    fn call_arrived(&mut self, arena: &Arena, node: u32, now: Nanos);
    /// The call's breaker admitted it (`inside`: its inside breaker, its next attempt).
    fn breaker_admitted(&mut self, arena: &Arena, call: CallAt, inside: bool);
    /// The call's outside breaker refused the call itself, before its first attempt.
    fn breaker_refused_call(&mut self, arena: &Arena, call: CallAt);
    /// The call's attempt `ordinal` could not be sent: the deadline had passed.
    fn attempt_past_deadline(&mut self, call: CallAt, ordinal: u32);
    /// The call's next attempt waits, for `reason` ([`crate::metrics::trace::wait`]).
    fn attempt_waits(&mut self, arena: &Arena, node: u32, reason: u8);
    /// The call's attempt `ordinal` was refused before it left (`why`); the refusal is
    /// that attempt's outcome, which arises here.
    fn attempt_refused(&mut self, arena: &Arena, call: CallAt, ordinal: u32, why: Refusal, now: Nanos);
    /// The call sent attempt `ordinal`, the node `child`.
    fn attempt_sent(&mut self, arena: &Arena, call: CallAt, child: u32, ordinal: u32, now: Nanos);
    /// The hedging call sent its copy `ordinal` (copy index `ordinal - 1`), the node
    /// `child`; `granted` when the budget granted it as a retry.
    fn copy_sent(&mut self, arena: &Arena, call: CallAt, child: u32, ordinal: u32, granted: bool, now: Nanos);
    /// The call's attempt `ordinal` was answered with `class`.
    fn attempt_answered(&mut self, arena: &Arena, call: CallAt, ordinal: u32, class: Class, now: Nanos);
    /// The hedging call's copy `copy` (attempt `copy + 1`) was answered with `class`.
    fn copy_answered(&mut self, arena: &Arena, call: CallAt, copy: u8, class: Class, now: Nanos);
    /// The call's attempt `ordinal` timed out; `past_deadline` when the deadline, not
    /// the attempt timeout, ended it (then the request counts it).
    fn attempt_timed_out(&mut self, arena: &Arena, call: CallAt, ordinal: u32, past_deadline: bool, now: Nanos);
    /// The call will retry after a wait for `reason` ([`crate::metrics::trace::wait`]);
    /// `granted` when its budget granted the retry.
    fn retry_scheduled(&mut self, arena: &Arena, node: u32, reason: u8, granted: bool);
    /// The call's next attempt `ordinal` was refused (`why`: the budget or the
    /// deadline), which ends the call (whose end counts the outcome).
    fn retry_refused(&mut self, arena: &Arena, call: CallAt, ordinal: u32, why: Refusal, now: Nanos);
    /// The call at `call` (or the attempt at its service) is over with `class`, which
    /// arose `here` or came from below; called before its node is freed.
    fn call_finished(&mut self, arena: &Arena, call: CallAt, class: Class, here: bool, now: Nanos);
    /// The node's caller cancelled it.
    fn node_cancelled(&mut self, arena: &Arena, node: u32, now: Nanos);
    /// The call's attempt `ordinal`, still out, was cancelled with the call.
    fn attempt_cancelled(&mut self, call: CallAt, ordinal: u32);
    /// The hedging call was decided while its copy `ordinal` was still out.
    fn copy_lost(&mut self, call: CallAt, ordinal: u32);
    /// The call's attempt `ordinal` is still out as the run ends.
    fn attempt_in_flight(&mut self, call: CallAt, ordinal: u32);
    /// Whoever served the node is done with it (`fate`); called before it is freed.
    fn node_done(&mut self, arena: &Arena, node: u32, fate: Fate, now: Nanos);

    /// The attempt at `node`, of `fleet`, reached its service.
    fn service_reached(&mut self, arena: &Arena, node: u32, svc: SvcAt, fleet: usize, now: Nanos);
    /// The service admitted an attempt: to a free thread, or (`queued`: the queue's
    /// new length) to its queue.
    fn admitted(&mut self, svc: SvcAt, queued: Option<u64>, now: Nanos);
    /// The service refused an attempt for capacity.
    fn rejected(&mut self, svc: SvcAt, now: Nanos);
    /// The service dropped the attempt at `node`: nobody waits for it.
    fn shed(&mut self, arena: &Arena, node: u32, svc: SvcAt, now: Nanos);
    /// The queued attempt at `node` was cancelled: the queue holds `queued` live ones.
    fn queue_left(&mut self, arena: &Arena, node: u32, svc: SvcAt, queued: u64, now: Nanos);
    /// An attempt left the service's queue, which holds `queued` now.
    fn dequeued(&mut self, svc: SvcAt, queued: u64, now: Nanos);
    /// The service started serving `node` after a wait of `wait`; `busy` threads now.
    fn service_started(&mut self, arena: &Arena, node: u32, svc: SvcAt, wait: Nanos, busy: u32, now: Nanos);
    /// A thread of the service was freed: `busy` threads now.
    fn thread_released(&mut self, svc: SvcAt, busy: u32, now: Nanos);
    /// A thread of the service started spending its `reject_cost` on a rejection:
    /// `busy` threads now.
    fn rejection_started(&mut self, svc: SvcAt, busy: u32, now: Nanos);
    /// The thread finished spending its `reject_cost` and was freed: `busy` threads now.
    fn rejection_done(&mut self, svc: SvcAt, busy: u32, now: Nanos);
    /// The service answered an attempt with `class` after `held` ns of its threads;
    /// `useful` when its answer can still reach its request.
    fn served(&mut self, svc: SvcAt, held: Nanos, class: Class, useful: bool, now: Nanos);
    /// A write was applied again: `first` for its first duplicate.
    fn duplicate_applied(&mut self, first: bool);
    /// The OCC attempt at `node` read the record.
    fn occ_read(&mut self, arena: &Arena, node: u32, now: Nanos);
    /// An OCC dependency processed a conditional write (`won`: it succeeded).
    fn occ_written(&mut self, won: bool, now: Nanos);

    /// A free pooled connection was taken.
    fn pool_acquired(&mut self, now: Nanos);
    /// A wait for a pooled connection ended after `wait`.
    fn pool_wait_ended(&mut self, wait: Nanos);
    /// A pooled connection went back to its pool.
    fn pool_released(&mut self, now: Nanos);
    /// A breaker of a fleet's stack opened.
    fn breaker_tripped(&mut self);
    /// The open breakers of the fleets' stacks are `open` now.
    fn breakers_open(&mut self, open: u64, now: Nanos);
}

/// The observers of a run: the recorder and the tracer. Each transition goes to the
/// recorder first, then to the tracer.
#[derive(Debug)]
pub(crate) struct Observers<R, T> {
    /// The metrics.
    pub rec: R,
    /// The request traces ([`NoTrace`]: the run traces nothing).
    pub trace: T,
}

/// The tracer of a run that traces nothing: it observes no transition.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct NoTrace;

impl CallObserver for NoTrace {}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;

    /// An observer that writes down what it saw, under its name.
    struct Log(&'static str, Rc<RefCell<Vec<String>>>);

    impl CallObserver for Log {
        fn attempt_sent(&mut self, _: &Arena, call: CallAt, child: u32, ordinal: u32, _: Nanos) {
            let seen = format!("{} sent {} {child} {ordinal}", self.0, call.node);
            self.1.borrow_mut().push(seen);
        }

        fn request_finished(&mut self, req: u32, _: usize, class: Class, _: Nanos, _: Nanos) {
            let seen = format!("{} finished {req} {}", self.0, class.name());
            self.1.borrow_mut().push(seen);
        }
    }

    #[test]
    fn each_transition_reaches_the_recorder_then_the_tracer_once() {
        let seen = Rc::new(RefCell::new(Vec::new()));
        let mut obs = Observers {
            rec: Log("rec", seen.clone()),
            trace: Log("trace", seen.clone()),
        };
        let call = CallAt {
            node: 4,
            depth: 0,
            top: true,
        };
        let arena = Arena::default();
        obs.attempt_sent(&arena, call, 5, 2, 0);
        // A transition neither implements reaches neither.
        obs.request_expired();
        obs.request_finished(7, 0, Class::Success, 10, 10);
        assert_eq!(
            *seen.borrow(),
            [
                "rec sent 4 5 2",
                "trace sent 4 5 2",
                "rec finished 7 success",
                "trace finished 7 success"
            ]
        );
        // Without a tracer, the recorder alone.
        seen.borrow_mut().clear();
        let mut obs = Observers {
            rec: obs.rec,
            trace: NoTrace,
        };
        obs.attempt_sent(&arena, call, 6, 1, 0);
        assert_eq!(*seen.borrow(), ["rec sent 4 6 1"]);
    }
}
