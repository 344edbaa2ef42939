//! Per-segment TER statistics (number of edits, average reference length), defined to equal
//! sacrebleu 2.6's `TER()` with its default settings exactly.
//!
//! The definition, step by step:
//!
//! * Text: the caller lowercases with Python's `str.lower` (references twice, as sacrebleu
//!   preprocesses them twice); words are then Python's `str.split()`.
//! * Edit distance: a Levenshtein distance over words restricted to a beam around the
//!   pseudo-diagonal `floor(i · m / n)` (hypothesis row `i` of `n`, reference length `m`): columns
//!   `[diag − w, diag + w)` with `w = 25`, widened to `ceil(m / n / 2 + 25)` when the length ratio
//!   exceeds 50; the last row is complete. Cells outside the beam are infinite (10¹⁶). A cell takes
//!   the first cheapest of substitution/match, hypothesis-word deletion, reference-word insertion.
//! * Alignment: the traceback of that matrix, read as rewriting the reference into the hypothesis.
//! * Shifts: candidates are hypothesis/reference word runs that are equal (lengths 1..=10, start
//!   positions at most 50 apart), in order of hypothesis start, reference start, length; a run is
//!   tried only when some of its hypothesis words and some of its reference words are errors and
//!   the reference start is not aligned inside the run; it is moved before each distinct position
//!   the alignment gives for the reference words just before and inside the run. The best
//!   candidate (largest gain in edit distance, then longest, then earliest start, then earliest
//!   target) is applied while its gain is positive; after 1000 candidates in one hypothesis-
//!   reference pair the search stops and the round's best is not applied.
//! * Statistics: edits = shifts + final edit distance, the fewest over the references; reference
//!   length = the references' word counts averaged. An empty reference costs one edit per
//!   hypothesis word.
//!
//! sacrebleu caches matrix rows by hypothesis prefix; rows are a function of the prefix (all
//! candidates of a pair have the same length), so the cache does not change results. The matrix
//! value is the cheapest path through the cells the beam computes, so a candidate's distance is
//! found from its first changed word to its last only: its forward rows up to there (those before
//! the first change are the current hypothesis's), met with the current hypothesis's backward
//! costs (cheapest way from each cell to the end, the same for the unchanged words after it).

use std::fmt;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::surface::is_py_space;

/// Longest word run a shift moves.
const MAX_SHIFT_SIZE: usize = 10;
/// Largest distance between a run's hypothesis and reference start positions.
const MAX_SHIFT_DIST: usize = 50;
/// Half-width of the edit-distance beam.
const BEAM_WIDTH: i64 = 25;
/// Shift candidates evaluated per hypothesis-reference pair before the search stops.
const MAX_SHIFT_CANDIDATES: usize = 1000;
/// The cost of a cell the beam did not reach (sacrebleu's `int(1e16)`).
const INF: u64 = 10_000_000_000_000_000;

/// An error of the TER kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerError {
    /// A segment has no reference (sacrebleu divides by zero).
    NoReference { segment: usize },
    /// The traceback reached a cell the beam did not compute (cannot happen: every computed cell
    /// has a computed predecessor; reported rather than assumed).
    Traceback,
}

impl fmt::Display for TerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoReference { segment } => write!(
                f,
                "segment {segment} has no reference; each needs at least one"
            ),
            Self::Traceback => f.write_str("TER traceback left the edit-distance beam"),
        }
    }
}

impl std::error::Error for TerError {}

/// The operation that produced a matrix cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// Not computed (outside the beam, or unreachable).
    Undef,
    /// Words equal (diagonal, no cost).
    Keep,
    /// Words differ (diagonal, cost 1).
    Sub,
    /// A reference word without a hypothesis word (column step).
    Ins,
    /// A hypothesis word without a reference word (row step).
    Del,
}

/// Python's `str.split()` words of a text.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_py_space).filter(|w| !w.is_empty())
}

