//! The white-box tests: checks that need the crate's internals (a vendor's arithmetic,
//! a recorder's rows, a trace's spans, the memory estimate), compiled into the
//! library's unit tests so that the public API stays narrow. Tests of what a user
//! sees (the command line, the public API) are in `tests/integration/`.

mod admission;
mod arrival_trace;
mod book;
mod cancellation;
mod check;
#[path = "../../tests/integration/common.rs"]
mod common;
mod concurrency_limit;
mod criticality;
mod determinism;
mod explain;
mod formula_guard;
mod fuzz;
mod guards;
mod hedging;
mod import_config;
mod import_libs;
mod import_mesh;
mod import_support;
mod intervals;
mod limits;
mod measured_files;
mod occ;
mod ordinals;
mod planner_metrics;
mod playground;
mod plots;
mod presets;
mod queue_consumers;
mod queue_policy;
mod recorded;
mod reject_busy;
mod runaway;
mod service_graph;
mod sweeps;
mod trace_export;
mod traces;
