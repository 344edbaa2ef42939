//! cyzil-compatible BLEU and token edit distance on pre-tokenised sentences.
//!
//! Results are float32, computed with the same float32 operations in the same order as
//! cyzil 0.3.1, so they are bit-identical to it wherever cyzil is defined:
//!
//! * n-gram precision of order k: `p_k = matches_k as f32 / totals_k as f32` (clipped matches
//!   over candidate n-grams, each summed over the corpus);
//! * precision: `exp(Σ_k (ln(p_k) / N))` with float32 `ln`, division, sum and `exp`;
//! * brevity penalty: `r = ref_len as f32 / cand_len as f32`, then `exp(min(1 − r, 0))` with the
//!   subtraction and `exp` in float64, rounded to float32;
//! * BLEU: `precision * bp` in float32;
//! * edit distance points: `[d as f32, d as f32 / len(reference) as f32]`; the corpus score is
//!   the float32 running sum of each column in order, divided by the number of pairs as f32.
//!
//! Corpus totals are summed in integers; cyzil sums them in float32, which only differs once a
//! total exceeds 2^24 (16,777,216) n-grams or tokens.
//!
//! Where cyzil is undefined or returns garbage we define: an order with zero clipped matches
//! gives precision and BLEU 0 (the brevity penalty is still reported); an empty candidate or
//! reference (summed over the corpus) gives `[0, 0, 0]`; an empty reference normalises the edit
//! distance to 0; an empty corpus has edit distance `[0, 0]`; corpora of different lengths and
//! `max_ngram < 1` are errors. Tokens compare as exact strings (no case folding or other
//! normalisation). Like cyzil, an n-gram is identified by its tokens joined with spaces, so a
//! token that itself contains a space (`"a b"`) is the same n-gram as the bigram `("a", "b")`
//! and counts at the order its joined text spells; pairs without such tokens take a fast path
//! that compares token slices directly, which gives the same counts.

use std::collections::HashMap;
use std::fmt;
use std::hash::Hash;

/// `[precision, brevity penalty, bleu]`.
pub type Bleu = [f32; 3];

/// `[edit distance, edit distance / len(reference)]`.
pub type EditDistance = [f32; 2];

/// Invalid arguments to a cyzil kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CyzilError {
    /// The reference and candidate corpora have different numbers of sentences.
    LengthMismatch {
        references: usize,
        candidates: usize,
    },
    /// `max_ngram` is below 1.
    MaxNgram(i64),
}

impl fmt::Display for CyzilError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::LengthMismatch {
                references,
                candidates,
            } => write!(
                f,
                "reference and candidate corpora must have the same length \
                 ({references} references, {candidates} candidates)"
            ),
            Self::MaxNgram(n) => write!(f, "max_ngram must be at least 1, got {n}"),
        }
    }
}

impl std::error::Error for CyzilError {}

fn max_order(max_ngram: i64) -> Result<usize, CyzilError> {
    if max_ngram < 1 {
        return Err(CyzilError::MaxNgram(max_ngram));
    }
    // Orders beyond the longest candidate have no n-grams, so saturating changes no score.
    Ok(usize::try_from(max_ngram).unwrap_or(usize::MAX))
}

fn check_lengths(references: usize, candidates: usize) -> Result<(), CyzilError> {
    if references == candidates {
        Ok(())
    } else {
        Err(CyzilError::LengthMismatch {
            references,
            candidates,
        })
    }
}

/// Sufficient statistics of BLEU, summed over sentence pairs.
#[derive(Debug, Clone, Default)]
struct BleuStats {
    /// Clipped n-gram matches per order (index 0 = unigrams); only orders that some candidate
    /// is long enough to have are present, the rest are zero.
    matches: Vec<u64>,
    /// Candidate n-grams per order, as `matches`.
    totals: Vec<u64>,
    ref_len: u64,
    cand_len: u64,
}

/// Every n-gram of orders 1..=`max_order` with its count; the slice length is the order.
fn ngram_counts<T: Hash + Eq>(tokens: &[T], max_order: usize) -> HashMap<&[T], u64> {
    let mut counts = HashMap::new();
    for order in 1..=max_order.min(tokens.len()) {
        for gram in tokens.windows(order) {
            *counts.entry(gram).or_insert(0) += 1;
        }
    }
    counts
}

