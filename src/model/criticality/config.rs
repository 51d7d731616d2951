//! Priority shedding as validated ([`ShedConfig`]): the threshold of each class and
//! the decision per arriving attempt; and what a scenario uses of request classes.

use crate::model::config::Scenario;

use super::{Criticality, Signal};

/// A tier's priority shedding (`shed_by_criticality`): an arriving attempt of class
/// `c` is shed when the tier's load (its [`Signal`]) is at least `c`'s threshold.
/// Thresholds never decrease with the class, so a class is shed only once every
/// lower class is; `critical_plus` is never shed by it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShedConfig {
    /// What the load is.
    pub signal: Signal,
    /// Per class below `critical_plus` (by its index), the load from which it is shed;
    /// infinite for a class that is not.
    pub thresholds: [f64; 3],
}

impl ShedConfig {
    /// The threshold of class `c`, if it is shed at all.
    pub fn threshold(&self, c: Criticality) -> Option<f64> {
        self.thresholds
            .get(c as usize)
            .copied()
            .filter(|t| t.is_finite())
    }

    /// Whether an attempt of class `c` is shed at load `load` (`signal`'s fraction as
    /// it arrives).
    #[inline]
    pub fn sheds(&self, c: Criticality, load: f64) -> bool {
        self.thresholds.get(c as usize).is_some_and(|&t| load >= t)
    }

    /// The load of a tier with `busy` of `servers` servers busy and `queued` of
    /// `queue_limit` places taken (validation makes the signal's denominator finite
    /// and positive; a tier with no server left is fully loaded).
    #[inline]
    pub fn load(&self, busy: u32, servers: u32, queued: u64, queue_limit: u64) -> f64 {
        match self.signal {
            Signal::QueueFill if queue_limit == 0 => 1.0,
            Signal::QueueFill => queued as f64 / queue_limit as f64,
            Signal::Utilisation if servers == 0 => 1.0,
            Signal::Utilisation => f64::from(busy) / f64::from(servers),
        }
    }
}

impl Scenario {
    /// Whether a tier sheds by criticality: only then does an attempt's class change
    /// what happens to it.
    pub fn sheds_by_criticality(&self) -> bool {
        self.services
            .iter()
            .any(|s| s.capacity.shed_by_criticality.is_some())
    }

    /// Whether the scenario uses request classes: a fleet sets `criticality`, a layer
    /// `retry_criticality`, or a tier `shed_by_criticality`.
    pub fn uses_criticality(&self) -> bool {
        !self.criticality_classes().is_empty()
    }

    /// The classes the scenario's requests and retries are sent at, highest first,
    /// when any fleet or layer names one (none otherwise, even with shedding tiers:
    /// every request is then `critical`, the default, which is listed).
    pub fn criticality_classes(&self) -> Vec<Criticality> {
        let named = self.fleets.iter().any(|f| f.criticality.is_some())
            || self.all_layers().any(|l| l.retry_criticality.is_some())
            || self.sheds_by_criticality();
        if !named {
            return Vec::new();
        }
        let mut present = [false; 4];
        for f in &self.fleets {
            present[f.class() as usize] = true;
        }
        for l in self.all_layers() {
            if let Some(c) = l.retry_criticality {
                present[c as usize] = true;
            }
        }
        Criticality::ALL
            .into_iter()
            .rev()
            .filter(|c| present[*c as usize])
            .collect()
    }

    /// Every layer of the scenario: the fleets', then the service calls'.
    fn all_layers(&self) -> impl Iterator<Item = &crate::model::config::LayerConfig> {
        self.fleets.iter().flat_map(|f| &f.layers).chain(
            self.services
                .iter()
                .flat_map(|s| &s.calls)
                .flat_map(|c| &c.layers),
        )
    }
}

impl crate::model::config::FleetConfig {
    /// The class of the fleet's requests (`critical` unless it sets `criticality`).
    #[inline]
    pub fn class(&self) -> Criticality {
        self.criticality.unwrap_or_default()
    }
}
