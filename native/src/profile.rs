//! Character-trigram count profiles and their cosine similarity: the arithmetic of the audit's
//! direction check (docs/exposure.md). Texts arrive lowercased.

use rustc_hash::FxHashMap;

/// Three consecutive characters (Unicode scalar values).
pub type Trigram = [char; 3];

/// Trigram counts of a sample of texts.
pub type Profile = FxHashMap<Trigram, u64>;

/// Counts of the character trigrams of every text padded with one space on each side.
pub fn trigram_profile<S: AsRef<str>>(texts: &[S]) -> Profile {
    let mut counts = Profile::default();
    let mut padded: Vec<char> = Vec::new();
    for text in texts {
        padded.clear();
        padded.push(' ');
        padded.extend(text.as_ref().chars());
        padded.push(' ');
        for w in padded.windows(3) {
            if let [a, b, c] = *w {
                *counts.entry([a, b, c]).or_insert(0) += 1;
            }
        }
    }
    counts
}

/// Sum of squared counts, exact.
fn squared_norm(p: &Profile) -> u128 {
    p.values().map(|&x| u128::from(x) * u128::from(x)).sum()
}

/// Cosine similarity of two profiles, 0 when either is empty. The dot product and the norms are
/// exact integers, rounded once each to `f64`, so the result does not depend on hash order.
pub fn cosine(a: &Profile, b: &Profile) -> f64 {
    let (small, large) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let dot: u128 = small
        .iter()
        .filter_map(|(g, &x)| large.get(g).map(|&y| u128::from(x) * u128::from(y)))
        .sum();
    let norm = (squared_norm(a) as f64).sqrt() * (squared_norm(b) as f64).sqrt();
    if norm == 0.0 {
        0.0
    } else {
        dot as f64 / norm
    }
}

/// Cosine similarity of the test texts' profile to each training side's.
pub fn side_similarities<S: AsRef<str> + Sync>(
    test: &[S],
    sources: &[S],
    targets: &[S],
) -> (f64, f64) {
    let test = trigram_profile(test);
    let (sources, targets) = rayon::join(|| trigram_profile(sources), || trigram_profile(targets));
    (cosine(&test, &sources), cosine(&test, &targets))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_counts_the_trigrams_of_each_padded_text() {
        let p = trigram_profile(&["ab c", "ab", "x", ""]);
        let want: Profile = [
            ([' ', 'a', 'b'], 2),
            (['a', 'b', ' '], 2),
            (['b', ' ', 'c'], 1),
            ([' ', 'c', ' '], 1),
            ([' ', 'x', ' '], 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(p, want);
    }

    #[test]
    fn trigrams_are_characters_not_bytes() {
        let p = trigram_profile(&["été"]);
        assert_eq!(p.len(), 3);
        assert_eq!(p.get(&['é', 't', 'é']), Some(&1));
    }

    #[test]
    fn cosine_is_one_for_proportional_profiles_and_zero_when_disjoint_or_empty() {
        let a = trigram_profile(&["abc"]);
        let b = trigram_profile(&["abc", "abc"]);
        assert!((cosine(&a, &b) - 1.0).abs() < 1e-15);
        assert_eq!(cosine(&a, &trigram_profile(&["xyz"])), 0.0);
        assert_eq!(cosine(&a, &Profile::default()), 0.0);
    }

    #[test]
    fn cosine_matches_the_definition() {
        // a: " ab"=1, "ab "=1; b: " ab"=2, "ab "=2, " c "=1: dot 4, |a|² 2, |b|² 9.
        let a = trigram_profile(&["ab"]);
        let b = trigram_profile(&["ab", "ab", "c"]);
        assert_eq!(cosine(&a, &b), 4.0 / (2f64.sqrt() * 3.0));
        assert_eq!(cosine(&b, &a), cosine(&a, &b));
    }
}
