//! The discrete-event engine: integer-nanosecond time, a `(time, sequence)`-ordered
//! event queue, and seeded random streams.
//!
//! The engine knows nothing of retries. A model defines its own `Copy` event type and a
//! [`Handler`]; [`run`] pops events in order and hands them to the handler until the
//! handler says stop or the queue is empty.
//!
//! ```
//! use retrysim::engine::{run, Handler, Scheduler, Control};
//!
//! #[derive(Clone, Copy)]
//! struct Tick(u32);
//! struct Counter(Vec<(u64, u32)>);
//! impl Handler<Tick> for Counter {
//!     fn handle(&mut self, ev: Tick, s: &mut Scheduler<Tick>) -> Control {
//!         self.0.push((s.now(), ev.0));
//!         if ev.0 < 3 { s.after(10, Tick(ev.0 + 1)); }
//!         Control::Continue
//!     }
//! }
//! let mut s = Scheduler::new();
//! s.at(5, Tick(0));
//! let mut c = Counter(Vec::new());
//! run(&mut s, &mut c);
//! assert_eq!(c.0, vec![(5, 0), (15, 1), (25, 2), (35, 3)]);
//! ```

pub mod math;
pub(crate) mod queue;
pub mod rng;
pub mod time;
pub mod variate;
mod ziggurat_tables;

pub use queue::EventQueue;
pub use rng::{stream, stream_id};
pub use time::Nanos;

/// What the handler wants after an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Keep popping events.
    Continue,
    /// Stop the run now; pending events stay in the queue.
    Stop,
}

/// Reacts to one event at a time; may schedule more through the scheduler.
pub trait Handler<E: Copy> {
    /// Handles `event`, which happens at `sched.now()`.
    fn handle(&mut self, event: E, sched: &mut Scheduler<E>) -> Control;
}

/// The clock and the pending events of one run.
#[derive(Debug)]
pub struct Scheduler<E: Copy> {
    now: Nanos,
    queue: EventQueue<E>,
    processed: u64,
}

impl<E: Copy> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> Scheduler<E> {
    /// An empty scheduler at time 0.
    pub fn new() -> Self {
        Scheduler {
            now: 0,
            queue: EventQueue::new(),
            processed: 0,
        }
    }

    /// The current simulated time.
    #[inline]
    pub fn now(&self) -> Nanos {
        self.now
    }

    /// Events handled so far.
    #[inline]
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Events still pending.
    #[inline]
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Schedules `event` at absolute time `time` (clamped to now: the past is closed).
    #[inline(always)]
    pub fn at(&mut self, time: Nanos, event: impl Into<E>) {
        self.queue.push(time.max(self.now), event.into());
    }

    /// Schedules `event` of stream `stream` at `time` (clamped to now): for a source
    /// that keeps at most one event pending, such as a fleet's next arrival. It runs in
    /// exactly the order [`at`](Self::at) would give it; it only skips the heap.
    #[inline(always)]
    pub fn at_stream(&mut self, stream: usize, time: Nanos, event: impl Into<E>) {
        self.queue
            .push_stream(stream, time.max(self.now), event.into());
    }

    /// Schedules `event` `delay` nanoseconds from now (saturating).
    #[inline(always)]
    pub fn after(&mut self, delay: Nanos, event: impl Into<E>) {
        self.queue
            .push(self.now.saturating_add(delay), event.into());
    }

    /// Takes the next sequence number now, for an event to be scheduled later with
    /// [`at_seq`](Self::at_seq) (it then sorts as if scheduled now).
    #[inline]
    pub fn reserve_seq(&mut self) -> u64 {
        self.queue.reserve_seq()
    }

    /// Schedules `event` at `time` (clamped to now) with a reserved sequence number.
    #[inline(always)]
    pub fn at_seq(&mut self, time: Nanos, seq: u64, event: impl Into<E>) {
        self.queue
            .push_with_seq(time.max(self.now), seq, event.into());
    }

    /// Pops the next event and advances the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<E> {
        let (t, e) = self.queue.pop()?;
        debug_assert!(t >= self.now);
        self.now = t;
        self.processed += 1;
        Some(e)
    }

    /// Time of the next pending event.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        self.queue.peek_time()
    }
}

/// Runs events through `handler` until it returns [`Control::Stop`] or none are left.
pub fn run<E: Copy, H: Handler<E>>(sched: &mut Scheduler<E>, handler: &mut H) {
    while run_batch(sched, handler) {}
}

