//! Outcome classes of an attempt or a call, and sets of them (`retry_on`).

use std::fmt;

use crate::model::field::{shown, Ctx, R};

/// The class of an attempt's or a call's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Class {
    /// It worked.
    Success = 0,
    /// Refused before any work (queue full): definitely not applied.
    Rejected = 1,
    /// Transient failure, not applied.
    Error = 2,
    /// No answer in time: ambiguous, the work may still be applied.
    Timeout = 3,
    /// Refused by an open circuit breaker.
    BreakerOpen = 4,
    /// A retry denied by the retry budget.
    BudgetExhausted = 5,
    /// Not enough deadline left.
    DeadlineExceeded = 6,
    /// An optimistic-concurrency write lost the race.
    Conflict = 7,
    /// A service answered "overloaded; don't retry" (a service graph's
    /// `on_failure = "overloaded"` or `overloaded_status`).
    Overloaded = 8,
    /// Refused locally by a full bulkhead (`max_concurrent`): never sent.
    BulkheadFull = 9,
    /// No pooled connection within `acquire_timeout`: never sent.
    PoolExhausted = 10,
    /// Refused before the queue by the service's limiter (`admission`): definitely
    /// not applied; a rejection as the client sees it, with the limiter's status.
    RateLimited = 11,
    /// Refused before the queue by the tier's priority shedding
    /// (`shed_by_criticality`): definitely not applied; answered 503, which the client
    /// cannot tell from a full queue's 503.
    PriorityShed = 12,
}

impl Class {
    /// Every failure class, in column order.
    pub const FAILURES: [Class; 12] = [
        Class::Rejected,
        Class::Error,
        Class::Timeout,
        Class::BreakerOpen,
        Class::BudgetExhausted,
        Class::DeadlineExceeded,
        Class::Conflict,
        Class::Overloaded,
        Class::BulkheadFull,
        Class::PoolExhausted,
        Class::RateLimited,
        Class::PriorityShed,
    ];

    /// Classes, success included: the length of arrays indexed by class.
    pub const COUNT: usize = 13;

    /// The name used in scenario files and CSV columns.
    pub fn name(self) -> &'static str {
        match self {
            Class::Success => "success",
            Class::Rejected => "rejected",
            Class::Error => "error",
            Class::Timeout => "timeout",
            Class::BreakerOpen => "breaker_open",
            Class::BudgetExhausted => "budget_exhausted",
            Class::DeadlineExceeded => "deadline_exceeded",
            Class::Conflict => "conflict",
            Class::Overloaded => "overloaded",
            Class::BulkheadFull => "bulkhead_full",
            Class::PoolExhausted => "pool_exhausted",
            Class::RateLimited => "rate_limited",
            Class::PriorityShed => "priority_shed",
        }
    }

    /// The class with discriminant `v` (`Success` for an unknown value).
    #[inline]
    pub fn from_u8(v: u8) -> Class {
        match v {
            1 => Class::Rejected,
            2 => Class::Error,
            3 => Class::Timeout,
            4 => Class::BreakerOpen,
            5 => Class::BudgetExhausted,
            6 => Class::DeadlineExceeded,
            7 => Class::Conflict,
            8 => Class::Overloaded,
            9 => Class::BulkheadFull,
            10 => Class::PoolExhausted,
            11 => Class::RateLimited,
            12 => Class::PriorityShed,
            _ => Class::Success,
        }
    }

    /// Parses a class name as written in `retry_on`.
    pub fn parse(s: &str) -> Option<Class> {
        Class::FAILURES.into_iter().find(|c| c.name() == s)
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The outcome delivered to a caller: its class and the Retry-After it carries.
///
/// Three bytes, 1-aligned, so a node's memo stays 12 bytes: the Retry-After is a
/// `u16` kept as bytes, 0 for none, [`Outcome::CONFIGURED`] for the callee's
/// `retry_after`, any other value whole seconds computed by the callee's limiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// What happened.
    pub class: Class,
    ra: [u8; 2],
}

impl Outcome {
    /// The Retry-After code of a rejection carrying the callee's `retry_after`.
    pub(crate) const CONFIGURED: u16 = u16::MAX;

    /// The most seconds a computed Retry-After carries (longer ones are capped).
    pub(crate) const MAX_SECS: u64 = u16::MAX as u64 - 1;

    /// An outcome of `class` without Retry-After.
    #[inline]
    pub(crate) const fn of(class: Class) -> Outcome {
        Outcome { class, ra: [0, 0] }
    }

    /// An outcome of `class` with the Retry-After code `code` (see the type's docs).
    #[inline]
    pub(crate) const fn with_code(class: Class, code: u16) -> Outcome {
        Outcome {
            class,
            ra: code.to_le_bytes(),
        }
    }

    /// An outcome of `class` carrying the callee's configured Retry-After if `yes`.
    #[inline]
    pub(crate) const fn configured(class: Class, yes: bool) -> Outcome {
        Outcome::with_code(class, if yes { Outcome::CONFIGURED } else { 0 })
    }

