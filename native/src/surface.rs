//! Per-segment sufficient statistics of BLEU (13a tokenisation, 4-grams) and chrF++ (character
//! 6-grams and word 2-grams, β = 2), defined to equal sacrebleu 2.x's statistics exactly:
//! the same whitespace (Python's `str.split`), the same 13a tokenisation steps, the same
//! multi-reference rules (BLEU: clipped by the largest count in any reference and the closest
//! reference length, shorter on ties; chrF++: the reference with the highest sentence F-score,
//! first on ties).

use std::borrow::Cow;
use std::hash::Hash;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// BLEU statistics per segment: hyp_len, ref_len, correct[1..4], total[1..4].
pub const BLEU_STATS: usize = 10;
/// chrF++ statistics per segment: (hyp, ref, match) for character orders 1..6, word orders 1..2.
pub const CHRF_STATS: usize = 24;

const BLEU_ORDER: usize = 4;
const CHAR_ORDER: usize = 6;
const WORD_ORDER: usize = 2;
const BETA: f64 = 2.0;

/// Whitespace as Python's `str.isspace` defines it (what `str.split()` splits on).
#[inline]
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Python's `str.split()`: runs of whitespace separate, ends ignored.
fn py_split(text: &str) -> impl Iterator<Item = &str> {
    text.split(is_py_space).filter(|t| !t.is_empty())
}

/// ASCII characters the first 13a rule surrounds with spaces.
#[inline]
fn is_13a_symbol(c: char) -> bool {
    matches!(c, '{'..='~' | '['..='`' | ' '..='&' | '('..='+' | ':'..='@' | '/')
}

/// Applies a rule replacing a matching pair of characters, scanning left to right without
/// overlap (Python `re.sub` on a two-character pattern).
fn pair_rule(
    text: &str,
    matches: impl Fn(char, char) -> bool,
    out: &mut String,
    emit: impl Fn(char, char, &mut String),
) {
    out.clear();
    let mut chars = text.chars().peekable();
    while let Some(a) = chars.next() {
        match chars.peek() {
            Some(&b) if matches(a, b) => {
                emit(a, b, out);
                chars.next();
            }
            _ => out.push(a),
        }
    }
}

/// The 13a tokenisation of one segment (after sacrebleu's `rstrip`), tokens joined by spaces.
pub fn tokenize_13a(segment: &str) -> String {
    // Each replacement only when its pattern occurs (most segments need none).
    let mut line = Cow::Borrowed(segment.trim_end_matches(is_py_space));
    if line.contains("<skipped>") {
        line = Cow::Owned(line.replace("<skipped>", ""));
    }
    if line.contains('\n') {
        line = Cow::Owned(line.replace("-\n", "").replace('\n', " "));
    }
    if line.contains('&') {
        line = Cow::Owned(
            line.replace("&quot;", "\"")
                .replace("&amp;", "&")
                .replace("&lt;", "<")
                .replace("&gt;", ">"),
        );
    }
    let mut a = String::with_capacity(line.len() * 2 + 2);
    a.push(' ');
    for c in line.chars() {
        if is_13a_symbol(c) {
            a.push(' ');
            a.push(c);
            a.push(' ');
        } else {
            a.push(c);
        }
    }
    a.push(' ');
    let digit = |c: char| c.is_ascii_digit();
    let stop = |c: char| c == '.' || c == ',';
    let mut b = String::with_capacity(a.len() * 2);
    pair_rule(
        &a,
        |x, y| !digit(x) && stop(y),
        &mut b,
        |x, y, o| {
            o.push(x);
            o.push(' ');
            o.push(y);
            o.push(' ');
        },
    );
    pair_rule(
        &b,
        |x, y| stop(x) && !digit(y),
        &mut a,
        |x, y, o| {
            o.push(' ');
            o.push(x);
            o.push(' ');
            o.push(y);
        },
    );
    pair_rule(
        &a,
        |x, y| digit(x) && y == '-',
        &mut b,
        |x, y, o| {
            o.push(x);
            o.push(' ');
            o.push(y);
            o.push(' ');
        },
    );
    let mut out = String::with_capacity(b.len());
    for token in py_split(&b) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(token);
    }
    out
}

