//! Request classes and priority shedding (the SRE book's "Handling Overload"
//! criticalities). A fleet's `criticality` is the class of its requests and of every
//! call and attempt they cause, downstream calls of a service graph included; a
//! layer's `retry_criticality` lowers the class its retries (its attempts after the
//! first, and hedged copies after the first) and everything under them are sent at.
//! A tier's `shed_by_criticality` sets the load (queue fill or utilisation) from which
//! each class is shed, lower classes first: a shed attempt is refused as it arrives,
//! after the tier's limiter and before its queue, answered `priority_shed` with status
//! 503 through the tier's rejection (so `reject_cost` applies). `critical_plus` is
//! never shed by it, only refused by a full queue.
//!
//! The class travels in a byte of the node (it fits in the node's padding: a node
//! stays 56 bytes): a node takes its maker's class, a layer's retry the lower of that
//! and the layer's `retry_criticality`. Only a tier with `shed_by_criticality` reads
//! it, behind the one test per arrival of a defended tier; so the byte is kept only
//! when some tier sheds (the per-class columns need no node's class: a request's is
//! its fleet's), behind one test per node made, and costs nothing otherwise.
//!
//! Request classes are one folder: the written form ([`written`]), the rules
//! ([`validate`]), the validated form ([`config`]: [`ShedConfig`]), explain's text
//! ([`explain`]), the columns ([`columns`]) and, here, the runtime decision. Its lint
//! is `explain/lint/criticality.rs`.

pub(crate) mod columns;
pub(crate) mod config;
pub(crate) mod explain;
pub(crate) mod validate;
pub(crate) mod written;

pub(crate) use config::ShedConfig;
pub(crate) use validate::{check_retries, Tier};
pub(crate) use written::{Criticality, ShedFile, Signal};

use crate::engine::Nanos;

use super::observe::CallObserver;
use super::outcome::{Class, Outcome};
use super::world::World;

/// A node's class byte when no retry lowers it: [`Criticality::Critical`].
pub(crate) const DEFAULT_CLASS: u8 = Criticality::Critical as u8;

/// A layer's class byte for retries when it has no `retry_criticality`: above every
/// class, so the lower of the two is the inherited one.
pub(crate) const NO_LOWERING: u8 = u8::MAX;

impl Criticality {
    /// Every class, lowest first.
    pub const ALL: [Criticality; 4] = [
        Criticality::Sheddable,
        Criticality::SheddablePlus,
        Criticality::Critical,
        Criticality::CriticalPlus,
    ];

    /// The name used in scenario files and column names.
    pub fn name(self) -> &'static str {
        match self {
            Criticality::Sheddable => "sheddable",
            Criticality::SheddablePlus => "sheddable_plus",
            Criticality::Critical => "critical",
            Criticality::CriticalPlus => "critical_plus",
        }
    }

    /// The class of a node's class byte (a value above every class is
    /// `critical_plus`).
    #[inline]
    pub fn from_u8(v: u8) -> Criticality {
        match v {
            0 => Criticality::Sheddable,
            1 => Criticality::SheddablePlus,
            2 => Criticality::Critical,
            _ => Criticality::CriticalPlus,
        }
    }

    /// The class a layer's attempt number `ordinal` (1-based) is sent at, given its
    /// call's class byte `class` and the layer's retry class byte `retry`
    /// ([`NO_LOWERING`] without `retry_criticality`).
    #[inline(always)]
    pub fn of_attempt(class: u8, retry: u8, ordinal: u32) -> u8 {
        if ordinal >= 2 {
            class.min(retry)
        } else {
            class
        }
    }
}

/// Attempts a run's tiers shed by criticality, per class (by index), summed over the
/// tiers.
pub(crate) type ShedCounts = [u64; 4];

#[allow(private_bounds)]
impl<T: CallObserver> World<T> {
    /// Gives the first node of a request of `fleet` the fleet's class (only when a
    /// tier sheds by criticality).
    #[cold]
    #[inline(never)]
    pub(super) fn classify_first(&mut self, node: u32, fleet: usize) {
        self.arena.nodes[node as usize].crit = self.calls.stacks[fleet].crit;
    }

    /// Gives the attempt (or hedged copy) `child` just made its class: its call's,
    /// lowered by the layer's `retry_criticality` unless it is the first (only when a
    /// tier sheds by criticality; the call's `attempts` already counts `child`).
    #[cold]
    #[inline(never)]
    pub(super) fn classify_attempt(&mut self, child: u32) {
        let nodes = &mut self.arena.nodes;
        let p = nodes[nodes[child as usize].parent as usize];
        let retry = self.calls.stacks[p.stack as usize].layers[p.depth as usize].retry_crit;
        nodes[child as usize].crit = Criticality::of_attempt(p.crit, retry, p.attempts);
    }

