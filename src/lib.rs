//! # retrysim
//!
//! A deterministic discrete-event simulator of retry storms: fleets of clients, stacks
//! of nested retry layers (attempts, timeouts, backoff, jitter, budgets, breakers), and
//! a capacity-limited dependency with correlated outages.
//!
//! The data flow is the module layout:
//!
//! ```text
//! scenario file ─► scenario (parse, validate) ─► Scenario
//!               ─► run: model::World on the engine ─► metrics (series, summary, recovery)
//!               ─► export (CSV, manifest, atomic writes) and plot
//! ```
//!
//! The [`engine`] is generic and knows nothing of retries; the [`model`] takes validated
//! configuration and knows nothing of files.
//!
//! ```
//! use retrysim::scenario::{load, Source};
//! let loaded = load(Source::embedded_default(), &["duration=\"30s\"".into()]).unwrap();
//! let layout = retrysim::metrics::summary::Layout::of(&loaded.scenario);
//! let r = retrysim::run::run_one(&loaded.scenario, &layout, 0, 0);
//! assert!(r.metrics.totals.logical > 0);
//! ```

#![warn(missing_docs)]

pub mod check;
pub mod cli;
pub mod engine;
pub mod explain;
pub mod export;
pub mod metrics;
pub mod model;
pub mod plot;
pub mod run;
pub mod scenario;
pub mod sweep;
