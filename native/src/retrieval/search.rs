//! Top-1 search of one query against one training side.
//!
//! `search_exact` returns the true maximum (lowest row on ties) with real pruning:
//! * Any set P of processed query grams is a valid prefix: a row containing none of them shares
//!   at most m − |P| of the query's m known grams, so J <= (m − |P|)/|Q|. Grams are processed
//!   rarest first (gram ids are assigned by ascending document frequency), after a few rare grams
//!   spread over the query that locate strong rows early; new candidates stop as soon as a row not
//!   met yet could no longer beat the best so far (or tie it at a lower row).
//! * Early verification of the rows sharing most of the grams processed so far (after the spread
//!   grams, then after 2, 4, 8… times as many) raises the threshold, which shortens the prefix.
//! * Count extension: without admitting new rows, further grams are counted for the live
//!   candidates while that is cheaper than verifying them; each candidate's bound
//!   min(count + unprocessed, |D|)/(|Q| + |D| − min(…)) (which implies the size filter) only
//!   shrinks, so failing candidates are dropped for good. Few candidates gallop through postings.
//! * The survivors are verified exactly (intersection counted against a bitmap of the unprocessed
//!   sparse grams, and the row's dense-gram bitset) in order of their bound, stopping when no
//!   bound can win.
//! * When the prefix still to process would cost more than counting every row (the best
//!   similarity is low, so most rows stay candidates), `search_counted` counts every row's shared
//!   grams at once with the bit-sliced counters of `dense.rs` and reads off the rows that can
//!   still win; those counts are exact, and the caller may reuse them (the pair search does).
//!
//! Scores are compared exactly by cross-multiplication.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::dense::{and_count, for_each_masked, words_for, Counts, TILE_WORDS};
use super::error::{invalid, Result};
use super::grams::{for_each_gram_at, Orders};
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
    /// `seen[..sparse]` are sparse grams, the rest dense.
    pub sparse: usize,
    /// The dense grams of `seen` as a bitset over the side's dense grams.
    pub dense_bits: Vec<u64>,
}

