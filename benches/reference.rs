//! The reference run (scenarios/reference.toml, 300 s simulated, no plots, no files):
//! throughput in events handled. Beside it, `hand_written_heap`: a minimal Rust heap
//! simulator of the same model (the port of `benches/python/reference_heap.py`), the
//! yardstick the CPU-time target is stated against, measured on the same machine.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use rand::RngExt;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::Exp1;
use retrysim::run::simulate;
use retrysim::scenario::{load, Source};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

fn reference(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/reference.toml");
    let loaded = load(
        Source::read(std::path::Path::new(path)).expect("reference scenario"),
        &[],
    )
    .expect("valid reference scenario");
    let scn = loaded.scenario;
    let (metrics, _) = simulate(&scn, scn.seed);
    let events = metrics.totals.events;
    // The baseline must model the same system, or the comparison means nothing. At
    // rho = 0.9 after the outage the model is bimodal (some seeds fall into a retry-driven
    // overload for a while), so the baseline uses the first seed that lands in the same
    // regime as retrysim's run; a systematic difference finds none and fails here.
    let amp = metrics.totals.attempts as f64 / metrics.totals.logical as f64;
    let (seed, minimal) = (1..=20)
        .map(|seed| (seed, hand_written::run(seed)))
        .find(|(_, m)| (m.amplification() - amp).abs() < 0.01)
        .unwrap_or_else(|| panic!("no hand-written run near retrysim's amplification {amp}"));
    eprintln!(
        "retrysim: {events} events, amplification {amp:.4}; hand-written (seed {seed}): {} events, amplification {:.4}, success {:.4}",
        minimal.events,
        minimal.amplification(),
        minimal.succeeded as f64 / minimal.logical as f64
    );
    let mut g = c.benchmark_group("reference");
    g.throughput(Throughput::Elements(events));
    g.bench_function("run_300s", |b| b.iter(|| simulate(&scn, scn.seed)));
    g.throughput(Throughput::Elements(minimal.events));
    g.bench_function("hand_written_heap", |b| b.iter(|| hand_written::run(seed)));
    g.finish();
}

/// A three-tier service graph (scenarios/cascade.toml at its base point: 200 requests/s
/// for 60 s, every tier retrying, a 10 s database outage), in events per second, beside
/// the single-dependency reference run: the target is at least half its rate.
fn graph(c: &mut Criterion) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/cascade.toml");
    let loaded = load(
        Source::read(std::path::Path::new(path)).expect("cascade scenario"),
        &[],
    )
    .expect("valid cascade scenario");
    let scn = loaded.scenario;
    let (metrics, _) = simulate(&scn, scn.seed);
    eprintln!(
        "cascade: {} events, {} logical requests",
        metrics.totals.events, metrics.totals.logical
    );
    let mut g = c.benchmark_group("graph");
    g.throughput(Throughput::Elements(metrics.totals.events));
    g.bench_function("cascade_three_tiers", |b| {
        b.iter(|| simulate(&scn, scn.seed))
    });
    g.finish();
}

/// The smallest simulator of the reference model one would write by hand: a binary
/// heap of `(time, seq)` events, one event per timeout, no metrics beyond counts.
mod hand_written {
    use super::*;

    const RATE: f64 = 900.0;
    const SERVERS: u32 = 10;
    const MEAN_SERVICE_NS: f64 = 10e6;
    const QUEUE_LIMIT: usize = 100;
    const MAX_ATTEMPTS: u32 = 3;
    const TIMEOUT_NS: u64 = 100_000_000;
    const BASE_NS: u64 = 10_000_000;
    const CAP_NS: u64 = 1_000_000_000;
    const OUTAGE_NS: (u64, u64) = (60_000_000_000, 90_000_000_000);
    const FAIL_AFTER_NS: u64 = 1_000_000;
    const DURATION_NS: u64 = 300_000_000_000;
    const DRAIN_NS: u64 = 60_000_000_000;

    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Ev {
        Arrival,
        ServiceDone { att: u32, ok: bool },
        Timeout { att: u32 },
        Retry { req: u32 },
    }

    /// The counts of one run.
    pub struct Counts {
        pub logical: u64,
        pub attempts: u64,
        pub succeeded: u64,
        pub events: u64,
    }

