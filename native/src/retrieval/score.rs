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

/// How a query's gram set is compared with a row's (docs/exposure.md, "Measures").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Measure {
    /// |Q ∩ R| / |Q ∪ R|.
    #[default]
    Jaccard,
    /// |Q ∩ R| / |Q|: the share of the query's grams the row holds (any row length).
    Containment,
}

impl Measure {
    /// The measure named `name` ("jaccard" or "containment").
    pub fn parse(name: &str) -> Option<Measure> {
        match name {
            "jaccard" => Some(Measure::Jaccard),
            "containment" => Some(Measure::Containment),
            _ => None,
        }
    }

    /// The score of a row of `row` grams sharing `inter` with a query of `query` grams. An
    /// empty query scores 1 against an empty row and 0 against any other, by either measure.
    #[inline]
    pub fn score(self, inter: u64, query: u64, row: u64) -> Ratio {
        match self {
            Measure::Jaccard => Ratio::jaccard(inter, query, row),
            Measure::Containment if query == 0 => {
                if row == 0 {
                    Ratio::ONE
                } else {
                    Ratio::ZERO
                }
            }
            Measure::Containment => Ratio {
                num: inter,
                den: query,
            },
        }
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
    fn containment_is_the_share_of_the_query_held_by_the_row() {
        let c = Measure::Containment;
        assert_eq!(c.score(3, 4, 1000), Ratio { num: 3, den: 4 });
        assert!(c.score(4, 4, 4).cmp_exact(Ratio::ONE).is_eq());
        assert_eq!(c.score(0, 0, 0), Ratio::ONE);
        assert_eq!(c.score(0, 0, 5), Ratio::ZERO);
        assert_eq!(
            Measure::Jaccard.score(3, 4, 1000),
            Ratio::jaccard(3, 4, 1000)
        );
        assert_eq!(Measure::parse("containment"), Some(c));
        assert_eq!(Measure::parse("cosine"), None);
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
