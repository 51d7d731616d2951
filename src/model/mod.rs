//! The retry model of MODEL.md: fleets of clients, nested retry layers, a
//! capacity-limited dependency and correlated outages, as an event handler for the
//! engine. It takes validated configuration values, never files.

pub mod arrival;
pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod config;
pub mod dist;
pub mod duration;
pub mod field;
pub mod limiter;
pub mod limits;
pub mod outage;
pub mod outcome;
pub mod request;
pub mod timers;
pub mod windows;
pub mod world;

pub use world::{Event, Packed, World};
