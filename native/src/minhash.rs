//! The MinHash near-duplicate lens (docs/exposure.md, "MinHash lens"): an approximation of the
//! Jaccard exposure that looks at a few candidate rows per query instead of counting grams.
//!
//! A text's gram set (the same character n-grams as the exact search) is summarised by
//! one-permutation hashing (Li, Owen and Zhang, 2012): each gram's xxh3-64 hash picks one of
//! `bins` bins by its high 32 bits and offers its low 32 bits, the bin keeping the smallest;
//! empty bins borrow the value of a filled bin by optimal densification (Shrivastava, 2017), so
//! two signatures agree in a bin with probability equal to the sets' Jaccard similarity.
//! Locality-sensitive hashing by banding (`bands` bands of `bins / bands` bins) finds
//! candidates: rows agreeing with the query on every bin of some band. A candidate's score is
//! the share of bins the two signatures agree in; exact flags are string equality, as in the
//! exact search, and override the estimate.

use rayon::prelude::*;
use xxhash_rust::xxh3::{xxh3_128, xxh3_64, xxh3_64_with_seed};

use crate::retrieval::{
    for_each_gram, AuditRow, Hit, Orders, Ratio, Result, RetrievalError, Stats, TargetHit,
};

/// A text's MinHash signature: one value per bin (None for the empty text, which has no grams).
type Signature = Option<Vec<u32>>;

/// The signature of `text` over `bins` bins.
fn signature(text: &str, orders: &Orders, bins: usize, bounds: &mut Vec<usize>) -> Signature {
    let mut values = vec![u32::MAX; bins];
    let mut filled = vec![false; bins];
    let mut any = false;
    for_each_gram(text, orders, bounds, |gram| {
        let h = xxh3_64(gram.as_bytes());
        let bin = (((h >> 32) * bins as u64) >> 32) as usize;
        if let (Some(v), Some(f)) = (values.get_mut(bin), filled.get_mut(bin)) {
            *v = (*v).min(h as u32);
            *f = true;
            any = true;
        }
    });
    if !any {
        return None;
    }
    let original = values.clone();
    for i in 0..bins {
        if filled[i] {
            continue;
        }
        // Optimal densification: probe bins in an order fixed by (i, attempt) until a filled one.
        for attempt in 0u64.. {
            let probe = xxh3_64_with_seed(&(i as u64).to_le_bytes(), attempt);
            let j = (((probe >> 32) * bins as u64) >> 32) as usize;
            if filled[j] {
                values[i] = original[j];
                break;
            }
        }
    }
    Some(values)
}

/// The share of bins two signatures agree in; 1 for two empty texts, 0 for one.
fn agreement(a: Option<&[u32]>, b: Option<&[u32]>) -> Ratio {
    match (a, b) {
        (None, None) => Ratio { num: 1, den: 1 },
        (Some(a), Some(b)) => Ratio {
            num: a.iter().zip(b).filter(|(x, y)| x == y).count() as u64,
            den: a.len() as u64,
        },
        _ => Ratio::ZERO,
    }
}

/// One side of the training corpus, laid out flat (no allocation per row): every row's
/// signature in one buffer, each band's bucket keys sorted beside their rows, and the hashes of
/// the exact texts sorted beside theirs. About 0.9 KiB per row at 128 bins and 32 bands, a third
/// of a hash map of lists per band.
struct Side {
    bins: usize,
    /// `bins` values per row, row after row (a row without grams holds zeros, unused).
    values: Vec<u32>,
    /// Whether each row has a signature (an empty text has none).
    present: Vec<bool>,
    /// Per band: the rows' band keys ascending, and the row of each (ascending within a key).
    band_keys: Vec<Vec<u64>>,
    band_rows: Vec<Vec<u32>>,
    /// Each row's text hash, ascending, and its row (ascending within a hash).
    exact_keys: Vec<u128>,
    exact_rows: Vec<u32>,
}

