//! Pair exposure: max over rows of min(source similarity, best reference similarity).

use super::index::TrainingIndex;
use super::score::{Best, Ratio};
use super::search::{Query, Valuer};

/// Pair value of row `row`: min(s(x, u_row), max_r s(r, v_row)).
#[inline]
pub fn pair_value(index: &TrainingIndex, x: &Query<'_>, refs: &[Query<'_>], row: u32) -> Ratio {
    let s = x.jaccard(&index.src, row);
    if s.num == 0 {
        return Ratio::ZERO;
    }
    capped_by_references(index, refs, row, s)
}

/// min(s, max_r s(r, v_row)), stopping early once a reference reaches `s`.
#[inline]
fn capped_by_references(index: &TrainingIndex, refs: &[Query<'_>], row: u32, s: Ratio) -> Ratio {
    let mut t = Ratio::ZERO;
    for r in refs {
        t = t.max(r.jaccard(&index.tgt, row));
        if t.cmp_exact(s).is_ge() {
            return s;
        }
    }
    t
}

/// Pair value for a search over the source side (the value never exceeds the source similarity).
pub struct BySource<'a, 'q> {
    pub index: &'a TrainingIndex,
    /// min(E_src, E_tgt): no pair value exceeds it.
    pub cap: Ratio,
    pub source_size: u64,
    pub refs: &'a [Query<'q>],
}

impl Valuer for BySource<'_, '_> {
    #[inline]
    fn value(&mut self, row: u32, inter: u64, row_len: u64, best: &Best) -> Ratio {
        let s = Ratio::jaccard(inter, self.source_size, row_len);
        if !best.admits(s, row) {
            return Ratio::ZERO;
        }
        capped_by_references(self.index, self.refs, row, s)
    }

    fn cap(&self) -> Option<Ratio> {
        Some(self.cap)
    }
}

/// Pair value for searches over the target side, one per reference. The value can exceed the
/// similarity to the reference being searched, but never the similarity to the best reference of
/// that row, whose own search bounds it correctly; searching every reference is therefore exact.
pub struct ByTarget<'a, 'q> {
    pub index: &'a TrainingIndex,
    /// min(E_src, E_tgt): no pair value exceeds it.
    pub cap: Ratio,
    pub source: &'a Query<'q>,
    pub refs: &'a [Query<'q>],
}

impl Valuer for ByTarget<'_, '_> {
    #[inline]
    fn value(&mut self, row: u32, _inter: u64, _row_len: u64, best: &Best) -> Ratio {
        let s = self.source.jaccard(&self.index.src, row);
        if !best.admits(s, row) {
            return Ratio::ZERO;
        }
        capped_by_references(self.index, self.refs, row, s)
    }

    fn cap(&self) -> Option<Ratio> {
        Some(self.cap)
    }
}
