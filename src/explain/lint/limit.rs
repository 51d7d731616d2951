//! Lints of concurrency limits: `retries-adaptive-limit-without-budget`, a client
//! retrying, without a retry budget, the refusals of an adaptive limit.
//!
//! An adaptive limit (AIMD, Vegas, Gradient2, Envoy's gradient controller) shrinks when
//! latency grows or answers come too late, and refuses at once what it no longer lets
//! in: each refusal a client retries is one more arrival at the smaller limit, so the
//! retries spend the headroom the limit just took away (Envoy's docs recommend retries
//! for its minRTT windows' rejections; with no budget nothing bounds them).

use crate::model::config::Scenario;
use crate::model::outcome::Class;

use super::{retrying_layers, Found, Rule};

/// Retries of an adaptive limit's refusals with no retry budget.
pub(crate) const RETRIES_ADAPTIVE_LIMIT_WITHOUT_BUDGET: Rule = Rule {
    id: "retries-adaptive-limit-without-budget",
    why: "a client retries the refusals of a server's adaptive concurrency limit with no retry budget, so when the limit shrinks under load every refusal comes back as another arrival at the smaller limit",
    fires_when: "the service a fleet calls has a `concurrency_limit` of an adaptive kind (`aimd`, `vegas`, `gradient2` or `envoy_gradient`), and a retrying layer of the fleet retries its refusals (`rejected` or `rate_limited` in `retry_on`, or `rejected_5xx` with the limit's `status` 503 or \"unavailable\") and has no `budget`",
    check: adaptive_without_budget,
};

fn adaptive_without_budget(found: &mut Found, scn: &Scenario) {
    for (fi, f, li, l) in retrying_layers(scn) {
        let Some(svc) = scn.services.get(f.target as usize) else {
            continue;
        };
        let Some(limit) = svc.capacity.concurrency_limit.filter(|c| c.is_adaptive()) else {
            continue;
        };
        let status = svc.capacity.status_of(Class::RateLimited);
        if l.budget.is_some() || !l.retry_on.retries(Class::RateLimited, status) {
            continue;
        }
        found.push(
            fi,
            f,
            Some(li),
            &RETRIES_ADAPTIVE_LIMIT_WITHOUT_BUDGET,
            format!(
                "the service it calls has an adaptive concurrency limit ({}) that answers {} when full, and this layer retries those refusals with no retry budget: when the limit shrinks under load each refusal returns as another arrival at the smaller limit; give the layer a budget (budget = {{ kind = \"ratio\", ... }}) or stop retrying the limit's status",
                limit.kind(),
                limit.status()
            ),
        );
    }
}