/// Every n-gram keyed by cyzil's text (each token followed by one space), with its count.
fn joined_ngram_counts<T: AsRef<str>>(tokens: &[T], max_order: usize) -> HashMap<String, u64> {
    let mut counts = HashMap::new();
    for order in 1..=max_order.min(tokens.len()) {
        for gram in tokens.windows(order) {
            let mut key = String::new();
            for token in gram {
                key.push_str(token.as_ref());
                key.push(' ');
            }
            *counts.entry(key).or_insert(0) += 1;
        }
    }
    counts
}

impl BleuStats {
    fn add<T: AsRef<str> + Hash + Eq>(
        &mut self,
        reference: &[T],
        candidate: &[T],
        max_order: usize,
    ) {
        self.ref_len += reference.len() as u64;
        self.cand_len += candidate.len() as u64;
        let orders = max_order.min(candidate.len());
        if self.totals.len() < orders {
            self.totals.resize(orders, 0);
            self.matches.resize(orders, 0);
        }
        for (order, total) in self.totals.iter_mut().enumerate().take(orders) {
            *total += (candidate.len() - order) as u64;
        }
        let spaced = |tokens: &[T]| tokens.iter().any(|t| t.as_ref().contains(' '));
        if spaced(reference) || spaced(candidate) {
            let in_reference = joined_ngram_counts(reference, orders);
            for (key, count) in joined_ngram_counts(candidate, orders) {
                if let Some(&available) = in_reference.get(&key) {
                    // The order is the number of tokens the joined text spells.
                    let order = key.matches(' ').count();
                    if (1..=orders).contains(&order) {
                        self.matches[order - 1] += count.min(available);
                    }
                }
            }
            return;
        }
        let in_reference = ngram_counts(reference, orders);
        for (gram, count) in ngram_counts(candidate, orders) {
            if let Some(&available) = in_reference.get(gram) {
                self.matches[gram.len() - 1] += count.min(available);
            }
        }
    }

    fn score(&self, max_order: usize) -> Bleu {
        if self.ref_len == 0 || self.cand_len == 0 {
            return [0.0; 3];
        }
        let defined = self.matches.len() == max_order && self.matches.iter().all(|&m| m > 0);
        let precision = if defined {
            let n = max_order as f32;
            let log_sum = self
                .matches
                .iter()
                .zip(&self.totals)
                .fold(0.0f32, |sum, (&m, &t)| sum + (m as f32 / t as f32).ln() / n);
            log_sum.exp()
        } else {
            0.0
        };
        let ratio = self.ref_len as f32 / self.cand_len as f32;
        let bp = (1.0 - f64::from(ratio)).min(0.0).exp() as f32;
        [precision, bp, precision * bp]
    }
}

fn pair_score<T: AsRef<str> + Hash + Eq>(
    reference: &[T],
    candidate: &[T],
    max_order: usize,
) -> Bleu {
    let mut stats = BleuStats::default();
    stats.add(reference, candidate, max_order);
    stats.score(max_order)
}

/// Sentence BLEU of one candidate against one reference.
pub fn bleu_sentence<T: AsRef<str> + Hash + Eq>(
    reference: &[T],
    candidate: &[T],
    max_ngram: i64,
) -> Result<Bleu, CyzilError> {
    Ok(pair_score(reference, candidate, max_order(max_ngram)?))
}

/// Corpus BLEU: matches, n-gram totals and lengths summed over all pairs, then scored once.
pub fn bleu_corpus<S: AsRef<[T]>, T: AsRef<str> + Hash + Eq>(
    references: &[S],
    candidates: &[S],
    max_ngram: i64,
) -> Result<Bleu, CyzilError> {
    check_lengths(references.len(), candidates.len())?;
    let max_order = max_order(max_ngram)?;
    let mut stats = BleuStats::default();
    for (reference, candidate) in references.iter().zip(candidates) {
        stats.add(reference.as_ref(), candidate.as_ref(), max_order);
    }
    Ok(stats.score(max_order))
}

/// Sentence BLEU of every pair of the corpora.
pub fn bleu_points<S: AsRef<[T]>, T: AsRef<str> + Hash + Eq>(
    references: &[S],
    candidates: &[S],
    max_ngram: i64,
) -> Result<Vec<Bleu>, CyzilError> {
    check_lengths(references.len(), candidates.len())?;
    let max_order = max_order(max_ngram)?;
    Ok(references
        .iter()
        .zip(candidates)
        .map(|(reference, candidate)| pair_score(reference.as_ref(), candidate.as_ref(), max_order))
        .collect())
}

