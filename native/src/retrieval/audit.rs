//! Exposure audits of test queries against the training index, in parallel.

use std::sync::Mutex;

use rayon::prelude::*;

use super::counting::{
    best_pair, best_row, best_target, narrowest_counts, Buffers, ManyBuffers, RowCounts,
};
use super::error::{internal, invalid, Result};
use super::grams::Orders;
use super::index::{SideIndex, TrainingIndex};
use super::kernels::Counter;
use super::pair::pair_value;
use super::score::{Best, Measure, Ratio};
use super::search::{search_fast, Query, Scratch, Stats};

/// Queries handled together by one parallel task.
const QUERY_CHUNK: usize = 16;

/// Bytes of counters one worker fills at once for segments counted together, by counter width.
/// 16-bit: 8 MiB, on the real corpus eight segments (two sides of 230,986 counters each), whose
/// blocks of counters (8 x 128 KiB) stay in the second-level cache while a block's bitmap lines
/// are shared. 8-bit (segments of at most 255 grams, whose few grams make reading the bitmap
/// lines weigh more): 32 MiB, sixteen segments of the one-million-row synthetic corpus (8%
/// off its search against four, on a CPU without AVX-512) and no more bytes than the 16-bit
/// groups on the real one.
const fn many_bytes<T>() -> usize {
    if std::mem::size_of::<T>() == 1 {
        32 << 20
    } else {
        8 << 20
    }
}

/// How to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The true maximum, identical to brute force.
    Exact,
    /// Candidates from the postings of the `rare` rarest query grams; the `shortlist` rows
    /// sharing most of them are reranked exactly. Exact flags stay exact.
    Fast { rare: usize, shortlist: usize },
}

impl Mode {
    /// Parses "exact" / "fast".
    pub fn parse(mode: &str, rare: usize, shortlist: usize) -> Result<Self> {
        match mode {
            "exact" => Ok(Mode::Exact),
            "fast" if rare == 0 || shortlist == 0 => {
                Err(invalid("rare_grams and shortlist must be at least 1"))
            }
            "fast" => Ok(Mode::Fast { rare, shortlist }),
            other => Err(invalid(format!(
                "mode must be 'exact' or 'fast', got {other:?}"
            ))),
        }
    }
}

/// How to search (`mode`) and how rows are scored (`measure`). A bare `Mode` scores by Jaccard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Search {
    pub mode: Mode,
    pub measure: Measure,
}

impl From<Mode> for Search {
    fn from(mode: Mode) -> Search {
        Search {
            mode,
            measure: Measure::Jaccard,
        }
    }
}

/// The best row of one side for one query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// The exposure (1 when exact).
    pub score: Ratio,
    /// The nearest row; `None` when no row shares a gram.
    pub row: Option<u32>,
    /// Whether the normalised text equals a training text.
    pub exact: bool,
}

impl Hit {
    /// No hit: exposure 0, no row.
    pub const NONE: Hit = Hit {
        score: Ratio::ZERO,
        row: None,
        exact: false,
    };

    /// An exact hit at `row`: exposure 1.
    pub fn exact(row: u32) -> Hit {
        Hit {
            score: Ratio::ONE,
            row: Some(row),
            exact: true,
        }
    }

    fn from_best(best: Best) -> Hit {
        match best.row() {
            Some(row) => Hit {
                score: best.score,
                row: Some(row),
                exact: false,
            },
            None => Hit::NONE,
        }
    }
}

/// The best target row over all references, with the reference that reached it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetHit {
    pub hit: Hit,
    pub ref_idx: Option<u32>,
}

/// Source, target and pair exposure of one test segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditRow {
    pub source: Hit,
    pub target: TargetHit,
    pub pair: Hit,
}

/// A training index ready for audits, with reusable per-thread scratch space.
#[derive(Debug)]
pub struct RetrievalIndex {
    index: TrainingIndex,
    /// Per-thread scratch space and count buffers, reused across batches.
    pool: Mutex<Vec<Pooled>>,
}

/// One worker's reusable buffers.
type Pooled = (
    Scratch,
    Buffers<u8>,
    Buffers<u16>,
    Buffers<u32>,
    ManyBuffers<u8>,
    ManyBuffers<u16>,
);

