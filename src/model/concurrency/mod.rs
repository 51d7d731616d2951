//! Concurrency limits: how many requests a tier (or a client) lets be in flight at
//! once, the limit fixed or sized from measured latency. A request arriving with
//! `limit` in flight is refused at once and its caller sees [`Rejected`] (429, 503 or
//! gRPC UNAVAILABLE), which a client retry policy may retry. The limit learns from
//! samples: each finished request's RTT, the in-flight count when it started and
//! whether it was dropped (timed out).
//!
//! The kinds, one file each, emulated as their upstream code ships them (see
//! ADMISSION.md §4-§7), with the upstream test vectors replayed in their tests:
//! - [`fixed`]: Netflix `FixedLimit`;
//! - [`aimd`]: Netflix `AIMDLimit`;
//! - [`vegas`]: Netflix `VegasLimit`, with its log10 thresholds as the code computes
//!   them, smoothing and no-load RTT probing;
//! - [`gradient2`]: Netflix `Gradient2Limit`;
//! - [`envoy_gradient`]: Envoy's adaptive concurrency gradient controller (minRTT
//!   windows with jitter and a pinned limit, a percentile of a window's samples in
//!   [`circllhist`]).
//!
//! The Netflix kinds take an optional `window = { ... }` ([`window`]: Netflix's
//! `WindowedLimit`, which averages a window of samples into one). This root holds the
//! written form [`ConcurrencyLimitFile`], the validated [`ConcurrencyLimitConfig`] and
//! the runtime state [`ConcurrencyLimit`]. Time is integer nanoseconds; every update is
//! O(1) but Envoy's, whose memory is bounded by the bins its window's samples occupy.

pub(crate) mod aimd;
pub(crate) mod circllhist;
pub(crate) mod client;
pub(crate) mod envoy_gradient;
pub(crate) mod fixed;
pub(crate) mod gradient2;
mod record;
pub(crate) mod status;
pub(crate) mod tier;
pub(crate) mod vegas;
pub(crate) mod window;

use rand::Rng;
use serde::{Deserialize, Serialize};

use crate::engine::Nanos;
use crate::model::field::{Ctx, R};

pub(crate) use record::Counts;
pub(crate) use status::Rejected;
pub(crate) use tier::TierLimit;

/// Bytes a run keeps per bucket for each tier with a limit: the limit's integral over
/// the bucket and the attempts it refused ([`TierSeries`]).
pub(crate) const BYTES_PER_BUCKET: u64 = 24;

/// Bytes a tier with a limit keeps per arena node: when the node's attempt arrived
/// and how many were in flight then ([`TierLimit`]'s sample stamps).
pub(crate) const BYTES_PER_NODE: u64 = 16;

/// A count that is a Java `int` upstream.
pub(crate) fn java_int(c: &Ctx, field: &str, v: u64) -> R<i32> {
    i32::try_from(v).or_else(|_| c.err(field, format!("must be at most {} (found {v})", i32::MAX)))
}

/// The limit of a tier, as written: `concurrency_limit = { kind = "...", ... }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ConcurrencyLimitFile {
    /// A fixed limit.
    Fixed(fixed::Written),
    /// Netflix's AIMD.
    Aimd(aimd::Written),
    /// Netflix's Vegas.
    Vegas(vegas::Written),
    /// Netflix's Gradient2.
    Gradient2(gradient2::Written),
    /// Envoy's adaptive concurrency gradient controller.
    EnvoyGradient(envoy_gradient::Written),
}

impl ConcurrencyLimitFile {
    /// The validated limit; `p` is the field path of the table
    /// (`dependency.concurrency_limit`).
    pub fn validate(&self, c: &Ctx, p: &str) -> R<ConcurrencyLimitConfig> {
        match self {
            ConcurrencyLimitFile::Fixed(w) => w.validate(c, p),
            ConcurrencyLimitFile::Aimd(w) => w.validate(c, p),
            ConcurrencyLimitFile::Vegas(w) => w.validate(c, p),
            ConcurrencyLimitFile::Gradient2(w) => w.validate(c, p),
            ConcurrencyLimitFile::EnvoyGradient(w) => w.validate(c, p),
        }
    }
}