fn band_key(values: &[u32]) -> u64 {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    xxh3_64(&bytes)
}

/// Keys and rows sorted together by (key, row), as two columns.
fn sorted_columns<K: Ord + Copy + Send>(mut pairs: Vec<(K, u32)>) -> (Vec<K>, Vec<u32>) {
    pairs.par_sort_unstable();
    pairs.into_iter().unzip()
}

/// The rows beside the keys equal to `key` (keys ascending).
fn rows_of<'a, K: Ord>(keys: &[K], rows: &'a [u32], key: &K) -> &'a [u32] {
    let lo = keys.partition_point(|k| k < key);
    let hi = lo + keys[lo..].partition_point(|k| k == key);
    &rows[lo..hi]
}

impl Side {
    fn build<S: AsRef<str> + Sync>(
        texts: &[S],
        orders: &Orders,
        bins: usize,
        bands: usize,
    ) -> Self {
        let mut values = vec![0u32; texts.len() * bins];
        let mut present = vec![false; texts.len()];
        values
            .par_chunks_mut(bins.max(1))
            .zip(present.par_iter_mut())
            .zip(texts.par_iter())
            .for_each_init(Vec::new, |bounds, ((into, has), text)| {
                if let Some(sig) = signature(text.as_ref(), orders, bins, bounds) {
                    into.copy_from_slice(&sig);
                    *has = true;
                }
            });
        let width = bins / bands;
        let (band_keys, band_rows): (Vec<Vec<u64>>, Vec<Vec<u32>>) = (0..bands)
            .into_par_iter()
            .map(|band| {
                let pairs: Vec<(u64, u32)> = present
                    .iter()
                    .enumerate()
                    .filter(|(_, has)| **has)
                    .map(|(row, _)| {
                        let at = row * bins + band * width;
                        (band_key(&values[at..at + width]), row as u32)
                    })
                    .collect();
                sorted_columns(pairs)
            })
            .unzip();
        let exact: Vec<(u128, u32)> = texts
            .par_iter()
            .enumerate()
            .map(|(row, t)| (xxh3_128(t.as_ref().as_bytes()), row as u32))
            .collect();
        let (exact_keys, exact_rows) = sorted_columns(exact);
        Self {
            bins,
            values,
            present,
            band_keys,
            band_rows,
            exact_keys,
            exact_rows,
        }
    }

    fn rows(&self) -> usize {
        self.present.len()
    }

    /// A row's signature (None for an empty text, or a row out of range).
    fn signature_of(&self, row: u32) -> Option<&[u32]> {
        let row = row as usize;
        if !*self.present.get(row)? {
            return None;
        }
        self.values.get(row * self.bins..(row + 1) * self.bins)
    }

    /// Rows sharing a band with `sig` (appended; not sorted).
    fn candidates(&self, sig: &Signature, width: usize, into: &mut Vec<u32>) {
        if let Some(values) = sig {
            for (band, (keys, rows)) in self.band_keys.iter().zip(&self.band_rows).enumerate() {
                let key = band_key(&values[band * width..(band + 1) * width]);
                into.extend_from_slice(rows_of(keys, rows, &key));
            }
        }
    }

    fn score(&self, row: u32, sig: &Signature) -> Ratio {
        if row as usize >= self.rows() {
            return Ratio::ZERO;
        }
        agreement(sig.as_deref(), self.signature_of(row))
    }

    fn exact_rows(&self, text: &str) -> &[u32] {
        rows_of(
            &self.exact_keys,
            &self.exact_rows,
            &xxh3_128(text.as_bytes()),
        )
    }

