//! Outcome classes of an attempt or a call, and sets of them (`retry_on`).

use std::fmt;

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
}

impl Class {
    /// Every failure class, in column order.
    pub const FAILURES: [Class; 7] = [
        Class::Rejected,
        Class::Error,
        Class::Timeout,
        Class::BreakerOpen,
        Class::BudgetExhausted,
        Class::DeadlineExceeded,
        Class::Conflict,
    ];

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

/// The outcome delivered to a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// What happened.
    pub class: Class,
    /// Whether a rejection carried a Retry-After delay.
    pub retry_after: bool,
}

impl Outcome {
    /// An outcome of `class` without Retry-After.
    #[inline]
    pub const fn of(class: Class) -> Outcome {
        Outcome {
            class,
            retry_after: false,
        }
    }
}

/// A set of outcome classes.
///
/// ```
/// use retrysim::model::outcome::{Class, ClassSet};
/// let s = ClassSet::default_retry_on();
/// assert!(s.contains(Class::Timeout));
/// assert!(!s.contains(Class::BreakerOpen));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ClassSet(u16);

impl ClassSet {
    /// The empty set.
    pub const EMPTY: ClassSet = ClassSet(0);

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
