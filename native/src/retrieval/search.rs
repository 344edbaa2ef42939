//! Queries against one training side, and the approximate ("fast") top-1 search.
//!
//! A `Query` holds the ids of the query's grams that occur in the side (ascending, so rarest
//! first: ids ascend with document frequency) and its total gram count. The exact search counts
//! every row (`counting.rs`); the fast one here takes candidates from the postings of a few rare
//! query grams and scores the rows sharing most of them exactly. Scores compare exactly by
//! cross-multiplication.

use super::error::{invalid, Result};
use super::grams::{for_each_gram, for_each_gram_at, Orders};
use super::index::{SideIndex, MAX_GRAMS_PER_TEXT};
use super::score::{Best, Measure, Ratio};

/// A prepared query: its known gram ids (ascending = rarest first) and its total gram count.
#[derive(Debug, Clone, Default)]
pub struct Query<'t> {
    pub text: &'t str,
    /// Ids of the query grams present in the training side, ascending.
    pub seen: Vec<u32>,
    /// Code-point span `[start, end)` of the first occurrence of each gram in `seen`.
    pub spans: Vec<(u32, u32)>,
    /// |G(query)|, unseen grams included.
    pub size: u64,
    /// `seen[..sparse]` are sparse grams, the rest dense.
    pub sparse: usize,
    /// How rows are scored against the query.
    pub measure: Measure,
}

impl<'t> Query<'t> {
    /// Extracts the grams of `text` and looks them up in `side`'s vocabulary.
    pub fn prepare(
        text: &'t str,
        side: &SideIndex,
        orders: &Orders,
        scratch: &mut Scratch,
        measure: Measure,
    ) -> Result<Self> {
        // Known grams are deduplicated by id (cheap integer sort, first occurrence kept);
        // only the unknown ones, usually few, are deduplicated by their text.
        let mut grams: Vec<&'t str> = Vec::new();
        let mut spans: Vec<(u32, u32)> = Vec::new();
        for_each_gram_at(text, orders, &mut scratch.bounds, |g, start, end| {
            grams.push(g);
            spans.push((start as u32, end as u32));
        });
        let mut ids = Vec::with_capacity(grams.len());
        side.vocab().get_each(&grams, &mut ids);
        let mut known: Vec<(u32, (u32, u32))> = Vec::with_capacity(grams.len());
        let mut unknown: Vec<&'t str> = Vec::new();
        for ((g, id), span) in grams.into_iter().zip(ids).zip(spans) {
            match id {
                Some(id) => known.push((id, span)),
                None => unknown.push(g),
            }
        }
        known.sort_unstable();
        known.dedup_by_key(|k| k.0);
        unknown.sort_unstable();
        unknown.dedup();
        let size = known.len() + unknown.len();
        if size > MAX_GRAMS_PER_TEXT {
            return Err(invalid("a query text has too many distinct n-grams"));
        }
        let (seen, spans): (Vec<u32>, _) = known.into_iter().unzip();
        let dense = side.dense();
        let sparse = seen.partition_point(|&g| !dense.is_dense(g));
        Ok(Self {
            text,
            seen,
            spans,
            size: size as u64,
            sparse,
            measure,
        })
    }

    /// The known sparse grams, ascending.
    #[inline]
    pub fn sparse_grams(&self) -> &[u32] {
        self.seen.get(..self.sparse).unwrap_or(&[])
    }

    /// The known dense grams, ascending.
    #[inline]
    pub fn dense_grams(&self) -> &[u32] {
        self.seen.get(self.sparse..).unwrap_or(&[])
    }

    /// |G(query) ∩ G(row d)|, from the row's text (for the few rows the fast search scores).
    pub fn intersection(&self, side: &SideIndex, d: u32) -> u64 {
        let Ok(text) = std::str::from_utf8(side.texts().text(d)) else {
            return 0;
        };
        let vocab = side.vocab();
        let mut ids = Vec::new();
        for_each_gram(text, side.orders(), &mut Vec::new(), |g| {
            if let Some(id) = vocab.get(g) {
                ids.push(id);
            }
        });
        ids.sort_unstable();
        ids.dedup();
        intersect(&ids, &self.seen)
    }

