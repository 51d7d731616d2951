//! The integration tests, as one test binary: each module is one concern, and linking
//! one binary instead of twenty keeps the test build fast.

mod common;

mod admission;
mod arithmetic;
mod bad_input;
mod book;
mod budgets_breakers;
mod cancellation;
mod check;
mod cli_args;
mod columns;
mod conventions;
mod criticality;
mod determinism;
mod diff;
mod explain;
mod formats;
mod formula_guard;
mod fuzz;
mod golden;
mod guards;
mod hedging;
mod interrupt;
mod intervals;
mod layering;
mod limits;
mod occ;
mod ordinals;
mod output_safety;
mod planner_metrics;
mod playground;
mod plots;
mod policies;
mod presets;
mod queue_consumers;
mod queueing_theory;
mod retry_counts;
mod runaway;
mod scenarios;
mod search;
mod service_graph;
mod special_files;
mod sweeps;
mod trace_export;
mod traces;