/// The beam of a hypothesis length `n` and reference length `m`: row `i` holds columns
/// `lo[i]..hi[i]`, stored from `start[i]` in a flat buffer.
#[derive(Debug, Clone)]
struct Band {
    lo: Vec<usize>,
    hi: Vec<usize>,
    start: Vec<usize>,
}

impl Band {
    fn new(n: usize, m: usize) -> Self {
        let ratio = if n > 0 { m as f64 / n as f64 } else { 1.0 };
        let beam = if (BEAM_WIDTH as f64) < ratio / 2.0 {
            (ratio / 2.0 + BEAM_WIDTH as f64).ceil() as i64
        } else {
            BEAM_WIDTH
        };
        let full = m as i64 + 1;
        let mut lo = Vec::with_capacity(n + 1);
        let mut hi = Vec::with_capacity(n + 1);
        let mut start = Vec::with_capacity(n + 2);
        lo.push(0);
        hi.push(m + 1);
        start.push(0);
        start.push(m + 1);
        for i in 1..=n {
            let diag = (i as f64 * ratio).floor() as i64;
            let a = (diag - beam).max(0);
            let b = if i == n { full } else { full.min(diag + beam) };
            let (a, b) = (a as usize, b.max(a) as usize);
            lo.push(a);
            hi.push(b);
            let last = start.last().copied().unwrap_or(0);
            start.push(last + (b - a));
        }
        Self { lo, hi, start }
    }

    fn cells(&self) -> usize {
        self.start.last().copied().unwrap_or(0)
    }

    fn width(&self, i: usize) -> usize {
        self.hi[i] - self.lo[i]
    }
}

/// Row `i` (1-based hypothesis position, word `word`) from row `i - 1` (`prev`): costs into
/// `cur`, and operations into `ops` when given.
#[inline]
fn fill_row(
    band: &Band,
    i: usize,
    word: u32,
    reference: &[u32],
    prev: &[u64],
    cur: &mut [u64],
    mut ops: Option<&mut [Op]>,
) {
    let (plo, phi) = (band.lo[i - 1], band.hi[i - 1]);
    let lo = band.lo[i];
    let prev_at = |j: usize| {
        if j >= plo && j < phi {
            prev[j - plo]
        } else {
            INF
        }
    };
    let mut left = INF;
    for (k, slot) in cur.iter_mut().enumerate() {
        let j = lo + k;
        let (cost, op) = if j == 0 {
            (prev_at(0) + 1, Op::Del)
        } else {
            let same = reference[j - 1] == word;
            let diagonal = prev_at(j - 1) + u64::from(!same);
            let up = prev_at(j) + 1;
            let mut best = (INF, Op::Undef);
            if diagonal < best.0 {
                best = (diagonal, if same { Op::Keep } else { Op::Sub });
            }
            if up < best.0 {
                best = (up, Op::Del);
            }
            if left + 1 < best.0 {
                best = (left + 1, Op::Ins);
            }
            best
        };
        *slot = cost;
        left = cost;
        if let Some(ops) = ops.as_deref_mut() {
            ops[k] = op;
        }
    }
}

/// Row `i`'s costs only (as `fill_row`): the inner columns, whose two cells above are both in row
/// `i - 1`'s band, without bounds tests.
#[inline]
fn fill_costs(band: &Band, i: usize, word: u32, reference: &[u32], prev: &[u64], cur: &mut [u64]) {
    let (plo, phi) = (band.lo[i - 1], band.hi[i - 1]);
    let (lo, hi) = (band.lo[i], band.hi[i]);
    let prev_at = |j: usize| {
        if j >= plo && j < phi {
            prev[j - plo]
        } else {
            INF
        }
    };
    let edge = |j: usize, left: u64| {
        if j == 0 {
            prev_at(0) + 1
        } else {
            let diagonal = prev_at(j - 1) + u64::from(reference[j - 1] != word);
            diagonal.min(prev_at(j) + 1).min(left + 1).min(INF)
        }
    };
    let inner_lo = hi.min(lo.max(plo + 1));
    let inner_hi = hi.min(phi).max(inner_lo);
    let mut left = INF;
    for j in lo..inner_lo {
        left = edge(j, left);
        cur[j - lo] = left;
    }
    if inner_lo < inner_hi {
        // here plo < inner_lo and inner_hi <= phi
        let diagonals = &prev[inner_lo - 1 - plo..inner_hi - 1 - plo];
        let ups = &prev[inner_lo - plo..inner_hi - plo];
        let words = &reference[inner_lo - 1..inner_hi - 1];
        let out = &mut cur[inner_lo - lo..inner_hi - lo];
        for (((slot, &d), &u), &r) in out.iter_mut().zip(diagonals).zip(ups).zip(words) {
            // min(INF, diagonal, up, left + 1), the clamp off the chain through `left` (a finite
            // `left` stays below INF after adding one, an infinite one loses to the clamped rest)
            left = (d + u64::from(r != word)).min(u + 1).min(INF).min(left + 1);
            *slot = left;
        }
    }
    for j in inner_hi..hi {
        left = edge(j, left);
        cur[j - lo] = left;
    }
}