    /// What the checksum covers of this side, in its historical layout: each row's signature
    /// (0, or 1 and its values), then each exact text's hash, its rows and 0xFF.
    fn checksum_bytes(&self, bytes: &mut Vec<u8>) {
        for row in 0..self.rows() {
            match self.signature_of(row as u32) {
                None => bytes.push(0),
                Some(values) => {
                    bytes.push(1);
                    values
                        .iter()
                        .for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
                }
            }
        }
        let mut at = 0;
        while at < self.exact_keys.len() {
            let key = self.exact_keys[at];
            bytes.extend_from_slice(&key.to_le_bytes());
            while at < self.exact_keys.len() && self.exact_keys[at] == key {
                bytes.extend_from_slice(&self.exact_rows[at].to_le_bytes());
                at += 1;
            }
            bytes.push(0xFF);
        }
    }
}

/// The better of two hits: the higher score, then the lower row.
fn better(a: Hit, b: Hit) -> Hit {
    match a.score.cmp_exact(b.score) {
        std::cmp::Ordering::Greater => a,
        std::cmp::Ordering::Less => b,
        std::cmp::Ordering::Equal => {
            if a.row.unwrap_or(u32::MAX) <= b.row.unwrap_or(u32::MAX) {
                a
            } else {
                b
            }
        }
    }
}

/// The best of scored rows (ascending rows): the highest score above 0, the lower row on ties.
fn best_of(scored: impl Iterator<Item = (u32, Ratio)>) -> Hit {
    scored
        .filter(|(_, score)| score.num > 0)
        .fold(Hit::NONE, |best, (row, score)| {
            better(
                best,
                Hit {
                    score,
                    row: Some(row),
                    exact: false,
                },
            )
        })
}

/// A MinHash index over aligned training sources and targets.
pub struct MinHashIndex {
    orders: Orders,
    bins: usize,
    bands: usize,
    source: Side,
    target: Side,
}

impl MinHashIndex {
    /// The index of aligned training `sources` and `targets` (normalised, whitespace collapsed)
    /// with signatures of `bins` bins cut into `bands` bands.
    pub fn build<S: AsRef<str> + Sync>(
        sources: &[S],
        targets: &[S],
        orders: &[i64],
        bins: usize,
        bands: usize,
    ) -> Result<Self> {
        let invalid = |m: String| RetrievalError::InvalidArgument(m);
        if sources.len() != targets.len() {
            return Err(invalid(format!(
                "sources and targets must have the same length, got {} and {}",
                sources.len(),
                targets.len()
            )));
        }
        if bins == 0 || bands == 0 || !bins.is_multiple_of(bands) {
            return Err(invalid(format!(
                "bins ({bins}) must be a positive multiple of bands ({bands})"
            )));
        }
        if u32::try_from(sources.len()).is_err() {
            return Err(invalid("at most 2^32 - 1 training rows".to_string()));
        }
        let orders = Orders::new(orders)?;
        let (source, target) = rayon::join(
            || Side::build(sources, &orders, bins, bands),
            || Side::build(targets, &orders, bins, bands),
        );
        Ok(Self {
            orders,
            bins,
            bands,
            source,
            target,
        })
    }

    /// Training rows.
    pub fn rows(&self) -> usize {
        self.source.rows()
    }

    /// One xxh3-64 checksum of what the index holds: gram orders, bins and bands, and per side
    /// every row's signature and the rows of each exact text (the buckets follow from them).
    pub fn checksum(&self) -> u64 {
        let mut bytes = Vec::new();
        for order in self.orders.as_slice() {
            bytes.extend_from_slice(&(*order as u64).to_le_bytes());
        }
        bytes.extend_from_slice(&(self.bins as u64).to_le_bytes());
        bytes.extend_from_slice(&(self.bands as u64).to_le_bytes());
        for side in [&self.source, &self.target] {
            side.checksum_bytes(&mut bytes);
        }
        xxh3_64(&bytes)
    }

    fn sig(&self, text: &str, bounds: &mut Vec<usize>) -> Signature {
        signature(text, &self.orders, self.bins, bounds)
    }