impl<'t> Query<'t> {
    /// Extracts the grams of `text` and looks them up in `side`'s vocabulary.
    pub fn prepare(
        text: &'t str,
        side: &SideIndex,
        orders: &Orders,
        scratch: &mut Scratch,
    ) -> Result<Self> {
        // Known grams are deduplicated by id (cheap integer sort, first occurrence kept);
        // only the unknown ones, usually few, are deduplicated by their text.
        let vocab = side.vocab();
        let mut known: Vec<(u32, (u32, u32))> = Vec::new();
        let mut unknown: Vec<&'t str> = Vec::new();
        for_each_gram_at(
            text,
            orders,
            &mut scratch.bounds,
            |g, start, end| match vocab.get(g) {
                Some(id) => known.push((id, (start as u32, end as u32))),
                None => unknown.push(g),
            },
        );
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
        let mut dense_bits = vec![0u64; words_for(dense.count())];
        for &g in seen.get(sparse..).unwrap_or(&[]) {
            let k = (g - dense.first()) as usize;
            if let Some(w) = dense_bits.get_mut(k / 64) {
                *w |= 1 << (k % 64);
            }
        }
        Ok(Self {
            text,
            seen,
            spans,
            size: size as u64,
            sparse,
            dense_bits,
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

    /// |G(query) ∩ G(row d)|.
    #[inline]
    pub fn intersection(&self, side: &SideIndex, d: u32) -> u64 {
        intersect(side.doc(d), self.sparse_grams())
            + and_count(side.dense().row(d), &self.dense_bits)
    }

    /// Exact Jaccard similarity with row `d` of `side`.
    #[inline]
    pub fn jaccard(&self, side: &SideIndex, d: u32) -> Ratio {
        Ratio::jaccard(self.intersection(side, d), self.size, side.doc_len(d))
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

/// The exact search first processes this many rare grams spread over the query, chosen among
/// the grams a search at similarity `SEED_GUESS_PERCENT`% would process anyway, then verifies
/// the `SEED_SHORTLIST` rows sharing most of them.
const SEED_RARE_GRAMS: usize = 6;
const SEED_GUESS_PERCENT: usize = 80;
const SEED_SHORTLIST: usize = 8;

/// Rough cost of pruning one candidate by its per-row state (a random read), in postings scanned.
const PRUNE_COST_IN_POSTINGS: u64 = 2;

/// Rough cost of verifying one candidate, in postings entries scanned.
const VERIFY_COST_IN_POSTINGS: usize = 128;

/// A set of gram ids as a bitmap over the vocabulary: counting a row's grams in the set is a
/// run of independent lookups instead of a dependent merge.
#[derive(Debug, Default)]
struct Marks {
    words: Vec<u64>,
}

impl Marks {
    fn set(&mut self, ids: impl IntoIterator<Item = u32>) {
        for g in ids {
            let w = (g >> 6) as usize;
            if w >= self.words.len() {
                self.words.resize(w + 1, 0);
            }
            if let Some(x) = self.words.get_mut(w) {
                *x |= 1 << (g & 63);
            }
        }
    }

    fn clear(&mut self, ids: impl IntoIterator<Item = u32>) {
        for g in ids {
            if let Some(x) = self.words.get_mut((g >> 6) as usize) {
                *x &= !(1 << (g & 63));
            }
        }
    }

    /// How many of `row`'s gram ids of at least `min_id` are in the set (the row is ascending,
    /// so only its tail is read).
    #[inline]
    fn count_tail(&self, row: &[u32], min_id: u32) -> u64 {
        row.iter()
            .rev()
            .take_while(|&&g| g >= min_id)
            .map(|&g| {
                self.words
                    .get((g >> 6) as usize)
                    .map_or(0, |w| (w >> (g & 63)) & 1)
            })
            .sum()
    }

    /// |G(query) ∩ G(row d)| when the set holds the query's sparse grams.
    #[inline]
    fn intersection(&self, side: &SideIndex, query: &Query<'_>, d: u32) -> u64 {
        self.count(side.doc(d)) + and_count(side.dense().row(d), &query.dense_bits)
    }

    /// How many of `row`'s gram ids are in the set.
    #[inline]
    fn count(&self, row: &[u32]) -> u64 {
        row.iter()
            .map(|&g| {
                self.words
                    .get((g >> 6) as usize)
                    .map_or(0, |w| (w >> (g & 63)) & 1)
            })
            .sum()
    }
}

/// Per-row search state: `epoch << 16 | CLOSED? | count` (counts stay below 2^15; longer
/// queries take the exhaustive path).
type State = u32;
const COUNT_MASK: State = (1 << 15) - 1;
const CLOSED: State = 1 << 15;
const LOW: State = 0xFFFF;
/// Largest number of known query grams the counting search handles.
const MAX_COUNTED_GRAMS: usize = COUNT_MASK as usize;

/// Per-thread scratch space, reused across queries (per-row state is epoch-stamped).
#[derive(Debug, Default)]
pub struct Scratch {
    /// Per row: `epoch << 16 | CLOSED? | count`.
    state: Vec<State>,
    epoch: u16,
    cands: Vec<u32>,
    order: Vec<(Ratio, u32, u64)>,
    live: Vec<Live>,
    heap: BinaryHeap<Bounded>,
    order_idx: Vec<usize>,
    taken: Vec<bool>,
    rest: Vec<u32>,
    rest_dense: Vec<u64>,
    rows_buf: Vec<u32>,
    locals: Vec<usize>,
    marks: Marks,
    pub(crate) bounds: Vec<usize>,
    /// Every row's count of the last query's grams, valid when the last exact search counted.
    pub(crate) counts: Counts,
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

/// Turns a row's exact intersection with the query into the value being maximised. The pruning
/// bounds rely on the value never exceeding the row's Jaccard similarity with the query — or,
/// when several queries are searched in turn into one `Best` (the references of a segment), with
/// the most similar of them, whose own search then bounds it correctly.
pub trait Valuer {
    /// Value of row `row` whose gram set has `row_len` grams, `inter` of them in the query.
    /// When the value cannot beat `best`, any value that does not beat it may be returned.
    fn value(&mut self, row: u32, inter: u64, row_len: u64, best: &Best) -> Ratio;

    /// An upper bound of every value, if one is known (it caps all pruning bounds).
    fn cap(&self) -> Option<Ratio> {
        None
    }
}

/// Verifies row `d`, which shares `inter` grams with the query: its value is offered to `best`.
#[inline]
fn verify<V: Valuer>(
    side: &SideIndex,
    d: u32,
    inter: u64,
    best: &mut Best,
    stats: &mut Stats,
    valuer: &mut V,
) {
    stats.candidates_verified += 1;
    best.offer(valuer.value(d, inter, side.doc_len(d), best), d);
}

/// The plain similarity of the query itself.
pub struct Similarity {
    /// |G(query)|.
    pub size: u64,
}

impl Valuer for Similarity {
    #[inline]
    fn value(&mut self, _row: u32, inter: u64, row_len: u64, _best: &Best) -> Ratio {
        Ratio::jaccard(inter, self.size, row_len)
    }
}

#[inline]
fn upper_bound(shared: u64, query: u64, row_len: u64) -> Ratio {
    let inter = shared.min(row_len);
    Ratio::jaccard(inter, query, row_len)
}

/// `bound`, lowered to the valuer's cap when there is one.
#[inline]
fn capped(bound: Ratio, cap: Option<Ratio>) -> Ratio {
    cap.map_or(bound, |c| bound.min(c))
}

/// Exact top-1 search: raises `best` to the maximum value over all rows (lowest row on ties).
///
/// Steps: the processing order of the query grams (`processing_order`), candidate generation
/// while a row not met yet could win (`generate_candidates`, which hands over to
/// `search_counted` when counting every row is cheaper), count extension of the live
/// candidates (`extend_counts`), and verification by upper bound (`verify_by_bound`).
pub fn search_exact<V: Valuer>(
    side: &SideIndex,
    query: &Query<'_>,
    best: &mut Best,
    scratch: &mut Scratch,
    stats: &mut Stats,
    valuer: &mut V,
) {
    scratch.counts.invalidate();
    let m = query.seen.len();
    if m == 0 {
        return;
    }
    stats.postings_total += query.postings_total(side);
    if m > MAX_COUNTED_GRAMS {
        search_exhaustive(side, query, best, scratch, stats, valuer);
        return;
    }
    let mut order = std::mem::take(&mut scratch.order_idx);
    let seeds = processing_order(query, &mut order, &mut scratch.taken);
    let search = ExactSearch {
        side,
        query,
        order: &order,
        seeds,
        tag: scratch.next_tag(),
        cap: valuer.cap(),
    };
    match search.generate_candidates(best, scratch, stats, valuer) {
        Some(end) => {
            let end = search.extend_counts(end, best, scratch, stats);
            search.verify_by_bound(end, best, scratch, stats, valuer);
            scratch.order_idx = order;
        }
        None => {
            scratch.order_idx = order;
            search_counted(side, query, best, scratch, stats, valuer);
        }
    }
}

/// Fills `order` with the order in which `search_exact` processes the query grams (indices
/// into `query.seen`) and returns how many spread seeds lead it.
///
/// Any set P of processed grams is a valid prefix: a row containing none of them shares at most
/// m − |P| grams with the query. A few rare grams spread over the query go first (they locate
/// strong rows early, where the very rarest grams, e.g. of one number, all point at the same
/// weak rows); the rest follow rarest first (sparse grams, then dense ones).
fn processing_order(query: &Query<'_>, order: &mut Vec<usize>, taken: &mut Vec<bool>) -> usize {
    let m = query.seen.len();
    let guess = SEED_GUESS_PERCENT as u64;
    let within = (m as u64 + 1)
        .saturating_sub((guess * query.size).div_ceil(100))
        .max(1) as usize;
    order.clear();
    spread_rare_grams(query, SEED_RARE_GRAMS, within.min(query.sparse), order);
    let seeds = order.len();
    taken.clear();
    taken.resize(m, false);
    for &i in order.iter() {
        if let Some(t) = taken.get_mut(i) {
            *t = true;
        }
    }
    order.extend((0..m).filter(|&i| !taken.get(i).copied().unwrap_or(true)));
    seeds
}

/// What every step of one exact search reads.
struct ExactSearch<'a, 'q, 't> {
    side: &'a SideIndex,
    query: &'q Query<'t>,
    /// The processing order (indices into `query.seen`).
    order: &'a [usize],
    /// Spread seeds at the front of `order`.
    seeds: usize,
    /// The epoch tag of this search's per-row state.
    tag: State,
    cap: Option<Ratio>,
}

/// The unprocessed grams of an exact search once count extension stops.
struct Unprocessed {
    /// How many there are.
    count: u64,
    /// The lowest unprocessed sparse gram, if any.
    first_sparse: Option<u32>,
    /// How many of them are sparse (the front of `scratch.rest`).
    sparse: usize,
    /// Whether any is dense.
    any_dense: bool,
}

impl ExactSearch<'_, '_, '_> {
    /// The gram at position `k` of the processing order.
    fn gram_at(&self, k: usize) -> Option<u32> {
        self.order
            .get(k)
            .and_then(|&gi| self.query.seen.get(gi))
            .copied()
    }

    /// Candidate generation, while a row not met yet could still win: each gram's postings are
    /// counted into the per-row state (new rows join `scratch.cands`), and the leaders are
    /// verified early after the seeds and after 2, 4, 8… times as many grams, which raises the
    /// threshold. Returns the number of grams processed, or `None` when counting every row is
    /// cheaper than the rest of the prefix (the caller then runs `search_counted`).
    fn generate_candidates<V: Valuer>(
        &self,
        best: &mut Best,
        scratch: &mut Scratch,
        stats: &mut Stats,
        valuer: &mut V,
    ) -> Option<usize> {
        let (side, query) = (self.side, self.query);
        let dense = side.dense();
        let m = query.seen.len();
        scratch.cands.clear();
        scratch.marks.set(query.sparse_grams().iter().copied());
        let mut rows_buf = std::mem::take(&mut scratch.rows_buf);
        let mut end = m;
        let mut dense_checked = false;
        for (k, &gi) in self.order.iter().enumerate() {
            // A row first met now shares at most `m - k` grams: J <= (m - k) / |Q|.
            let fresh = Ratio {
                num: (m - k) as u64,
                den: query.size,
            };
            if !best.admits(capped(fresh, self.cap), 0) {
                end = k;
                break;
            }
            let g = query.seen.get(gi).copied().unwrap_or(u32::MAX);
            // Once the seeds have set a threshold, and again at the first dense gram (dense
            // grams come last): when the rest of the prefix would cost more than counting every
            // row, count every row instead. (After a "no" at the first dense gram, later checks
            // could only say no again: the prefix only shrinks, the cost of counting stays.)
            let checkpoint =
                (k == self.seeds && self.seeds > 0) || (dense.is_dense(g) && !dense_checked);
            dense_checked |= dense.is_dense(g);
            if checkpoint && self.counting_pays_from(k, best) {
                scratch.rows_buf = rows_buf;
                scratch.marks.clear(query.sparse_grams().iter().copied());
                return None;
            }
            let postings = if dense.is_dense(g) {
                rows_buf.clear();
                dense.for_each_row(g, |d| rows_buf.push(d));
                rows_buf.as_slice()
            } else {
                side.postings(g)
            };
            stats.postings_visited += postings.len() as u64;
            count_step(postings, self.tag, &mut scratch.state, &mut scratch.cands);
            let done = k + 1;
            let seeds = self.seeds.max(1);
            if done % seeds == 0 && (done / seeds).is_power_of_two() {
                verify_leaders(side, query, best, scratch, stats, valuer, self.tag);
            }
        }
        scratch.rows_buf = rows_buf;
        Some(end)
    }

    /// Whether counting every row beats processing the rest of the prefix from position `k`.
    fn counting_pays_from(&self, k: usize, best: &Best) -> bool {
        let rest = self.order.get(k..).unwrap_or(&[]);
        counting_pays(self.side, self.query, best, self.cap, rest, k)
    }

    /// Count extension: no new candidates, but counting further grams (from position `end` of
    /// the processing order) tightens every bound (count + unprocessed); a candidate whose bound
    /// cannot win is dropped for good (its bound never grows). Many candidates: scan whole
    /// postings against the per-row counts and prune (a pass reading every candidate's state)
    /// only once the scans have cost about as much; few candidates: gallop them, sorted by row,
    /// through each gram's postings and prune every step. Extension goes on while each batch
    /// prunes enough verifications to pay for itself. Leaves the surviving candidates in
    /// `scratch.live` and returns the new end of the processed prefix.
    fn extend_counts(
        &self,
        mut end: usize,
        best: &Best,
        scratch: &mut Scratch,
        stats: &mut Stats,
    ) -> usize {
        let side = self.side;
        let m = self.query.seen.len();
        let per_candidate = VERIFY_COST_IN_POSTINGS as u64;
        let mut cands = std::mem::take(&mut scratch.cands);
        let mut live = std::mem::take(&mut scratch.live);
        live.clear();
        let mut sorted = false;
        // Nearly every candidate is still possible when generation stops, so the first prune
        // waits for a batch of scanning like the others.
        let mut before = cands.len() as u64; // candidates at the previous prune
        let mut spent = 0u64; // work since the previous prune, in postings
        loop {
            let unprocessed = (m - end) as u64;
            let next = self.gram_at(end);
            let next_len = next.map_or(0, |g| side.df(g) as usize);
            let switching = !sorted && next.is_some() && cands.len() * 8 < next_len;
            let due = sorted || switching || spent >= cands.len() as u64 * PRUNE_COST_IN_POSTINGS;
            if due {
                if sorted {
                    self.prune_live(&mut live, unprocessed, best);
                } else {
                    self.prune_open(&mut cands, unprocessed, best, &mut scratch.state);
                    spent += before * PRUNE_COST_IN_POSTINGS;
                }
                let n = if sorted { live.len() } else { cands.len() } as u64;
                // Stop when the batch since the previous prune did not pay for itself.
                if n == 0 || (before - n.min(before)) * per_candidate < spent {
                    break;
                }
                before = n;
                spent = 0;
            }
            let Some(g) = next else { break };
            if switching {
                self.push_live(&cands, &scratch.state, &mut live);
                live.sort_unstable_by_key(|c| c.row);
                sorted = true;
            }
            let examined = if sorted {
                spent += live.len() as u64;
                self.count_live(g, &mut live)
            } else {
                self.count_open(g, next_len, &cands, &mut scratch.state)
            };
            stats.postings_visited += examined as u64;
            spent += examined as u64;
            end += 1;
        }
        if !sorted {
            self.push_live(&cands, &scratch.state, &mut live);
        }
        scratch.cands = cands;
        scratch.live = live;
        end
    }

    /// Counts gram `g` for the sorted candidates in `live`; returns the postings entries
    /// examined.
    fn count_live(&self, g: u32, live: &mut [Live]) -> usize {
        let dense = self.side.dense();
        if dense.is_dense(g) {
            for c in live.iter_mut() {
                c.count += u32::from(dense.contains(g, c.row));
            }
            live.len()
        } else {
            count_in(self.side.postings(g), live)
        }
    }

    /// Counts gram `g` (in `df` rows) into the per-row state of the open candidates: a dense
    /// gram looked up per candidate when they are fewer than its rows, else its rows scanned.
    /// Returns the postings entries examined.
    fn count_open(&self, g: u32, df: usize, cands: &[u32], state: &mut [State]) -> usize {
        let dense = self.side.dense();
        if dense.is_dense(g) && cands.len() < df {
            for &d in cands {
                if dense.contains(g, d) {
                    if let Some(st) = state.get_mut(d as usize) {
                        *st += State::from(*st & CLOSED == 0);
                    }
                }
            }
            cands.len()
        } else {
            let tag = self.tag;
            self.side.for_each_row(g, |d| {
                if let Some(st) = state.get_mut(d as usize) {
                    *st += State::from(*st & !LOW == tag && *st & CLOSED == 0);
                }
            });
            df
        }
    }

    /// Drops the sorted candidates that can no longer win with `unprocessed` grams still to
    /// count.
    fn prune_live(&self, live: &mut Vec<Live>, unprocessed: u64, best: &Best) {
        let (q, cap) = (self.query.size, self.cap);
        live.retain(|c| {
            let ub = upper_bound(u64::from(c.count) + unprocessed, q, u64::from(c.len));
            best.admits(capped(ub, cap), c.row)
        });
    }

    /// Drops (and closes) the candidates that can no longer win with `unprocessed` grams still
    /// to count.
    fn prune_open(&self, cands: &mut Vec<u32>, unprocessed: u64, best: &Best, state: &mut [State]) {
        let (side, q, cap) = (self.side, self.query.size, self.cap);
        let need = min_shared(best, q);
        cands.retain(|&d| {
            let Some(st) = state.get_mut(d as usize) else {
                return false;
            };
            if *st & CLOSED != 0 {
                return false;
            }
            let shared = u64::from(*st & COUNT_MASK) + unprocessed;
            let ub = || capped(upper_bound(shared, q, side.doc_len(d)), cap);
            if shared >= need && best.admits(ub(), d) {
                true
            } else {
                *st |= CLOSED;
                false
            }
        });
    }

    /// Appends the candidates with their counts so far to `live`.
    fn push_live(&self, cands: &[u32], state: &[State], live: &mut Vec<Live>) {
        for &d in cands {
            let st = state.get(d as usize).copied().unwrap_or(0);
            live.push(Live {
                row: d,
                count: st & COUNT_MASK,
                len: self.side.doc_len(d) as u32,
            });
        }
    }

    /// Collects the grams from position `end` of the processing order into `scratch.rest`
    /// (ascending; the dense ones also as a bitset in `scratch.rest_dense`) and unmarks the
    /// processed sparse grams, so that `scratch.marks` holds the unprocessed sparse ones.
    fn unprocessed(&self, end: usize, scratch: &mut Scratch) -> Unprocessed {
        let (seen, dense) = (&self.query.seen, self.side.dense());
        let rest = &mut scratch.rest;
        rest.clear();
        rest.extend(
            self.order
                .get(end..)
                .unwrap_or(&[])
                .iter()
                .filter_map(|&i| seen.get(i).copied()),
        );
        rest.sort_unstable();
        scratch.marks.clear(
            self.order
                .get(..end)
                .unwrap_or(&[])
                .iter()
                .filter_map(|&i| seen.get(i).copied())
                .filter(|&g| !dense.is_dense(g)),
        );
        let sparse = rest.partition_point(|&g| !dense.is_dense(g));
        let rest_dense = &mut scratch.rest_dense;
        rest_dense.clear();
        rest_dense.resize(self.query.dense_bits.len(), 0);
        for &g in rest.get(sparse..).unwrap_or(&[]) {
            let k = (g - dense.first()) as usize;
            if let Some(w) = rest_dense.get_mut(k / 64) {
                *w |= 1 << (k % 64);
            }
        }
        Unprocessed {
            count: rest.len() as u64,
            first_sparse: rest.first().copied().filter(|_| sparse > 0),
            sparse,
            any_dense: rest.len() > sparse,
        }
    }

    /// Verifies the live candidates (in `scratch.live`, counted up to position `end` of the
    /// processing order) in order of their upper bound (a heap: most candidates are never
    /// popped), until no bound can win. Unprocessed sparse grams are counted against a bitmap of
    /// them, unprocessed dense grams against the row's dense bitset.
    fn verify_by_bound<V: Valuer>(
        &self,
        end: usize,
        best: &mut Best,
        scratch: &mut Scratch,
        stats: &mut Stats,
        valuer: &mut V,
    ) {
        let (side, q, cap) = (self.side, self.query.size, self.cap);
        let rest = self.unprocessed(end, scratch);
        let mut heap = std::mem::take(&mut scratch.heap).into_vec();
        heap.clear();
        heap.extend(scratch.live.iter().map(|c| {
            let count = u64::from(c.count);
            Bounded {
                ub: capped(upper_bound(count + rest.count, q, u64::from(c.len)), cap),
                row: c.row,
                count,
            }
        }));
        let mut heap = BinaryHeap::from(heap);
        while let Some(Bounded { ub, row: d, count }) = heap.pop() {
            if !best.admits(ub, d) {
                if ub.cmp_exact(best.score) == Ordering::Less {
                    break;
                }
                continue;
            }
            let mut inter = count;
            if let Some(first) = rest.first_sparse {
                inter += scratch.marks.count_tail(side.doc(d), first);
            }
            if rest.any_dense {
                inter += and_count(side.dense().row(d), &scratch.rest_dense);
            }
            verify(side, d, inter, best, stats, valuer);
        }
        scratch.heap = heap;
        let sparse_rest = scratch.rest.get(..rest.sparse).unwrap_or(&[]);
        scratch.marks.clear(sparse_rest.iter().copied());
    }
}

/// Cost of adding one 64-row word of a dense gram's bitmap to the bit-sliced counts, in
/// postings entries (a carry-save step over one word is a few instructions, a postings entry a
/// random read-modify-write).
const COUNT_WORD_COST_NUM: u64 = 1;
const COUNT_WORD_COST_DEN: u64 = 16;

/// Whether counting every row (`search_counted`) is cheaper than going on with candidate
/// generation over `rest` (the unprocessed grams, in order; `done` already processed).
fn counting_pays(
    side: &SideIndex,
    query: &Query<'_>,
    best: &Best,
    cap: Option<Ratio>,
    rest: &[usize],
    done: usize,
) -> bool {
    let m = query.seen.len();
    let mut prefix = 0u64;
    for (j, &gi) in rest.iter().enumerate() {
        let fresh = Ratio {
            num: (m - done - j) as u64,
            den: query.size,
        };
        if !best.admits(capped(fresh, cap), 0) {
            break;
        }
        prefix += query.seen.get(gi).map_or(0, |&g| side.df(g));
    }
    let sparse: u64 = query.sparse_grams().iter().map(|&g| side.df(g)).sum();
    let words = (side.dense().tiles() * TILE_WORDS) as u64;
    let counting = sparse
        + (query.dense_grams().len() as u64 * words * COUNT_WORD_COST_NUM)
            .div_ceil(COUNT_WORD_COST_DEN);
    prefix > counting
}

/// Exact search by counting every row's shared grams (bit-sliced, see `dense.rs`): the counts
/// are exact intersections, so the rows that can still win are read off directly, in row order.
/// The counts stay (valid) in `scratch.counts` for the caller to reuse.
pub fn search_counted<V: Valuer>(
    side: &SideIndex,
    query: &Query<'_>,
    best: &mut Best,
    scratch: &mut Scratch,
    stats: &mut Stats,
    valuer: &mut V,
) {
    let q = query.size;
    let cap = valuer.cap();
    let mut counts = std::mem::take(&mut scratch.counts);
    counts.compute(
        side.dense(),
        query.sparse_grams().iter().map(|&g| side.postings(g)),
        query.dense_grams(),
        query.seen.len(),
        &mut scratch.locals,
    );
    // Postings read, plus one per bitmap word read.
    stats.postings_visited += query
        .sparse_grams()
        .iter()
        .map(|&g| side.df(g))
        .sum::<u64>()
        + (query.dense_grams().len() * counts.tiles() * TILE_WORDS) as u64;
    stats.searches_counted += 1;
    // The first row with the highest count is usually close to the best: a high threshold
    // from the start.
    if let Some((row, count)) = counts.top {
        verify(side, row, count, best, stats, valuer);
    }
    for tile in 0..counts.tiles() {
        let need = min_shared(best, q);
        if counts.tile_max(tile) < need {
            continue;
        }
        let mask = counts.at_least(tile, need);
        for_each_masked(tile, &mask, |d| {
            let count = counts.count(d);
            if best.admits(capped(upper_bound(count, q, side.doc_len(d)), cap), d) {
                verify(side, d, count, best, stats, valuer);
            }
            true
        });
    }
    scratch.counts = counts;
}

/// One generation step: counts `postings` into the per-row state (rows met for the first time
/// open with count 1 and join `cands`; closed rows stay as they are) without data-dependent
/// branches (tracking a running maximum here would triple the cost of the loop).
#[inline]
fn count_step(postings: &[u32], tag: State, state: &mut [State], cands: &mut Vec<u32>) {
    let start = cands.len();
    cands.resize(start + postings.len(), 0);
    // a plain slice keeps the buffer's address and length in registers
    let buf = cands.get_mut(start..).unwrap_or_default();
    let mut len = 0usize;
    for &d in postings {
        let Some(st) = state.get_mut(d as usize) else {
            continue;
        };
        let s = *st;
        let same = s & !LOW == tag;
        let open = same && s & CLOSED == 0;
        let next = if same { s + State::from(open) } else { tag | 1 };
        *st = next;
        if let Some(slot) = buf.get_mut(len) {
            *slot = d;
        }
        len += usize::from(!same);
    }
    cands.truncate(start + len);
}

/// Exact search without counting, for queries with too many grams to count: every row sharing
/// a gram is verified once.
fn search_exhaustive<V: Valuer>(
    side: &SideIndex,
    query: &Query<'_>,
    best: &mut Best,
    scratch: &mut Scratch,
    stats: &mut Stats,
    valuer: &mut V,
) {
    let tag = scratch.next_tag();
    scratch.marks.set(query.sparse_grams().iter().copied());
    for &g in &query.seen {
        stats.postings_visited += side.df(g);
        side.for_each_row(g, |d| {
            let Some(st) = scratch.state.get_mut(d as usize) else {
                return;
            };
            if *st & !LOW != tag {
                *st = tag | CLOSED;
                let inter = scratch.marks.intersection(side, query, d);
                verify(side, d, inter, best, stats, valuer);
            }
        });
    }
    scratch.marks.clear(query.sparse_grams().iter().copied());
}

/// A candidate with its upper bound; ordered by bound, then lower row first.
#[derive(Debug, Clone, Copy)]
struct Bounded {
    ub: Ratio,
    row: u32,
    count: u64,
}

impl PartialEq for Bounded {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Bounded {}

impl PartialOrd for Bounded {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Bounded {
    fn cmp(&self, other: &Self) -> Ordering {
        self.ub.cmp_exact(other.ub).then(other.row.cmp(&self.row))
    }
}

/// Verifies the `SEED_SHORTLIST` open candidates with the highest counts (lower row on ties)
/// and closes them.
fn verify_leaders<V: Valuer>(
    side: &SideIndex,
    query: &Query<'_>,
    best: &mut Best,
    scratch: &mut Scratch,
    stats: &mut Stats,
    valuer: &mut V,
    tag: State,
) {
    // The SEED_SHORTLIST highest (count, lower row) open candidates, in one pass.
    let mut order = std::mem::take(&mut scratch.order);
    order.clear();
    let before =
        |a: &(Ratio, u32, u64), b: &(Ratio, u32, u64)| a.2 > b.2 || (a.2 == b.2 && a.1 < b.1);
    for &d in &scratch.cands {
        let st = scratch.state.get(d as usize).copied().unwrap_or(CLOSED);
        if st & !LOW != tag || st & CLOSED != 0 {
            continue;
        }
        let item = (Ratio::ZERO, d, u64::from(st & COUNT_MASK));
        if order.len() == SEED_SHORTLIST && order.last().is_none_or(|last| !before(&item, last)) {
            continue;
        }
        let at = order.partition_point(|o| before(o, &item));
        order.insert(at, item);
        order.truncate(SEED_SHORTLIST);
    }
    for &(_, d, _) in &order {
        if let Some(st) = scratch.state.get_mut(d as usize) {
            *st |= CLOSED;
        }
        let inter = scratch.marks.intersection(side, query, d);
        verify(side, d, inter, best, stats, valuer);
    }
    scratch.order = order;
}

/// Fewest shared grams with which any row could still win: a row sharing `i` grams scores at most
/// i / |Q| (when it has no other grams), so i >= best · |Q| (rounded up; equality may tie).
pub(crate) fn min_shared(best: &Best, q: u64) -> u64 {
    if best.score.num == 0 {
        return 1;
    }
    let need = (u128::from(best.score.num) * u128::from(q)).div_ceil(u128::from(best.score.den));
    u64::try_from(need).unwrap_or(u64::MAX).max(1)
}

/// A candidate during count extension.
#[derive(Debug, Clone, Copy)]
struct Live {
    row: u32,
    count: u32,
    len: u32,
}

/// Adds one to the count of every candidate (ascending rows) found in `postings`; returns the
/// number of postings entries examined. Gallops when the candidates are few.
fn count_in(postings: &[u32], live: &mut [Live]) -> usize {
    let mut examined = 0;
    let mut at = 0usize;
    let gallop = live.len() * 8 < postings.len();
    for c in live.iter_mut() {
        if gallop {
            let mut step = 1;
            while postings.get(at + step).is_some_and(|&x| x < c.row) {
                at += step;
                step *= 2;
                examined += 1;
            }
            let window = postings
                .get(at..(at + step + 1).min(postings.len()))
                .unwrap_or(&[]);
            at += window.partition_point(|&x| x < c.row);
            examined += 1 + step.ilog2() as usize;
        } else {
            while postings.get(at).is_some_and(|&x| x < c.row) {
                at += 1;
                examined += 1;
            }
        }
        match postings.get(at) {
            Some(&x) if x == c.row => {
                c.count += 1;
                at += 1;
            }
            Some(_) => {}
            None => break,
        }
    }
    examined
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
    let mut chosen = std::mem::take(&mut scratch.order_idx);
    chosen.clear();
    spread_rare_grams(query, rare.min(MAX_COUNTED_GRAMS), usize::MAX, &mut chosen);
    for &i in &chosen {
        let g = query.seen.get(i).copied().unwrap_or(u32::MAX);
        stats.postings_visited += side.df(g);
        side.for_each_row(g, |d| {
            let Some(st) = scratch.state.get_mut(d as usize) else {
                return;
            };
            if *st & !LOW == tag {
                *st += 1;
            } else {
                *st = tag | 1;
                scratch.cands.push(d);
            }
        });
    }
    scratch.order_idx = chosen;
    let mut order = std::mem::take(&mut scratch.order);
    order.clear();
    order.extend(scratch.cands.iter().map(|&d| {
        let count = u64::from(scratch.state.get(d as usize).copied().unwrap_or(0) & COUNT_MASK);
        (Ratio::ZERO, d, count)
    }));
    let by_count = |a: &(Ratio, u32, u64), b: &(Ratio, u32, u64)| b.2.cmp(&a.2).then(a.1.cmp(&b.1));
    if shortlist == 0 {
        order.clear();
    } else if order.len() > shortlist {
        order.select_nth_unstable_by(shortlist - 1, by_count);
        order.truncate(shortlist);
    }
    order.sort_unstable_by_key(|e| e.1);
    scratch.order = order;
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
    shortlist_pass(side, query, scratch, stats, rare, shortlist);
    for &(_, d, _) in &scratch.order {
        verify(side, d, query.intersection(side, d), best, stats, valuer);
        out.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_in_merges_and_gallops() {
        let postings: Vec<u32> = (0..1000).map(|i| i * 3).collect();
        for rows in [vec![0u32, 3, 4, 2997, 5000], (0..500).collect::<Vec<u32>>()] {
            let mut live: Vec<Live> = rows
                .iter()
                .map(|&row| Live {
                    row,
                    count: 0,
                    len: 0,
                })
                .collect();
            count_in(&postings, &mut live);
            for c in &live {
                assert_eq!(
                    c.count,
                    u32::from(c.row % 3 == 0 && c.row < 3000),
                    "{}",
                    c.row
                );
            }
        }
    }

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
    }

    #[test]
    fn intersect_counts_common_ids() {
        assert_eq!(intersect(&[1, 3, 5, 7], &[2, 3, 7, 9]), 2);
        assert_eq!(intersect(&[], &[1]), 0);
        assert_eq!(intersect(&[1, 2, 3], &[1, 2, 3]), 3);
    }
}
