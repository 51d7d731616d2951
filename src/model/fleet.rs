//! One fleet of clients at run time (MODEL.md §2): its arrivals (open-loop, burst or
//! closed-loop clients that think between requests), its layers, and the logical
//! requests it starts and finishes.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::engine::{stream, Nanos, Scheduler};
use crate::model::config::{Arrival, FleetConfig};

use super::arrival::{OpenArrivals, Replay};
use super::broker::Broker;
use super::event::{Event, Packed};
use super::observe::CallObserver;
use super::outcome::{Class, Outcome};
use super::request::{Request, NONE};
use super::world::World;

/// Runtime of one fleet.
pub(super) struct Fleet {
    pub(super) cfg: FleetConfig,
    /// The open-loop arrival process (poisson or constant arrivals).
    open: Option<OpenArrivals>,
    /// A replayed trace (trace arrivals), boxed: most fleets have none.
    replay: Option<Box<Replay>>,
    arrivals: ChaCha8Rng,
    /// Which requests are writes.
    writes: ChaCha8Rng,
    /// Closed-loop clients' think times.
    think: ChaCha8Rng,
    /// The client of the next open-loop arrival (round robin, below `cfg.clients`).
    next_client: u64,
}

impl Fleet {
    /// The fleet `f` with streams from `seed`, over a run of `duration` (its layers
    /// are its stack: see [`super::stack`]).
    pub(super) fn new(f: &FleetConfig, seed: u64, duration: Nanos) -> Fleet {
        Fleet {
            cfg: f.clone(),
            open: OpenArrivals::new(&f.arrival, f.load_profile.clone(), duration),
            replay: match &f.arrival {
                Arrival::Trace(source) => Some(Box::new(Replay::new(source.as_ref(), duration))),
                _ => None,
            },
            arrivals: stream(seed, &format!("arrivals/{}", f.name)),
            writes: stream(seed, &format!("writes/{}", f.name)),
            think: stream(seed, &format!("think/{}", f.name)),
            next_client: 0,
        }
    }

    /// Schedules the fleet's first arrivals (fleet index `fleet`).
    pub(super) fn schedule_first(
        &mut self,
        fleet: u16,
        duration: Nanos,
        s: &mut Scheduler<Packed>,
    ) {
        match &self.cfg.arrival {
            Arrival::Poisson { .. } | Arrival::Constant { .. } => {
                let open = self.open.as_mut().expect("open arrivals");
                if let Some(t) = open.next(0, &mut self.arrivals) {
                    s.at_stream(usize::from(fleet), t, Event::Arrival { fleet });
                }
            }
            Arrival::Trace(_) => {
                let replay = self.replay.as_mut().expect("a replay");
                if let Some(t) = replay.advance() {
                    s.at_stream(usize::from(fleet), t, Event::Arrival { fleet });
                }
            }
            Arrival::Burst { at, .. } => {
                if *at < duration {
                    s.at(*at, Event::Burst { fleet });
                }
            }
            Arrival::Closed { think_time } => {
                for c in 0..self.cfg.clients {
                    let t = think_time.sample(&mut self.think);
                    if t < duration {
                        s.at(
                            t,
                            Event::ClientSend {
                                fleet,
                                client: c as u32,
                            },
                        );
                    }
                }
            }
        }
    }
}

impl Fleet {
    /// Whether the next request (or message) is a non-idempotent write.
    pub(super) fn draw_write(&mut self) -> bool {
        self.writes.random::<f64>() < self.cfg.writes
    }

    /// Why the fleet's replayed trace stopped early, if it did.
    pub(super) fn replay_failure(&self) -> Option<String> {
        let why = self.replay.as_ref()?.failure()?;
        Some(format!("fleet '{}': its trace {why}", self.cfg.name))
    }
}