    /// Exact similarity (by the query's measure) with row `d` of `side`.
    #[inline]
    pub fn similarity(&self, side: &SideIndex, d: u32) -> Ratio {
        self.measure
            .score(self.intersection(side, d), self.size, side.doc_len(d))
    }

    /// Total postings length of the query's known grams.
    pub fn postings_total(&self, side: &SideIndex) -> u64 {
        self.seen.iter().map(|&g| side.df(g)).sum()
    }
}

/// Size of the intersection of two ascending id lists (branch-light merge).
#[inline]
pub fn intersect(a: &[u32], b: &[u32]) -> u64 {
    let (mut i, mut j, mut count) = (0usize, 0usize, 0u64);
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        count += u64::from(x == y);
        i += usize::from(x <= y);
        j += usize::from(y <= x);
    }
    count
}

/// Work counters of a batch of searches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Postings entries actually read (a 64-row word of a dense gram's bitmap counts as one).
    pub postings_visited: u64,
    /// Total postings length of the query grams of every search performed.
    pub postings_total: u64,
    /// Candidate rows whose similarity was computed exactly.
    pub candidates_verified: u64,
    /// Exact searches that counted every row (pruning could not help).
    pub searches_counted: u64,
    /// Pair searches read off both sides' counts.
    pub pairs_counted: u64,
}

impl Stats {
    /// Adds another batch's counters.
    pub fn add(&mut self, other: &Stats) {
        self.postings_visited += other.postings_visited;
        self.postings_total += other.postings_total;
        self.candidates_verified += other.candidates_verified;
        self.searches_counted += other.searches_counted;
        self.pairs_counted += other.pairs_counted;
    }
}

/// Fewest shared grams with which any row could still win: a row sharing `i` grams scores at most
/// i / |Q| (its Jaccard when it has no other grams, its containment always), so i >= best · |Q|
/// (rounded up; equality may tie).
pub(crate) fn min_shared(best: &Best, q: u64) -> u64 {
    let Ratio { num, den } = best.score;
    if num == 0 {
        return 1;
    }
    // In 64 bits whenever the product fits (always, for real texts), else in 128.
    let need = match num.checked_mul(q) {
        Some(product) => product.div_ceil(den),
        None => {
            let wide = (u128::from(num) * u128::from(q)).div_ceil(u128::from(den));
            u64::try_from(wide).unwrap_or(u64::MAX)
        }
    };
    need.max(1)
}

/// Per-row state of the fast search's shortlist pass: `epoch << 16 | count`.
type State = u32;
const COUNT_MASK: State = 0xFFFF;
/// Most rare grams the shortlist pass counts (their counts fit the state's low half).
const MAX_RARE_GRAMS: usize = COUNT_MASK as usize;

/// Per-thread scratch space of the fast search, reused across queries (per-row state is
/// epoch-stamped).
#[derive(Debug, Default)]
pub struct Scratch {
    state: Vec<State>,
    epoch: u16,
    cands: Vec<u32>,
    order: Vec<(u32, u64)>,
    chosen: Vec<usize>,
    pub(crate) bounds: Vec<usize>,
}

impl Scratch {
    /// Scratch for an index of `rows` rows.
    pub fn new(rows: usize) -> Self {
        Self {
            state: vec![0; rows],
            ..Self::default()
        }
    }

    fn next_tag(&mut self) -> State {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.state.fill(0);
            self.epoch = 1;
        }
        State::from(self.epoch) << 16
    }
}

/// Appends to `chosen` up to `rare` of the `within` rarest query grams (indices into
/// `query.seen`), rarest first, skipping grams whose first occurrence overlaps a chosen one
/// (overlapping grams mostly carry the same evidence, e.g. every gram of one rare number);
/// overlapping ones fill up when too few remain.
fn spread_rare_grams(query: &Query<'_>, rare: usize, within: usize, chosen: &mut Vec<usize>) {
    let start = chosen.len();
    let overlaps = |a: (u32, u32), b: (u32, u32)| a.0 < b.1 && b.0 < a.1;
    let candidates = query.spans.len().min(within);
    for (i, &span) in query.spans.iter().enumerate().take(candidates) {
        if chosen.len() - start == rare {
            return;
        }
        let free = chosen
            .get(start..)
            .unwrap_or(&[])
            .iter()
            .all(|&c| query.spans.get(c).is_none_or(|&o| !overlaps(span, o)));
        if free {
            chosen.push(i);
        }
    }
    for i in 0..candidates {
        if chosen.len() - start == rare {
            break;
        }
        if !chosen.get(start..).unwrap_or(&[]).contains(&i) {
            chosen.push(i);
        }
    }
}