/// Levenshtein distance between two token sequences (insert, delete, substitute cost 1).
pub fn edit_distance_sentence<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut previous: Vec<usize> = (0..=short.len()).collect();
    let mut current = vec![0; short.len() + 1];
    for (j, y) in long.iter().enumerate() {
        current[0] = j + 1;
        for (i, x) in short.iter().enumerate() {
            current[i + 1] = if x == y {
                previous[i]
            } else {
                1 + previous[i].min(previous[i + 1]).min(current[i])
            };
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[short.len()]
}

/// Edit distance and reference-normalised edit distance of every pair of the corpora.
pub fn edit_distance_points<S: AsRef<[T]>, T: PartialEq>(
    references: &[S],
    candidates: &[S],
) -> Result<Vec<EditDistance>, CyzilError> {
    check_lengths(references.len(), candidates.len())?;
    Ok(references
        .iter()
        .zip(candidates)
        .map(|(reference, candidate)| {
            let (reference, candidate) = (reference.as_ref(), candidate.as_ref());
            let distance = edit_distance_sentence(reference, candidate) as f32;
            let normalised = if reference.is_empty() {
                0.0
            } else {
                distance / reference.len() as f32
            };
            [distance, normalised]
        })
        .collect())
}

/// Mean of [`edit_distance_points`] over the corpus (`[0, 0]` for an empty corpus).
pub fn edit_distance_corpus<S: AsRef<[T]>, T: PartialEq>(
    references: &[S],
    candidates: &[S],
) -> Result<EditDistance, CyzilError> {
    let points = edit_distance_points(references, candidates)?;
    if points.is_empty() {
        return Ok([0.0; 2]);
    }
    let [distance, normalised] = points
        .iter()
        .fold([0.0f32; 2], |[d, n], [pd, pn]| [d + pd, n + pn]);
    let pairs = points.len() as f32;
    Ok([distance / pairs, normalised / pairs])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    fn doc_corpora() -> (Vec<Vec<&'static str>>, Vec<Vec<&'static str>>) {
        (
            vec![
                words("this is a test sentence"),
                words("I see an apple and a cat"),
            ],
            vec![
                words("this is a test sentence"),
                words("I see an apple and a dog"),
            ],
        )
    }

    fn as_f64<const N: usize>(values: [f32; N]) -> [f64; N] {
        values.map(f64::from)
    }

    #[test]
    fn bleu_matches_cyzil_documentation_examples() {
        let (refs, cands) = doc_corpora();
        let corpus = bleu_corpus(&refs, &cands, 4).unwrap();
        assert_eq!(
            as_f64(corpus),
            [0.8806841373443604, 1.0, 0.8806841373443604]
        );
        let points = bleu_points(&refs, &cands, 4).unwrap();
        assert_eq!(as_f64(points[0]), [1.0, 1.0, 1.0]);
        assert_eq!(
            as_f64(points[1]),
            [0.809106707572937, 1.0, 0.809106707572937]
        );
    }

    #[test]
    fn brevity_penalty_matches_cyzil_for_short_candidate() {
        let score = bleu_sentence(
            &words("the cat sat on the red mat"),
            &words("the cat sat on the mat"),
            4,
        )
        .unwrap();
        assert_eq!(
            as_f64(score),
            [0.7952707409858704, 0.8464817404747009, 0.6731821894645691]
        );
    }

    #[test]
    fn clipping_counts_each_reference_ngram_at_most_as_often_as_it_occurs() {
        let score = bleu_sentence(
            &words("the cat is on the mat"),
            &words("the the the the the the the"),
            1,
        )
        .unwrap();
        assert_eq!(as_f64(score), [0.2857142984867096, 1.0, 0.2857142984867096]);
    }

    #[test]
    fn order_without_matches_gives_zero_precision_but_keeps_brevity_penalty() {
        let score = bleu_sentence(&words("a b c d"), &words("a c b d"), 4).unwrap();
        assert_eq!(score, [0.0, 1.0, 0.0]);
        let short = bleu_sentence(&words("a b c"), &words("a b"), 4).unwrap();
        assert_eq!(short[0], 0.0);
        assert_eq!(short[2], 0.0);
        assert!(short[1] > 0.0 && short[1] < 1.0);
    }

    #[test]
    fn empty_sentences_score_zero() {
        let empty: [&str; 0] = [];
        assert_eq!(bleu_sentence(&empty, &["a"], 4).unwrap(), [0.0; 3]);
        assert_eq!(bleu_sentence(&["a"], &empty, 4).unwrap(), [0.0; 3]);
        assert_eq!(bleu_sentence(&empty, &empty, 4).unwrap(), [0.0; 3]);
        let no_pairs: [Vec<&str>; 0] = [];
        assert_eq!(bleu_corpus(&no_pairs, &no_pairs, 4).unwrap(), [0.0; 3]);
        assert!(bleu_points(&no_pairs, &no_pairs, 4).unwrap().is_empty());
        assert_eq!(
            bleu_corpus(&[vec!["a", "b"]], &[vec![]], 4).unwrap(),
            [0.0; 3]
        );
    }

    #[test]
    fn corpus_sums_statistics_before_scoring() {
        // The first pair alone has no 3- or 4-grams; the corpus totals do.
        let refs = [words("a b"), words("the cat sat on the mat")];
        let corpus = bleu_corpus(&refs, &refs, 4).unwrap();
        assert_eq!(corpus, [1.0, 1.0, 1.0]);
        // Lengths are summed: 8+4 reference tokens against 4+8 candidate tokens, so BP = 1.
        let refs = [words("a b c d e f g h"), words("p q r s")];
        let cands = [words("a b c d"), words("p q r s t u v w")];
        assert_eq!(bleu_corpus(&refs, &cands, 2).unwrap()[1], 1.0);
    }

    #[test]
    fn token_with_a_space_counts_as_the_ngram_it_spells_like_cyzil() {
        // cyzil keys n-grams by space-joined text: the token "a b" is the bigram ("a", "b").
        let score = bleu_sentence(&["x", "a", "b"], &["x", "a b"], 2).unwrap();
        assert_eq!(score, [0.707_106_77, 0.606_530_66, 0.428_881_94]);
    }

    #[test]
    fn tokens_compare_as_exact_strings() {
        let score = bleu_sentence(&["The", "cat"], &["the", "cat"], 1).unwrap();
        assert_eq!(score[0], 0.5);
    }

    #[test]
    fn invalid_arguments_are_errors() {
        let one = [vec!["a"]];
        let two = [vec!["a"], vec!["b"]];
        let mismatch = CyzilError::LengthMismatch {
            references: 1,
            candidates: 2,
        };
        assert_eq!(bleu_corpus(&one, &two, 4), Err(mismatch.clone()));
        assert_eq!(bleu_points(&one, &two, 4), Err(mismatch.clone()));
        assert_eq!(edit_distance_corpus(&one, &two), Err(mismatch.clone()));
        assert_eq!(edit_distance_points(&one, &two), Err(mismatch.clone()));
        assert_eq!(bleu_corpus(&one, &one, 0), Err(CyzilError::MaxNgram(0)));
        assert_eq!(
            bleu_sentence(&["a"], &["a"], -1),
            Err(CyzilError::MaxNgram(-1))
        );
        assert!(bleu_points(&one, &one, i64::MIN).is_err());
        assert_eq!(
            mismatch.to_string(),
            "reference and candidate corpora must have the same length \
             (1 references, 2 candidates)"
        );
    }

    #[test]
    fn huge_max_ngram_scores_zero_without_allocating_per_order() {
        let score = bleu_sentence(&["a", "b"], &["a", "b"], i64::MAX).unwrap();
        assert_eq!(score, [0.0, 1.0, 0.0]);
    }

    #[test]
    fn edit_distance_is_levenshtein_on_tokens() {
        let d = edit_distance_sentence::<&str>;
        assert_eq!(d(&words("I have a pen"), &words("I have a dog")), 1);
        assert_eq!(d(&words("a b c d"), &words("a c b d")), 2);
        assert_eq!(d(&words("k i t t e n"), &words("s i t t i n g")), 3);
        assert_eq!(d(&[], &words("a b c")), 3);
        assert_eq!(d(&words("a b c"), &[]), 3);
        assert_eq!(d(&[], &[]), 0);
    }

    #[test]
    fn edit_distance_points_and_corpus_match_cyzil() {
        let (refs, cands) = doc_corpora();
        let points = edit_distance_points(&refs, &cands).unwrap();
        assert_eq!(as_f64(points[1]), [1.0, 0.1428571492433548]);
        let corpus = edit_distance_corpus(&refs, &cands).unwrap();
        assert_eq!(as_f64(corpus), [0.5, 0.0714285746216774]);
        let refs = [vec![], words("a b")];
        let cands = [words("x y"), words("a c")];
        assert_eq!(
            edit_distance_points(&refs, &cands).unwrap(),
            [[2.0, 0.0], [1.0, 0.5]]
        );
        assert_eq!(edit_distance_corpus(&refs, &cands).unwrap(), [1.5, 0.25]);
        let none: [Vec<&str>; 0] = [];
        assert_eq!(edit_distance_corpus(&none, &none).unwrap(), [0.0, 0.0]);
    }
}
