//! Pair exposure of one row: min(source similarity, best reference similarity), scored from the
//! row's texts (the fast search's shortlist; the exact search reads it off counts).

use super::index::TrainingIndex;
use super::score::Ratio;
use super::search::Query;

/// Pair value of row `row`: min(s(x, u_row), max_r s(r, v_row)).
pub fn pair_value(index: &TrainingIndex, x: &Query<'_>, refs: &[Query<'_>], row: u32) -> Ratio {
    let s = x.similarity(&index.src, row);
    capped_by_references(s, refs.iter().map(|r| r.similarity(&index.tgt, row)))
}

/// min(s, max of the reference similarities `refs`), reading references only until one
/// reaches `s` (zero when `s` is).
#[inline]
pub fn capped_by_references(s: Ratio, refs: impl Iterator<Item = Ratio>) -> Ratio {
    if s.num == 0 {
        return Ratio::ZERO;
    }
    let mut t = Ratio::ZERO;
    for sim in refs {
        t = t.max(sim);
        if t.cmp_exact(s).is_ge() {
            return s;
        }
    }
    t
}