/// Counts how many of the chosen rare grams each row contains and leaves the `shortlist` rows
/// with the highest counts (lower row on ties) in `scratch.order`, ascending by row.
fn shortlist_pass(
    side: &SideIndex,
    query: &Query<'_>,
    scratch: &mut Scratch,
    stats: &mut Stats,
    rare: usize,
    shortlist: usize,
) {
    let tag = scratch.next_tag();
    scratch.cands.clear();
    let mut chosen = std::mem::take(&mut scratch.chosen);
    chosen.clear();
    spread_rare_grams(query, rare.min(MAX_RARE_GRAMS), usize::MAX, &mut chosen);
    for &i in &chosen {
        let g = query.seen.get(i).copied().unwrap_or(u32::MAX);
        stats.postings_visited += side.df(g);
        side.for_each_row(g, |d| {
            let Some(st) = scratch.state.get_mut(d as usize) else {
                return;
            };
            if *st & !COUNT_MASK == tag {
                *st += 1;
            } else {
                *st = tag | 1;
                scratch.cands.push(d);
            }
        });
    }
    scratch.chosen = chosen;
    let mut order = std::mem::take(&mut scratch.order);
    order.clear();
    order.extend(scratch.cands.iter().map(|&d| {
        let count = u64::from(scratch.state.get(d as usize).copied().unwrap_or(0) & COUNT_MASK);
        (d, count)
    }));
    let by_count = |a: &(u32, u64), b: &(u32, u64)| b.1.cmp(&a.1).then(a.0.cmp(&b.0));
    if shortlist == 0 {
        order.clear();
    } else if order.len() > shortlist {
        order.select_nth_unstable_by(shortlist - 1, by_count);
        order.truncate(shortlist);
    }
    order.sort_unstable_by_key(|e| e.0);
    scratch.order = order;
}

/// Approximate top-1 search: rows from the postings of `rare` rare query grams (rarest first,
/// spread over the query), the `shortlist` rows sharing most of them (lower row on ties) verified
/// exactly. The shortlisted rows are appended to `out`.
#[allow(clippy::too_many_arguments)]
pub fn search_fast(
    side: &SideIndex,
    query: &Query<'_>,
    best: &mut Best,
    scratch: &mut Scratch,
    stats: &mut Stats,
    rare: usize,
    shortlist: usize,
    out: &mut Vec<u32>,
) {
    let seen = &query.seen;
    if seen.is_empty() || shortlist == 0 {
        return;
    }
    stats.postings_total += query.postings_total(side);
    shortlist_pass(side, query, scratch, stats, rare, shortlist);
    for &(d, _) in &scratch.order {
        stats.candidates_verified += 1;
        best.offer(query.similarity(side, d), d);
        out.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_shared_is_the_smallest_winning_intersection() {
        let best = |num, den| Best {
            score: Ratio { num, den },
            row: 5,
        };
        assert_eq!(min_shared(&Best::NONE, 10), 1);
        assert_eq!(min_shared(&best(1, 2), 10), 5);
        assert_eq!(min_shared(&best(1, 3), 10), 4);
        assert_eq!(min_shared(&best(7, 9), 9), 7);
        // A product past 64 bits is worked out in 128.
        assert_eq!(min_shared(&best(1 << 40, (1 << 41) + 1), 3), 2);
        assert_eq!(min_shared(&best(1 << 40, (1 << 41) + 1), 1 << 30), 1 << 29);
    }

    #[test]
    fn intersect_counts_common_ids() {
        assert_eq!(intersect(&[1, 3, 5, 7], &[2, 3, 7, 9]), 2);
        assert_eq!(intersect(&[], &[1]), 0);
        assert_eq!(intersect(&[1, 2, 3], &[1, 2, 3]), 3);
    }
}