/// The beam edit-distance matrix of one hypothesis against the reference.
#[derive(Debug, Clone)]
struct Matrix {
    costs: Vec<u64>,
    ops: Vec<Op>,
}

impl Matrix {
    fn new(band: &Band, m: usize) -> Self {
        let mut costs = vec![INF; band.cells()];
        let mut ops = vec![Op::Undef; band.cells()];
        for j in 0..=m {
            costs[j] = j as u64;
            ops[j] = Op::Ins;
        }
        Self { costs, ops }
    }

    fn row(&self, band: &Band, i: usize) -> &[u64] {
        &self.costs[band.start[i]..band.start[i + 1]]
    }

    /// Recomputes rows `from + 1..=n` for hypothesis `hyp` (rows up to `from` are kept).
    fn fill(&mut self, band: &Band, hyp: &[u32], reference: &[u32], from: usize) {
        for i in from + 1..=hyp.len() {
            let (before, after) = self.costs.split_at_mut(band.start[i]);
            let prev = &before[band.start[i - 1]..];
            let cur = &mut after[..band.width(i)];
            let ops = &mut self.ops[band.start[i]..band.start[i + 1]];
            fill_row(band, i, hyp[i - 1], reference, prev, cur, Some(ops));
        }
    }

    /// The distance: the last row's last cell.
    fn distance(&self) -> u64 {
        self.costs.last().copied().unwrap_or(INF)
    }

    fn op(&self, band: &Band, i: usize, j: usize) -> Op {
        if j >= band.lo[i] && j < band.hi[i] {
            self.ops[band.start[i] + j - band.lo[i]]
        } else {
            Op::Undef
        }
    }
}

/// Where the current hypothesis stands against the reference: the aligned hypothesis position of
/// every reference word (-1 before the first) and prefix counts of error words on both sides.
struct Alignment {
    align: Vec<i64>,
    hyp_err: Vec<u32>,
    ref_err: Vec<u32>,
}

impl Alignment {
    fn of(matrix: &Matrix, band: &Band, n: usize, m: usize) -> Result<Self, TerError> {
        let mut trace = Vec::with_capacity(n + m);
        let (mut i, mut j) = (n, m);
        while i > 0 || j > 0 {
            let op = matrix.op(band, i, j);
            match op {
                Op::Keep | Op::Sub if i > 0 && j > 0 => {
                    i -= 1;
                    j -= 1;
                }
                Op::Ins if j > 0 => j -= 1,
                Op::Del if i > 0 => i -= 1,
                _ => return Err(TerError::Traceback),
            }
            trace.push(op);
        }
        let mut align = Vec::with_capacity(m);
        let mut hyp_err = Vec::with_capacity(n + 1);
        let mut ref_err = Vec::with_capacity(m + 1);
        hyp_err.push(0u32);
        ref_err.push(0u32);
        let mut pos_hyp = -1i64;
        let push = |v: &mut Vec<u32>, e: u32| {
            let last = v.last().copied().unwrap_or(0);
            v.push(last + e);
        };
        for &op in trace.iter().rev() {
            match op {
                Op::Keep | Op::Sub => {
                    let e = u32::from(op == Op::Sub);
                    pos_hyp += 1;
                    align.push(pos_hyp);
                    push(&mut hyp_err, e);
                    push(&mut ref_err, e);
                }
                Op::Del => {
                    pos_hyp += 1;
                    push(&mut hyp_err, 1);
                }
                Op::Ins => {
                    align.push(pos_hyp);
                    push(&mut ref_err, 1);
                }
                Op::Undef => return Err(TerError::Traceback),
            }
        }
        Ok(Self {
            align,
            hyp_err,
            ref_err,
        })
    }
}