    /// Service `sv`'s priority shedding on the attempt at `node` arriving at `now`:
    /// `None` lets it on to the queue, else the `priority_shed` outcome it is answered
    /// with.
    #[cold]
    pub(super) fn shed_by_criticality(
        &mut self,
        node: u32,
        sv: usize,
        _now: Nanos,
    ) -> Option<Outcome> {
        let svc = &self.services.list[sv];
        let shed = svc.cfg.shed_by_criticality?;
        let class = Criticality::from_u8(self.arena.nodes[node as usize].crit);
        let load = shed.load(
            svc.busy,
            svc.capacity(),
            svc.queued,
            svc.cfg.queue_limit.unwrap_or(0),
        );
        if !shed.sheds(class, load) {
            return None;
        }
        self.obs.rec.priority_shed[class as usize] += 1;
        Some(Outcome::of(Class::PriorityShed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the world built for a one-fleet scenario with `fleet`, `layer` and
    /// `tier` keys keeps each node's class.
    fn keeps_classes(tier: &str, fleet: &str, layer: &str) -> bool {
        let text = format!(
            "duration = '1s'\n[dependency]\nservers = 1\nqueue_limit = 10\n\
             service_time = '1ms'\n{tier}\n[[fleets]]\nname = 'f'\n\
             arrival = {{ kind = 'poisson', rate = 10 }}\n{fleet}\n\
             [[fleets.layers]]\nmax_attempts = 2\n{layer}\n"
        );
        let source = crate::scenario::Source {
            path: "t.toml".into(),
            stem: "t".into(),
            text,
        };
        let scn = crate::scenario::from_table(&source, source.table().unwrap())
            .unwrap()
            .scenario;
        let mut s = crate::engine::Scheduler::new();
        World::new(&scn, 1, &mut s).calls.classes
    }

    #[test]
    fn nodes_keep_a_class_only_when_a_tier_sheds_by_criticality() {
        let shed = "shed_by_criticality = { signal = 'queue_fill', sheddable = 0.5 }";
        let (crit, retry) = (
            "criticality = 'critical_plus'",
            "retry_criticality = 'sheddable'",
        );
        assert!(!keeps_classes("", "", ""));
        // Classes without shedding change no attempt's fate: the per-class columns
        // take a request's class from its fleet.
        assert!(!keeps_classes("", crit, retry));
        assert!(keeps_classes(shed, "", ""));
        assert!(keeps_classes(shed, crit, retry));
    }

    #[test]
    fn a_class_byte_round_trips_and_orders_like_the_classes() {
        for c in Criticality::ALL {
            assert_eq!(Criticality::from_u8(c as u8), c);
        }
        assert!(Criticality::Sheddable < Criticality::CriticalPlus);
        assert_eq!(Criticality::from_u8(NO_LOWERING), Criticality::CriticalPlus);
    }

    #[test]
    fn only_retries_are_lowered_and_never_raised() {
        let (crit, shed) = (Criticality::Critical as u8, Criticality::Sheddable as u8);
        assert_eq!(Criticality::of_attempt(crit, shed, 1), crit);
        assert_eq!(Criticality::of_attempt(crit, shed, 2), shed);
        assert_eq!(Criticality::of_attempt(crit, NO_LOWERING, 5), crit);
        // A retry of a sheddable call at a layer lowering to critical stays sheddable.
        assert_eq!(Criticality::of_attempt(shed, crit, 3), shed);
    }

    #[test]
    fn lower_classes_are_shed_first_and_critical_plus_never() {
        let s = ShedConfig {
            signal: Signal::QueueFill,
            thresholds: [0.5, 0.8, 1.0],
        };
        let shed_at = |load: f64| -> Vec<&str> {
            Criticality::ALL
                .into_iter()
                .filter(|c| s.sheds(*c, load))
                .map(|c| c.name())
                .collect()
        };
        assert!(shed_at(0.49).is_empty());
        assert_eq!(shed_at(0.5), ["sheddable"]);
        assert_eq!(shed_at(0.8), ["sheddable", "sheddable_plus"]);
        assert_eq!(shed_at(1.0), ["sheddable", "sheddable_plus", "critical"]);
        assert_eq!(shed_at(7.0), ["sheddable", "sheddable_plus", "critical"]);
    }

    #[test]
    fn the_load_is_the_signals_fraction() {
        let q = ShedConfig {
            signal: Signal::QueueFill,
            thresholds: [0.5, f64::INFINITY, f64::INFINITY],
        };
        assert_eq!(q.load(4, 4, 5, 10), 0.5);
        assert!(q.sheds(Criticality::Sheddable, q.load(4, 4, 5, 10)));
        assert!(!q.sheds(Criticality::Sheddable, q.load(4, 4, 4, 10)));
        let u = ShedConfig {
            signal: Signal::Utilisation,
            ..q
        };
        assert_eq!(u.load(3, 4, 100, 1000), 0.75);
        // A capacity outage leaving no server: fully loaded.
        assert_eq!(u.load(0, 0, 0, 10), 1.0);
        assert_eq!(u.threshold(Criticality::Sheddable), Some(0.5));
        assert_eq!(u.threshold(Criticality::Critical), None);
        assert_eq!(u.threshold(Criticality::CriticalPlus), None);
    }
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn criticality_example() {
        use crate::model::criticality::{Criticality, ShedConfig, Signal};
        let shed = ShedConfig {
            signal: Signal::QueueFill,
            thresholds: [0.5, 0.8, f64::INFINITY],
        };
        assert!(shed.sheds(Criticality::Sheddable, 0.5));
        assert!(!shed.sheds(Criticality::SheddablePlus, 0.5));
        assert!(!shed.sheds(Criticality::Critical, 1.0));
        assert!(!shed.sheds(Criticality::CriticalPlus, 1.0));
    }
}
