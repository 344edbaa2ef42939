//! Exposure audits of test queries against the training index, in parallel.

use std::sync::Mutex;

use rayon::prelude::*;

use super::dense::Counts;
use super::error::{internal, invalid, Result};
use super::grams::Orders;
use super::index::{SideIndex, TrainingIndex};
use super::pair::{pair_from_counts, pair_value, BySource, ByTarget};
use super::score::{Best, Ratio};
use super::search::{search_exact, search_fast, Query, Scratch, Similarity, Stats};

/// Queries handled together by one parallel task.
const QUERY_CHUNK: usize = 8;

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
    const NONE: Hit = Hit {
        score: Ratio::ZERO,
        row: None,
        exact: false,
    };

    fn exact(row: u32) -> Hit {
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
    pool: Mutex<Vec<(Scratch, Counts, Vec<Counts>)>>,
}

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
    /// Every row's counts of the current source's grams (when its search counted them).
    source_counts: Counts,
    /// The same for each reference of the current segment.
    ref_counts: Vec<Counts>,
}

/// Moves the counts the last exact search left in `scratch` (if it counted) into `slot`.
fn keep_counts(scratch: &mut Scratch, slot: &mut Counts) {
    if scratch.counts.is_valid() {
        std::mem::swap(&mut scratch.counts, slot);
        scratch.counts.invalidate();
    }
}