/// `words` with the run `start..start + len` moved before position `target` (sacrebleu's
/// `_perform_shift`, including its reading of a target inside the run), written into `out`.
fn perform_shift(words: &[u32], start: usize, len: usize, target: usize, out: &mut Vec<u32>) {
    let n = words.len();
    out.clear();
    if target < start {
        out.extend_from_slice(&words[..target]);
        out.extend_from_slice(&words[start..start + len]);
        out.extend_from_slice(&words[target..start]);
        out.extend_from_slice(&words[start + len..]);
    } else if target > start + len {
        out.extend_from_slice(&words[..start]);
        out.extend_from_slice(&words[start + len..target]);
        out.extend_from_slice(&words[start..start + len]);
        out.extend_from_slice(&words[target..]);
    } else {
        let cut = (len + target).min(n);
        out.extend_from_slice(&words[..start]);
        out.extend_from_slice(&words[start + len..cut]);
        out.extend_from_slice(&words[start..start + len]);
        out.extend_from_slice(&words[cut..]);
    }
}

/// Row `k` (`k < n`, hypothesis word `word` between rows `k` and `k + 1`) of the backward costs
/// from row `k + 1` (`next`): each cell's cheapest way to the matrix's last cell over the cells the
/// beam computes (a step down, diagonal or right, priced as the forward matrix prices them).
fn fill_back(band: &Band, k: usize, word: u32, reference: &[u32], next: &[u64], cur: &mut [u64]) {
    let (nlo, nhi) = (band.lo[k + 1], band.hi[k + 1]);
    let lo = band.lo[k];
    let next_at = |j: usize| {
        if j >= nlo && j < nhi {
            next[j - nlo]
        } else {
            INF
        }
    };
    let mut right = INF;
    for (offset, slot) in cur.iter_mut().enumerate().rev() {
        let j = lo + offset;
        let mut cost = (next_at(j) + 1).min(right + 1);
        if let Some(&r) = reference.get(j) {
            cost = cost.min(next_at(j + 1) + u64::from(r != word));
        }
        right = cost.min(INF);
        *slot = right;
    }
}

/// The backward costs of every row of hypothesis `hyp` (rows `to..=n` are kept).
fn fill_back_rows(band: &Band, hyp: &[u32], reference: &[u32], back: &mut [u64], to: usize) {
    let n = hyp.len();
    let m = reference.len();
    for (j, slot) in back[band.start[n]..band.start[n + 1]]
        .iter_mut()
        .enumerate()
    {
        *slot = (m - (band.lo[n] + j)) as u64;
    }
    for k in (0..to.min(n)).rev() {
        let (before, after) = back.split_at_mut(band.start[k + 1]);
        let next = &after[..band.width(k + 1)];
        let cur = &mut before[band.start[k]..];
        fill_back(band, k, hyp[k], reference, next, cur);
    }
}

/// TER of one hypothesis-reference pair: the search state and its scratch buffers.
struct Pair<'a> {
    reference: &'a [u32],
    band: Band,
    hyp: Vec<u32>,
    matrix: Matrix,
    /// Backward costs of the current hypothesis, in the band's layout.
    back: Vec<u64>,
    shifted: Vec<u32>,
    rows: [Vec<u64>; 2],
    checked: usize,
}

