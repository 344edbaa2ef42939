//! The lens of one test segment over the shards of a corpus (docs/exposure.md, "Substring
//! lens"). A segment is normalised text whose words are separated by single spaces.
//!
//! * longest shared substring: the most characters of the segment, taken contiguously, that
//!   occur in one document; ties go to the earliest start in the segment, and its place to the
//!   first occurrence in corpus order (document, then character offset);
//! * whole-segment occurrences: how many times the segment occurs as a substring;
//! * word n-grams: for each order, how many of the segment's word n-grams (positions) occur in
//!   some document as whole words (bounded by a space or the document's edge).

use rayon::prelude::*;

use super::error::{invalid, Result};
use super::shard::{SuffixShard, END};

/// A segment's lens over a whole corpus.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SegmentLens {
    /// Characters in the segment.
    pub chars: u64,
    /// Characters of the longest substring shared with a document (0 when none).
    pub longest: u64,
    /// Where it starts in the segment (characters).
    pub start: u64,
    /// The document holding its first occurrence (corpus order), and the character offset of
    /// that occurrence in it; None when nothing is shared.
    pub place: Option<(u64, u64)>,
    /// Occurrences of the whole segment (0 for an empty segment).
    pub count: u64,
    /// Per word order: (n-grams found, n-grams in the segment).
    pub grams: Vec<(u64, u64)>,
    /// Per word order, per n-gram of the segment (by position): whether it was found; what
    /// shards answered apart merge by (`or`).
    pub hits: Vec<Vec<bool>>,
}

fn is_char_start(b: u8) -> bool {
    b & 0xC0 != 0x80
}

/// A segment's answer from one shard: its longest match (characters, start in the segment,
/// document and offset in the shard), whole-segment count, and per order which n-grams occur.
struct ShardAnswer {
    best: Option<(u64, u64, usize, usize)>,
    count: u64,
    found: Vec<Vec<bool>>,
}

/// For each byte `i` of `seg` that starts a character, the length in bytes of the longest
/// prefix of `seg[i..]` occurring in the shard (matching statistics; other bytes stay 0).
fn matching_lengths(shard: &SuffixShard, seg: &[u8]) -> Vec<usize> {
    let mut lengths = vec![0; seg.len()];
    let mut end: usize = 0; // end of the previous start's match: its tail occurs too
    for i in 0..seg.len() {
        if !is_char_start(seg[i]) {
            continue;
        }
        let mut k = end.saturating_sub(i);
        let mut rows = shard.range(&seg[i..i + k]);
        while i + k < seg.len() {
            let narrowed = shard.narrow(rows.clone(), k, seg[i + k]);
            if narrowed.is_empty() {
                break;
            }
            rows = narrowed;
            k += 1;
        }
        lengths[i] = k;
        end = i + k;
    }
    lengths
}

/// Byte ranges of the segment's words (split at single spaces; empty words are skipped).
fn words(seg: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &b) in seg
        .iter()
        .enumerate()
        .chain(std::iter::once((seg.len(), &b' ')))
    {
        if b == b' ' {
            if i > start {
                out.push((start, i));
            }
            start = i + 1;
        }
    }
    out
}

