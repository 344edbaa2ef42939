//! Exact search by counting: for one query, the number of grams it shares with every row of a
//! side, then the best rows read off those counts.
//!
//! The counts are exact intersections, so a row's similarity follows from its count and length
//! without looking at the row again. Sparse grams add their postings one by one, a window of
//! rows at a time; dense grams add their bitmaps 512 rows at a time (`Counter::add_dense`, the
//! SIMD or portable kernels of `kernels/`). Reading off keeps the best so far and skips every
//! tile whose highest count cannot reach it: a row sharing `c` of the query's `|Q|` grams scores
//! at most `c / |Q|`.
//!
//! One pass per query and side serves the source, target and pair searches alike: the pair
//! value of a row is the minimum of its two side similarities, both known from the counts.

use super::cache::prefetch;
use super::index::{SideIndex, TrainingIndex};
use super::kernels::Counter;
use super::pair::capped_by_references;
use super::score::{Best, Measure, Ratio};
use super::search::{min_shared, Query, Stats};
use super::tiles::{BLOCK_ROWS, TILE_ROWS};

/// Bytes of counters one pass over the postings adds to: 128 KiB, a whole block of `u16`
/// counters (of `u8` too: a window never spans blocks), 32,768 rows of `u32`. The counters sit
/// in the second-level cache; fewer, longer passes read where each list resumes less often,
/// which cost more than first-level misses (on the real corpus 128 KiB took 7-11% less time
/// than 32 KiB, once lists and bitmaps were fetched ahead; without that 32 KiB was best).
const WINDOW_BYTES: usize = 1 << 17;

/// Rows of counters of type `T` one pass adds to: a power of two dividing `BLOCK_ROWS`.
const fn window_rows<T>() -> usize {
    let rows = WINDOW_BYTES / std::mem::size_of::<T>();
    if rows > BLOCK_ROWS {
        BLOCK_ROWS
    } else {
        rows
    }
}

/// Set by tests to count in wider counters than the queries need (every width gives the same
/// counts).
#[cfg(test)]
static NARROWEST: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The fewest known query grams the counters must hold: 0, unless a test asked for wider ones.
#[inline]
pub fn narrowest_counts() -> usize {
    #[cfg(test)]
    {
        NARROWEST.load(std::sync::atomic::Ordering::Relaxed)
    }
    #[cfg(not(test))]
    {
        0
    }
}

/// Runs `f` with counters wide enough for `grams` known query grams at least (tests cover the
/// `u8`, `u16` and `u32` paths with the same queries).
#[cfg(test)]
pub fn with_counters_for<T>(grams: usize, f: impl FnOnce() -> T) -> T {
    NARROWEST.store(grams, std::sync::atomic::Ordering::Relaxed);
    let out = f();
    NARROWEST.store(0, std::sync::atomic::Ordering::Relaxed);
    out
}

/// The non-empty postings of `query`'s sparse grams in block `b` of `side`, into `lists`;
/// returns how many rows they hold.
fn block_lists<'s>(
    side: &'s SideIndex,
    query: &Query<'_>,
    b: usize,
    lists: &mut Vec<&'s [u16]>,
) -> u64 {
    lists.clear();
    let Some(block) = side.blocks().get(b) else {
        return 0;
    };
    let mut rows = 0u64;
    for &g in query.sparse_grams() {
        let list = block.rows(g);
        rows += list.len() as u64;
        if !list.is_empty() {
            lists.push(list);
        }
    }
    rows
}

/// Lists ahead of the one being added whose next rows are fetched (see `add_postings`).
const LISTS_AHEAD: usize = 8;