/// A shift candidate's rank: gain, length, then earlier start and earlier target first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Rank {
    gain: i64,
    len: usize,
    neg_start: i64,
    neg_target: i64,
}

impl<'a> Pair<'a> {
    fn new(hyp: &[u32], reference: &'a [u32]) -> Self {
        let (n, m) = (hyp.len(), reference.len());
        let band = Band::new(n, m);
        let mut matrix = Matrix::new(&band, m);
        matrix.fill(&band, hyp, reference, 0);
        let mut back = vec![INF; band.cells()];
        fill_back_rows(&band, hyp, reference, &mut back, n);
        let widest = (0..=n).map(|i| band.width(i)).max().unwrap_or(0);
        Self {
            reference,
            band,
            hyp: hyp.to_vec(),
            matrix,
            back,
            shifted: Vec::with_capacity(n),
            rows: [vec![INF; widest], vec![INF; widest]],
            checked: 0,
        }
    }

    /// The edit distance of `self.shifted` (a permutation of the current hypothesis): forward rows
    /// from its first changed word to its last, met with the current hypothesis's backward row
    /// there (every path crosses that row; the words after it are unchanged).
    fn shifted_distance(&mut self) -> u64 {
        let n = self.hyp.len();
        let first = self.hyp.iter().zip(&self.shifted).position(|(a, b)| a != b);
        let Some(first) = first else {
            return self.matrix.distance();
        };
        let last = self
            .hyp
            .iter()
            .zip(&self.shifted)
            .rposition(|(a, b)| a != b)
            .map_or(n, |k| k + 1);
        let band = &self.band;
        let [prev, cur] = &mut self.rows;
        let w = band.width(first);
        prev[..w].copy_from_slice(self.matrix.row(band, first));
        for i in first + 1..=last {
            let w = band.width(i);
            let pw = band.width(i - 1);
            fill_costs(
                band,
                i,
                self.shifted[i - 1],
                self.reference,
                &prev[..pw],
                &mut cur[..w],
            );
            std::mem::swap(prev, cur);
        }
        let back = &self.back[band.start[last]..band.start[last + 1]];
        prev.iter()
            .zip(back)
            .map(|(&f, &b)| f + b)
            .fold(INF, u64::min)
    }

    /// One round of the shift search: the best candidate's rank and move, unless the search is
    /// over (no candidate, or the candidate limit reached).
    fn best_shift(&mut self) -> Result<Option<(Rank, usize, usize, usize)>, TerError> {
        let (n, m) = (self.hyp.len(), self.reference.len());
        let pre = self.matrix.distance() as i64;
        let al = Alignment::of(&self.matrix, &self.band, n, m)?;
        let mut best: Option<(Rank, usize, usize, usize)> = None;
        'search: for start_h in 0..n {
            let r_lo = start_h.saturating_sub(MAX_SHIFT_DIST);
            let r_hi = m.min(start_h + MAX_SHIFT_DIST + 1);
            for start_r in r_lo..r_hi {
                let mut len = 0;
                while len < MAX_SHIFT_SIZE
                    && self.hyp[start_h + len] == self.reference[start_r + len]
                {
                    len += 1;
                    let hyp_errors = al.hyp_err[start_h + len] - al.hyp_err[start_h];
                    let ref_errors = al.ref_err[start_r + len] - al.ref_err[start_r];
                    let anchor = al.align[start_r];
                    let inside = start_h as i64 <= anchor && anchor < (start_h + len) as i64;
                    if hyp_errors > 0 && ref_errors > 0 && !inside {
                        let mut prev_target = -1i64;
                        for k in start_r as i64 - 1..(start_r + len) as i64 {
                            let target = if k < 0 { 0 } else { al.align[k as usize] + 1 };
                            if target == prev_target {
                                continue;
                            }
                            prev_target = target;
                            let t = target as usize;
                            perform_shift(&self.hyp, start_h, len, t, &mut self.shifted);
                            let gain = pre - self.shifted_distance() as i64;
                            self.checked += 1;
                            let rank = Rank {
                                gain,
                                len,
                                neg_start: -(start_h as i64),
                                neg_target: -target,
                            };
                            if best.is_none_or(|(b, ..)| rank > b) {
                                best = Some((rank, start_h, len, t));
                            }
                        }
                        if self.checked >= MAX_SHIFT_CANDIDATES {
                            break 'search;
                        }
                    }
                    if start_h + len == n || start_r + len == m {
                        break;
                    }
                }
            }
        }
        if self.checked >= MAX_SHIFT_CANDIDATES {
            return Ok(None);
        }
        Ok(best.filter(|(rank, ..)| rank.gain > 0))
    }

    /// Shifts plus the final edit distance.
    fn edits(&mut self) -> Result<u64, TerError> {
        let mut shifts = 0u64;
        while let Some((_, start, len, target)) = self.best_shift()? {
            perform_shift(&self.hyp, start, len, target, &mut self.shifted);
            let first = self
                .hyp
                .iter()
                .zip(&self.shifted)
                .position(|(a, b)| a != b)
                .unwrap_or(self.hyp.len());
            let last = self
                .hyp
                .iter()
                .zip(&self.shifted)
                .rposition(|(a, b)| a != b)
                .map_or(0, |k| k + 1);
            std::mem::swap(&mut self.hyp, &mut self.shifted);
            self.matrix
                .fill(&self.band, &self.hyp, self.reference, first);
            fill_back_rows(&self.band, &self.hyp, self.reference, &mut self.back, last);
            shifts += 1;
        }
        Ok(shifts + self.matrix.distance())
    }
}