/// Runs events as [`run`] does while `go_on()` holds; `go_on` is asked before the
/// first event and then after every [`BATCH`]-th, so an outside stop (a flag another
/// thread sets) takes effect within a few hundred events at no cost per event.
/// Returns false when `go_on` stopped the run (its pending events stay queued), true
/// when the handler stopped it or no event was left.
///
/// ```
/// use retrysim::engine::{run_while, Control, Handler, Scheduler};
///
/// struct Forever;
/// impl Handler<()> for Forever {
///     fn handle(&mut self, _: (), s: &mut Scheduler<()>) -> Control {
///         s.after(1, ());
///         Control::Continue
///     }
/// }
/// let mut s = Scheduler::new();
/// s.at(0, ());
/// let mut asked = 0;
/// let ended = run_while(&mut s, &mut Forever, || {
///     asked += 1;
///     asked <= 3
/// });
/// assert!(!ended);
/// assert_eq!(s.processed(), 3 * retrysim::engine::BATCH as u64);
/// ```
pub fn run_while<E: Copy, H: Handler<E>>(
    sched: &mut Scheduler<E>,
    handler: &mut H,
    mut go_on: impl FnMut() -> bool,
) -> bool {
    loop {
        if !go_on() {
            return false;
        }
        if !run_batch(sched, handler) {
            return true;
        }
    }
}

/// Events one call of the engine's inner loop handles at most: [`run_while`] asks
/// whether to go on between batches.
pub const BATCH: u32 = 256;

/// Runs up to [`BATCH`] events; false when the handler stopped or none are left.
///
/// The loop is a function of its own, called again and again, so that a JIT that
/// optimises a function only at its next call (WebAssembly in V8, which has no
/// on-stack replacement) runs a long simulation in optimised code after its first
/// batches rather than in baseline code to the end. Natively it costs one call per
/// batch.
#[inline(never)]
fn run_batch<E: Copy, H: Handler<E>>(sched: &mut Scheduler<E>, handler: &mut H) -> bool {
    for _ in 0..BATCH {
        let Some(ev) = sched.pop() else {
            return false;
        };
        if handler.handle(ev, sched) == Control::Stop {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{run, Control, Handler, Scheduler, BATCH};

    /// Handles a chain of ticks, one every 10 ns, and stops at tick `stop_at`.
    struct Chain {
        seen: Vec<u32>,
        stop_at: u32,
    }
    impl Handler<u32> for Chain {
        fn handle(&mut self, ev: u32, s: &mut Scheduler<u32>) -> Control {
            self.seen.push(ev);
            s.after(10, ev + 1);
            if ev == self.stop_at {
                Control::Stop
            } else {
                Control::Continue
            }
        }
    }

    /// Runs a chain that stops at `stop_at`; returns what it saw and the scheduler.
    fn chain(stop_at: u32) -> (Vec<u32>, Scheduler<u32>) {
        let mut s = Scheduler::new();
        s.at(0, 0u32);
        let mut c = Chain {
            seen: Vec::new(),
            stop_at,
        };
        run(&mut s, &mut c);
        (c.seen, s)
    }

    /// The batches are invisible: a stop on either side of a batch's end, or many
    /// batches in, ends the run at that very event, every event before it handled in
    /// order, the next one pending.
    #[test]
    fn a_stop_ends_the_run_at_its_event_across_batch_boundaries() {
        for stop_at in [0, 1, BATCH - 2, BATCH - 1, BATCH, BATCH + 1, 3 * BATCH + 7] {
            let (seen, s) = chain(stop_at);
            assert_eq!(seen, (0..=stop_at).collect::<Vec<_>>(), "stop at {stop_at}");
            assert_eq!(s.processed(), u64::from(stop_at) + 1);
            assert_eq!(s.now(), u64::from(stop_at) * 10);
            assert_eq!(s.pending(), 1, "the next tick stays pending");
        }
    }

    /// A run with no stop handles every event, whatever the count against the batch
    /// size, then returns with none pending.
    #[test]
    fn a_run_handles_every_event_until_none_are_left() {
        for n in [0, 1, BATCH - 1, BATCH, BATCH + 1, 2 * BATCH] {
            let mut s: Scheduler<u32> = Scheduler::new();
            for i in 0..n {
                s.at(u64::from(i), i);
            }
            struct Count(Vec<u32>);
            impl Handler<u32> for Count {
                fn handle(&mut self, ev: u32, _: &mut Scheduler<u32>) -> Control {
                    self.0.push(ev);
                    Control::Continue
                }
            }
            let mut c = Count(Vec::new());
            run(&mut s, &mut c);
            assert_eq!(c.0, (0..n).collect::<Vec<_>>());
            assert_eq!(s.pending(), 0);
            assert_eq!(s.processed(), u64::from(n));
        }
    }
}
