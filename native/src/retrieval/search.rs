//! Top-1 search of one query against one training side.
//!
//! `search_exact` returns the true maximum (lowest row on ties) with real pruning: query grams are
//! processed rarest first; a row first met at the i-th of m known grams shares at most m − i grams
//! with the query, so new candidates stop once (m − i)/|Q| cannot beat the best so far (or tie it
//! at a lower row); a per-row bound min(m − i, |D|)/(|Q| + |D| − min(m − i, |D|)), which implies
//! the size filter, rejects hopeless rows on first sight; the strongest candidate of each step is
//! verified at once to raise the threshold early; the remaining candidates are verified in order
//! of their upper bound (partial count + unprocessed grams) until no bound can win.

use std::cmp::Ordering;

use super::error::{invalid, Result};
use super::grams::{distinct_grams_at, Orders};
use super::index::{SideIndex, MAX_GRAMS_PER_TEXT};
use super::score::{Best, Ratio};

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
}

impl<'t> Query<'t> {
    /// Extracts the grams of `text` and looks them up in `side`'s vocabulary.
    pub fn prepare(
        text: &'t str,
        side: &SideIndex,
        orders: &Orders,
        scratch: &mut Scratch,
    ) -> Result<Self> {
        let mut grams: Vec<(&'t str, u32, u32)> = Vec::new();
        distinct_grams_at(text, orders, &mut scratch.bounds, &mut grams);
        if grams.len() > MAX_GRAMS_PER_TEXT {
            return Err(invalid("a query text has too many distinct n-grams"));
        }
        let vocab = side.vocab();
        let mut known: Vec<(u32, (u32, u32))> = grams
            .iter()
            .filter_map(|&(g, start, end)| vocab.get(g).map(|id| (id, (start, end))))
            .collect();
        known.sort_unstable();
        let (seen, spans) = known.into_iter().unzip();
        Ok(Self {
            text,
            seen,
            spans,
            size: grams.len() as u64,
        })
    }

    /// Exact Jaccard similarity with row `d` of `side`.
    #[inline]
    pub fn jaccard(&self, side: &SideIndex, d: u32) -> Ratio {
        let doc = side.doc(d);
        Ratio::jaccard(intersect(doc, &self.seen), self.size, doc.len() as u64)
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
    /// Postings entries actually read.
    pub postings_visited: u64,
    /// Total postings length of the query grams of every search performed.
    pub postings_total: u64,
    /// Candidate rows whose similarity was computed exactly.
    pub candidates_verified: u64,
}

impl Stats {
    /// Adds another batch's counters.
    pub fn add(&mut self, other: &Stats) {
        self.postings_visited += other.postings_visited;
        self.postings_total += other.postings_total;
        self.candidates_verified += other.candidates_verified;
    }
}

const COUNT_MASK: u64 = (1 << 31) - 1;
const CLOSED: u64 = 1 << 31;
const LOW: u64 = 0xFFFF_FFFF;

/// Per-thread scratch space, reused across queries (per-row state is epoch-stamped).
#[derive(Debug, Default)]
pub struct Scratch {
    /// Per row: `epoch << 32 | CLOSED? | count`.
    state: Vec<u64>,
    epoch: u32,
    cands: Vec<u32>,
    order: Vec<(Ratio, u32, u64)>,
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

    fn next_tag(&mut self) -> u64 {
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.state.fill(0);
            self.epoch = 1;
        }
        u64::from(self.epoch) << 32
    }
}

/// Turns a row's exact intersection with the query into the value being maximised; the value
/// must never exceed the row's Jaccard similarity with the query (the pruning bounds rely on it).
pub trait Valuer {
    /// Value of row `row` whose gram set has `row_len` grams, `inter` of them in the query.
    fn value(&mut self, row: u32, inter: u64, row_len: u64) -> Ratio;
}

/// The plain similarity of the query itself.
pub struct Similarity {
    /// |G(query)|.
    pub size: u64,
}

impl Valuer for Similarity {
    #[inline]
    fn value(&mut self, _row: u32, inter: u64, row_len: u64) -> Ratio {
        Ratio::jaccard(inter, self.size, row_len)
    }
}

#[inline]
fn upper_bound(shared: u64, query: u64, row_len: u64) -> Ratio {
    let inter = shared.min(row_len);
    Ratio::jaccard(inter, query, row_len)
}

/// Exact top-1 search: raises `best` to the maximum value over all rows (lowest row on ties).
pub fn search_exact<V: Valuer>(
    side: &SideIndex,
    query: &Query<'_>,
    best: &mut Best,
    scratch: &mut Scratch,
    stats: &mut Stats,
    valuer: &mut V,
) {
    let seen = &query.seen;
    let m = seen.len();
    if m == 0 {
        return;
    }
    stats.postings_total += query.postings_total(side);
    let q = query.size;
    let tag = scratch.next_tag();
    scratch.cands.clear();
    let mut end = m;
    for (i, &g) in seen.iter().enumerate() {
        let remaining = (m - i) as u64;
        // A row first met now shares at most `remaining` grams: J <= remaining / |Q|.
        if !best.admits(
            Ratio {
                num: remaining,
                den: q,
            },
            0,
        ) {
            end = i;
            break;
        }
        let postings = side.postings(g);
        stats.postings_visited += postings.len() as u64;
        let mut top: Option<(u64, u32)> = None;
        for &d in postings {
            let Some(st) = scratch.state.get_mut(d as usize) else {
                continue;
            };
            if *st & !LOW == tag {
                if *st & CLOSED == 0 {
                    *st += 1;
                    let c = *st & COUNT_MASK;
                    if top.is_none_or(|(tc, td)| c > tc || (c == tc && d < td)) {
                        top = Some((c, d));
                    }
                }
            } else if best.admits(upper_bound(remaining, q, side.doc_len(d)), d) {
                *st = tag | 1;
                scratch.cands.push(d);
                if top.is_none_or(|(tc, td)| 1 > tc || (1 == tc && d < td)) {
                    top = Some((1, d));
                }
            } else {
                *st = tag | CLOSED;
            }
        }
        // Early verification of this step's strongest candidate raises the threshold.
        if let Some((count, d)) = top {
            let row_len = side.doc_len(d);
            let possible = count + (m - i - 1) as u64;
            if let Some(st) = scratch.state.get_mut(d as usize) {
                *st |= CLOSED;
            }
            if best.admits(upper_bound(possible, q, row_len), d) {
                stats.candidates_verified += 1;
                let inter = intersect(side.doc(d), seen);
                best.offer(valuer.value(d, inter, row_len), d);
            }
        }
    }

    // Remaining candidates: partial counts cover seen[..end]; bound by count + unprocessed grams.
    let rest = seen.get(end..).unwrap_or(&[]);
    let unprocessed = rest.len() as u64;
    let mut order = std::mem::take(&mut scratch.order);
    order.clear();
    for &d in &scratch.cands {
        let st = scratch.state.get(d as usize).copied().unwrap_or(CLOSED);
        if st & CLOSED != 0 {
            continue;
        }
        let count = st & COUNT_MASK;
        let ub = upper_bound(count + unprocessed, q, side.doc_len(d));
        if best.admits(ub, d) {
            order.push((ub, d, count));
        }
    }
    order.sort_unstable_by(|a, b| b.0.cmp_exact(a.0).then(a.1.cmp(&b.1)));
    for &(ub, d, count) in &order {
        if !best.admits(ub, d) {
            if ub.cmp_exact(best.score) == Ordering::Less {
                break;
            }
            continue;
        }
        let doc = side.doc(d);
        let inter = match rest.first() {
            Some(&first) => {
                let from = doc.partition_point(|&x| x < first);
                count + intersect(doc.get(from..).unwrap_or(&[]), rest)
            }
            None => count,
        };
        stats.candidates_verified += 1;
        best.offer(valuer.value(d, inter, doc.len() as u64), d);
    }
    scratch.order = order;
}

/// The `rare` rarest query grams, preferring grams whose first occurrences do not overlap a rarer
/// chosen gram (overlapping grams mostly carry the same evidence, e.g. every gram of one rare
/// number); overlapping ones fill up when too few remain. Indices into `query.seen`.
fn spread_rare_grams(query: &Query<'_>, rare: usize) -> Vec<usize> {
    let mut chosen: Vec<usize> = Vec::with_capacity(rare);
    let overlaps = |a: (u32, u32), b: (u32, u32)| a.0 < b.1 && b.0 < a.1;
    for (i, &span) in query.spans.iter().enumerate() {
        if chosen.len() == rare {
            return chosen;
        }
        if chosen
            .iter()
            .all(|&c| query.spans.get(c).is_none_or(|&o| !overlaps(span, o)))
        {
            chosen.push(i);
        }
    }
    for i in 0..query.seen.len() {
        if chosen.len() == rare {
            break;
        }
        if !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    chosen
}

/// Approximate top-1 search: rows from the postings of `rare` rare query grams (rarest first,
/// spread over the query), the `shortlist` rows sharing most of them (lower row on ties) verified
/// exactly. The shortlisted rows are appended to `out`.
#[allow(clippy::too_many_arguments)]
pub fn search_fast<V: Valuer>(
    side: &SideIndex,
    query: &Query<'_>,
    best: &mut Best,
    scratch: &mut Scratch,
    stats: &mut Stats,
    valuer: &mut V,
    rare: usize,
    shortlist: usize,
    out: &mut Vec<u32>,
) {
    let seen = &query.seen;
    if seen.is_empty() || shortlist == 0 {
        return;
    }
    stats.postings_total += query.postings_total(side);
    let tag = scratch.next_tag();
    scratch.cands.clear();
    for i in spread_rare_grams(query, rare) {
        let postings = side.postings(seen.get(i).copied().unwrap_or(u32::MAX));
        stats.postings_visited += postings.len() as u64;
        for &d in postings {
            let Some(st) = scratch.state.get_mut(d as usize) else {
                continue;
            };
            if *st & !LOW == tag {
                *st += 1;
            } else {
                *st = tag | 1;
                scratch.cands.push(d);
            }
        }
    }
    let mut order = std::mem::take(&mut scratch.order);
    order.clear();
    order.extend(scratch.cands.iter().map(|&d| {
        let count = scratch.state.get(d as usize).copied().unwrap_or(0) & COUNT_MASK;
        (Ratio::ZERO, d, count)
    }));
    let by_count = |a: &(Ratio, u32, u64), b: &(Ratio, u32, u64)| b.2.cmp(&a.2).then(a.1.cmp(&b.1));
    if order.len() > shortlist {
        order.select_nth_unstable_by(shortlist - 1, by_count);
        order.truncate(shortlist);
    }
    order.sort_unstable_by_key(|e| e.1);
    for &(_, d, _) in &order {
        let doc = side.doc(d);
        stats.candidates_verified += 1;
        best.offer(valuer.value(d, intersect(doc, seen), doc.len() as u64), d);
        out.push(d);
    }
    scratch.order = order;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intersect_counts_common_ids() {
        assert_eq!(intersect(&[1, 3, 5, 7], &[2, 3, 7, 9]), 2);
        assert_eq!(intersect(&[], &[1]), 0);
        assert_eq!(intersect(&[1, 2, 3], &[1, 2, 3]), 3);
    }
}
