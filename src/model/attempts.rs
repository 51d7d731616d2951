//! How many attempts a layer makes per call: a limit, or none (`max_attempts =
//! "unlimited"`), so that no count stands for "unlimited".

/// Largest attempts per call when finite (also the largest `max_receive_count`).
pub(crate) const MAX_ATTEMPTS_CAP: u64 = 1_000_000;

/// Attempts a layer makes per call, the first included: a limit, or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attempts {
    /// At most this many (at least 1).
    Limited(u32),
    /// No limit: only a success, a deadline, a budget or a breaker ends the call.
    Unlimited,
}

impl Attempts {
    /// Whether a call that has made `made` attempts may make another.
    #[inline]
    pub fn allows_another(self, made: u32) -> bool {
        match self {
            Attempts::Limited(n) => made < n,
            Attempts::Unlimited => true,
        }
    }

    /// The limit, `None` when unlimited.
    pub fn limit(self) -> Option<u32> {
        match self {
            Attempts::Limited(n) => Some(n),
            Attempts::Unlimited => None,
        }
    }

    /// Whether more than one attempt is allowed.
    pub fn retries(self) -> bool {
        self.limit().is_none_or(|n| n > 1)
    }

    /// The limit as a bound: unbounded when unlimited.
    pub fn bound(self) -> super::bound::Bound {
        use super::bound::Bound;
        self.limit()
            .map_or(Bound::Unbounded, |n| Bound::Finite(u64::from(n)))
    }

    /// The limit as a number: infinite when unlimited.
    pub fn as_f64(self) -> f64 {
        self.limit().map_or(f64::INFINITY, f64::from)
    }
}

impl PartialEq<u32> for Attempts {
    fn eq(&self, n: &u32) -> bool {
        *self == Attempts::Limited(*n)
    }
}

impl std::fmt::Display for Attempts {
    /// The limit as scenario files write it: a number or `unlimited`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Attempts::Limited(n) => write!(f, "{n}"),
            Attempts::Unlimited => f.write_str("unlimited"),
        }
    }
}