/// The n-grams (n = 1..=`max`) of a token list as slices of `joined` (the tokens joined by
/// single spaces; tokens never contain whitespace), one list per order, in text order.
fn word_ngrams<'a>(tokens: &[&'a str], joined: &'a str, max: usize) -> Vec<Vec<&'a str>> {
    // Byte span of each token in `joined` (tokens separated by single spaces).
    let mut spans = Vec::with_capacity(tokens.len());
    let mut at = 0usize;
    for t in tokens {
        spans.push((at, at + t.len()));
        at += t.len() + 1;
    }
    (1..=max)
        .map(|n| {
            spans
                .windows(n)
                .filter_map(|w| match (w.first(), w.last()) {
                    (Some(first), Some(last)) => joined.get(first.0..last.1),
                    _ => None,
                })
                .collect()
        })
        .collect()
}

/// Occurrence counts of a list of grams.
fn counts<K: Hash + Eq + Copy>(grams: &[K]) -> FxHashMap<K, u32> {
    let mut out = FxHashMap::with_capacity_and_hasher(grams.len(), Default::default());
    for &g in grams {
        *out.entry(g).or_insert(0) += 1;
    }
    out
}

/// Σ over distinct grams of min(occurrences in `grams`, `available[gram]`), consuming
/// `available`: each occurrence takes one of the gram's remaining counts while any is left.
fn clipped_matches<K: Hash + Eq + Copy>(grams: &[K], available: &mut FxHashMap<K, u32>) -> u64 {
    let mut matched = 0u64;
    for g in grams {
        if let Some(left) = available.get_mut(g) {
            if *left > 0 {
                *left -= 1;
                matched += 1;
            }
        }
    }
    matched
}

/// Matches of `hyp` grams in `reference` grams (clipped counts; 0 when either is empty).
fn order_matches<K: Hash + Eq + Copy>(hyp: &[K], reference: &[K]) -> u64 {
    if hyp.is_empty() || reference.is_empty() {
        0
    } else {
        clipped_matches(hyp, &mut counts(reference))
    }
}

/// BLEU statistics of one hypothesis against its references.
pub fn bleu_stats(hyp: &str, refs: &[&str]) -> [u64; BLEU_STATS] {
    let ref_tokens: Vec<String> = refs.iter().map(|r| tokenize_13a(r)).collect();
    let mut ref_lens = Vec::with_capacity(refs.len());
    // Each gram's largest count in any one reference (the clipping limit).
    let mut ref_counts: Vec<FxHashMap<&str, u32>> = vec![FxHashMap::default(); BLEU_ORDER];
    for joined in &ref_tokens {
        let tokens: Vec<&str> = joined.split(' ').filter(|t| !t.is_empty()).collect();
        ref_lens.push(tokens.len() as u64);
        for (merged, grams) in ref_counts
            .iter_mut()
            .zip(word_ngrams(&tokens, joined, BLEU_ORDER))
        {
            if merged.is_empty() {
                *merged = counts(&grams);
                continue;
            }
            for (gram, count) in counts(&grams) {
                let slot = merged.entry(gram).or_insert(0);
                *slot = (*slot).max(count);
            }
        }
    }
    let hyp_joined = tokenize_13a(hyp);
    let hyp_tokens: Vec<&str> = hyp_joined.split(' ').filter(|t| !t.is_empty()).collect();
    let hyp_len = hyp_tokens.len() as u64;
    let mut closest: Option<(u64, u64)> = None; // (difference, length)
    for &len in &ref_lens {
        let diff = hyp_len.abs_diff(len);
        closest = match closest {
            Some((d, l)) if diff > d || (diff == d && len >= l) => Some((d, l)),
            _ => Some((diff, len)),
        };
    }
    let mut out = [0u64; BLEU_STATS];
    out[0] = hyp_len;
    // sacrebleu's closest length is -1 without references; statistics are unsigned here and
    // every caller passes at least one reference.
    out[1] = closest.map_or(0, |(_, l)| l);
    for (n, (grams, limits)) in word_ngrams(&hyp_tokens, &hyp_joined, BLEU_ORDER)
        .iter()
        .zip(ref_counts.iter_mut())
        .enumerate()
    {
        out[2 + BLEU_ORDER + n] = grams.len() as u64;
        out[2 + n] = clipped_matches(grams, limits);
    }
    out
}