/// Runs `f` on a local pool of `threads` threads, or on the global pool when `None`.
pub fn with_threads<T: Send>(threads: Option<usize>, f: impl FnOnce() -> T + Send) -> Result<T> {
    match threads {
        None => Ok(f()),
        Some(0) => Err(invalid("threads must be at least 1")),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| internal(format!("cannot start {n} threads: {e}")))?;
            Ok(pool.install(f))
        }
    }
}

struct Worker<'a> {
    index: &'a TrainingIndex,
    scratch: Scratch,
    stats: Stats,
    mode: Mode,
    measure: Measure,
    /// Row counts of the exact search, as narrow as the queries allow: a row's count never
    /// exceeds its query's known grams (`u8` up to 255 of them, `u16` up to 65,535).
    tiny: Buffers<u8>,
    small: Buffers<u16>,
    large: Buffers<u32>,
    /// The same for several segments counted together (`counted_many`).
    tiny_many: ManyBuffers<u8>,
    small_many: ManyBuffers<u16>,
}

impl<'a> Worker<'a> {
    fn prepare<'t>(&mut self, text: &'t str, side: &SideIndex) -> Result<Query<'t>> {
        Query::prepare(
            text,
            side,
            &self.index.orders,
            &mut self.scratch,
            self.measure,
        )
    }

    /// Exact source (when `x` is given), target (when `refs` are) and pair (when both are)
    /// exposure, from every row's counts of each query's grams.
    fn counted(&mut self, x: Option<&Query<'_>>, refs: &[Query<'_>]) -> AuditRow {
        let most = x.into_iter().chain(refs).map(|q| q.seen.len()).max();
        let most = most.unwrap_or(0).max(narrowest_counts());
        if most > usize::from(u16::MAX) {
            counted_audit(self.index, &mut self.large, &mut self.stats, x, refs)
        } else if most > usize::from(u8::MAX) {
            counted_audit(self.index, &mut self.small, &mut self.stats, x, refs)
        } else {
            counted_audit(self.index, &mut self.tiny, &mut self.stats, x, refs)
        }
    }

    /// `counted` for several test segments (each a source and its references), their counts
    /// taken together (`RowCounts::fill_many`) as long as the counters stay within
    /// `many_bytes`; segments whose counts need 32-bit counters go one by one.
    fn counted_many(&mut self, items: &[(Query<'_>, Vec<Query<'_>>)]) -> Vec<AuditRow> {
        let queries = items
            .iter()
            .flat_map(|(x, refs)| std::iter::once(x).chain(refs));
        let most = queries.map(|q| q.seen.len()).max().unwrap_or(0);
        let most = most.max(narrowest_counts());
        if most > usize::from(u16::MAX) {
            return items
                .iter()
                .map(|(x, refs)| self.counted(Some(x), refs))
                .collect();
        }
        let (index, stats) = (self.index, &mut self.stats);
        if most > usize::from(u8::MAX) {
            counted_in_parts(index, &mut self.small_many, stats, items)
        } else {
            counted_in_parts(index, &mut self.tiny_many, stats, items)
        }
    }

    /// Fast source exposure; the shortlist is collected (the pair needs it).
    fn fast_source(
        &mut self,
        x: &Query<'_>,
        rare: usize,
        k: usize,
        shortlist: &mut Vec<u32>,
    ) -> Hit {
        let src = &self.index.src;
        let exact = src.texts().lowest_equal(x.text);
        let mut best = Best::NONE;
        let (scratch, stats) = (&mut self.scratch, &mut self.stats);
        search_fast(src, x, &mut best, scratch, stats, rare, k, shortlist);
        exact.map_or_else(|| Hit::from_best(best), Hit::exact)
    }

    /// Fast target exposure over all references (ties: lower row, then lower reference).
    fn fast_target(
        &mut self,
        refs: &[Query<'_>],
        rare: usize,
        k: usize,
        shortlist: &mut Vec<u32>,
    ) -> TargetHit {
        let tgt = &self.index.tgt;
        let mut exact: Option<(u32, u32)> = None;
        for (r, rq) in refs.iter().enumerate() {
            if let Some(row) = tgt.texts().lowest_equal(rq.text) {
                if exact.is_none_or(|(best_row, _)| row < best_row) {
                    exact = Some((row, r as u32));
                }
            }
        }
        let mut best = Best::NONE;
        let mut ref_idx = None;
        for (r, rq) in refs.iter().enumerate() {
            let before = best;
            let (scratch, stats) = (&mut self.scratch, &mut self.stats);
            search_fast(tgt, rq, &mut best, scratch, stats, rare, k, shortlist);
            if best != before {
                ref_idx = Some(r as u32);
            }
        }
        match exact {
            Some((row, r)) => TargetHit {
                hit: Hit::exact(row),
                ref_idx: Some(r),
            },
            None => {
                let hit = Hit::from_best(best);
                TargetHit {
                    hit,
                    ref_idx: hit.row.and(ref_idx),
                }
            }
        }
    }

    /// Fast pair exposure: the best of the shortlisted rows and both nearest rows.
    fn fast_pair(
        &mut self,
        x: &Query<'_>,
        refs: &[Query<'_>],
        source: &Hit,
        target: &TargetHit,
        shortlist: &mut Vec<u32>,
    ) -> Hit {
        let index = self.index;
        let exact = refs
            .iter()
            .filter_map(|r| {
                index
                    .pairs
                    .lowest_equal(index.src.texts(), index.tgt.texts(), x.text, r.text)
            })
            .min();
        if let Some(row) = exact {
            return Hit::exact(row);
        }
        let (Some(src_row), Some(tgt_row)) = (source.row, target.hit.row) else {
            return Hit::NONE;
        };
        shortlist.push(src_row);
        shortlist.push(tgt_row);
        shortlist.sort_unstable();
        shortlist.dedup();
        let mut best = Best::NONE;
        for &row in shortlist.iter() {
            best.offer(pair_value(index, x, refs, row), row);
        }
        Hit::from_best(best)
    }
}

/// What string equality decides for one test segment before any counting.
struct Exacts {
    source: Option<u32>,
    target: Option<(u32, u32)>,
    pair: Option<u32>,
    /// Whether the pair exposure needs both sides' counts.
    pair_wanted: bool,
}

impl Exacts {
    fn of(index: &TrainingIndex, x: Option<&Query<'_>>, refs: &[Query<'_>]) -> Self {
        let source = x.and_then(|x| index.src.texts().lowest_equal(x.text));
        let mut target: Option<(u32, u32)> = None;
        for (r, rq) in refs.iter().enumerate() {
            if let Some(row) = index.tgt.texts().lowest_equal(rq.text) {
                if target.is_none_or(|(best_row, _)| row < best_row) {
                    target = Some((row, r as u32));
                }
            }
        }
        let pair = match x {
            Some(x) if !refs.is_empty() => refs
                .iter()
                .filter_map(|r| {
                    index
                        .pairs
                        .lowest_equal(index.src.texts(), index.tgt.texts(), x.text, r.text)
                })
                .min(),
            _ => None,
        };
        let pair_wanted = x.is_some() && !refs.is_empty() && pair.is_none();
        Self {
            source,
            target,
            pair,
            pair_wanted,
        }
    }

    /// Whether the source needs counting.
    fn count_source(&self) -> bool {
        self.source.is_none() || self.pair_wanted
    }

    /// Whether the references need counting.
    fn count_target(&self) -> bool {
        self.target.is_none() || self.pair_wanted
    }
}