    /// One side's best hit for `text` (`sig` its signature): an exact row when there is one,
    /// else the best candidate. `candidates` receives the candidates scored (none for an exact
    /// text).
    fn side_hit(&self, side: &Side, text: &str, sig: &Signature, candidates: &mut Vec<u32>) -> Hit {
        candidates.clear();
        if let Some(&row) = side.exact_rows(text).first() {
            return Hit::exact(row);
        }
        side.candidates(sig, self.bins / self.bands, candidates);
        candidates.sort_unstable();
        candidates.dedup();
        best_of(candidates.iter().map(|&row| (row, side.score(row, sig))))
    }

    fn audit_one(&self, source: &str, refs: &[&str], bounds: &mut Vec<usize>) -> (AuditRow, u64) {
        let src_sig = self.sig(source, bounds);
        // Every row either side finds is a candidate for the pair.
        let mut pool = Vec::new();
        let src_hit = self.side_hit(&self.source, source, &src_sig, &mut pool);
        let mut scored = pool.len() as u64;
        let mut target = TargetHit {
            hit: Hit::NONE,
            ref_idx: None,
        };
        let mut scratch = Vec::new();
        let mut ref_sigs = Vec::with_capacity(refs.len());
        for (k, r) in refs.iter().enumerate() {
            let sig = self.sig(r, bounds);
            let hit = self.side_hit(&self.target, r, &sig, &mut scratch);
            scored += scratch.len() as u64;
            pool.extend_from_slice(&scratch);
            if hit.exact {
                // The pair looks at every candidate of both sides, whichever side matched
                // exactly: so a corpus searched in shards finds the pair the whole one finds.
                self.target
                    .candidates(&sig, self.bins / self.bands, &mut pool);
            }
            let chosen = better(target.hit, hit);
            if target.ref_idx.is_none() || chosen != target.hit {
                target = TargetHit {
                    hit: chosen,
                    ref_idx: Some(k as u32),
                };
            }
            ref_sigs.push((sig, self.target.exact_rows(r)));
        }
        // Pair: both sides against the same row; exact when both texts equal that row's.
        let src_exact = self.source.exact_rows(source);
        let exact_pair = ref_sigs
            .iter()
            .filter_map(|(_, rows)| rows.iter().find(|row| src_exact.binary_search(row).is_ok()))
            .min();
        let pair = match exact_pair {
            Some(&row) => Hit::exact(row),
            None => {
                if src_hit.exact {
                    self.source
                        .candidates(&src_sig, self.bins / self.bands, &mut pool);
                }
                pool.extend(src_hit.row);
                pool.extend(target.hit.row);
                pool.sort_unstable();
                pool.dedup();
                let side_score = |exact: &[u32], row: u32, score: Ratio| {
                    if exact.contains(&row) {
                        Ratio::ONE
                    } else {
                        score
                    }
                };
                best_of(pool.iter().map(|&row| {
                    let s = side_score(src_exact, row, self.source.score(row, &src_sig));
                    let t = ref_sigs
                        .iter()
                        .map(|(sig, exact)| side_score(exact, row, self.target.score(row, sig)))
                        .fold(Ratio::ZERO, Ratio::max);
                    (row, s.min(t))
                }))
            }
        };
        (
            AuditRow {
                source: src_hit,
                target,
                pair,
            },
            scored,
        )
    }

