//! The integration tests, as one test binary: each module is one concern, and linking
//! one binary instead of twenty keeps the test build fast.

mod common;

mod arithmetic;
mod bad_input;
mod budgets_breakers;
mod cli_args;
mod columns;
mod config_gate;
mod conventions;
mod diff;
mod formats;
mod golden;
mod interrupt;
mod layering;
mod measured;
mod output_safety;
mod policies;
mod queueing_theory;
mod retry_counts;
mod scenarios;
mod search;
mod special_files;