/// `Worker::counted` with counters of type `T`.
fn counted_audit<T: Counter>(
    index: &TrainingIndex,
    bufs: &mut Buffers<T>,
    stats: &mut Stats,
    x: Option<&Query<'_>>,
    refs: &[Query<'_>],
) -> AuditRow {
    let exacts = Exacts::of(index, x, refs);
    let Buffers {
        source: source_counts,
        refs: ref_counts,
        locals,
    } = bufs;
    if let Some(x) = x.filter(|_| exacts.count_source()) {
        source_counts.fill(&index.src, x, locals, stats);
    }
    if ref_counts.len() < refs.len() {
        ref_counts.resize_with(refs.len(), Default::default);
    }
    let ref_counts = ref_counts.get_mut(..refs.len()).unwrap_or_default();
    if exacts.count_target() {
        for (rq, counts) in refs.iter().zip(ref_counts.iter_mut()) {
            counts.fill(&index.tgt, rq, locals, stats);
        }
    }
    read_off(
        index,
        &exacts,
        x.is_some(),
        source_counts,
        ref_counts,
        stats,
    )
}

/// `counted_many` over parts of `items` small enough that their counters of type `T` stay
/// within `many_bytes`.
fn counted_in_parts<T: Counter>(
    index: &TrainingIndex,
    bufs: &mut ManyBuffers<T>,
    stats: &mut Stats,
    items: &[(Query<'_>, Vec<Query<'_>>)],
) -> Vec<AuditRow> {
    let sides = items
        .iter()
        .map(|(_, refs)| 1 + refs.len())
        .max()
        .unwrap_or(1);
    let per_item = index.rows().max(1) * sides * std::mem::size_of::<T>();
    let together = (many_bytes::<T>() / per_item).clamp(1, items.len().max(1));
    items
        .chunks(together)
        .flat_map(|part| counted_many(index, bufs, stats, part))
        .collect()
}

/// `Worker::counted_many` with counters of type `T` (spanning whole blocks: `u8`, `u16`).
fn counted_many<T: Counter>(
    index: &TrainingIndex,
    bufs: &mut ManyBuffers<T>,
    stats: &mut Stats,
    items: &[(Query<'_>, Vec<Query<'_>>)],
) -> Vec<AuditRow> {
    let exacts: Vec<Exacts> = items
        .iter()
        .map(|(x, refs)| Exacts::of(index, Some(x), refs))
        .collect();
    let ManyBuffers {
        sources,
        refs: ref_counts,
        locals,
    } = bufs;
    if sources.len() < items.len() {
        sources.resize_with(items.len(), Default::default);
    }
    let mut queries = Vec::with_capacity(items.len());
    let mut counts = Vec::with_capacity(items.len());
    for (((x, _), e), c) in items.iter().zip(&exacts).zip(sources.iter_mut()) {
        if e.count_source() {
            queries.push(x);
            counts.push(c);
        }
    }
    RowCounts::fill_many(&index.src, &queries, &mut counts, locals, stats);
    if ref_counts.len() < items.len() {
        ref_counts.resize_with(items.len(), Vec::new);
    }
    let mut queries = Vec::new();
    let mut counts = Vec::new();
    for (((_, refs), e), cs) in items.iter().zip(&exacts).zip(ref_counts.iter_mut()) {
        if cs.len() < refs.len() {
            cs.resize_with(refs.len(), Default::default);
        }
        if e.count_target() {
            queries.extend(refs.iter());
            counts.extend(cs.iter_mut().take(refs.len()));
        }
    }
    RowCounts::fill_many(&index.tgt, &queries, &mut counts, locals, stats);
    items
        .iter()
        .zip(&exacts)
        .zip(sources.iter().zip(ref_counts.iter()))
        .map(|(((_, refs), e), (source, rc))| {
            let rc = rc.get(..refs.len()).unwrap_or_default();
            read_off(index, e, true, source, rc, stats)
        })
        .collect()
}

/// One test segment's exposures from its exact matches and its counts.
fn read_off<T: Counter>(
    index: &TrainingIndex,
    exacts: &Exacts,
    has_source: bool,
    source_counts: &RowCounts<T>,
    ref_counts: &[RowCounts<T>],
    stats: &mut Stats,
) -> AuditRow {
    let source = match (has_source, exacts.source) {
        (false, _) => Hit::NONE,
        (true, Some(row)) => Hit::exact(row),
        (true, None) => {
            let mut best = Best::NONE;
            best_row(&index.src, source_counts, &mut best, stats);
            Hit::from_best(best)
        }
    };
    let target = match (ref_counts.is_empty(), exacts.target) {
        (true, _) => TargetHit {
            hit: Hit::NONE,
            ref_idx: None,
        },
        (false, Some((row, r))) => TargetHit {
            hit: Hit::exact(row),
            ref_idx: Some(r),
        },
        (false, None) => {
            let (best, ref_idx) = best_target(&index.tgt, ref_counts, stats);
            let hit = Hit::from_best(best);
            TargetHit {
                hit,
                ref_idx: hit.row.and(ref_idx),
            }
        }
    };
    let pair = match (exacts.pair, source.row, target.hit.row) {
        (Some(row), _, _) => Hit::exact(row),
        (None, Some(s), Some(t)) if exacts.pair_wanted => {
            Hit::from_best(best_pair(index, source_counts, ref_counts, &[s, t], stats))
        }
        _ => Hit::NONE,
    };
    AuditRow {
        source,
        target,
        pair,
    }
}

impl RetrievalIndex {
    /// Builds the index of aligned, normalised training texts.
    pub fn build<S: AsRef<str> + Sync>(
        sources: &[S],
        targets: &[S],
        orders: &[i64],
        threads: Option<usize>,
    ) -> Result<Self> {
        Self::build_with(sources, targets, orders, threads, None)
    }

    /// `build`, with grams in at least `dense_min_df` rows stored as bitmaps (`None`: the
    /// default, 1/32 of the rows and at least 64; never below 1/64 of the rows). Results never
    /// depend on it, only speed and size.
    pub fn build_with<S: AsRef<str> + Sync>(
        sources: &[S],
        targets: &[S],
        orders: &[i64],
        threads: Option<usize>,
        dense_min_df: Option<u64>,
    ) -> Result<Self> {
        let orders = Orders::new(orders)?;
        let index = with_threads(threads, || {
            TrainingIndex::build(sources, targets, orders, dense_min_df)
        })??;
        Ok(Self {
            index,
            pool: Mutex::new(Vec::new()),
        })
    }

    /// An index ready for audits (e.g. one loaded from a file, see `persist.rs`).
    pub(crate) fn from_training(index: TrainingIndex) -> Self {
        Self {
            index,
            pool: Mutex::new(Vec::new()),
        }
    }

    /// The training index.
    pub(crate) fn training(&self) -> &TrainingIndex {
        &self.index
    }

    /// Number of training rows.
    pub fn rows(&self) -> usize {
        self.index.rows()
    }

    /// The n-gram orders (ascending, deduplicated).
    pub fn orders(&self) -> &[usize] {
        self.index.orders().as_slice()
    }

    /// Approximate heap size of the index in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.index.heap_bytes()
    }

    fn worker(&self, search: Search) -> Worker<'_> {
        let (scratch, tiny, small, large, tiny_many, small_many) = self
            .pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_else(|| {
                (
                    Scratch::new(self.index.rows()),
                    Buffers::default(),
                    Buffers::default(),
                    Buffers::default(),
                    ManyBuffers::default(),
                    ManyBuffers::default(),
                )
            });
        Worker {
            index: &self.index,
            scratch,
            stats: Stats::default(),
            mode: search.mode,
            measure: search.measure,
            tiny,
            small,
            large,
            tiny_many,
            small_many,
        }
    }

    fn release(&self, worker: Worker<'_>) -> Stats {
        self.pool.lock().unwrap_or_else(|e| e.into_inner()).push((
            worker.scratch,
            worker.tiny,
            worker.small,
            worker.large,
            worker.tiny_many,
            worker.small_many,
        ));
        worker.stats
    }

    fn run<T: Send, I: Sync>(
        &self,
        items: &[I],
        search: Search,
        threads: Option<usize>,
        each: impl Fn(&mut Worker<'_>, &I) -> Result<T> + Sync,
    ) -> Result<(Vec<T>, Stats)> {
        self.run_chunks(items, search, threads, |worker, chunk| {
            chunk.iter().map(|item| each(worker, item)).collect()
        })
    }

    /// `run` with `each` given a chunk of items at a time (its results in the same order).
    fn run_chunks<T: Send, I: Sync>(
        &self,
        items: &[I],
        search: Search,
        threads: Option<usize>,
        each: impl Fn(&mut Worker<'_>, &[I]) -> Result<Vec<T>> + Sync,
    ) -> Result<(Vec<T>, Stats)> {
        let parts = with_threads(threads, || {
            items
                .par_chunks(QUERY_CHUNK)
                .map(|chunk| {
                    let mut worker = self.worker(search);
                    let out = each(&mut worker, chunk);
                    let stats = self.release(worker);
                    out.map(|rows| (rows, stats))
                })
                .collect::<Result<Vec<_>>>()
        })??;
        let mut stats = Stats::default();
        let mut rows = Vec::with_capacity(items.len());
        for (part, part_stats) in parts {
            rows.extend(part);
            stats.add(&part_stats);
        }
        Ok((rows, stats))
    }

    /// Source, target (over all references) and pair exposure of each test segment.
    pub fn audit<S: AsRef<str> + Sync>(
        &self,
        sources: &[S],
        refs: &[Vec<S>],
        search: impl Into<Search>,
        threads: Option<usize>,
    ) -> Result<(Vec<AuditRow>, Stats)> {
        let search = search.into();
        if sources.len() != refs.len() {
            return Err(invalid(format!(
                "sources and refs must have the same length, got {} and {}",
                sources.len(),
                refs.len()
            )));
        }
        check_refs(refs)?;
        // Segments are counted together in the order of their longest text, so the short ones
        // (most of whose counts fit 8-bit counters) share chunks and the widest counters of a
        // chunk rarely exceed what its segments need; the rows go back to the given order.
        let longest = |i: usize| {
            let refs = refs.get(i).map_or(0, |rs| {
                rs.iter().map(|r| r.as_ref().len()).max().unwrap_or(0)
            });
            sources.get(i).map_or(0, |x| x.as_ref().len()).max(refs)
        };
        let mut order: Vec<usize> = (0..sources.len()).collect();
        order.sort_by_key(|&i| longest(i));
        let items: Vec<(&S, &Vec<S>)> = order
            .iter()
            .filter_map(|&i| Some((sources.get(i)?, refs.get(i)?)))
            .collect();
        let (sorted, stats) = self.run_chunks(&items, search, threads, |w, chunk| {
            let index = w.index;
            let prepared = chunk
                .iter()
                .map(|(x, rs)| {
                    let xq = w.prepare(x.as_ref(), &index.src)?;
                    let rqs = rs
                        .iter()
                        .map(|r| w.prepare(r.as_ref(), &index.tgt))
                        .collect::<Result<Vec<_>>>()?;
                    Ok((xq, rqs))
                })
                .collect::<Result<Vec<_>>>()?;
            let Mode::Fast { rare, shortlist: k } = w.mode else {
                return Ok(w.counted_many(&prepared));
            };
            Ok(prepared
                .iter()
                .map(|(xq, rqs)| {
                    let mut shortlist = Vec::new();
                    let source = w.fast_source(xq, rare, k, &mut shortlist);
                    let target = w.fast_target(rqs, rare, k, &mut shortlist);
                    let pair = w.fast_pair(xq, rqs, &source, &target, &mut shortlist);
                    AuditRow {
                        source,
                        target,
                        pair,
                    }
                })
                .collect())
        })?;
        let mut rows = vec![None; sorted.len()];
        for (&i, row) in order.iter().zip(sorted) {
            if let Some(slot) = rows.get_mut(i) {
                *slot = Some(row);
            }
        }
        let rows = rows
            .into_iter()
            .collect::<Option<Vec<AuditRow>>>()
            .ok_or_else(|| internal("an audited segment is missing"))?;
        Ok((rows, stats))
    }

    /// Source exposure of each query.
    pub fn search_source<S: AsRef<str> + Sync>(
        &self,
        queries: &[S],
        search: impl Into<Search>,
        threads: Option<usize>,
    ) -> Result<(Vec<Hit>, Stats)> {
        self.run(queries, search.into(), threads, |w, x| {
            let xq = w.prepare(x.as_ref(), &w.index.src)?;
            match w.mode {
                Mode::Exact => Ok(w.counted(Some(&xq), &[]).source),
                Mode::Fast { rare, shortlist } => {
                    Ok(w.fast_source(&xq, rare, shortlist, &mut Vec::new()))
                }
            }
        })
    }

    /// Target exposure of each query's references.
    pub fn search_target<S: AsRef<str> + Sync>(
        &self,
        refs: &[Vec<S>],
        search: impl Into<Search>,
        threads: Option<usize>,
    ) -> Result<(Vec<TargetHit>, Stats)> {
        check_refs(refs)?;
        self.run(refs, search.into(), threads, |w, rs| {
            let index = w.index;
            let rqs = rs
                .iter()
                .map(|r| w.prepare(r.as_ref(), &index.tgt))
                .collect::<Result<Vec<_>>>()?;
            match w.mode {
                Mode::Exact => Ok(w.counted(None, &rqs).target),
                Mode::Fast { rare, shortlist } => {
                    Ok(w.fast_target(&rqs, rare, shortlist, &mut Vec::new()))
                }
            }
        })
    }
}

fn check_refs<S>(refs: &[Vec<S>]) -> Result<()> {
    match refs.iter().position(Vec::is_empty) {
        Some(i) => Err(invalid(format!(
            "query {i} has no reference; each needs at least one"
        ))),
        None => Ok(()),
    }
}
