//! Lints of request classes: `retries-at-first-attempt-criticality`, retries sent at
//! the class of first attempts to a tier that sheds by criticality.
//!
//! A tier sheds lower classes first to keep the capacity for the traffic that matters;
//! retries are the extra load an overload brings, and the SRE book advises sending
//! them at a lower criticality so that they are shed before first attempts.

use crate::model::config::Scenario;
use crate::model::criticality::Criticality;

use super::tiers::reached;
use super::{retrying_layers, Found, Rule};

/// Retries at the first attempts' class while a reached tier sheds by criticality.
pub(crate) const RETRIES_AT_FIRST_ATTEMPT_CRITICALITY: Rule = Rule {
    id: "retries-at-first-attempt-criticality",
    why: "a tier sheds by criticality, but the fleet's retries are sent at the class of its first attempts, so in an overload they are kept as long as the first attempts they multiply, instead of being shed before them",
    fires_when: "a service the fleet's requests reach (its target, or a tier downstream of it) has `shed_by_criticality`, the fleet's `criticality` is above `sheddable` (the default `critical` included), and a retrying layer of the fleet has no `retry_criticality` below the fleet's class",
    check: retries_at_first_class,
};

fn retries_at_first_class(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, l) in retrying_layers(scn) {
        let class = f.class();
        if class == Criticality::Sheddable || l.retry_criticality.is_some_and(|r| r < class) {
            continue;
        }
        let reach = reached(scn, f);
        let Some(tier) = scn
            .services
            .iter()
            .enumerate()
            .find(|(si, s)| {
                reach.get(*si) == Some(&true) && s.capacity.shed_by_criticality.is_some()
            })
            .map(|(_, s)| s)
        else {
            continue;
        };
        let lower: Vec<String> = Criticality::ALL
            .iter()
            .filter(|c| **c < class)
            .rev()
            .map(|c| format!("\"{}\"", c.name()))
            .collect();
        let at = if scn.graph {
            format!("service '{}'", tier.name)
        } else {
            "the dependency".to_string()
        };
        found.push(
            fi,
            f,
            Some(li),
            &RETRIES_AT_FIRST_ATTEMPT_CRITICALITY,
            format!(
                "{at} sheds by criticality, and this layer's retries are sent at the fleet's class, {}, as its first attempts are: in an overload the retries are shed no earlier than the first attempts they add to; set retry_criticality to a lower class ({}) so they are shed first",
                class.name(),
                lower.join(" or ")
            ),
        );
    }
}
