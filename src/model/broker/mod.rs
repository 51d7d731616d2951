//! Message-queue consumers: the broker of queue fleets (`arrival = { kind = "queue" }`),
//! with visibility timeouts, redelivery and a dead-letter queue.
//!
//! A queue fleet's arrival process publishes messages. A free consumer (one of the
//! fleet's `consumers`) receives the oldest visible message: the message becomes
//! invisible for `visibility_timeout` and its handler runs as a logical request of the
//! fleet, client = the consumer, through the fleet's layers (the handler's own
//! retries). Then:
//!
//! ```text
//! publish ─► visible ─► received (handler runs) ──success──► deleted
//!              ▲              │ failure, or the visibility timeout first
//!              │              ▼
//!              └── redelivery_delay ◄── receives < max_receive_count
//!                                       else ──► dead-letter queue
//! ```
//!
//! - The handler's success deletes the message (the first success does; a later one
//!   of a duplicate delivery finds it gone).
//! - Its failure, while its receive is the message's current one, makes the message
//!   visible again after `redelivery_delay`, or dead-letters it once it has been
//!   received `max_receive_count` times. After a failure within the receive itself
//!   (the handler ends at once) the consumers receive again from an event of their
//!   own, so each receive of a message that never succeeds is an event `[limits]`
//!   counts.
//! - A handler still running at the visibility timeout does the same, and keeps
//!   running: the next receive of the message is a duplicate delivery, and both
//!   handlers may apply it. A non-idempotent message (`writes`) applied by more than
//!   one handler counts in `duplicates` / `duplicate_applies` as one logical write
//!   (with `idempotency_keys`, the message id is the key: later applies replay).
//! - A poison message (`poison`, drawn at publish from the stream `poison/<fleet>`)
//!   fails in the handler itself, at once, before it calls anything: a failed logical
//!   request with no attempts, on every receive, until it is dead-lettered.
//!
//! Each receive is one logical request (`logical`, `offered`, latency columns); the
//! messages have their own columns (see [`crate::metrics::queue`]).
//!
//! The queue-consumer fleet is one folder: its written form ([`written`]: the queue
//! arrival [`Written`] and the fleet's queue-only [`Keys`]), its rules ([`validate`](mod@validate),
//! with its rule for the dependency), its validated form ([`config`]:
//! [`config::QueueConfig`]), its text for explain ([`explain`]) and, in this file, the
//! broker's runtime. Its lints are `explain/lint/queue.rs` (with the handler's worst
//! case), its columns `metrics/columns/queue.rs` and `metrics/queue.rs`.

pub(crate) mod config;
pub(crate) mod explain;
pub(crate) mod validate;
pub(crate) mod written;

pub(crate) use explain::QueueExplanation;
pub(crate) use validate::{check_dependency, validate};
pub(crate) use written::{
    Keys, PublishKind, Written, DEFAULT_POISON, DEFAULT_REDELIVERY_DELAY,
    DEFAULT_VISIBILITY_TIMEOUT,
};

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::engine::{stream, Nanos, Scheduler};
use crate::metrics::queue::{QueueMetrics, QueueSeries};
use crate::model::config::{QueueConfig, Scenario};

use super::event::{Event, Packed};
use super::observe::CallObserver;
use super::outcome::{Class, Outcome};
use super::world::World;

/// Where a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting for a consumer.
    Visible,
    /// Waiting out `redelivery_delay` before it is visible again.
    Delayed,
    /// Received; its visibility timeout runs.
    InFlight,
    /// Deleted or dead-lettered (its slot waits for its last handler).
    Done,
}

/// One message.
#[derive(Debug, Clone, Copy)]
struct Message {
    /// Bumped whenever the message's pending timer no longer applies.
    gen: u32,
    /// Its queue.
    queue: u16,
    state: State,
    /// Publish order over every queue: the visible heap's key.
    seq: u64,
    published: Nanos,
    receives: u32,
    /// Handlers of it still running.
    running: u32,
    /// Times its write was applied.
    applied: u32,
    is_write: bool,
    poison: bool,
}

/// The message a handler request handles.
#[derive(Debug, Clone, Copy)]
struct Handler {
    /// The request slot's generation when it started (slots are reused).
    req_gen: u32,
    msg: u32,
    /// Which receive of the message it is.
    receive: u32,
}

