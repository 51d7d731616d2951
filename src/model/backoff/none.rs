//! `none`: retry at once (the default when a layer writes no backoff).

use serde::{Deserialize, Serialize};

use super::{Failure, Kind};
use crate::engine::Nanos;
use crate::model::field::{Ctx, R};

/// `{ kind = "none" }`: no other key is allowed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {}

impl Written {
    /// Nothing to check.
    pub fn validate(&self, _c: &Ctx, _p: &str) -> R<NoBackoff> {
        Ok(NoBackoff)
    }
}

/// No wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoBackoff;

impl Kind for NoBackoff {
    fn draws(&self, _k: u32, _prev: Nanos, _f: &Failure) -> bool {
        false
    }

    fn wait_u(&self, _k: u32, _prev: &mut Nanos, f: &Failure, _u: f64) -> Nanos {
        f.or_retry_after(0)
    }

    fn max_wait(&self, _k: u32) -> Nanos {
        0
    }

    fn settled_wait(&self) -> Nanos {
        0
    }

    fn is_jittered(&self) -> bool {
        false
    }

    fn describe(&self) -> String {
        "none (retries at once)".to_string()
    }

    fn short(&self) -> String {
        "none".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::attempts::Attempts;
    use crate::model::backoff::Backoff;
    use crate::model::{backoff::backoff_total, bound::Bound};

    #[test]
    fn no_wait_but_a_retry_after_and_nothing_to_sum() {
        let b = Backoff::None(NoBackoff);
        let mut prev = 0;
        let ra = Failure {
            retry_after: Some(7),
            ..Failure::default()
        };
        assert_eq!(b.wait_u(3, &mut prev, &Failure::default(), 0.5), 0);
        assert_eq!(b.wait_u(3, &mut prev, &ra, 0.5), 7);
        assert_eq!(backoff_total(&b, Attempts::Unlimited, 0), Bound::Finite(0));
        assert_eq!(b.unjittered(Attempts::Limited(5)), None);
    }
}