/// chrF's word tokens: whitespace-split words with one leading or trailing ASCII punctuation
/// mark split off (trailing first).
fn chrf_words(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for w in py_split(text) {
        let mut chars = w.chars();
        let (first, last) = (chars.next(), w.chars().next_back());
        if w.chars().nth(1).is_none() {
            out.push(w);
        } else if let Some(l) = last.filter(|c| c.is_ascii_punctuation()) {
            out.push(&w[..w.len() - l.len_utf8()]);
            out.push(&w[w.len() - l.len_utf8()..]);
        } else if let Some(f) = first.filter(|c| c.is_ascii_punctuation()) {
            out.push(&w[..f.len_utf8()]);
            out.push(&w[f.len_utf8()..]);
        } else {
            out.push(w);
        }
    }
    out
}

/// A text prepared for chrF: its characters without whitespace (code points, for character
/// n-grams) and its chrF words joined by spaces (for word n-grams).
struct ChrfText {
    chars: Vec<u32>,
    words: String,
}

/// Bits of one code point (at most U+10FFFF) in a packed character n-gram.
const CHAR_BITS: u32 = 21;

impl ChrfText {
    fn new(text: &str) -> Self {
        let words = chrf_words(text);
        Self {
            chars: text
                .chars()
                .filter(|&c| !is_py_space(c))
                .map(u32::from)
                .collect(),
            words: words.join(" "),
        }
    }

    /// The character n-grams of order `n` (1..=CHAR_ORDER), each its code points packed into
    /// one integer (6 × 21 bits fit in 128: equal keys are equal strings), in text order.
    fn char_grams(&self, n: usize) -> Vec<u128> {
        self.chars
            .windows(n)
            .map(|w| {
                w.iter()
                    .fold(0u128, |key, &c| (key << CHAR_BITS) | u128::from(c))
            })
            .collect()
    }

    /// The word n-grams (n = 1..=WORD_ORDER) as string slices, one list per order.
    fn word_grams(&self) -> Vec<Vec<&str>> {
        let tokens: Vec<&str> = self.words.split(' ').filter(|t| !t.is_empty()).collect();
        word_ngrams(&tokens, &self.words, WORD_ORDER)
    }
}

/// chrF sentence F-score (0–100) of (hyp, ref, match) triples, computed in sacrebleu's
/// operation order, so the float is identical to its sentence-level chrF++.
pub fn chrf_f_score(stats: &[u64; CHRF_STATS]) -> f64 {
    let eps = 1e-16;
    let factor = BETA * BETA;
    let (mut avg_prec, mut avg_rec, mut effective) = (0.0f64, 0.0f64, 0u32);
    for t in stats.chunks_exact(3) {
        let (n_hyp, n_ref, n_match) = (t[0], t[1], t[2]);
        let prec = if n_hyp > 0 {
            n_match as f64 / n_hyp as f64
        } else {
            eps
        };
        let rec = if n_ref > 0 {
            n_match as f64 / n_ref as f64
        } else {
            eps
        };
        if n_hyp > 0 && n_ref > 0 {
            avg_prec += prec;
            avg_rec += rec;
            effective += 1;
        }
    }
    if effective == 0 {
        avg_prec = 0.0;
        avg_rec = 0.0;
    } else {
        avg_prec /= f64::from(effective);
        avg_rec /= f64::from(effective);
    }
    if avg_prec + avg_rec != 0.0 {
        let mut score = (1.0 + factor) * avg_prec * avg_rec;
        score /= (factor * avg_prec) + avg_rec;
        100.0 * score
    } else {
        0.0
    }
}

