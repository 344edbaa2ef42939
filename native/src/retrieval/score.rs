//! Exact rational scores and the "best so far" with its tie rule (lower row wins).

use std::cmp::Ordering;

/// A non-negative rational `num / den` (`den > 0`), compared exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratio {
    pub num: u64,
    pub den: u64,
}

impl Ratio {
    /// Zero.
    pub const ZERO: Ratio = Ratio { num: 0, den: 1 };
    /// One.
    pub const ONE: Ratio = Ratio { num: 1, den: 1 };

    /// Jaccard of two sets of sizes `a` and `b` sharing `inter` elements; both empty → 1.
    #[inline]
    pub fn jaccard(inter: u64, a: u64, b: u64) -> Ratio {
        let union = a + b - inter;
        if union == 0 {
            Ratio::ONE
        } else {
            Ratio {
                num: inter,
                den: union,
            }
        }
    }

    /// Exact comparison by cross-multiplication.
    #[inline]
    pub fn cmp_exact(self, other: Ratio) -> Ordering {
        (u128::from(self.num) * u128::from(other.den))
            .cmp(&(u128::from(other.num) * u128::from(self.den)))
    }

    /// The smaller of two ratios.
    #[inline]
    pub fn min(self, other: Ratio) -> Ratio {
        if other.cmp_exact(self) == Ordering::Less {
            other
        } else {
            self
        }
    }

    /// The larger of two ratios.
    #[inline]
    pub fn max(self, other: Ratio) -> Ratio {
        if other.cmp_exact(self) == Ordering::Greater {
            other
        } else {
            self
        }
    }

    /// The value as a float (`num / den`, one IEEE division).
    #[inline]
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

/// Marks "no row".
pub const NO_ROW: u32 = u32::MAX;

/// The best (highest score, then lowest row) seen so far; a zero score never counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Best {
    pub score: Ratio,
    pub row: u32,
}

impl Default for Best {
    fn default() -> Self {
        Self::NONE
    }
}

impl Best {
    /// Nothing found yet.
    pub const NONE: Best = Best {
        score: Ratio::ZERO,
        row: NO_ROW,
    };

    /// Whether a row `row` scoring `score` would replace the current best.
    #[inline]
    pub fn admits(&self, score: Ratio, row: u32) -> bool {
        if score.num == 0 {
            return false;
        }
        match score.cmp_exact(self.score) {
            Ordering::Greater => true,
            Ordering::Equal => row < self.row,
            Ordering::Less => false,
        }
    }

    /// Replaces the best when `score` at `row` beats it; returns whether it did.
    #[inline]
    pub fn offer(&mut self, score: Ratio, row: u32) -> bool {
        let better = self.admits(score, row);
        if better {
            *self = Best { score, row };
        }
        better
    }

    /// The row, if a positive score was found.
    pub fn row(&self) -> Option<u32> {
        (self.score.num > 0 && self.row != NO_ROW).then_some(self.row)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_compare_exactly() {
        let a = Ratio { num: 1, den: 3 };
        let b = Ratio { num: 2, den: 6 };
        assert_eq!(a.cmp_exact(b), Ordering::Equal);
        assert_eq!(Ratio { num: 2, den: 5 }.cmp_exact(a), Ordering::Greater);
        assert_eq!(Ratio::jaccard(0, 0, 0), Ratio::ONE);
        assert_eq!(Ratio::jaccard(0, 3, 0), Ratio { num: 0, den: 3 });
    }

    #[test]
    fn best_prefers_higher_then_lower_row_and_ignores_zero() {
        let mut b = Best::NONE;
        assert!(!b.offer(Ratio::ZERO, 0));
        assert!(b.offer(Ratio { num: 1, den: 2 }, 5));
        assert!(!b.offer(Ratio { num: 2, den: 4 }, 7));
        assert!(b.offer(Ratio { num: 2, den: 4 }, 3));
        assert!(b.offer(Ratio { num: 3, den: 4 }, 9));
        assert_eq!(b.row(), Some(9));
        assert_eq!(Best::NONE.row(), None);
    }
}