/// Adds the rows of each list below `end` to their counters and advances the lists past them.
fn add_postings<C: Counter>(counts: &mut [C; BLOCK_ROWS], lists: &mut [&[u16]], end: usize) {
    // Where each list resumes was last read a window ago and has mostly left the cache since:
    // the lists `LISTS_AHEAD` places on are fetched while this one is added.
    for rows in lists.iter().take(LISTS_AHEAD) {
        prefetch(rows.as_ptr());
    }
    for i in 0..lists.len() {
        if let Some(ahead) = lists.get(i + LISTS_AHEAD) {
            prefetch(ahead.as_ptr());
        }
        let Some(rows) = lists.get_mut(i) else {
            continue;
        };
        // Sixteen rows at a time while the sixteenth is below `end` (rows ascend), with the
        // list read four lines ahead (on the real corpus 4% less time than two or six); then
        // one at a time.
        let mut rest: &[u16] = rows;
        while let Some((many, tail)) = rest.split_first_chunk::<16>() {
            if usize::from(many[15]) >= end {
                break;
            }
            prefetch(tail.as_ptr().wrapping_add(128));
            for &low in many {
                counts[usize::from(low)].inc();
            }
            rest = tail;
        }
        let mut taken = 0;
        for &low in rest.iter() {
            if usize::from(low) >= end {
                break;
            }
            counts[usize::from(low)].inc();
            taken += 1;
        }
        *rows = rest.get(taken..).unwrap_or_default();
        // The line after the one the rest starts in: a coming window needs it.
        prefetch(rows.as_ptr().wrapping_add(32));
    }
}

/// Sets each counter to its row's number of lists (what the counters held is replaced),
/// through 8-bit counters, 255 lists at a time (a list adds at most one to a row): `narrow`'s
/// 64 KiB take the postings where wider counters would take twice the cache, and go into
/// `counts` after each group. `narrow` is all zeros before and after.
fn set_postings_narrow<C: Counter>(
    counts: &mut [C; BLOCK_ROWS],
    lists: &mut [&[u16]],
    narrow: &mut [u8; BLOCK_ROWS],
) {
    let mut groups = lists.chunks_mut(usize::from(u8::MAX));
    let Some(first) = groups.next() else {
        counts.fill(C::default());
        return;
    };
    add_postings(narrow, first, BLOCK_ROWS);
    for (c, n) in counts.iter_mut().zip(narrow.iter_mut()) {
        *c = C::from(*n);
        *n = 0;
    }
    for group in groups {
        add_postings(narrow, group, BLOCK_ROWS);
        for (c, n) in counts.iter_mut().zip(narrow.iter_mut()) {
            *c += C::from(*n);
            *n = 0;
        }
    }
}

/// Every row's count of one query's grams on one side, with each tile's highest count.
#[derive(Debug, Default)]
pub struct RowCounts<T> {
    counts: Vec<T>,
    tile_max: Vec<u64>,
    /// |G(query)|, unseen grams included.
    size: u64,
    /// Whether the query is the empty text.
    empty: bool,
    /// How rows are scored against the query.
    measure: Measure,
}

impl<T: Counter> RowCounts<T> {
    /// Counts `query`'s grams in every row of `side`.
    pub fn fill(
        &mut self,
        side: &SideIndex,
        query: &Query<'_>,
        locals: &mut Vec<usize>,
        stats: &mut Stats,
    ) {
        let dense = side.dense();
        // Each window's counters are zeroed just before it is counted.
        let (_, tiles, mut visited) = self.start(side, query, locals);
        // Block by block, and within a block window by window (each gram's rows ascend): a
        // window's counters take the sparse grams' postings and then the dense grams' bitmaps
        // while they are in cache.
        let window = window_rows::<T>();
        let mut lists: Vec<&[u16]> = Vec::with_capacity(query.sparse_grams().len());
        for (b, counts) in self.counts.chunks_exact_mut(BLOCK_ROWS).enumerate() {
            let Ok(counts) = <&mut [T; BLOCK_ROWS]>::try_from(counts) else {
                continue;
            };
            visited += block_lists(side, query, b, &mut lists);
            for start in (0..BLOCK_ROWS).step_by(window) {
                let first_tile = (b * BLOCK_ROWS + start) / TILE_ROWS;
                if first_tile >= tiles {
                    break;
                }
                let end = start + window;
                let Some(part) = counts.get_mut(start..end) else {
                    continue;
                };
                part.fill(T::default());
                add_postings(counts, &mut lists, end);
                let part = counts.get_mut(start..end).unwrap_or_default();
                for (i, tile_counts) in part.chunks_mut(TILE_ROWS).enumerate() {
                    let tile = first_tile + i;
                    if tile >= tiles {
                        break;
                    }
                    if !locals.is_empty() {
                        T::add_dense(tile_counts, dense, tile, locals);
                    }
                    self.tile_max
                        .push(tile_counts.iter().copied().max().map_or(0, Counter::get));
                }
            }
        }
        stats.postings_visited += visited;
        stats.postings_total += visited;
        stats.searches_counted += 1;
    }