/// One queue fleet's queue.
#[derive(Debug)]
struct Queue {
    fleet: u16,
    cfg: QueueConfig,
    /// Visible messages by publish order (stale entries skipped lazily).
    visible: BinaryHeap<Reverse<(u64, u32)>>,
    /// How many messages are visible.
    depth: u64,
    /// Consumers with no handler running (popped from the end: 0 first).
    idle: Vec<u32>,
    /// Whether an [`Event::Receive`] is pending for the queue.
    wake: bool,
    poison: ChaCha8Rng,
}

/// The broker of every queue fleet of a run.
#[derive(Debug)]
pub(super) struct Broker {
    queues: Vec<Queue>,
    /// The queue of each fleet.
    of_fleet: Vec<Option<u16>>,
    msgs: Vec<Message>,
    free: Vec<u32>,
    next_seq: u64,
    /// Messages published and not yet deleted or dead-lettered.
    pub(super) pending: u64,
    /// Message slots in use.
    live: u64,
    /// The handler of each request slot, if it is one.
    handlers: Vec<Option<Handler>>,
    /// Set while receiving, so a handler that ends at once does not receive again
    /// from inside the loop.
    receiving: bool,
    /// Set when a handler failed inside the receive loop and its message is visible
    /// again: the loop stops, and the next receive is an [`Event::Receive`].
    yielded: bool,
    series: QueueSeries,
}

impl Broker {
    /// The broker of `scn`'s queue fleets, or `None` when it has none.
    pub(super) fn new(scn: &Scenario, seed: u64) -> Option<Broker> {
        let mut of_fleet = Vec::with_capacity(scn.fleets.len());
        let mut queues = Vec::new();
        for (fi, f) in scn.fleets.iter().enumerate() {
            of_fleet.push(f.queue.as_ref().map(|q| {
                queues.push(Queue {
                    fleet: fi as u16,
                    cfg: q.clone(),
                    visible: BinaryHeap::new(),
                    depth: 0,
                    idle: (0..q.consumers as u32).rev().collect(),
                    wake: false,
                    poison: stream(seed, &format!("poison/{}", f.name)),
                });
                (queues.len() - 1) as u16
            }));
        }
        if queues.is_empty() {
            return None;
        }
        Some(Broker {
            queues,
            of_fleet,
            msgs: Vec::new(),
            free: Vec::new(),
            next_seq: 0,
            pending: 0,
            live: 0,
            handlers: Vec::new(),
            receiving: false,
            yielded: false,
            series: QueueSeries::new(scn.duration, scn.bucket),
        })
    }

    /// Whether fleet `fleet` is a queue fleet.
    #[inline]
    pub(super) fn is_queue(&self, fleet: usize) -> bool {
        self.of_fleet[fleet].is_some()
    }

    /// Message slots in use (for the memory caps).
    pub(super) fn live(&self) -> u64 {
        self.live
    }

    /// The message request `req` (of generation `gen`) handles, if it is a handler.
    #[inline]
    fn handler(&self, req: u32, gen: u32) -> Option<Handler> {
        self.handlers
            .get(req as usize)
            .copied()
            .flatten()
            .filter(|h| h.req_gen == gen)
    }

    /// The applied count of the message request `req` handles.
    #[inline]
    pub(super) fn applied_of(&mut self, req: u32, gen: u32) -> Option<&mut u32> {
        let h = self.handler(req, gen)?;
        Some(&mut self.msgs[h.msg as usize].applied)
    }

    /// Pops stale fronts of queue `q`'s heap, so its front is its oldest visible
    /// message.
    fn clean(&mut self, q: usize) {
        while let Some(Reverse((seq, m))) = self.queues[q].visible.peek().copied() {
            let msg = &self.msgs[m as usize];
            if msg.seq == seq && msg.state == State::Visible {
                return;
            }
            self.queues[q].visible.pop();
        }
    }

    /// Tells the series how many messages are visible, and the oldest's publish time.
    fn sync(&mut self, now: Nanos) {
        let depth = self.queues.iter().map(|q| q.depth).sum();
        let oldest = self
            .queues
            .iter()
            .filter_map(|q| q.visible.peek())
            .map(|Reverse((_, m))| self.msgs[*m as usize].published)
            .min();
        self.series.set_visible(now, depth, oldest);
    }