fn shard_answer(shard: &SuffixShard, seg: &[u8], orders: &[usize]) -> ShardAnswer {
    let lengths = matching_lengths(shard, seg);
    // chars_before[b]: characters starting before byte b.
    let mut chars_before = Vec::with_capacity(seg.len() + 1);
    let mut c = 0u64;
    for &b in seg {
        chars_before.push(c);
        c += u64::from(is_char_start(b));
    }
    chars_before.push(c);
    let mut best: Option<(u64, usize, usize)> = None; // (chars, start byte, end byte)
    for (i, &k) in lengths.iter().enumerate() {
        if k == 0 {
            continue;
        }
        let mut end = i + k;
        while end < seg.len() && !is_char_start(seg[end]) {
            end -= 1;
        }
        let chars = chars_before[end] - chars_before[i];
        if chars > 0 && best.is_none_or(|(b, _, _)| chars > b) {
            best = Some((chars, i, end));
        }
    }
    let (text, sa) = (shard.text(), shard.suffix_array());
    let best = best.map(|(chars, i, end)| {
        let rows = shard.range(&seg[i..end]);
        let first = sa[rows].iter().copied().min().unwrap_or_default() as usize;
        let (doc, offset) = shard.locate(first);
        (chars, chars_before[i], doc, offset)
    });
    let count = if !seg.is_empty() && lengths.first() == Some(&seg.len()) {
        shard.range(seg).len() as u64
    } else {
        0
    };
    let bounded = |p: usize| p == 0 || text.get(p - 1).is_some_and(|&b| b == b' ' || b == END);
    let closed = |p: usize| text.get(p).is_some_and(|&b| b == b' ' || b == END);
    let spans = words(seg);
    let found = orders
        .iter()
        .map(|&n| {
            (0..(spans.len() + 1).saturating_sub(n))
                .map(|j| {
                    let (a, b) = (spans[j].0, spans[j + n - 1].1);
                    lengths[a] >= b - a
                        && sa[shard.range(&seg[a..b])].iter().any(|&p| {
                            let p = p as usize;
                            bounded(p) && closed(p + (b - a))
                        })
                })
                .collect()
        })
        .collect();
    ShardAnswer { best, count, found }
}

/// The lens of `seg` over `shards` (in corpus order; `bases[i]` is the number of documents
/// before shard `i`), for word n-gram orders `orders`.
fn segment_lens(shards: &[(SuffixShard, u64)], seg: &str, orders: &[usize]) -> SegmentLens {
    let bytes = seg.as_bytes();
    let mut out = SegmentLens {
        chars: seg.chars().count() as u64,
        grams: vec![(0, 0); orders.len()],
        ..SegmentLens::default()
    };
    let mut found: Vec<Vec<bool>> = Vec::new();
    for (shard, base) in shards {
        let answer = shard_answer(shard, bytes, orders);
        out.count += answer.count;
        if let Some((chars, start, doc, offset)) = answer.best {
            // Strictly longer, or as long from an earlier start: shards come in corpus order,
            // so an equal match in a later shard never displaces the first occurrence.
            let better = out.place.is_none()
                || chars > out.longest
                || (chars == out.longest && start < out.start);
            if better {
                out.longest = chars;
                out.start = start;
                out.place = Some((base + doc as u64, offset as u64));
            }
        }
        if found.is_empty() {
            found = answer.found;
        } else {
            for (acc, more) in found.iter_mut().zip(answer.found) {
                for (a, m) in acc.iter_mut().zip(more) {
                    *a |= m;
                }
            }
        }
    }
    let spans = words(bytes).len() as u64;
    if found.is_empty() {
        // No shards: nothing is found.
        found = orders
            .iter()
            .map(|&n| vec![false; (spans as usize + 1).saturating_sub(n)])
            .collect();
    }
    for (slot, (&n, hits)) in out.grams.iter_mut().zip(orders.iter().zip(&found)) {
        *slot = (
            hits.iter().filter(|&&h| h).count() as u64,
            (spans + 1).saturating_sub(n as u64),
        );
    }
    out.hits = found;
    out
}

/// The lens of every segment over `shards` (each with the number of documents before it), on
/// the current rayon pool.
pub fn lens_of_segments(
    shards: &[(SuffixShard, u64)],
    segments: &[&str],
    orders: &[usize],
) -> Result<Vec<SegmentLens>> {
    if orders.contains(&0) {
        return Err(invalid("word n-gram orders must be at least 1"));
    }
    if segments.iter().any(|s| s.contains('\n')) {
        return Err(invalid("a segment contains a newline"));
    }
    Ok(segments
        .par_iter()
        .map(|seg| segment_lens(shards, seg, orders))
        .collect())
}