    impl Counts {
        pub fn amplification(&self) -> f64 {
            self.attempts as f64 / self.logical as f64
        }
    }

    struct Sim {
        rng: ChaCha8Rng,
        heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
        seq: u64,
        /// Per request: attempts made.
        requests: Vec<u32>,
        /// Per attempt: (request, still live).
        attempts: Vec<(u32, bool)>,
        queue: VecDeque<u32>,
        busy: u32,
        counts: Counts,
    }

    impl Sim {
        fn push(&mut self, t: u64, ev: Ev) {
            self.heap.push(Reverse((t, self.seq, ev)));
            self.seq += 1;
        }

        fn exp_ns(&mut self, mean_ns: f64) -> u64 {
            let x: f64 = self.rng.sample(Exp1);
            (x * mean_ns) as u64
        }

        fn start_service(&mut self, t: u64, att: u32) {
            self.busy += 1;
            if (OUTAGE_NS.0..OUTAGE_NS.1).contains(&t) {
                self.push(t + FAIL_AFTER_NS, Ev::ServiceDone { att, ok: false });
            } else {
                let d = self.exp_ns(MEAN_SERVICE_NS);
                self.push(t + d, Ev::ServiceDone { att, ok: true });
            }
        }

        fn send_attempt(&mut self, t: u64, req: u32) {
            self.requests[req as usize] += 1;
            let att = self.attempts.len() as u32;
            self.attempts.push((req, true));
            self.counts.attempts += 1;
            self.push(t + TIMEOUT_NS, Ev::Timeout { att });
            if self.busy < SERVERS {
                self.start_service(t, att);
            } else if self.queue.len() < QUEUE_LIMIT {
                self.queue.push_back(att);
            } else {
                self.attempt_failed(t, att);
            }
        }

        fn attempt_failed(&mut self, t: u64, att: u32) {
            let (req, live) = self.attempts[att as usize];
            if !live {
                return;
            }
            self.attempts[att as usize].1 = false;
            let n = self.requests[req as usize];
            if n >= MAX_ATTEMPTS {
                return;
            }
            let ceiling = CAP_NS.min(BASE_NS << (n - 1));
            let wait = self.rng.random_range(0..=ceiling);
            self.push(t + wait, Ev::Retry { req });
        }
    }

    /// Runs the reference model once and returns its counts.
    pub fn run(seed: u64) -> Counts {
        let mut s = Sim {
            rng: ChaCha8Rng::seed_from_u64(seed),
            heap: BinaryHeap::new(),
            seq: 0,
            requests: Vec::new(),
            attempts: Vec::new(),
            queue: VecDeque::new(),
            busy: 0,
            counts: Counts {
                logical: 0,
                attempts: 0,
                succeeded: 0,
                events: 0,
            },
        };
        let first = s.exp_ns(1e9 / RATE);
        s.push(first, Ev::Arrival);
        while let Some(Reverse((t, _, ev))) = s.heap.pop() {
            if t > DURATION_NS + DRAIN_NS {
                break;
            }
            s.counts.events += 1;
            match ev {
                Ev::Arrival => {
                    let req = s.requests.len() as u32;
                    s.requests.push(0);
                    s.counts.logical += 1;
                    s.send_attempt(t, req);
                    let next = t + s.exp_ns(1e9 / RATE);
                    if next < DURATION_NS {
                        s.push(next, Ev::Arrival);
                    }
                }
                Ev::ServiceDone { att, ok } => {
                    s.busy -= 1;
                    if !ok {
                        s.attempt_failed(t, att);
                    } else if s.attempts[att as usize].1 {
                        s.attempts[att as usize].1 = false;
                        s.counts.succeeded += 1;
                    }
                    while s.busy < SERVERS {
                        let Some(next) = s.queue.pop_front() else {
                            break;
                        };
                        s.start_service(t, next);
                    }
                }
                Ev::Timeout { att } => s.attempt_failed(t, att),
                Ev::Retry { req } => s.send_attempt(t, req),
            }
        }
        s.counts
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().without_plots().sample_size(20);
    targets = reference, graph
}
criterion_main!(benches);
