//! Pair exposure: max over rows of min(source similarity, best reference similarity).

use super::dense::{for_each_masked, Counts, TILE_WORDS, ZERO};
use super::index::TrainingIndex;
use super::score::{Best, Ratio};
use super::search::{min_shared, Query, Stats, Valuer};

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

/// Pair exposure from every row's counts of the source's grams (`src`) and/or of each
/// reference's grams (`refs_counts`), at least one of the two: a row can only win if its counts
/// reach the shares the current best needs on each side that has them, so only those rows are
/// scored (a side without counts is scored exactly). Raises `best`.
#[allow(clippy::too_many_arguments)]
pub fn pair_from_counts(
    index: &TrainingIndex,
    x: &Query<'_>,
    refs: &[Query<'_>],
    src: Option<&Counts>,
    refs_counts: Option<&[&Counts]>,
    upper: Ratio,
    best: &mut Best,
    stats: &mut Stats,
) {
    let tiles = src
        .map(Counts::tiles)
        .or_else(|| refs_counts.and_then(|c| c.first()).map(|c| c.tiles()))
        .unwrap_or(0);
    for tile in 0..tiles {
        let mut mask = [u64::MAX; TILE_WORDS];
        if let Some(src) = src {
            let need = min_shared(best, x.size);
            if src.tile_max(tile) < need {
                continue;
            }
            mask = src.at_least(tile, need);
        }
        if let Some(refs_counts) = refs_counts {
            let mut any = ZERO;
            for (r, counts) in refs.iter().zip(refs_counts) {
                let need_r = min_shared(best, r.size);
                if counts.tile_max(tile) >= need_r {
                    for (a, b) in any.iter_mut().zip(counts.at_least(tile, need_r)) {
                        *a |= b;
                    }
                }
            }
            for (m, a) in mask.iter_mut().zip(any) {
                *m &= a;
            }
        }
        for_each_masked(tile, &mask, |d| {
            let s = match src {
                Some(c) => Ratio::jaccard(c.count(d), x.size, index.src.doc_len(d)),
                None => x.jaccard(&index.src, d),
            };
            if !best.admits(s.min(upper), d) {
                return true;
            }
            let mut t = Ratio::ZERO;
            for (k, r) in refs.iter().enumerate() {
                let sim = match refs_counts.and_then(|c| c.get(k)) {
                    Some(c) => Ratio::jaccard(c.count(d), r.size, index.tgt.doc_len(d)),
                    None => r.jaccard(&index.tgt, d),
                };
                t = t.max(sim);
            }
            stats.candidates_verified += 1;
            best.offer(s.min(t), d);
            true
        });
    }
}