/// The words of `text` as ids, numbering new words in `ids`.
fn encode<'t>(text: &'t str, ids: &mut FxHashMap<&'t str, u32>) -> Vec<u32> {
    words(text)
        .map(|w| {
            let next = ids.len() as u32;
            *ids.entry(w).or_insert(next)
        })
        .collect()
}

/// TER edits of a hypothesis against one reference (word ids).
fn pair_edits(hyp: &[u32], reference: &[u32]) -> Result<u64, TerError> {
    if reference.is_empty() {
        return Ok(hyp.len() as u64);
    }
    Pair::new(hyp, reference).edits()
}

/// TER statistics of one segment: `[fewest edits over the references, average reference
/// length]`. Texts are as sacrebleu's TER sees them after lowercasing.
pub fn segment_stats<S: AsRef<str>>(hyp: &str, refs: &[S]) -> Result<[f64; 2], TerError> {
    if refs.is_empty() {
        return Err(TerError::NoReference { segment: 0 });
    }
    let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
    let hyp_ids = encode(hyp, &mut ids);
    let ref_ids: Vec<Vec<u32>> = refs.iter().map(|r| encode(r.as_ref(), &mut ids)).collect();
    let mut best = u64::MAX;
    let mut total_len = 0u64;
    for r in &ref_ids {
        best = best.min(pair_edits(&hyp_ids, r)?);
        total_len += r.len() as u64;
    }
    Ok([best as f64, total_len as f64 / refs.len() as f64])
}