impl<'a> Worker<'a> {
    fn prepare<'t>(&mut self, text: &'t str, side: &SideIndex) -> Result<Query<'t>> {
        Query::prepare(text, side, &self.index.orders, &mut self.scratch)
    }

    /// Source exposure; in fast mode the shortlist is always collected (the pair needs it).
    fn source(&mut self, x: &Query<'_>, shortlist: &mut Vec<u32>) -> Hit {
        self.source_counts.invalidate();
        let src = &self.index.src;
        let exact = src.texts().lowest_equal(x.text);
        let mut best = Best::NONE;
        let mut sim = Similarity { size: x.size };
        match self.mode {
            Mode::Exact => {
                if let Some(row) = exact {
                    return Hit::exact(row);
                }
                search_exact(
                    src,
                    x,
                    &mut best,
                    &mut self.scratch,
                    &mut self.stats,
                    &mut sim,
                );
                keep_counts(&mut self.scratch, &mut self.source_counts);
            }
            Mode::Fast { rare, shortlist: k } => {
                let (scratch, stats) = (&mut self.scratch, &mut self.stats);
                search_fast(
                    src, x, &mut best, scratch, stats, &mut sim, rare, k, shortlist,
                );
            }
        }
        exact.map_or_else(|| Hit::from_best(best), Hit::exact)
    }

    /// Target exposure over all references (ties: lower row, then lower reference). `hint` is
    /// a row likely to score well (the source's nearest row), offered first to start the exact
    /// search from a high threshold.
    fn target(
        &mut self,
        refs: &[Query<'_>],
        hint: Option<u32>,
        shortlist: &mut Vec<u32>,
    ) -> TargetHit {
        let tgt = &self.index.tgt;
        if self.ref_counts.len() < refs.len() {
            self.ref_counts.resize_with(refs.len(), Counts::default);
        }
        self.ref_counts.iter_mut().for_each(Counts::invalidate);
        let mut exact: Option<(u32, u32)> = None;
        for (r, rq) in refs.iter().enumerate() {
            if let Some(row) = tgt.texts().lowest_equal(rq.text) {
                if exact.is_none_or(|(best_row, _)| row < best_row) {
                    exact = Some((row, r as u32));
                }
            }
        }
        if self.mode == Mode::Exact {
            if let Some((row, r)) = exact {
                return TargetHit {
                    hit: Hit::exact(row),
                    ref_idx: Some(r),
                };
            }
        }
        let mut best = Best::NONE;
        let mut ref_idx = None;
        if let (Mode::Exact, Some(row)) = (self.mode, hint) {
            for (r, rq) in refs.iter().enumerate() {
                if best.offer(rq.jaccard(tgt, row), row) {
                    ref_idx = Some(r as u32);
                }
            }
        }
        for (r, rq) in refs.iter().enumerate() {
            let before = best;
            let mut sim = Similarity { size: rq.size };
            let (scratch, stats) = (&mut self.scratch, &mut self.stats);
            match self.mode {
                Mode::Exact => {
                    search_exact(tgt, rq, &mut best, scratch, stats, &mut sim);
                    if let Some(slot) = self.ref_counts.get_mut(r) {
                        keep_counts(scratch, slot);
                    }
                }
                Mode::Fast { rare, shortlist: k } => search_fast(
                    tgt, rq, &mut best, scratch, stats, &mut sim, rare, k, shortlist,
                ),
            }
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

    /// Pair exposure, exact by bounds (or reranked shortlists in fast mode).
    fn pair(
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
        // No row shares a gram on one side: every pair value is zero.
        let (Some(src_row), Some(tgt_row)) = (source.row, target.hit.row) else {
            return Hit::NONE;
        };
        let mut best = Best::NONE;
        if let Mode::Fast { .. } = self.mode {
            shortlist.push(src_row);
            shortlist.push(tgt_row);
            shortlist.sort_unstable();
            shortlist.dedup();
            for &row in shortlist.iter() {
                best.offer(pair_value(index, x, refs, row), row);
            }
            return Hit::from_best(best);
        }

        // Lower bound from the two nearest neighbours.
        for row in [src_row.min(tgt_row), src_row.max(tgt_row)] {
            best.offer(pair_value(index, x, refs, row), row);
        }
        // Upper bound min(E_src, E_tgt): a row reaching it on a side is at or after that
        // side's lowest maximising row (unknown, so 0, when an exact match overrode it).
        let upper = source.score.min(target.hit.score);
        if best.score.cmp_exact(upper).is_eq() {
            let mut first_possible = 0u32;
            for hit in [source, &target.hit] {
                if hit.score.cmp_exact(upper).is_eq() && !hit.exact {
                    first_possible = first_possible.max(hit.row.unwrap_or(0));
                }
            }
            if best.row <= first_possible {
                return Hit::from_best(best);
            }
        }

        let source_counted = self.source_counts.is_valid();
        let refs_counts: Vec<&Counts> = self.ref_counts.iter().take(refs.len()).collect();
        let refs_counted = !refs.is_empty()
            && refs_counts.len() == refs.len()
            && refs_counts.iter().all(|c| c.is_valid());
        if source_counted || refs_counted {
            // A side's search counted every row: only rows whose counts can reach the current
            // best are scored.
            self.stats.pairs_counted += 1;
            pair_from_counts(
                index,
                x,
                refs,
                source_counted.then_some(&self.source_counts),
                refs_counted.then_some(refs_counts.as_slice()),
                upper,
                &mut best,
                &mut self.stats,
            );
            return Hit::from_best(best);
        }
        let (scratch, stats) = (&mut self.scratch, &mut self.stats);
        if x.text.is_empty() {
            // Only rows with an empty source have a non-zero source similarity.
            for &row in index.src.empty_rows() {
                best.offer(pair_value(index, x, refs, row), row);
            }
        } else if refs.iter().any(|r| r.text.is_empty())
            || prefix_cost(&index.src, x, &best)
                <= refs
                    .iter()
                    .map(|r| prefix_cost(&index.tgt, r, &best))
                    .sum::<u64>()
        {
            let mut valuer = BySource {
                index,
                cap: upper,
                source_size: x.size,
                refs,
            };
            search_exact(&index.src, x, &mut best, scratch, stats, &mut valuer);
        } else {
            let mut valuer = ByTarget {
                index,
                cap: upper,
                source: x,
                refs,
            };
            for r in refs {
                search_exact(&index.tgt, r, &mut best, scratch, stats, &mut valuer);
            }
        }
        Hit::from_best(best)
    }
}

/// Postings a threshold search at `best` would scan to generate candidates.
fn prefix_cost(side: &SideIndex, q: &Query<'_>, best: &Best) -> u64 {
    let m = q.seen.len();
    q.seen
        .iter()
        .enumerate()
        .take_while(|(i, _)| {
            best.admits(
                Ratio {
                    num: (m - i) as u64,
                    den: q.size,
                },
                0,
            )
        })
        .map(|(_, &g)| side.df(g))
        .sum()
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

    fn worker(&self, mode: Mode) -> Worker<'_> {
        let (scratch, source_counts, ref_counts) = self
            .pool
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_else(|| {
                (
                    Scratch::new(self.index.rows()),
                    Counts::default(),
                    Vec::new(),
                )
            });
        Worker {
            index: &self.index,
            scratch,
            stats: Stats::default(),
            mode,
            source_counts,
            ref_counts,
        }
    }

    fn release(&self, worker: Worker<'_>) -> Stats {
        self.pool.lock().unwrap_or_else(|e| e.into_inner()).push((
            worker.scratch,
            worker.source_counts,
            worker.ref_counts,
        ));
        worker.stats
    }

    fn run<T: Send, I: Sync>(
        &self,
        items: &[I],
        mode: Mode,
        threads: Option<usize>,
        each: impl Fn(&mut Worker<'_>, &I) -> Result<T> + Sync,
    ) -> Result<(Vec<T>, Stats)> {
        let parts = with_threads(threads, || {
            items
                .par_chunks(QUERY_CHUNK)
                .map(|chunk| {
                    let mut worker = self.worker(mode);
                    let out: Result<Vec<T>> =
                        chunk.iter().map(|item| each(&mut worker, item)).collect();
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
        mode: Mode,
        threads: Option<usize>,
    ) -> Result<(Vec<AuditRow>, Stats)> {
        if sources.len() != refs.len() {
            return Err(invalid(format!(
                "sources and refs must have the same length, got {} and {}",
                sources.len(),
                refs.len()
            )));
        }
        check_refs(refs)?;
        let items: Vec<(&S, &Vec<S>)> = sources.iter().zip(refs).collect();
        self.run(&items, mode, threads, |w, (x, rs)| {
            let index = w.index;
            let xq = w.prepare(x.as_ref(), &index.src)?;
            let rqs = rs
                .iter()
                .map(|r| w.prepare(r.as_ref(), &index.tgt))
                .collect::<Result<Vec<_>>>()?;
            let mut shortlist = Vec::new();
            let source = w.source(&xq, &mut shortlist);
            let target = w.target(&rqs, source.row, &mut shortlist);
            let pair = w.pair(&xq, &rqs, &source, &target, &mut shortlist);
            Ok(AuditRow {
                source,
                target,
                pair,
            })
        })
    }

    /// Source exposure of each query.
    pub fn search_source<S: AsRef<str> + Sync>(
        &self,
        queries: &[S],
        mode: Mode,
        threads: Option<usize>,
    ) -> Result<(Vec<Hit>, Stats)> {
        self.run(queries, mode, threads, |w, x| {
            let xq = w.prepare(x.as_ref(), &w.index.src)?;
            Ok(w.source(&xq, &mut Vec::new()))
        })
    }

    /// Target exposure of each query's references.
    pub fn search_target<S: AsRef<str> + Sync>(
        &self,
        refs: &[Vec<S>],
        mode: Mode,
        threads: Option<usize>,
    ) -> Result<(Vec<TargetHit>, Stats)> {
        check_refs(refs)?;
        self.run(refs, mode, threads, |w, rs| {
            let index = w.index;
            let rqs = rs
                .iter()
                .map(|r| w.prepare(r.as_ref(), &index.tgt))
                .collect::<Result<Vec<_>>>()?;
            Ok(w.target(&rqs, None, &mut Vec::new()))
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