    /// An outcome of `class` carrying a computed Retry-After of `secs` whole seconds
    /// (at least 1, at most [`Outcome::MAX_SECS`]).
    #[inline]
    pub(crate) fn computed(class: Class, secs: u64) -> Outcome {
        Outcome::with_code(class, secs.clamp(1, Outcome::MAX_SECS) as u16)
    }

    /// The Retry-After code.
    #[inline]
    pub(crate) const fn code(self) -> u16 {
        u16::from_le_bytes(self.ra)
    }

    /// Whether it carries a Retry-After.
    #[inline]
    pub(crate) const fn retry_after(self) -> bool {
        self.code() != 0
    }

    /// The Retry-After it carries, in ns, given the callee's configured one.
    #[inline]
    pub(crate) fn retry_after_ns(
        self,
        configured: Option<crate::engine::Nanos>,
    ) -> crate::engine::Nanos {
        match self.code() {
            Outcome::CONFIGURED | 0 => configured.unwrap_or(0),
            s => u64::from(s) * crate::engine::time::SECOND,
        }
    }
}

/// A set of outcome classes, and the `retry_on` entry `"rejected_5xx"`: rejections
/// only when their status is a 5xx (503), not 429, as Envoy's `retry_on = "5xx"` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClassSet(u16);

impl ClassSet {
    /// The empty set.
    pub const EMPTY: ClassSet = ClassSet(0);

    /// The `retry_on` entry for rejections with a 5xx status only.
    pub const REJECTED_5XX: &'static str = "rejected_5xx";

    /// The bit of `"rejected_5xx"` (above every class).
    const REJECTED_5XX_BIT: u16 = 1 << 15;

    /// This set plus `"rejected_5xx"`: rejections with status 503, not 429.
    pub const fn with_rejected_5xx(self) -> ClassSet {
        ClassSet(self.0 | Self::REJECTED_5XX_BIT)
    }

    /// Whether the set holds `"rejected_5xx"`.
    #[inline]
    pub const fn has_rejected_5xx(self) -> bool {
        self.0 & Self::REJECTED_5XX_BIT != 0
    }

    /// Whether an outcome of class `c` is retried when the dependency rejects it with
    /// `reject_status`: `c` is in the set, or it is a rejection (a full queue's, a
    /// limiter's or priority shedding's, which the client cannot tell apart: `rejected`
    /// retries them all), the status is not 429 and the set holds `"rejected_5xx"`.
    #[inline]
    pub const fn retries(self, c: Class, reject_status: u16) -> bool {
        self.contains(c)
            || (matches!(c, Class::RateLimited | Class::PriorityShed)
                && self.contains(Class::Rejected))
            || (matches!(
                c,
                Class::Rejected | Class::RateLimited | Class::PriorityShed
            ) && reject_status != 429
                && self.has_rejected_5xx())
    }

    /// `["rejected", "error", "timeout"]`.
    pub fn default_retry_on() -> ClassSet {
        ClassSet::EMPTY
            .with(Class::Rejected)
            .with(Class::Error)
            .with(Class::Timeout)
    }

    /// This set plus `c`.
    pub const fn with(self, c: Class) -> ClassSet {
        ClassSet(self.0 | (1 << c as u8))
    }

    /// Whether `c` is in the set.
    #[inline]
    pub const fn contains(self, c: Class) -> bool {
        self.0 & (1 << c as u8) != 0
    }
}

/// A list of outcome classes (`retry_on`, `non_fatal`), as a set.
pub(crate) fn class_set(c: &Ctx, field: &str, list: &[String]) -> R<ClassSet> {
    let mut set = ClassSet::EMPTY;
    for (k, s) in list.iter().enumerate() {
        match Class::parse(s) {
            Some(cl) => set = set.with(cl),
            None if s == ClassSet::REJECTED_5XX => set = set.with_rejected_5xx(),
            None => {
                let mut allowed: Vec<_> = Class::FAILURES
                    .iter()
                    .map(|c| format!("\"{}\"", c.name()))
                    .collect();
                allowed.push(format!("\"{}\"", ClassSet::REJECTED_5XX));
                return c.err(
                    format!("{field}[{k}]"),
                    format!(
                        "unknown outcome class \"{}\" (allowed: {})",
                        shown(s),
                        allowed.join(", ")
                    ),
                );
            }
        }
    }
    Ok(set)
}

/// The examples of this file's docs, as unit tests (the module is the crate's own,
/// so rustdoc cannot run them).
#[cfg(test)]
mod doc_examples {
    #[test]
    fn classset_example() {
        use crate::model::outcome::{Class, ClassSet};
        let s = ClassSet::default_retry_on();
        assert!(s.contains(Class::Timeout));
        assert!(!s.contains(Class::BreakerOpen));
    }

    #[test]
    fn fn_example() {
        use crate::model::outcome::{Class, ClassSet};
        let envoy_5xx = ClassSet::EMPTY.with_rejected_5xx().with(Class::Error);
        assert!(envoy_5xx.retries(Class::Rejected, 503));
        assert!(!envoy_5xx.retries(Class::Rejected, 429));
        assert!(ClassSet::default_retry_on().retries(Class::Rejected, 429));
    }
}