/// A validated concurrency limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ConcurrencyLimitConfig {
    /// A fixed limit.
    Fixed(fixed::Config),
    /// Netflix's AIMD.
    Aimd(aimd::Config),
    /// Netflix's Vegas.
    Vegas(vegas::Config),
    /// Netflix's Gradient2.
    Gradient2(gradient2::Config),
    /// Envoy's gradient controller.
    EnvoyGradient(envoy_gradient::Config),
}

impl ConcurrencyLimitConfig {
    /// What a refused caller sees.
    pub fn status(&self) -> Rejected {
        match self {
            ConcurrencyLimitConfig::Fixed(c) => c.status,
            ConcurrencyLimitConfig::Aimd(c) => c.status,
            ConcurrencyLimitConfig::Vegas(c) => c.status,
            ConcurrencyLimitConfig::Gradient2(c) => c.status,
            ConcurrencyLimitConfig::EnvoyGradient(c) => c.status,
        }
    }

    /// Its kind as written.
    pub fn kind(&self) -> &'static str {
        match self {
            ConcurrencyLimitConfig::Fixed(_) => "fixed",
            ConcurrencyLimitConfig::Aimd(_) => "aimd",
            ConcurrencyLimitConfig::Vegas(_) => "vegas",
            ConcurrencyLimitConfig::Gradient2(_) => "gradient2",
            ConcurrencyLimitConfig::EnvoyGradient(_) => "envoy_gradient",
        }
    }

    /// Whether the limit moves with latency (all but `fixed`).
    pub fn is_adaptive(&self) -> bool {
        !matches!(self, ConcurrencyLimitConfig::Fixed(_))
    }

    /// Its WindowedLimit aggregation, if any.
    pub fn window(&self) -> Option<window::Config> {
        match self {
            ConcurrencyLimitConfig::Aimd(c) => c.window,
            ConcurrencyLimitConfig::Vegas(c) => c.window,
            ConcurrencyLimitConfig::Gradient2(c) => c.window,
            ConcurrencyLimitConfig::Fixed(_) | ConcurrencyLimitConfig::EnvoyGradient(_) => None,
        }
    }

    /// What explain says of the limit.
    pub fn describe(&self) -> String {
        match self {
            ConcurrencyLimitConfig::Fixed(c) => c.describe(),
            ConcurrencyLimitConfig::Aimd(c) => c.describe(),
            ConcurrencyLimitConfig::Vegas(c) => c.describe(),
            ConcurrencyLimitConfig::Gradient2(c) => c.describe(),
            ConcurrencyLimitConfig::EnvoyGradient(c) => c.describe(),
        }
    }
}

/// The algorithm's own state.
#[derive(Debug, Clone, PartialEq)]
enum Algo {
    Fixed(i32),
    Aimd(aimd::Aimd),
    Vegas(vegas::Vegas),
    Gradient2(gradient2::Gradient2),
    Envoy(Box<envoy_gradient::Controller>),
}

/// A tier's concurrency limit at run time.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConcurrencyLimit {
    window: Option<window::Window>,
    algo: Algo,
}

impl ConcurrencyLimit {
    /// The limit at time 0 (`rng` draws Vegas' first probe jitter).
    pub(crate) fn new<G: Rng + ?Sized>(
        cfg: ConcurrencyLimitConfig,
        rng: &mut G,
    ) -> ConcurrencyLimit {
        let algo = match cfg {
            ConcurrencyLimitConfig::Fixed(c) => Algo::Fixed(c.limit),
            ConcurrencyLimitConfig::Aimd(c) => Algo::Aimd(aimd::Aimd::new(c)),
            ConcurrencyLimitConfig::Vegas(c) => Algo::Vegas(vegas::Vegas::new(c, rng)),
            ConcurrencyLimitConfig::Gradient2(c) => Algo::Gradient2(gradient2::Gradient2::new(c)),
            ConcurrencyLimitConfig::EnvoyGradient(c) => {
                Algo::Envoy(Box::new(envoy_gradient::Controller::new(c)))
            }
        };
        ConcurrencyLimit {
            window: cfg.window().map(window::Window::new),
            algo,
        }
    }

