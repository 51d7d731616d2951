//! # retrysim
//!
//! A deterministic discrete-event simulator of retry storms: fleets of clients, stacks
//! of nested retry layers (attempts, timeouts, backoff, jitter, budgets, breakers), and
//! a capacity-limited dependency with correlated outages.
//!
//! The data flow is the module layout; each module uses only those below it:
//!
//! ```text
//! scenario file ─► scenario (read with caps, --set, presets, parse, validate)
//!               ─► model::config::Scenario (the validated model, knowing nothing of files)
//!               ─► run: model::World on the engine ─► metrics (series, summary, recovery)
//!               ─► export (CSV rows, the manifest, atomic writes, ownership) and plot
//! sweep: a grid of scenarios × replications run in parallel, sharded, merged
//! explain, check: the model in words and its lints; expectations and baselines
//! ```
//!
//! Inside [`model`], [`model::world`] owns the state of a run and dispatches its events
//! (`model/event.rs` is the one table of events and their packed form); the parts are
//! the fleets, the retry state machine of a call, the layers and the dependency. Each
//! policy family is a folder with one file per vendor holding everything about it (its
//! written table, validation, arithmetic, explain text, bound and tests):
//! [`model::backoff`], [`model::budget`], [`model::breaker`], [`model::limiter`]. Each
//! mechanism is a folder the same way (its written form, rules, validated form,
//! explain text and runtime): [`model::hedge`], [`model::guard`], [`model::broker`].
//! The one catalog of output columns is [`metrics::columns`].
//!
//! # Entry points
//!
//! The functions of [`api`], re-exported here, are what the command line calls:
//!
//! - [`load_scenario`]: read a scenario (or the embedded default) with [`Overrides`]
//!   (`--set` strings and a typed seed), parse and validate it;
//! - [`load_scenario_text`]: the same for a scenario given as text (no file system);
//! - [`run_scenario`]: run one replication in memory; [`run_to_folder`]: run the
//!   replications into a results folder; [`run_tables`]: run one replication in
//!   memory and render the rows `retrysim run` writes for it (the playground's call);
//! - [`plan_sweep`] and [`run_sweep`]: plan a `[sweep]` grid and run it (resumable,
//!   shardable, with a stop flag and a [`sweep::Progress`]); [`merge_shards`];
//! - [`explain_scenario`]: the resolved model and its lints;
//! - [`check::prepare`] and [`check::run_all`]: expectations and baselines;
//! - [`draw_folder`]: the charts and report of a results folder.
//!
//! Each returns an [`Error`] whose kind gives the exit code ([`Error::exit_code`]).
//!
//! ```
//! use retrysim::{load_scenario, run_scenario, Overrides};
//! let o = Overrides { sets: vec!["duration=\"30s\"".into()], seed: Some(7) };
//! let loaded = load_scenario(None, &o).unwrap();
//! let r = run_scenario(&loaded.scenario, 0);
//! assert_eq!(r.seed, 7);
//! assert!(r.metrics.totals.logical > 0);
//! ```

#![warn(missing_docs, unreachable_pub, missing_debug_implementations)]

pub mod api;
pub mod check;
#[cfg(not(target_arch = "wasm32"))]
mod cli;
pub mod diff;
pub mod engine;
pub mod error;
pub mod explain;
pub mod export;
pub mod metrics;
pub mod model;
pub mod plot;
pub mod run;
pub mod scenario;
pub mod search;
pub mod sweep;
pub mod truncation;

#[cfg(not(target_arch = "wasm32"))]
pub use api::draw_folder;
pub use api::{
    column_dictionary, explain_scenario, load_scenario, load_scenario_text, merge_shards,
    plan_sweep, run_scenario, run_sweep, run_tables, run_to_folder, sweep_out, Explained,
    Overrides, Target,
};
pub use error::{Error, Truncation};
pub use plot::{run_charts, Branch, RunCharts};

/// The `retrysim` command: parses the process's arguments, runs the command and
/// returns its exit code (`src/main.rs` exits with it). The command line lives in the
/// library so that it, and not the public API, reaches the crate's internals.
#[cfg(not(target_arch = "wasm32"))]
pub fn cli_main() -> i32 {
    cli::main()
}
