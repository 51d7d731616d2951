//! What `retrysim explain` says of a call's guards.

use crate::model::text::fmt_time;

use super::config::Guards;

impl Guards {
    /// explain's lines for the guards: the bulkhead, then the pool.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(b) = self.bulkhead {
            out.push(format!(
                "bulkhead: at most {} attempts in flight, {} waiting; the rest fail with bulkhead_full",
                b.max_concurrent, b.queue
            ));
        }
        if let Some(p) = self.pool {
            out.push(format!(
                "pool: {} connections, waits of at most {} (then pool_exhausted), {}",
                p.size,
                fmt_time(p.acquire_timeout),
                if p.hold_during_backoff {
                    "held through the backoff"
                } else {
                    "given back during the backoff"
                }
            ));
        }
        out
    }
}