    /// The current limit (a negative Java limit reads 0).
    pub(crate) fn limit(&self) -> u32 {
        let l = match &self.algo {
            Algo::Fixed(l) => *l,
            Algo::Aimd(a) => a.limit(),
            Algo::Vegas(v) => v.limit(),
            Algo::Gradient2(g) => g.limit(),
            Algo::Envoy(e) => return e.limit(),
        };
        l.max(0) as u32
    }

    /// Whether a request arriving with `inflight` in flight (itself not counted) is
    /// let through: `inflight < limit`, as Netflix's semaphore and Envoy's
    /// `forwardingDecision` decide.
    pub(crate) fn admits(&self, inflight: u32) -> bool {
        inflight < self.limit()
    }

    /// A finished request: started at `start`, took `rtt`, with `inflight` in flight
    /// when it started (itself included), `dropped` when it timed out. Envoy samples
    /// every response and ignores `inflight` and `dropped`.
    pub(crate) fn on_sample<G: Rng + ?Sized>(
        &mut self,
        start: Nanos,
        rtt: Nanos,
        inflight: u32,
        dropped: bool,
        rng: &mut G,
    ) {
        let (start, rtt, inflight, dropped) = match &mut self.window {
            None => (start, rtt, inflight, dropped),
            Some(w) => match w.add(start, rtt, inflight, dropped) {
                Some(s) => (s.start, s.rtt, s.inflight, s.dropped),
                None => return,
            },
        };
        match &mut self.algo {
            Algo::Fixed(_) => {}
            Algo::Aimd(a) => a.on_sample(rtt, inflight, dropped),
            Algo::Vegas(v) => v.on_sample(rtt, inflight, dropped, rng),
            Algo::Gradient2(g) => g.on_sample(rtt, inflight),
            Algo::Envoy(e) => e.on_sample(start, start.saturating_add(rtt), rng),
        }
    }

    /// When the limit next needs [`ConcurrencyLimit::on_tick`] (Envoy's timers only).
    pub(crate) fn next_tick(&self) -> Option<Nanos> {
        match &self.algo {
            Algo::Envoy(e) => e.next_tick(),
            _ => None,
        }
    }