/// TER statistics of every segment (`hyps[k]` against `refs[k]`), in parallel.
pub fn corpus_stats<S: AsRef<str> + Sync>(
    hyps: &[S],
    refs: &[Vec<S>],
) -> Result<Vec<[f64; 2]>, TerError> {
    hyps.par_iter()
        .zip(refs)
        .enumerate()
        .with_min_len(4)
        .map(|(k, (h, rs))| {
            segment_stats(h.as_ref(), rs).map_err(|e| match e {
                TerError::NoReference { .. } => TerError::NoReference { segment: k },
                other => other,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Rng;

    /// Plain beam edit distance over a full matrix, written from the definition (no reuse, no
    /// early stop): the oracle of the incremental computation.
    fn plain_distance(hyp: &[u32], reference: &[u32]) -> u64 {
        let (n, m) = (hyp.len(), reference.len());
        let band = Band::new(n, m);
        let mut dist = vec![vec![INF; m + 1]; n + 1];
        for (j, cell) in dist[0].iter_mut().enumerate() {
            *cell = j as u64;
        }
        for i in 1..=n {
            for j in band.lo[i]..band.hi[i] {
                dist[i][j] = if j == 0 {
                    dist[i - 1][0] + 1
                } else {
                    let sub = dist[i - 1][j - 1] + u64::from(hyp[i - 1] != reference[j - 1]);
                    [sub, dist[i - 1][j] + 1, dist[i][j - 1] + 1]
                        .into_iter()
                        .fold(INF, u64::min)
                };
            }
        }
        dist[n][m]
    }

    fn ids(text: &str) -> Vec<u32> {
        text.bytes().map(u32::from).collect()
    }

    impl Rng {
        fn sequence(&mut self, max_len: usize, vocab: usize) -> Vec<u32> {
            let n = self.below(max_len + 1);
            (0..n).map(|_| self.below(vocab) as u32).collect()
        }
    }

    fn stats(hyp: &str, refs: &[&str]) -> [f64; 2] {
        match segment_stats(hyp, refs) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn words_split_on_python_whitespace() {
        let w: Vec<&str> = words(" a\u{1f}b\u{3000}c\u{85} ").collect();
        assert_eq!(w, vec!["a", "b", "c"]);
    }

    #[test]
    fn known_segments() {
        // identical; one substitution; one deletion; a swap is one shift
        assert_eq!(stats("a b c", &["a b c"]), [0.0, 3.0]);
        assert_eq!(stats("a x c", &["a b c"]), [1.0, 3.0]);
        assert_eq!(stats("a c", &["a b c"]), [1.0, 3.0]);
        assert_eq!(stats("c a b", &["a b c"]), [1.0, 3.0]);
        // the fewest edits over the references, their lengths averaged
        assert_eq!(stats("a b", &["a b c d", "a b", "x"]), [0.0, 7.0 / 3.0]);
        // empty hypothesis: one edit per reference word; empty reference: one per hypothesis word
        assert_eq!(stats("", &["a b c"]), [3.0, 3.0]);
        assert_eq!(stats("a b", &[""]), [2.0, 0.0]);
        assert_eq!(stats("", &["", " "]), [0.0, 0.0]);
    }

    #[test]
    fn a_segment_without_references_is_an_error() {
        let none: [&str; 0] = [];
        assert_eq!(
            segment_stats("a", &none),
            Err(TerError::NoReference { segment: 0 })
        );
        let err = corpus_stats(&["a", "b"], &[vec!["a"], vec![]]);
        assert_eq!(err, Err(TerError::NoReference { segment: 1 }));
    }

    #[test]
    fn beam_widens_for_extreme_length_ratios() {
        let band = Band::new(2, 400);
        // ratio 200: beam ceil(100 + 25) = 125 around the diagonal 200 of row 1
        assert_eq!((band.lo[1], band.hi[1]), (75, 325));
        assert_eq!((band.lo[2], band.hi[2]), (275, 401));
        let band = Band::new(100, 10);
        assert_eq!((band.lo[50], band.hi[50]), (0, 11));
    }

    #[test]
    fn perform_shift_follows_sacrebleu_including_targets_inside_the_run() {
        let w: Vec<u32> = (0..6).collect();
        let mut out = Vec::new();
        perform_shift(&w, 3, 2, 1, &mut out);
        assert_eq!(out, vec![0, 3, 4, 1, 2, 5]);
        perform_shift(&w, 1, 2, 5, &mut out);
        assert_eq!(out, vec![0, 3, 4, 1, 2, 5]);
        // target inside or right after the run: moved past `target - start` words, clamped
        perform_shift(&w, 1, 2, 3, &mut out);
        assert_eq!(out, vec![0, 3, 4, 1, 2, 5]);
        perform_shift(&w, 3, 2, 5, &mut out);
        assert_eq!(out, vec![0, 1, 2, 5, 3, 4]);
        perform_shift(&w, 2, 2, 2, &mut out);
        assert_eq!(out, w);
    }

    #[test]
    fn matrix_distance_equals_the_plain_beam_distance() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..300 {
            let hyp = rng.sequence(90, 4);
            let reference = rng.sequence(90, 4);
            let band = Band::new(hyp.len(), reference.len());
            let mut matrix = Matrix::new(&band, reference.len());
            matrix.fill(&band, &hyp, &reference, 0);
            assert_eq!(matrix.distance(), plain_distance(&hyp, &reference));
        }
    }

    #[test]
    fn forward_and_backward_costs_meet_at_the_distance_on_every_row() {
        let mut rng = Rng(0xdead_beef);
        for _ in 0..200 {
            let hyp = rng.sequence(70, 3);
            let reference = rng.sequence(70, 3);
            let (n, m) = (hyp.len(), reference.len());
            let band = Band::new(n, m);
            let mut matrix = Matrix::new(&band, m);
            matrix.fill(&band, &hyp, &reference, 0);
            let mut back = vec![INF; band.cells()];
            fill_back_rows(&band, &hyp, &reference, &mut back, n);
            let expected = plain_distance(&hyp, &reference);
            for k in 0..=n {
                let row = &back[band.start[k]..band.start[k + 1]];
                let meet = matrix
                    .row(&band, k)
                    .iter()
                    .zip(row)
                    .map(|(&f, &b)| f + b)
                    .fold(INF, u64::min);
                assert_eq!(meet, expected, "row {k} of {n}x{m}");
            }
        }
    }

    #[test]
    fn incremental_candidate_distance_equals_the_plain_beam_distance() {
        let mut rng = Rng(12345);
        for _ in 0..200 {
            let hyp = rng.sequence(80, 3);
            let reference = rng.sequence(80, 3);
            if hyp.is_empty() || reference.is_empty() {
                continue;
            }
            let mut pair = Pair::new(&hyp, &reference);
            for _ in 0..20 {
                let start = rng.below(hyp.len());
                let len = 1 + rng.below((hyp.len() - start).min(MAX_SHIFT_SIZE));
                let target = rng.below(hyp.len() + 1);
                perform_shift(&hyp, start, len, target, &mut pair.shifted);
                let expected = plain_distance(&pair.shifted, &reference);
                assert_eq!(pair.shifted_distance(), expected);
            }
        }
    }

    #[test]
    fn traceback_aligns_every_word() {
        let (hyp, reference) = (ids("xabcy"), ids("abzc"));
        let band = Band::new(hyp.len(), reference.len());
        let mut matrix = Matrix::new(&band, reference.len());
        matrix.fill(&band, &hyp, &reference, 0);
        let al = Alignment::of(&matrix, &band, hyp.len(), reference.len())
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(al.align.len(), reference.len());
        assert_eq!(al.hyp_err.len(), hyp.len() + 1);
        assert_eq!(al.ref_err.len(), reference.len() + 1);
        // sacrebleu: trace "d  ss" (x deleted, a b kept, z/c and c/y substituted)
        assert_eq!(al.hyp_err, vec![0, 1, 1, 1, 2, 3]);
        assert_eq!(al.ref_err, vec![0, 0, 0, 1, 2]);
        assert_eq!(al.align, vec![1, 2, 3, 4]);
    }

    #[test]
    fn the_candidate_limit_bounds_the_search() {
        // Two-word vocabulary, long segments: many equal runs; the search stops at the limit.
        let mut rng = Rng(7);
        let hyp: Vec<u32> = (0..300).map(|_| rng.below(2) as u32).collect();
        let reference: Vec<u32> = (0..300).map(|_| rng.below(2) as u32).collect();
        let mut pair = Pair::new(&hyp, &reference);
        let edits = pair.edits().unwrap_or_else(|e| panic!("{e}"));
        assert!(edits <= plain_distance(&hyp, &reference));
        assert!(pair.checked >= MAX_SHIFT_CANDIDATES);
        assert!(pair.checked < MAX_SHIFT_CANDIDATES + MAX_SHIFT_SIZE + 1);
    }
}
