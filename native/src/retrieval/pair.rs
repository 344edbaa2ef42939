//! Pair exposure: max over rows of min(source similarity, best reference similarity).

use super::index::TrainingIndex;
use super::score::Ratio;
use super::search::{Query, Valuer};

/// Pair value of row `row`: min(s(x, u_row), max_r s(r, v_row)).
#[inline]
pub fn pair_value(index: &TrainingIndex, x: &Query<'_>, refs: &[Query<'_>], row: u32) -> Ratio {
    let s = x.jaccard(&index.src, row);
    if s.num == 0 {
        return Ratio::ZERO;
    }
    s.min(best_reference(index, refs, row))
}

/// max_r s(r, v_row).
#[inline]
pub fn best_reference(index: &TrainingIndex, refs: &[Query<'_>], row: u32) -> Ratio {
    refs.iter()
        .fold(Ratio::ZERO, |t, r| t.max(r.jaccard(&index.tgt, row)))
}

/// Pair value for a search over the source side (the value never exceeds the source similarity).
pub struct BySource<'a, 'q> {
    pub index: &'a TrainingIndex,
    pub source_size: u64,
    pub refs: &'a [Query<'q>],
}

impl Valuer for BySource<'_, '_> {
    #[inline]
    fn value(&mut self, row: u32, inter: u64, row_len: u64) -> Ratio {
        let s = Ratio::jaccard(inter, self.source_size, row_len);
        if s.num == 0 {
            return Ratio::ZERO;
        }
        s.min(best_reference(self.index, self.refs, row))
    }
}

/// Pair value for searches over the target side, one per reference. The value can exceed the
/// similarity to the reference being searched, but never the similarity to the best reference of
/// that row, whose own search bounds it correctly; searching every reference is therefore exact.
pub struct ByTarget<'a, 'q> {
    pub index: &'a TrainingIndex,
    pub source: &'a Query<'q>,
    pub refs: &'a [Query<'q>],
}

impl Valuer for ByTarget<'_, '_> {
    #[inline]
    fn value(&mut self, row: u32, _inter: u64, _row_len: u64) -> Ratio {
        pair_value(self.index, self.source, self.refs, row)
    }
}
