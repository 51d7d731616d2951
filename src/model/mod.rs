//! The retry model of MODEL.md: fleets of clients, nested retry layers, a
//! capacity-limited dependency and correlated outages, as an event handler for the
//! engine. It takes validated configuration values, never files.

pub mod admission;
pub(crate) mod arrival;
pub mod attempts;
pub mod backoff;
pub mod bound;
pub mod breaker;
pub mod broker;
pub mod budget;
mod call;
pub mod concurrency;
pub mod config;
pub mod criticality;
mod dependency;
pub mod dist;
pub mod duration;
pub(crate) mod event;
pub mod field;
mod fleet;
pub mod guard;
pub mod hedge;
mod layer;
pub mod limiter;
pub mod limits;
pub(crate) mod observe;
pub mod outage;
pub mod outcome;
pub mod queue_policy;
pub mod request;
mod service;
mod stack;
pub(crate) mod text;
pub(crate) mod timers;
mod trace;
pub mod windows;
pub mod world;

pub use event::{Event, Packed};
pub use world::World;
