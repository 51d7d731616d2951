//! A fixed concurrency limit (Netflix `concurrency-limits`, `limit/FixedLimit.java`
//! at 78a74b9): at most `limit` requests in flight, whatever the latency. With
//! `SimpleLimiter` a request arriving with `limit` in flight is refused at once. With
//! no queue in front, Poisson arrivals and exponential service, the share refused is
//! Erlang B(`limit`, load).

use serde::{Deserialize, Serialize};

use super::status::{rejected_of, Rejected, StatusFile};
use super::{java_int, ConcurrencyLimitConfig};
use crate::model::field::{Ctx, R};

/// `{ kind = "fixed", ... }` as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Written {
    /// Requests in flight at most (required, at least 1).
    pub limit: Option<u64>,
    /// What a refused caller sees: 429 (default), 503 or "unavailable".
    #[schemars(extend("default" = 429))]
    pub status: Option<StatusFile>,
}

impl Written {
    /// The validated limit; `p` is the field path of the table.
    pub fn validate(&self, c: &Ctx, p: &str) -> R<ConcurrencyLimitConfig> {
        let Some(limit) = self.limit else {
            return c.err(
                format!("{p}.limit"),
                "is required for kind = \"fixed\" (requests in flight at most, at least 1)",
            );
        };
        let f = format!("{p}.limit");
        let limit = c.at_least(&f, limit, 1)?;
        let limit = java_int(c, &f, limit)?;
        Ok(ConcurrencyLimitConfig::Fixed(Config {
            limit,
            status: rejected_of(c, p, &self.status, Rejected::Status(429))?,
        }))
    }
}

/// Validated settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Requests in flight at most.
    pub limit: i32,
    /// What a refused caller sees.
    pub status: Rejected,
}

impl Config {
    /// What explain says of the limit.
    pub(super) fn describe(&self) -> String {
        format!(
            "fixed concurrency limit (Netflix FixedLimit): at most {} in flight; a request arriving with {} in flight is answered {} at once",
            self.limit, self.limit, self.status
        )
    }
}