    /// Time has reached `now`: fires the timers due.
    pub(crate) fn on_tick(&mut self, now: Nanos) {
        if let Algo::Envoy(e) = &mut self.algo {
            e.on_tick(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn parse(s: &str) -> Result<ConcurrencyLimitFile, String> {
        toml::from_str::<ConcurrencyLimitFile>(s).map_err(|e| e.to_string())
    }

    fn check(s: &str) -> Result<ConcurrencyLimitConfig, String> {
        let f = parse(s)?;
        f.validate(&Ctx, "dependency.concurrency_limit")
            .map_err(|e| format!("{}: {}", e.field, e.message))
    }

    #[test]
    fn every_kind_reads_with_its_upstream_defaults() {
        let ConcurrencyLimitConfig::Aimd(a) = check("kind = \"aimd\"").unwrap() else {
            panic!()
        };
        assert_eq!(a, aimd::Config::default());
        let ConcurrencyLimitConfig::Vegas(v) = check("kind = \"vegas\"").unwrap() else {
            panic!()
        };
        assert_eq!(v, vegas::Config::default());
        let ConcurrencyLimitConfig::Gradient2(g) = check("kind = \"gradient2\"").unwrap() else {
            panic!()
        };
        assert_eq!(g, gradient2::Config::default());
        let e = check(
            "kind = \"envoy_gradient\"\nupdate_interval = \"100ms\"\nmin_rtt_interval = \"60s\"",
        )
        .unwrap();
        assert_eq!(
            e,
            ConcurrencyLimitConfig::EnvoyGradient(envoy_gradient::Config::with_intervals(
                100, 60_000
            ))
        );
        assert_eq!(e.status(), Rejected::Status(503));
        let f = check("kind = \"fixed\"\nlimit = 8\nstatus = \"unavailable\"").unwrap();
        assert_eq!(f.status(), Rejected::Unavailable);
        assert_eq!(f.kind(), "fixed");
        assert!(!f.is_adaptive());
        let w = check("kind = \"gradient2\"\nwindow = {}").unwrap();
        assert_eq!(w.window(), Some(window::Config::default()));
    }

    #[test]
    fn validation_errors_name_the_field_and_what_is_allowed() {
        let cases = [
            ("kind = \"fixed\"", "dependency.concurrency_limit.limit: is required for kind = \"fixed\" (requests in flight at most, at least 1)"),
            ("kind = \"fixed\"\nlimit = 0", "dependency.concurrency_limit.limit: must be at least 1 (found 0)"),
            ("kind = \"fixed\"\nlimit = 3000000000", "dependency.concurrency_limit.limit: must be at most 2147483647 (found 3000000000)"),
            ("kind = \"fixed\"\nlimit = 1\nstatus = 500", "dependency.concurrency_limit.status: must be 429, 503 or \"unavailable\" (found 500)"),
            ("kind = \"fixed\"\nlimit = 1\nstatus = \"UNAVAILABLE\"", "dependency.concurrency_limit.status: must be 429, 503 or \"unavailable\" (found \"UNAVAILABLE\")"),
            ("kind = \"aimd\"\nbackoff_ratio = 1.0", "dependency.concurrency_limit.backoff_ratio: must be at least 0.5 and below 1, as AIMDLimit requires (found 1)"),
            ("kind = \"aimd\"\nmin_limit = 30\nmax_limit = 10", "dependency.concurrency_limit.max_limit: must be at least min_limit 30 (found 10)"),
            ("kind = \"aimd\"\ntimeout = \"0s\"", "dependency.concurrency_limit.timeout: must be a positive duration (found 0s)"),
            ("kind = \"vegas\"\nsmoothing = 0.0", "dependency.concurrency_limit.smoothing: must be above 0 and at most 1 (found 0)"),
            ("kind = \"vegas\"\ndecrease_ratio = 1.5", "dependency.concurrency_limit.decrease_ratio: must be above 0 and below 1 (found 1.5)"),
            ("kind = \"vegas\"\nprobe_multiplier = 0", "dependency.concurrency_limit.probe_multiplier: must be at least 1 (found 0)"),
            ("kind = \"gradient2\"\nrtt_tolerance = 0.9", "dependency.concurrency_limit.rtt_tolerance: must be at least 1, as Gradient2Limit requires (found 0.9)"),
            ("kind = \"gradient2\"\nwindow = { min_window = \"50ms\" }", "dependency.concurrency_limit.window.min_window: must be at least 100ms, as WindowedLimit requires (found 50ms)"),
            ("kind = \"gradient2\"\nwindow = { window_size = 5 }", "dependency.concurrency_limit.window.window_size: must be at least 10 (found 5)"),
            ("kind = \"gradient2\"\nwindow = { min_window = \"2s\", max_window = \"1s\" }", "dependency.concurrency_limit.window.max_window: must be at least min_window 2s (found 1s)"),
            ("kind = \"envoy_gradient\"\nmin_rtt_interval = \"60s\"", "dependency.concurrency_limit.update_interval: is required for kind = \"envoy_gradient\" (time between limit updates, at least 1ms)"),
            ("kind = \"envoy_gradient\"\nupdate_interval = \"100ms\"\nmin_rtt_interval = \"1500us\"", "dependency.concurrency_limit.min_rtt_interval: must be whole milliseconds, as Envoy reads it (found 1.5ms)"),
            ("kind = \"envoy_gradient\"\nupdate_interval = \"100ms\"\nmin_rtt_interval = \"60s\"\njitter = 150.0", "dependency.concurrency_limit.jitter: must be between 0 and 100 (found 150)"),
            ("kind = \"envoy_gradient\"\nupdate_interval = \"100ms\"\nmin_rtt_interval = \"60s\"\nmin_concurrency = 0", "dependency.concurrency_limit.min_concurrency: must be at least 1 (found 0)"),
            ("kind = \"envoy_gradient\"\nupdate_interval = \"100ms\"\nmin_rtt_interval = \"60s\"\nmax_concurrency_limit = 2", "dependency.concurrency_limit.max_concurrency_limit: must be at least min_concurrency 3 (found 2)"),
        ];
        for (toml, want) in cases {
            assert_eq!(check(toml).unwrap_err(), want, "{toml}");
        }
    }

    #[test]
    fn unknown_keys_and_kinds_are_refused() {
        assert!(parse("kind = \"fixed\"\nlimit = 1\nwindow = {}")
            .unwrap_err()
            .contains("unknown field `window`"));
        assert!(parse("kind = \"envoy_gradient\"\nwindow = {}")
            .unwrap_err()
            .contains("unknown field `window`"));
        assert!(parse("kind = \"bbr\"")
            .unwrap_err()
            .contains("unknown variant `bbr`"));
    }

    #[test]
    fn explain_says_what_each_kind_does_with_its_settings() {
        let texts = [
            (check("kind = \"fixed\"\nlimit = 8").unwrap(), "at most 8 in flight"),
            (check("kind = \"aimd\"").unwrap(), "multiplies it by 0.9"),
            (check("kind = \"vegas\"").unwrap(), "max(1, floor(log10 L)) as the code computes it"),
            (check("kind = \"gradient2\"\nwindow = {}").unwrap(), "Netflix WindowedLimit"),
            (check("kind = \"envoy_gradient\"\nupdate_interval = \"100ms\"\nmin_rtt_interval = \"60s\"").unwrap(), "every 60s plus up to 15% jitter"),
        ];
        for (cfg, part) in texts {
            let d = cfg.describe();
            assert!(d.contains(part), "{}: {d}", cfg.kind());
            assert!(d.contains("answered"), "{d}");
        }
        assert!(
            check("kind = \"fixed\"\nlimit = 8\nstatus = \"unavailable\"")
                .unwrap()
                .describe()
                .contains("answered gRPC UNAVAILABLE at once")
        );
    }

    #[test]
    fn a_windowed_limit_updates_once_per_full_window() {
        let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let cfg = check("kind = \"aimd\"\nwindow = {}").unwrap();
        let mut l = ConcurrencyLimit::new(cfg, rng);
        let ms = 1_000_000;
        for i in 0..200 {
            l.on_sample(i * ms, ms, 20, false, rng); // ends by 201ms: one window closed (the first)
        }
        assert_eq!(l.limit(), 20, "the first window held one sample");
        l.on_sample(1_000 * ms, 10 * ms, 20, false, rng); // closes a window of 200
        assert_eq!(l.limit(), 21);
    }

    #[test]
    fn envoy_is_driven_by_its_timers_and_the_others_have_none() {
        let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let e = check(
            "kind = \"envoy_gradient\"\nupdate_interval = \"100ms\"\nmin_rtt_interval = \"60s\"",
        )
        .unwrap();
        let mut l = ConcurrencyLimit::new(e, rng);
        assert_eq!(l.limit(), 3);
        assert_eq!(l.next_tick(), Some(100_000_000));
        l.on_tick(100_000_000);
        assert_eq!(
            l.next_tick(),
            None,
            "the update timer gives up during the minRTT window"
        );
        let f = ConcurrencyLimit::new(check("kind = \"vegas\"").unwrap(), rng);
        assert_eq!(f.next_tick(), None);
    }

    #[test]
    fn the_schema_gives_each_default_and_the_allowed_statuses() {
        let schema = serde_json::to_string(&schemars::schema_for!(ConcurrencyLimitFile)).unwrap();
        for part in [
            "\"default\":0.9",
            "\"default\":30,",
            "\"default\":600,",
            "\"default\":50.0",
            "\"default\":\"1s\"",
            "\"default\":\"100us\"",
            "\"enum\":[429,503]",
            "\"const\":\"unavailable\"",
        ] {
            assert!(schema.contains(part), "{part} in {schema}");
        }
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn concurrency_example() {
        use crate::model::concurrency::{aimd, ConcurrencyLimit, ConcurrencyLimitConfig};
        use rand::SeedableRng;
        let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let mut l =
            ConcurrencyLimit::new(ConcurrencyLimitConfig::Aimd(aimd::Config::default()), rng);
        assert_eq!(l.limit(), 20);
        assert!(l.admits(19) && !l.admits(20));
        l.on_sample(0, 1_000_000, 10, false, rng); // 10·2 ≥ 20: + 1
        assert_eq!(l.limit(), 21);
        l.on_sample(0, 1_000_000, 10, true, rng); // a drop: (int)(21·0.9)
        assert_eq!(l.limit(), 20); // 18, clamped to min_limit 20
    }
}
