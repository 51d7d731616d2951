//! The retry model of MODEL.md: fleets of clients, nested retry layers, a
//! capacity-limited dependency and correlated outages, as an event handler for the
//! engine. It takes validated configuration values, never files.

pub(crate) mod admission;
pub(crate) mod arrival;
pub(crate) mod attempts;
pub(crate) mod backoff;
pub(crate) mod bound;
pub(crate) mod breaker;
pub(crate) mod broker;
pub(crate) mod budget;
mod call;
pub(crate) mod concurrency;
pub(crate) mod config;
pub(crate) mod criticality;
mod dependency;
pub(crate) mod dist;
pub(crate) mod duration;
pub(crate) mod event;
pub(crate) mod field;
mod fleet;
pub(crate) mod guard;
pub(crate) mod hedge;
mod layer;
pub(crate) mod limiter;
pub(crate) mod limits;
pub(crate) mod observe;
pub(crate) mod outage;
pub(crate) mod outcome;
pub(crate) mod queue_policy;
pub(crate) mod request;
mod service;
mod stack;
pub(crate) mod text;
pub(crate) mod timers;
mod trace;
pub(crate) mod windows;
pub(crate) mod world;

pub(crate) use event::Packed;
pub(crate) use world::World;