    /// Makes message `m` visible now.
    fn make_visible(&mut self, m: u32, now: Nanos) {
        let msg = &mut self.msgs[m as usize];
        msg.state = State::Visible;
        msg.gen = msg.gen.wrapping_add(1);
        let (q, seq) = (msg.queue as usize, msg.seq);
        self.queues[q].visible.push(Reverse((seq, m)));
        self.queues[q].depth += 1;
        self.sync(now);
    }

    /// Ends message `m` (deleted or dead-lettered); frees its slot once no handler of
    /// it runs.
    fn end(&mut self, m: u32) {
        let msg = &mut self.msgs[m as usize];
        msg.state = State::Done;
        msg.gen = msg.gen.wrapping_add(1);
        self.pending -= 1;
        self.maybe_free(m);
    }

    fn maybe_free(&mut self, m: u32) {
        let msg = &self.msgs[m as usize];
        if msg.state == State::Done && msg.running == 0 {
            self.free.push(m);
            self.live -= 1;
        }
    }

    /// Closes the measurements at `end`.
    pub(super) fn finish(self, end: Nanos) -> QueueMetrics {
        let left = self.pending;
        self.series.finish(end, left)
    }
}

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// Publishes a message of queue fleet `fleet` (its arrival process's arrival).
    pub(super) fn publish(&mut self, fleet: usize, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let f = &mut self.fleets.list[fleet];
        let is_write = f.cfg.writes > 0.0 && f.draw_write();
        let b = self
            .fleets
            .broker
            .as_mut()
            .expect("a queue fleet has a broker");
        let q = b.of_fleet[fleet].expect("a queue fleet") as usize;
        let p = b.queues[q].cfg.poison;
        let poison = p > 0.0 && b.queues[q].poison.random::<f64>() < p;
        let seq = b.next_seq;
        b.next_seq += 1;
        let msg = Message {
            gen: 0,
            queue: q as u16,
            state: State::Visible,
            seq,
            published: now,
            receives: 0,
            running: 0,
            applied: 0,
            is_write,
            poison,
        };
        let m = match b.free.pop() {
            Some(i) => {
                let gen = b.msgs[i as usize].gen;
                b.msgs[i as usize] = Message { gen, ..msg };
                i
            }
            None => {
                b.msgs.push(msg);
                (b.msgs.len() - 1) as u32
            }
        };
        b.pending += 1;
        b.live += 1;
        b.series.published();
        b.make_visible(m, now);
        self.receive(q, s);
    }

    /// Free consumers of queue `q` receive its oldest visible messages.
    fn receive(&mut self, q: usize, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let b = self.fleets.broker.as_mut().expect("broker");
        if b.receiving {
            return;
        }
        b.receiving = true;
        loop {
            let b = self.fleets.broker.as_mut().expect("broker");
            if std::mem::take(&mut b.yielded) {
                // The next receive is an event of its own, one that `[limits]` counts.
                if !b.queues[q].wake {
                    b.queues[q].wake = true;
                    s.at(now, Event::Receive { queue: q as u16 });
                }
                break;
            }
            b.clean(q);
            let queue = &mut b.queues[q];
            if queue.idle.is_empty() {
                break;
            }
            let Some(Reverse((_, m))) = queue.visible.pop() else {
                break;
            };
            let consumer = queue.idle.pop().expect("an idle consumer");
            queue.depth -= 1;
            let (fleet, timeout) = (queue.fleet as usize, queue.cfg.visibility_timeout);
            b.clean(q);
            b.sync(now);
            let msg = &mut b.msgs[m as usize];
            msg.receives += 1;
            msg.state = State::InFlight;
            msg.gen = msg.gen.wrapping_add(1);
            let (again, duplicate) = (msg.receives > 1, msg.running > 0);
            msg.running += 1;
            let (gen, receive, is_write, poison) =
                (msg.gen, msg.receives, msg.is_write, msg.poison);
            b.series.received(now, again, duplicate);
            s.after(timeout, Event::Visibility { msg: m, gen });
            let req = self.launch_request(fleet, u64::from(consumer), is_write, s);
            let b = self.fleets.broker.as_mut().expect("broker");
            let req_gen = self.arena.reqs[req as usize].gen;
            let i = req as usize;
            if i >= b.handlers.len() {
                b.handlers.resize(i + 1, None);
            }
            b.handlers[i] = Some(Handler {
                req_gen,
                msg: m,
                receive,
            });
            if poison {
                // The handler fails before it calls anything.
                self.finish_request(req, Outcome::of(Class::Error), s);
            } else {
                self.begin_request(req, s);
            }
        }
        self.fleets.broker.as_mut().expect("broker").receiving = false;
    }

    /// The handler request `req` ended (`ok`: it succeeded): its consumer is free, and
    /// the message is deleted, or visible again, or dead-lettered.
    pub(super) fn handler_done(&mut self, req: u32, ok: bool, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let r = self.arena.reqs[req as usize];
        let Some(b) = self.fleets.broker.as_mut() else {
            return;
        };
        let Some(h) = b.handler(req, r.gen) else {
            return;
        };
        b.handlers[req as usize] = None;
        let msg = b.msgs[h.msg as usize];
        let q = msg.queue as usize;
        b.queues[q].idle.push(r.client);
        b.msgs[h.msg as usize].running -= 1;
        if ok {
            if msg.state != State::Done {
                if msg.state == State::Visible {
                    b.queues[q].depth -= 1;
                    b.msgs[h.msg as usize].state = State::Done;
                    b.clean(q);
                    b.sync(now);
                }
                b.series.deleted(now - msg.published);
                b.end(h.msg);
            } else {
                b.maybe_free(h.msg);
            }
        } else if msg.state == State::InFlight && msg.receives == h.receive {
            self.redeliver(h.msg, s);
        } else {
            b.maybe_free(h.msg);
        }
        // The consumer receives at this instant, from an event of its own: this may run
        // deep inside a request's end (a deadline timer's, say), where starting another
        // request is not safe.
        let b = self.fleets.broker.as_mut().expect("broker");
        let queue = &mut b.queues[q];
        if !b.receiving && !queue.wake && queue.depth > 0 {
            queue.wake = true;
            s.at(now, Event::Receive { queue: q as u16 });
        }
    }

    /// [`Event::Receive`]: a consumer of queue `q` became free.
    pub(super) fn on_receive(&mut self, q: u16, s: &mut Scheduler<Packed>) {
        if let Some(b) = self.fleets.broker.as_mut() {
            b.queues[q as usize].wake = false;
            self.receive(q as usize, s);
        }
    }

    /// Message `m` failed (or its visibility timeout ended): dead-lettered after its
    /// last receive, else visible again after `redelivery_delay`.
    fn redeliver(&mut self, m: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let b = self.fleets.broker.as_mut().expect("broker");
        let msg = b.msgs[m as usize];
        let cfg = &b.queues[msg.queue as usize].cfg;
        if cfg.max_receive_count.is_some_and(|max| msg.receives >= max) {
            b.series.dead_lettered(now);
            b.end(m);
            return;
        }
        let delay = cfg.redelivery_delay;
        if delay == 0 {
            b.make_visible(m, now);
            // Inside the receive loop the handler failed without time passing
            // (poison, a refusal): the loop stops, else a message that never succeeds
            // would be received again and again within one event, out of reach of
            // `[limits]`, until memory ran out.
            b.yielded = b.receiving;
        } else {
            let msg = &mut b.msgs[m as usize];
            msg.state = State::Delayed;
            msg.gen = msg.gen.wrapping_add(1);
            s.after(
                delay,
                Event::Visibility {
                    msg: m,
                    gen: msg.gen,
                },
            );
        }
    }

    /// [`Event::Visibility`]: message `m`'s visibility timeout ended (it is in flight)
    /// or its redelivery delay did (it is delayed).
    pub(super) fn on_visibility(&mut self, m: u32, gen: u32, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let Some(b) = self.fleets.broker.as_mut() else {
            return;
        };
        let msg = b.msgs[m as usize];
        if msg.gen != gen {
            return;
        }
        let q = msg.queue as usize;
        match msg.state {
            State::InFlight => self.redeliver(m, s),
            State::Delayed => b.make_visible(m, now),
            State::Visible | State::Done => return,
        }
        self.receive(q, s);
    }

    /// Publishing has work left: messages not yet deleted or dead-lettered.
    pub(super) fn messages_pending(&self) -> bool {
        self.fleets.broker.as_ref().is_some_and(|b| b.pending > 0)
    }
}