/// chrF++ statistics of one hypothesis against its references (the best-scoring reference's).
pub fn chrf_stats(hyp: &str, refs: &[&str]) -> [u64; CHRF_STATS] {
    let hyp_text = ChrfText::new(hyp);
    let hyp_chars: Vec<Vec<u128>> = (1..=CHAR_ORDER).map(|n| hyp_text.char_grams(n)).collect();
    let hyp_words = hyp_text.word_grams();
    let mut best = [0u64; CHRF_STATS];
    let mut best_f = -1.0f64;
    for r in refs {
        let ref_text = ChrfText::new(r);
        let mut stats = [0u64; CHRF_STATS];
        // (hypothesis count, reference count, matches) of each order: characters, then words.
        let mut put = |k: usize, n_hyp: usize, n_ref: usize, matched: u64| {
            stats[3 * k] = if n_ref == 0 { 0 } else { n_hyp as u64 };
            stats[3 * k + 1] = n_ref as u64;
            stats[3 * k + 2] = matched;
        };
        for (k, h) in hyp_chars.iter().enumerate() {
            let rg = ref_text.char_grams(k + 1);
            put(k, h.len(), rg.len(), order_matches(h, &rg));
        }
        for (k, (h, rg)) in hyp_words.iter().zip(ref_text.word_grams()).enumerate() {
            put(CHAR_ORDER + k, h.len(), rg.len(), order_matches(h, &rg));
        }
        let f = chrf_f_score(&stats);
        if f > best_f {
            best_f = f;
            best = stats;
        }
    }
    best
}

/// BLEU and chrF++ statistics of every segment, in parallel.
#[allow(clippy::type_complexity)]
pub fn segment_stats<S: AsRef<str> + Sync>(
    hyps: &[S],
    refs: &[Vec<S>],
) -> Vec<([u64; BLEU_STATS], [u64; CHRF_STATS])> {
    hyps.par_iter()
        .zip(refs)
        .with_min_len(16)
        .map(|(h, rs)| {
            let rs: Vec<&str> = rs.iter().map(AsRef::as_ref).collect();
            (bleu_stats(h.as_ref(), &rs), chrf_stats(h.as_ref(), &rs))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenize_13a_splits_symbols_and_keeps_decimals() {
        assert_eq!(
            tokenize_13a("Hello, world! It's 3.14."),
            "Hello , world ! It's 3.14 ."
        );
        assert_eq!(tokenize_13a("a-b 1-2 &amp;lt; x"), "a-b 1 - 2 < x");
        assert_eq!(tokenize_13a("end.\u{1f}  "), "end .");
        assert_eq!(tokenize_13a(""), "");
    }

    #[test]
    fn bleu_stats_clip_by_the_largest_reference_count() {
        let s = bleu_stats("the the the cat", &["the cat", "the the dog"]);
        // hyp 4 tokens; refs 2 and 3 tokens: 3 is closer
        assert_eq!(&s[..2], &[4, 3]);
        assert_eq!(s[2], 3); // "the" x2 (second ref) + "cat"
        assert_eq!(s[6], 4);
    }

    #[test]
    fn chrf_words_split_one_punctuation_mark() {
        assert_eq!(
            chrf_words("(hi) x. .y a"),
            vec!["(hi", ")", "x", ".", ".", "y", "a"]
        );
    }

    #[test]
    fn chrf_stats_report_zero_hypothesis_count_for_an_empty_reference_order() {
        let s = chrf_stats("ab", &["a"]);
        // order 1: hyp a,b (2), ref a (1), match 1; order 2: reference has no bigram
        assert_eq!(&s[..6], &[2, 1, 1, 0, 0, 0]);
    }
}
