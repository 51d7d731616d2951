//! Lints of hedged requests: `hedges-writes`, a hedging layer on the path of
//! non-idempotent writes that carry no idempotency key.

use crate::model::config::Scenario;

use super::{Found, Rule};

/// Hedging non-idempotent writes without idempotency keys.
pub(crate) const HEDGES_WRITES: Rule = Rule {
    id: "hedges-writes",
    why: "a layer hedges non-idempotent writes that carry no idempotency key: its concurrent copies are ambiguous duplicates, each applied",
    fires_when: "the fleet has `writes` > 0 without `idempotency_keys`, and one of its layers, or a layer of a call its requests reach, has `hedging`",
    check: writes,
};

/// The message of a hedging layer with `copies` copies on a fleet's keyless writes.
fn message(copies: u32, writes: f64) -> String {
    format!(
        "it hedges (up to {copies} copies of each call, concurrently) while {:.0}% of the fleet's requests are non-idempotent writes without idempotency keys: copies that reach the service before the winner's answer cancels them are concurrent ambiguous duplicates, each applied (counted in duplicate_applies); hedge only idempotent reads, or give the writes idempotency keys",
        writes * 100.0
    )
}

/// `hedges-writes`: a fleet with keyless writes, and a hedging layer of its own or of
/// a call its requests reach.
fn writes(found: &mut Found, scn: &Scenario) {
    for (fi, f) in scn.fleets.iter().enumerate() {
        if f.writes <= 0.0 || f.idempotency_keys {
            continue;
        }
        for (li, l) in f.layers.iter().enumerate() {
            if let Some(h) = l.hedging {
                found.push(
                    fi,
                    f,
                    Some(li),
                    &HEDGES_WRITES,
                    message(h.max_attempts, f.writes),
                );
            }
        }
        let reach = super::tiers::reached(scn, f);
        for (si, s) in scn.services.iter().enumerate() {
            if reach.get(si) != Some(&true) {
                continue;
            }
            for (j, c) in s.calls.iter().enumerate() {
                for (li, l) in c.layers.iter().enumerate() {
                    let Some(h) = l.hedging else {
                        continue;
                    };
                    found.push_at(
                        fi,
                        f,
                        Some(((si, j), super::tiers::call_label(scn, s, c))),
                        Some(li),
                        Some(l.name.clone()),
                        &HEDGES_WRITES,
                        message(h.max_attempts, f.writes),
                    );
                }
            }
        }
    }
}