    /// Readies the counters for `query` on `side`: sized to whole blocks, with the query's size,
    /// and its dense grams as bitmap numbers in `locals`; returns the blocks and tiles to count
    /// and the postings the dense grams stand for.
    fn start(
        &mut self,
        side: &SideIndex,
        query: &Query<'_>,
        locals: &mut Vec<usize>,
    ) -> (usize, usize, u64) {
        let dense = side.dense();
        let tiles = side.rows().div_ceil(TILE_ROWS);
        // Whole blocks, so a 16-bit row within a block always indexes its counters.
        let blocks = side
            .blocks()
            .len()
            .max(tiles.div_ceil(BLOCK_ROWS / TILE_ROWS));
        if self.counts.len() != blocks * BLOCK_ROWS {
            self.counts.clear();
            self.counts.resize(blocks * BLOCK_ROWS, T::default());
        }
        self.size = query.size;
        self.empty = query.text.is_empty();
        self.measure = query.measure;
        self.tile_max.clear();
        locals.clear();
        let mut visited = 0u64;
        for &g in query.dense_grams() {
            locals.push(g.wrapping_sub(dense.first()) as usize);
            visited += dense.df(g);
        }
        (blocks, tiles, visited)
    }

    /// Counts each of `queries` into its own `counts` in one pass over the side's blocks: in
    /// each block, every query's dense grams are added tile by tile for all the queries at once
    /// (a tile's bitmap lines, shared by most queries, are read from memory once), and each
    /// query's postings a whole block of counters at a time (the window of `u8` and `u16`
    /// counters; `u32` ones are left to `fill`, whose windows keep to the cache) — before the
    /// bitmaps for `u16` counters (`set_postings_narrow`), after them for `u8` ones. The counts
    /// equal `fill`'s.
    pub fn fill_many(
        side: &SideIndex,
        queries: &[&Query<'_>],
        counts: &mut [&mut RowCounts<T>],
        locals: &mut Vec<Vec<usize>>,
        stats: &mut Stats,
    ) {
        let dense = side.dense();
        if locals.len() < queries.len() {
            locals.resize_with(queries.len(), Vec::new);
        }
        let mut blocks = 0;
        let mut tiles = 0;
        let mut visited = 0u64;
        for ((query, c), l) in queries.iter().zip(counts.iter_mut()).zip(locals.iter_mut()) {
            let (b, t, v) = c.start(side, query, l);
            (blocks, tiles, visited) = (b, t, visited + v);
        }
        let n = queries.len().min(counts.len());
        let mut lists: Vec<Vec<&[u16]>> = vec![Vec::new(); n];
        let mut narrow = Box::new([0u8; BLOCK_ROWS]);
        let per_block = BLOCK_ROWS / TILE_ROWS;
        for b in 0..blocks {
            let first_tile = b * per_block;
            if first_tile >= tiles {
                break;
            }
            let last_tile = (first_tile + per_block).min(tiles);
            let span = b * BLOCK_ROWS..(b + 1) * BLOCK_ROWS;
            // Counters wider than 8 bits take the postings first, through the 8-bit block,
            // which sets them (no zeroing of their own); 8-bit ones are zeroed and take them
            // after the bitmaps.
            let narrowed = std::mem::size_of::<T>() > 1;
            for ((query, c), rows) in queries.iter().zip(counts.iter_mut()).zip(&mut lists) {
                visited += block_lists(side, query, b, rows);
                let Some(block) = c.counts.get_mut(span.clone()) else {
                    continue;
                };
                match <&mut [T; BLOCK_ROWS]>::try_from(block) {
                    Ok(block) if narrowed => set_postings_narrow(block, rows, &mut narrow),
                    Ok(block) => block.fill(T::default()),
                    Err(_) => {}
                }
            }
            for tile in first_tile..last_tile {
                let at = tile * TILE_ROWS..(tile + 1) * TILE_ROWS;
                for (c, l) in counts.iter_mut().zip(locals.iter()).take(n) {
                    if let (false, Some(tile_counts)) = (l.is_empty(), c.counts.get_mut(at.clone()))
                    {
                        T::add_dense(tile_counts, dense, tile, l);
                    }
                }
            }
            for (c, rows) in counts.iter_mut().zip(&mut lists) {
                let Some(block) = c.counts.get_mut(span.clone()) else {
                    continue;
                };
                let Ok(block) = <&mut [T; BLOCK_ROWS]>::try_from(block) else {
                    continue;
                };
                if !narrowed {
                    add_postings(block, rows, BLOCK_ROWS);
                }
                for tile_counts in block.chunks(TILE_ROWS).take(last_tile - first_tile) {
                    c.tile_max
                        .push(tile_counts.iter().copied().max().map_or(0, Counter::get));
                }
            }
        }
        stats.postings_visited += visited;
        stats.postings_total += visited;
        stats.searches_counted += n as u64;
    }

    /// The count of row `d`.
    #[inline]
    pub fn count(&self, d: u32) -> u64 {
        self.counts.get(d as usize).map_or(0, |c| c.get())
    }

    /// The query's similarity to row `d`.
    #[inline]
    pub fn similarity(&self, side: &SideIndex, d: u32) -> Ratio {
        self.measure
            .score(self.count(d), self.size, side.doc_len(d))
    }

    /// Calls `f` with each row, ascending, whose count is at least `need()` (re-read after every
    /// call, as the caller's best rises); whole tiles below it are skipped. A tile's rows are
    /// gathered first and `ahead` called on each, so what `f` will read can be prefetched.
    fn scan(&self, mut need: impl FnMut() -> u64, ahead: impl Fn(u32), mut f: impl FnMut(u32)) {
        let mut rows = [0u32; TILE_ROWS];
        // Tiles past the side's last row have no maximum (their counters are stale).
        let tiles = self.counts.chunks(TILE_ROWS).zip(&self.tile_max);
        for (tile, (block, &max)) in tiles.enumerate() {
            if max < need() {
                continue;
            }
            let at_least = need();
            let mut found = 0;
            for (lane, chunk) in block.chunks(64).enumerate() {
                let mut mask = T::at_least_mask(chunk, at_least);
                while mask != 0 {
                    let d = (tile * TILE_ROWS + lane * 64) as u32 + mask.trailing_zeros();
                    if let Some(slot) = rows.get_mut(found) {
                        *slot = d;
                        found += 1;
                    }
                    ahead(d);
                    mask &= mask - 1;
                }
            }
            for &d in rows.get(..found).unwrap_or(&[]) {
                if self.count(d) >= need() {
                    f(d);
                }
            }
        }
    }

    /// Offers every row that can beat `best` (higher similarity, or equal at a lower row).
    pub fn best_into(&self, side: &SideIndex, best: &mut Best, stats: &mut Stats) {
        let size = self.size;
        // The count a row needs, worked out again only when the best rises.
        let need = std::cell::Cell::new(min_shared(best, size));
        self.scan(
            || need.get(),
            |d| side.prefetch_len(d),
            |d| {
                stats.candidates_verified += 1;
                if best.offer(self.similarity(side, d), d) {
                    need.set(min_shared(best, size));
                }
            },
        );
    }

    /// A row with the highest count (the first such), as a starting point for `best_into`.
    pub fn top_row(&self) -> Option<u32> {
        let (tile, &max) = self
            .tile_max
            .iter()
            .enumerate()
            .max_by_key(|&(t, &m)| (m, std::cmp::Reverse(t)))?;
        if max == 0 {
            return None;
        }
        let block = self.counts.get(tile * TILE_ROWS..)?;
        let i = block.iter().position(|c| c.get() == max)?;
        Some((tile * TILE_ROWS + i) as u32)
    }
}

/// Count buffers of one worker, reused across queries.
#[derive(Debug, Default)]
pub struct Buffers<T> {
    pub source: RowCounts<T>,
    pub refs: Vec<RowCounts<T>>,
    pub locals: Vec<usize>,
}

/// Count buffers of one worker for several test segments at once (`RowCounts::fill_many`).
#[derive(Debug, Default)]
pub struct ManyBuffers<T> {
    pub sources: Vec<RowCounts<T>>,
    /// Each segment's references' counts.
    pub refs: Vec<Vec<RowCounts<T>>>,
    pub locals: Vec<Vec<usize>>,
}

/// The best row of `side` for one query, from its counts (`best` may hold a starting point).
pub fn best_row<T: Counter>(
    side: &SideIndex,
    counts: &RowCounts<T>,
    best: &mut Best,
    stats: &mut Stats,
) {
    if let Some(row) = counts.top_row() {
        best.offer(counts.similarity(side, row), row);
    }
    counts.best_into(side, best, stats);
}

/// The best target row over references with counts `refs` (ties: lower row, then lower
/// reference); returns the best and the reference reaching it.
pub fn best_target<T: Counter>(
    side: &SideIndex,
    refs: &[RowCounts<T>],
    stats: &mut Stats,
) -> (Best, Option<u32>) {
    let mut best = Best::NONE;
    for counts in refs {
        if let Some(row) = counts.top_row() {
            best.offer(counts.similarity(side, row), row);
        }
    }
    for counts in refs {
        counts.best_into(side, &mut best, stats);
    }
    // The reference reaching the best at its row: the lowest one with that similarity.
    let ref_idx = best.row().and_then(|row| {
        refs.iter()
            .position(|c| c.similarity(side, row).cmp_exact(best.score).is_eq())
            .map(|r| r as u32)
    });
    (best, ref_idx)
}

/// Pair value of row `d`: min(source similarity, best reference similarity), from counts.
#[inline]
fn pair_value<T: Counter>(
    index: &TrainingIndex,
    source: &RowCounts<T>,
    refs: &[RowCounts<T>],
    d: u32,
) -> Ratio {
    let s = source.similarity(&index.src, d);
    capped_by_references(s, refs.iter().map(|r| r.similarity(&index.tgt, d)))
}

/// The best pair row: max over rows of min(source, best reference similarity), lowest row on
/// ties. `seeds` are rows worth trying first (the side's nearest rows).
pub fn best_pair<T: Counter>(
    index: &TrainingIndex,
    source: &RowCounts<T>,
    refs: &[RowCounts<T>],
    seeds: &[u32],
    stats: &mut Stats,
) -> Best {
    let mut best = Best::NONE;
    for &d in seeds {
        best.offer(pair_value(index, source, refs, d), d);
    }
    if source.empty {
        // Only rows with an empty source are similar to an empty query.
        for &d in index.src.empty_rows() {
            best.offer(pair_value(index, source, refs, d), d);
        }
        return best;
    }
    // A row beats the best only if its source count reaches the best's share of the query,
    // and so does its count for some reference (an empty reference is similar to empty rows
    // with a zero count, so it disables that filter).
    // The counts a row needs, worked out again only when the best rises.
    let any_empty_ref = refs.iter().any(|r| r.empty);
    let need = std::cell::Cell::new(min_shared(&best, source.size));
    let mut ref_needs: Vec<u64> = refs.iter().map(|r| min_shared(&best, r.size)).collect();
    source.scan(
        || need.get(),
        |d| {
            index.src.prefetch_len(d);
            index.tgt.prefetch_len(d);
        },
        |d| {
            let counts = refs.iter().zip(&ref_needs);
            if !any_empty_ref && counts.into_iter().all(|(r, &n)| r.count(d) < n) {
                return;
            }
            stats.candidates_verified += 1;
            if best.offer(pair_value(index, source, refs, d), d) {
                need.set(min_shared(&best, source.size));
                for (n, r) in ref_needs.iter_mut().zip(refs) {
                    *n = min_shared(&best, r.size);
                }
            }
        },
    );
    stats.pairs_counted += 1;
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_tile_a_block_for_every_counter_width() {
        for rows in [
            window_rows::<u8>(),
            window_rows::<u16>(),
            window_rows::<u32>(),
        ] {
            assert!(rows.is_power_of_two() && rows <= BLOCK_ROWS, "{rows}");
            assert_eq!(BLOCK_ROWS % rows, 0);
        }
        assert_eq!(window_rows::<u16>(), BLOCK_ROWS);
        assert!(
            window_rows::<u32>() < BLOCK_ROWS,
            "u32 windows split a block"
        );
    }
}