    /// Source, target and pair hits of each test segment (normalised, whitespace collapsed),
    /// and the candidates scored (in `Stats::candidates_verified`).
    pub fn audit<S: AsRef<str> + Sync>(
        &self,
        sources: &[S],
        refs: &[Vec<S>],
    ) -> Result<(Vec<AuditRow>, Stats)> {
        if sources.len() != refs.len() {
            return Err(RetrievalError::InvalidArgument(format!(
                "sources and refs must have the same length, got {} and {}",
                sources.len(),
                refs.len()
            )));
        }
        let rows: Vec<(AuditRow, u64)> = sources
            .par_iter()
            .zip(refs)
            .map_init(Vec::new, |bounds, (s, rs)| {
                let rs: Vec<&str> = rs.iter().map(AsRef::as_ref).collect();
                self.audit_one(s.as_ref(), &rs, bounds)
            })
            .collect();
        let stats = Stats {
            candidates_verified: rows.iter().map(|r| r.1).sum(),
            ..Stats::default()
        };
        Ok((rows.into_iter().map(|r| r.0).collect(), stats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grams(text: &str) -> std::collections::HashSet<String> {
        let orders = Orders::new(&[3, 4, 5]).expect("orders");
        let mut out = std::collections::HashSet::new();
        for_each_gram(text, &orders, &mut Vec::new(), |g| {
            out.insert(g.to_string());
        });
        out
    }

    fn jaccard(a: &str, b: &str) -> f64 {
        let (a, b) = (grams(a), grams(b));
        if a.is_empty() && b.is_empty() {
            return 1.0;
        }
        a.intersection(&b).count() as f64 / a.union(&b).count() as f64
    }

    #[test]
    fn agreement_estimates_jaccard() {
        let orders = Orders::new(&[3, 4, 5]).expect("orders");
        let base = "the quick brown fox jumps over the lazy dog near the river bank today";
        let mut errors = Vec::new();
        for cut in 0..40 {
            let other = format!("{} and {}", &base[cut..], &base[..cut]);
            let (a, b) = (
                signature(base, &orders, 256, &mut Vec::new()),
                signature(&other, &orders, 256, &mut Vec::new()),
            );
            errors.push(
                (agreement(a.as_deref(), b.as_deref()).to_f64() - jaccard(base, &other)).abs(),
            );
        }
        let mean = errors.iter().sum::<f64>() / errors.len() as f64;
        assert!(mean < 0.05, "mean absolute error {mean}");
        let same = signature(base, &orders, 128, &mut Vec::new());
        assert_eq!(
            agreement(same.as_deref(), same.as_deref()),
            Ratio { num: 128, den: 128 }
        );
        assert_eq!(agreement(None, None), Ratio::ONE);
        assert_eq!(agreement(same.as_deref(), None), Ratio::ZERO);
    }

    #[test]
    fn near_duplicates_are_found_and_exact_rows_win() {
        let sources = [
            "the cat sat on the mat today",
            "a completely different line",
            "the cat sat on the mat",
        ];
        let targets = ["le chat", "autre", "le chat"];
        let index = MinHashIndex::build(&sources, &targets, &[3, 4, 5], 128, 32).expect("index");
        let (rows, stats) = index
            .audit(
                &["the cat sat on the mat", "the cat sat on the mat today!"],
                &[vec!["le chat"], vec!["zzz"]],
            )
            .expect("audit");
        assert_eq!(
            rows[0].source,
            Hit {
                score: Ratio::ONE,
                row: Some(2),
                exact: true
            }
        );
        assert_eq!((rows[0].pair.row, rows[0].pair.exact), (Some(2), true));
        assert_eq!(rows[1].source.row, Some(0));
        assert!(!rows[1].source.exact && rows[1].source.score.to_f64() > 0.7);
        assert!(stats.candidates_verified > 0);
        assert!(MinHashIndex::build(&sources, &targets, &[3], 100, 32).is_err());
    }

    #[test]
    fn the_checksum_follows_the_content() {
        let build = |sources: &[&str], bins| {
            MinHashIndex::build(sources, &["x", "y"], &[3, 4, 5], bins, 32)
                .expect("index")
                .checksum()
        };
        let first = build(&["the cat sat", "a dog"], 128);
        assert_eq!(build(&["the cat sat", "a dog"], 128), first);
        assert_ne!(build(&["the cat sat", "a dog!"], 128), first);
        assert_ne!(build(&["a dog", "the cat sat"], 128), first);
        assert_ne!(build(&["the cat sat", "a dog"], 64), first);
    }
}
