//! Request classes as written: a fleet's `criticality`, a layer's
//! `retry_criticality` (both one of [`Criticality`]'s names) and a tier's
//! `shed_by_criticality = { signal, sheddable, sheddable_plus, critical }`, validated
//! by [`ShedFile::validate`].

use serde::{Deserialize, Serialize};

/// A request class, as the SRE book names them ("Handling Overload"), lowest first:
/// the order in which a tier sheds them.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum Criticality {
    /// "Frequent partial unavailability and occasional full unavailability" is expected.
    Sheddable = 0,
    /// "Partial unavailability is expected": the default for batch jobs.
    SheddablePlus = 1,
    /// The default for production traffic: capacity is provisioned for it.
    #[default]
    Critical = 2,
    /// The most critical: "serious user-visible impact" when it fails.
    CriticalPlus = 3,
}

/// What a tier measures its load by for `shed_by_criticality`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// Queued attempts / `queue_limit`, as the attempt arrives (needs a finite
    /// `queue_limit`).
    QueueFill,
    /// Busy servers / servers available, as the attempt arrives (instantaneous; needs
    /// finite `servers`).
    Utilisation,
}

/// A tier's priority shedding as written: the load (a fraction) from which each class
/// is shed, lower classes first.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShedFile {
    /// `"queue_fill"` (queued / queue_limit; needs a finite queue_limit) or
    /// `"utilisation"` (busy / servers as the attempt arrives, instantaneous; needs
    /// finite servers).
    pub signal: Signal,
    /// Load (a fraction in (0, 1]) from which `sheddable` attempts are shed; unset:
    /// never, allowed only when no higher class is set.
    pub sheddable: Option<f64>,
    /// Load from which `sheddable_plus` attempts are shed; at least `sheddable`'s.
    /// Unset: never (then `critical` may not be set).
    pub sheddable_plus: Option<f64>,
    /// Load from which `critical` attempts are shed; at least `sheddable_plus`'s.
    /// Unset (the usual): critical attempts are refused only by a full queue.
    pub critical: Option<f64>,
    /// Refused: `critical_plus` is never shed by criticality, only by a full queue.
    #[schemars(skip)]
    pub critical_plus: Option<f64>,
}
