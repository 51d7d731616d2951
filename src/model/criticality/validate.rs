//! Rules of request classes: a tier's `shed_by_criticality` (a signal the tier can
//! measure, fractions in (0, 1], thresholds that never decrease with the class, no
//! lower class left unshed below a shed one, `critical_plus` never shed), and a fleet
//! layer's `retry_criticality`, which may lower its retries' class but not raise it.

use crate::model::config::LayerConfig;
use crate::model::field::{Ctx, R};

use super::{Criticality, ShedConfig, ShedFile, Signal};

/// What shedding's rules read of the tier it is on, as written.
#[derive(Debug, Clone, Copy)]
pub struct Tier {
    /// Whether `servers` is finite.
    pub servers: bool,
    /// Whether `queue_limit` is finite.
    pub queue_limit: bool,
}

impl ShedFile {
    /// The validated shedding of the tier whose table is at `p` (`dependency`).
    pub fn validate(&self, c: &Ctx, p: &str, tier: Tier) -> R<ShedConfig> {
        let q = format!("{p}.shed_by_criticality");
        if self.critical_plus.is_some() {
            return c.err(
                format!("{q}.critical_plus"),
                "cannot be set: critical_plus is never shed by criticality, only refused by a full queue (set sheddable, sheddable_plus or critical)",
            );
        }
        match self.signal {
            Signal::QueueFill if !tier.queue_limit => {
                return c.err(
                    format!("{q}.signal"),
                    format!("\"queue_fill\" needs a finite {p}.queue_limit (queued / queue_limit is the load); set one, or use signal = \"utilisation\""),
                )
            }
            Signal::Utilisation if !tier.servers => {
                return c.err(
                    format!("{q}.signal"),
                    format!("\"utilisation\" needs a finite {p}.servers (busy / servers is the load); set them, or use signal = \"queue_fill\""),
                )
            }
            _ => {}
        }
        let written = [
            (Criticality::Sheddable, self.sheddable),
            (Criticality::SheddablePlus, self.sheddable_plus),
            (Criticality::Critical, self.critical),
        ];
        let mut thresholds = [f64::INFINITY; 3];
        let mut higher: Option<(Criticality, f64)> = None;
        // From the highest class down: each lower class is shed no later.
        for &(class, v) in written.iter().rev() {
            let field = format!("{q}.{}", class.name());
            match (v, higher) {
                (Some(v), _) => {
                    let v = c.finite(&field, v)?;
                    if !(v > 0.0 && v <= 1.0) {
                        return c.err(
                            field,
                            format!(
                                "must be a fraction of the load above 0 and at most 1 (found {v})"
                            ),
                        );
                    }
                    if let Some((h, hv)) = higher {
                        if v > hv {
                            return c.err(
                                field,
                                format!(
                                    "must be at most {}'s {hv}: a lower class is shed no later than a higher one (found {v})",
                                    h.name()
                                ),
                            );
                        }
                    }
                    thresholds[class as usize] = v;
                    higher = Some((class, v));
                }
                (None, Some((h, hv))) => {
                    return c.err(
                        field,
                        format!(
                            "must be set when {} is: a lower class is shed no later than a higher one (set it to at most {hv})",
                            h.name()
                        ),
                    );
                }
                (None, None) => {}
            }
        }
        if higher.is_none() {
            return c.err(
                &q,
                "sets no threshold: give at least sheddable (a fraction in (0, 1])",
            );
        }
        Ok(ShedConfig {
            signal: self.signal,
            thresholds,
        })
    }
}

/// The rule of a fleet's layers (at `p`, the fleet's field path): a layer's
/// `retry_criticality` may not be above the fleet's class, since a retry is sent at
/// the lower of the two and a higher one would do nothing.
pub(crate) fn check_retries(c: &Ctx, p: &str, class: Criticality, layers: &[LayerConfig]) -> R<()> {
    for (j, l) in layers.iter().enumerate() {
        if let Some(r) = l.retry_criticality.filter(|r| *r > class) {
            return c.err(
                format!("{p}.layers[{j}].retry_criticality"),
                format!(
                    "must not be above the fleet's criticality \"{}\": retries are sent at the lower of the two, so it would change nothing (found \"{}\")",
                    class.name(),
                    r.name()
                ),
            );
        }
    }
    Ok(())
}
