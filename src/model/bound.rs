//! A count or a duration that may have no finite bound, as explain and the policies'
//! bounds report it: unlimited attempts, or a sum that overflows `u64`.

/// A count or a duration in nanoseconds that may be unbounded (unlimited attempts, or
/// an arithmetic overflow of `u64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Bound {
    /// At most this much.
    Finite(u64),
    /// No finite bound (or more than `u64::MAX`).
    Unbounded,
}

impl Bound {
    /// Whether the bound is larger than `limit`.
    pub fn exceeds(self, limit: u64) -> bool {
        match self {
            Bound::Finite(v) => v > limit,
            Bound::Unbounded => true,
        }
    }
}

impl std::ops::Add for Bound {
    type Output = Bound;

    /// The sum, unbounded on overflow.
    fn add(self, other: Bound) -> Bound {
        match (self, other) {
            (Bound::Finite(a), Bound::Finite(b)) => {
                a.checked_add(b).map_or(Bound::Unbounded, Bound::Finite)
            }
            _ => Bound::Unbounded,
        }
    }
}

impl std::ops::Mul for Bound {
    type Output = Bound;

    /// The product, unbounded on overflow; zero times anything (even unbounded) is zero.
    fn mul(self, other: Bound) -> Bound {
        match (self, other) {
            (Bound::Finite(0), _) | (_, Bound::Finite(0)) => Bound::Finite(0),
            (Bound::Finite(a), Bound::Finite(b)) => {
                a.checked_mul(b).map_or(Bound::Unbounded, Bound::Finite)
            }
            _ => Bound::Unbounded,
        }
    }
}
