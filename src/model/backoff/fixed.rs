//! `fixed`: always the same `delay`.

use serde::{Deserialize, Serialize};

use super::{Failure, Kind};
use crate::engine::Nanos;
use crate::model::field::{Ctx, Dur, R};
use crate::model::text::fmt_time;

/// `{ kind = "fixed", delay = "100ms" }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// The delay.
    pub delay: Dur,
}

impl Written {
    /// Any delay, 0 included.
    pub fn validate(&self, _c: &Ctx, _p: &str) -> R<Fixed> {
        Ok(Fixed {
            delay: self.delay.0,
        })
    }
}

/// Always `delay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed {
    /// The delay.
    pub delay: Nanos,
}

impl Kind for Fixed {
    fn draws(&self, _k: u32, _prev: Nanos, _f: &Failure) -> bool {
        false
    }

    fn wait_u(&self, _k: u32, _prev: &mut Nanos, f: &Failure, _u: f64) -> Nanos {
        f.or_retry_after(self.delay)
    }

    fn max_wait(&self, _k: u32) -> Nanos {
        self.delay
    }

    fn settled_wait(&self) -> Nanos {
        self.delay
    }

    fn is_jittered(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        format!("fixed {}", fmt_time(self.delay))
    }

    fn unjittered(&self, _max_attempts: crate::model::attempts::Attempts) -> Option<String> {
        (self.delay > 0).then(|| format!("a fixed backoff of {}", fmt_time(self.delay)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::attempts::Attempts;
    use crate::model::backoff::Backoff;
    use crate::model::{backoff::backoff_total, bound::Bound};

    #[test]
    fn the_same_wait_each_time_and_its_sum() {
        let b = Backoff::Fixed(Fixed { delay: 7 });
        let mut prev = 0;
        assert_eq!(b.wait_u(9, &mut prev, &Failure::default(), 0.9), 7);
        assert_eq!(
            backoff_total(&b, Attempts::Limited(4), 0),
            Bound::Finite(21)
        );
        assert_eq!(
            b.unjittered(Attempts::Limited(3)).as_deref(),
            Some("a fixed backoff of 7ns")
        );
        assert_eq!(
            Backoff::Fixed(Fixed { delay: 0 }).unjittered(Attempts::Limited(3)),
            None
        );
    }
}