/// The fleets' part of the world: the fleets, their logical requests in flight, and
/// the message queues of queue fleets.
pub(super) struct Fleets {
    /// Each fleet's configuration and random streams.
    pub(super) list: Vec<Fleet>,
    /// Logical requests not yet done.
    pub(super) in_flight: u64,
    /// The message queues of queue fleets (`None` without one).
    pub(super) broker: Option<Broker>,
}

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// [`Event::Arrival`]: the next open-loop arrival of fleet `fleet`; schedules the
    /// one after it.
    #[inline]
    pub(super) fn on_arrival(&mut self, fleet: u16, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let fi = fleet as usize;
        let f = &mut self.fleets.list[fi];
        let Some(open) = f.open.as_mut() else {
            // Not poisson or constant: a replayed trace.
            return self.on_replay(fi, s);
        };
        // Round robin without a division per arrival.
        let client = f.next_client;
        f.next_client += 1;
        if f.next_client >= f.cfg.clients {
            f.next_client = 0;
        }
        if let Some(t) = open.next(now, &mut f.arrivals) {
            // A fleet has one arrival pending at a time: its own stream slot.
            s.at_stream(fi, t, Event::Arrival { fleet });
        }
        self.arrive(fi, client, s);
    }

    /// [`Event::Arrival`] of a fleet replaying a trace: the arrival due now, from the
    /// client and as the write its row says (else in turn, and drawn); reads the next.
    #[cold]
    #[inline(never)]
    fn on_replay(&mut self, fi: usize, s: &mut Scheduler<Packed>) {
        let f = &mut self.fleets.list[fi];
        let replay = f.replay.as_mut().expect("a replay");
        let Some(due) = replay.due() else {
            return;
        };
        if let Some(t) = replay.advance() {
            s.at_stream(fi, t, Event::Arrival { fleet: fi as u16 });
        }
        let client = match due.client {
            Some(c) => c % f.cfg.clients,
            None => {
                let c = f.next_client;
                f.next_client = (c + 1) % f.cfg.clients;
                c
            }
        };
        let is_write = match due.write {
            Some(w) => w,
            None => f.cfg.writes > 0.0 && f.draw_write(),
        };
        let req = self.launch_request(fi, client, is_write, s);
        self.begin_request(req, s);
    }

    /// [`Event::Burst`]: every request of a burst fleet, at once.
    pub(super) fn on_burst(&mut self, fleet: u16, s: &mut Scheduler<Packed>) {
        let fi = fleet as usize;
        let (count, clients) = match self.fleets.list[fi].cfg.arrival {
            Arrival::Burst { count, .. } => (count, self.fleets.list[fi].cfg.clients),
            _ => (0, 1),
        };
        for i in 0..count {
            self.arrive(fi, i % clients, s);
        }
    }

    /// An arrival of fleet `fleet` from `client`: a logical request, or for a queue
    /// fleet a published message (see [`super::broker`]).
    #[inline(always)]
    fn arrive(&mut self, fleet: usize, client: u64, s: &mut Scheduler<Packed>) {
        if self
            .fleets
            .broker
            .as_ref()
            .is_some_and(|b| b.is_queue(fleet))
        {
            self.publish(fleet, s);
        } else {
            self.start_request(fleet, client, s);
        }
    }

    /// Starts a logical request of `client` of fleet `fleet`: its deadline timer and
    /// its top call (or, with no layers, its attempt at the dependency).
    pub(super) fn start_request(&mut self, fleet: usize, client: u64, s: &mut Scheduler<Packed>) {
        let f = &mut self.fleets.list[fleet];
        let is_write = f.cfg.writes > 0.0 && f.draw_write();
        let req = self.launch_request(fleet, client, is_write, s);
        self.begin_request(req, s);
    }

    /// Allocates a logical request of `client` of fleet `fleet` and counts it offered
    /// ([`Self::begin_request`] sends it).
    #[inline(always)]
    pub(super) fn launch_request(
        &mut self,
        fleet: usize,
        client: u64,
        is_write: bool,
        s: &mut Scheduler<Packed>,
    ) -> u32 {
        let now = s.now();
        let f = &self.fleets.list[fleet];
        let deadline = f.cfg.deadline.map_or(Nanos::MAX, |d| now.saturating_add(d));
        let req = self.arena.alloc_req(Request {
            gen: 0,
            fleet: fleet as u16,
            client: client as u32,
            arrival: now,
            deadline,
            is_write,
            applied: 0,
            done: false,
            refs: 0,
        });
        self.obs.request_started(req, fleet, client as u32, now);
        self.fleets.in_flight += 1;
        req
    }

    /// Sends the logical request `req`: its deadline timer and its top call (or, with
    /// no layers, its attempt at the dependency).
    #[inline(always)]
    pub(super) fn begin_request(&mut self, req: u32, s: &mut Scheduler<Packed>) {
        let r = self.arena.reqs[req as usize];
        let (fleet, deadline) = (r.fleet as usize, r.deadline);
        if deadline != Nanos::MAX {
            let lane = self.run.lanes.deadline_lane(fleet);
            self.run
                .lanes
                .set(lane, deadline, req, r.gen, &self.arena, s);
        }
        let node = self.arena.alloc_node(req, 0, fleet as u16, NONE, 0);
        if self.calls.classes {
            self.classify_first(node, fleet);
        }
        self.obs.call_made(&self.arena, node, s.now());
        if self.calls.deadlines {
            // The request gives up on its first node at its deadline.
            let d = self.calls.stacks[fleet].child_deadline(0, deadline, deadline);
            self.calls.times.set_deadline(node, d);
        }
        if self.calls.stacks[fleet].layers.is_empty() {
            self.svc_arrive(node, s);
        } else {
            self.begin_call(node, s);
        }
    }

    /// The logical request `req` is over (if it was not already): counts its
    /// completion and, for a closed-loop client, schedules the client's next request.
    #[inline(always)]
    pub(super) fn finish_request(&mut self, req: u32, outcome: Outcome, s: &mut Scheduler<Packed>) {
        let now = s.now();
        let r = &mut self.arena.reqs[req as usize];
        if r.done {
            return;
        }
        r.done = true;
        let (fleet, client, latency) = (r.fleet as usize, r.client, now - r.arrival);
        self.obs
            .request_finished(req, fleet, outcome.class, latency, now);
        self.fleets.in_flight -= 1;
        let f = &mut self.fleets.list[fleet];
        if let Arrival::Closed { think_time } = &f.cfg.arrival {
            let t = now.saturating_add(think_time.sample(&mut f.think));
            if t < self.run.duration {
                s.at(
                    t,
                    Event::ClientSend {
                        fleet: fleet as u16,
                        client,
                    },
                );
            }
        }
        if self.fleets.broker.is_some() {
            self.handler_done(req, outcome.class == Class::Success, s);
        }
        self.arena.maybe_free_req(req);
    }

    /// The request's deadline passed while it was going: counted once, here.
    pub(super) fn expire_request(&mut self, req: u32, s: &mut Scheduler<Packed>) {
        self.obs.request_expired();
        self.finish_request(req, Outcome::of(Class::DeadlineExceeded), s);
    }
}
