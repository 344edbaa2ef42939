//! Brute-force comparison of the engine on small random inputs.

use crate::testing::Rng;
use rustc_hash::FxHashMap;

use super::audit::{AuditRow, Hit, Mode, RetrievalIndex, Search, TargetHit};
use super::grams::{distinct_grams, Orders};
use super::score::{Best, Measure, Ratio};
use super::search::{intersect, Stats};

/// A text's distinct grams as sorted ids (each training gram has one id; a query gram seen in
/// no training text gets an id of its own): set sizes and intersections are those of the gram
/// strings, counted by a merge (`search::intersect`) instead of millions of string hashes.
type Grams = Vec<u32>;

/// Straightforward implementation of every definition, on strings.
struct Brute {
    orders: Orders,
    src: Vec<String>,
    tgt: Vec<String>,
    ids: FxHashMap<String, u32>,
    src_grams: Vec<Grams>,
    tgt_grams: Vec<Grams>,
    measure: Measure,
}

impl Brute {
    fn new(orders: &[i64], src: &[String], tgt: &[String]) -> Self {
        let orders = Orders::new(orders).unwrap();
        let mut ids: FxHashMap<String, u32> = FxHashMap::default();
        let mut intern = |t: &String| {
            gram_ids(&orders, t, |g| match ids.get(g) {
                Some(&id) => id,
                None => {
                    let id = ids.len() as u32;
                    ids.insert(g.to_owned(), id);
                    id
                }
            })
        };
        let src_grams = src.iter().map(&mut intern).collect();
        let tgt_grams = tgt.iter().map(&mut intern).collect();
        Brute {
            orders,
            src: src.to_vec(),
            tgt: tgt.to_vec(),
            ids,
            src_grams,
            tgt_grams,
            measure: Measure::Jaccard,
        }
    }

    fn scored_by(mut self, measure: Measure) -> Self {
        self.measure = measure;
        self
    }

    fn grams(&self, text: &str) -> Grams {
        let mut unseen = self.ids.len() as u32;
        gram_ids(&self.orders, text, |g| {
            self.ids.get(g).copied().unwrap_or_else(|| {
                unseen += 1;
                unseen
            })
        })
    }

    /// The similarity of query grams `a` to row grams `b`, by the measure.
    fn sim(&self, a: &Grams, b: &Grams) -> Ratio {
        let inter = intersect(a, b);
        self.measure.score(inter, a.len() as u64, b.len() as u64)
    }

    fn source(&self, x: &str) -> Hit {
        if let Some(j) = self.src.iter().position(|u| u == x) {
            return Hit {
                score: Ratio::ONE,
                row: Some(j as u32),
                exact: true,
            };
        }
        let gx = self.grams(x);
        let mut best = Best::NONE;
        for (j, gu) in self.src_grams.iter().enumerate() {
            best.offer(self.sim(&gx, gu), j as u32);
        }
        hit(best)
    }

    fn target(&self, refs: &[String]) -> TargetHit {
        for (j, v) in self.tgt.iter().enumerate() {
            if let Some(r) = refs.iter().position(|r| r == v) {
                let hit = Hit {
                    score: Ratio::ONE,
                    row: Some(j as u32),
                    exact: true,
                };
                return TargetHit {
                    hit,
                    ref_idx: Some(r as u32),
                };
            }
        }
        let grs: Vec<Grams> = refs.iter().map(|r| self.grams(r)).collect();
        let (mut best, mut best_ref) = (Best::NONE, None);
        for (j, gv) in self.tgt_grams.iter().enumerate() {
            for (r, gr) in grs.iter().enumerate() {
                if best.offer(self.sim(gr, gv), j as u32) {
                    best_ref = Some(r as u32);
                }
            }
        }
        let hit = hit(best);
        TargetHit {
            hit,
            ref_idx: hit.row.and(best_ref),
        }
    }

    fn pair(&self, x: &str, refs: &[String]) -> Hit {
        for (j, (u, v)) in self.src.iter().zip(&self.tgt).enumerate() {
            if u == x && refs.iter().any(|r| r == v) {
                return Hit {
                    score: Ratio::ONE,
                    row: Some(j as u32),
                    exact: true,
                };
            }
        }
        let gx = self.grams(x);
        let grs: Vec<Grams> = refs.iter().map(|r| self.grams(r)).collect();
        let mut best = Best::NONE;
        for (j, (gu, gv)) in self.src_grams.iter().zip(&self.tgt_grams).enumerate() {
            let t = grs
                .iter()
                .fold(Ratio::ZERO, |t, gr| t.max(self.sim(gr, gv)));
            best.offer(self.sim(&gx, gu).min(t), j as u32);
        }
        hit(best)
    }
}

/// Exact audit rows equal to brute force: values, rows, flags and reference indices.
impl Brute {
    fn check_audit(&self, what: &str, queries: &[String], refs: &[Vec<String>], rows: &[AuditRow]) {
        for (i, row) in rows.iter().enumerate() {
            let ctx = format!("{what} query {i} {:?} {:?}", queries[i], refs[i]);
            check_hit(
                &format!("source {ctx}"),
                &row.source,
                &self.source(&queries[i]),
            );
            let t = self.target(&refs[i]);
            check_hit(&format!("target {ctx}"), &row.target.hit, &t.hit);
            assert_eq!(row.target.ref_idx, t.ref_idx, "{ctx}");
            check_hit(
                &format!("pair {ctx}"),
                &row.pair,
                &self.pair(&queries[i], &refs[i]),
            );
        }
    }
}

/// A text's distinct grams as sorted ids, `id` naming each gram.
fn gram_ids(orders: &Orders, text: &str, mut id: impl FnMut(&str) -> u32) -> Grams {
    let mut out = Vec::new();
    distinct_grams(text, orders, &mut Vec::new(), &mut out);
    let mut set: Grams = out.into_iter().map(&mut id).collect();
    set.sort_unstable();
    set
}

fn hit(best: Best) -> Hit {
    match best.row() {
        Some(row) => Hit {
            score: best.score,
            row: Some(row),
            exact: false,
        },
        None => Hit {
            score: Ratio::ZERO,
            row: None,
            exact: false,
        },
    }
}

impl Rng {
    fn text(&mut self, pool: &[String]) -> String {
        const ALPHABET: [&str; 9] = ["a", "b", "ab", " ", "é", "c", "ba", "ñ", "aa"];
        match self.below(6) {
            0 => String::new(),
            1 if !pool.is_empty() => pool[self.below(pool.len())].clone(),
            2 if !pool.is_empty() => {
                // a near copy: one piece changed or appended
                let mut s = pool[self.below(pool.len())].clone();
                s.push_str(ALPHABET[self.below(ALPHABET.len())]);
                s
            }
            _ => {
                let len = self.below(7);
                (0..len)
                    .map(|_| ALPHABET[self.below(ALPHABET.len())])
                    .collect()
            }
        }
    }
}

fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12
}

fn check_hit(what: &str, got: &Hit, want: &Hit) {
    assert!(
        same(got.score.to_f64(), want.score.to_f64())
            && got.row == want.row
            && got.exact == want.exact,
        "{what}: got {got:?}, want {want:?}"
    );
}

fn run_case(seed: u64, orders: &[i64], search: impl Into<Search>, dense: Option<u64>) -> Stats {
    let search = search.into();
    let mode = search.mode;
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let n = 1 + rng.below(25);
    let mut src = Vec::new();
    let mut tgt = Vec::new();
    for _ in 0..n {
        let s = rng.text(&src);
        let t = rng.text(&tgt);
        src.push(s);
        tgt.push(t);
    }
    let brute = Brute::new(orders, &src, &tgt).scored_by(search.measure);
    let index = RetrievalIndex::build_with(&src, &tgt, orders, Some(2), dense).unwrap();
    let queries: Vec<String> = (0..12).map(|_| rng.text(&src)).collect();
    let refs: Vec<Vec<String>> = (0..12)
        .map(|_| (0..1 + rng.below(3)).map(|_| rng.text(&tgt)).collect())
        .collect();
    let (rows, stats) = index.audit(&queries, &refs, search, Some(2)).unwrap();
    for (
        i,
        AuditRow {
            source,
            target,
            pair,
        },
    ) in rows.iter().enumerate()
    {
        let ctx = format!(
            "seed {seed} orders {orders:?} query {i} {:?} refs {:?}",
            queries[i], refs[i]
        );
        let want_source = brute.source(&queries[i]);
        let want_target = brute.target(&refs[i]);
        let want_pair = brute.pair(&queries[i], &refs[i]);
        if mode == Mode::Exact {
            check_hit(&format!("source {ctx}"), source, &want_source);
            check_hit(&format!("target {ctx}"), &target.hit, &want_target.hit);
            assert_eq!(target.ref_idx, want_target.ref_idx, "target ref {ctx}");
            check_hit(&format!("pair {ctx}"), pair, &want_pair);
        } else {
            for (got, want) in [
                (source, &want_source),
                (&target.hit, &want_target.hit),
                (pair, &want_pair),
            ] {
                assert_eq!(got.exact, want.exact, "fast exact flag {ctx}");
                assert!(
                    got.score.to_f64() <= want.score.to_f64() + 1e-12,
                    "fast above exact {ctx}"
                );
                if got.exact {
                    assert_eq!(got.row, want.row, "fast exact row {ctx}");
                }
            }
        }
    }
    let (hits, _) = index.search_source(&queries, search, None).unwrap();
    let (thits, _) = index.search_target(&refs, search, None).unwrap();
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(hits[i], row.source);
        assert_eq!(thits[i], row.target);
    }
    stats
}

#[test]
fn exact_mode_equals_brute_force() {
    // Grams as postings only (the default for so few rows), all as bitmaps, and mixed.
    let mut total = Stats::default();
    for dense in [None, Some(1), Some(3)] {
        for seed in 0..300 {
            for orders in [&[3, 4, 5][..], &[1], &[2, 4]] {
                total.add(&run_case(seed, orders, Mode::Exact, dense));
            }
        }
    }
    assert!(total.searches_counted > 1000, "{total:?}");
    assert!(total.pairs_counted > 300, "{total:?}");
}

#[test]
fn containment_equals_brute_force() {
    let containment = |mode| Search {
        mode,
        measure: Measure::Containment,
    };
    let mut total = Stats::default();
    for dense in [None, Some(1), Some(3)] {
        for seed in 0..200 {
            for orders in [&[3, 4, 5][..], &[1], &[2, 4]] {
                total.add(&run_case(seed, orders, containment(Mode::Exact), dense));
                let fast = Mode::Fast {
                    rare: 1 + (seed as usize % 4),
                    shortlist: 1 + (seed as usize % 5),
                };
                run_case(seed, orders, containment(fast), dense);
            }
        }
    }
    assert!(total.searches_counted > 1000, "{total:?}");
}

#[test]
fn a_sentence_inside_a_long_document_is_fully_contained_but_far_by_jaccard() {
    let mut rng = Rng(0x5EED);
    let sentences: Vec<String> = (0..400).map(|_| sentence(&mut rng).0).collect();
    // Documents of 50 sentences each; the query is sentence 123, inside document 2.
    let docs: Vec<String> = sentences.chunks(50).map(|c| c.join(" ")).collect();
    let index = RetrievalIndex::build(&docs, &docs, &[3, 4, 5], None).unwrap();
    let query = vec![sentences[123].clone()];
    let refs = vec![vec![sentences[123].clone()]];
    let by = |measure| Search {
        mode: Mode::Exact,
        measure,
    };
    let (contained, _) = index
        .audit(&query, &refs, by(Measure::Containment), None)
        .unwrap();
    let (jaccard, _) = index.audit(&query, &refs, Mode::Exact, None).unwrap();
    let row = &contained[0];
    // Document 2 holds the sentence (an earlier one may hold all its grams too).
    for hit in [&row.source, &row.target.hit, &row.pair] {
        let whole = hit.score.cmp_exact(Ratio::ONE).is_eq();
        assert!(whole && hit.row <= Some(2) && !hit.exact, "{hit:?}");
    }
    assert!(
        jaccard[0].source.score.to_f64() < 0.3,
        "{:?}",
        jaccard[0].source
    );
    let brute = Brute::new(&[3, 4, 5], &docs, &docs).scored_by(Measure::Containment);
    brute.check_audit("documents", &query, &refs, &contained);
}

#[test]
fn fast_mode_is_valid() {
    for seed in 0..150 {
        run_case(
            seed,
            &[3, 4, 5],
            Mode::Fast {
                rare: 2,
                shortlist: 3,
            },
            if seed % 2 == 0 { None } else { Some(1) },
        );
        run_case(
            seed,
            &[2],
            Mode::Fast {
                rare: 8,
                shortlist: 64,
            },
            Some(2),
        );
    }
}

#[test]
fn exact_flag_beats_lower_row_with_jaccard_one() {
    // "abababa" and "ababab" have the same 3..5-gram set; the exact copy wins.
    let src = ["abababa", "ababab"];
    let index = RetrievalIndex::build(&src, &src, &[3, 4, 5], None).unwrap();
    let (hits, _) = index.search_source(&["ababab"], Mode::Exact, None).unwrap();
    assert_eq!(
        hits[0],
        Hit {
            score: Ratio::ONE,
            row: Some(1),
            exact: true
        }
    );
    let (hits, _) = index
        .search_source(&["abababab"], Mode::Exact, None)
        .unwrap();
    assert_eq!(hits[0].row, Some(0));
    assert!(!hits[0].exact);
}

#[test]
fn bad_arguments_are_errors() {
    assert!(RetrievalIndex::build(&["a"], &["a", "b"], &[3], None).is_err());
    assert!(RetrievalIndex::build(&["a"], &["a"], &[], None).is_err());
    assert!(RetrievalIndex::build(&["a"], &["a"], &[0], None).is_err());
    let index = RetrievalIndex::build(&["a"], &["a"], &[3], None).unwrap();
    assert!(index.audit(&["a"], &[vec![]], Mode::Exact, None).is_err());
    assert!(index
        .audit(&["a", "b"], &[vec!["a"]], Mode::Exact, None)
        .is_err());
    assert!(index
        .audit(&["a"], &[vec!["a"]], Mode::Exact, Some(0))
        .is_err());
    assert!(Mode::parse("approx", 8, 64).is_err());
    assert!(Mode::parse("fast", 0, 64).is_err());
}

#[test]
fn empty_index_finds_nothing() {
    let empty: [&str; 0] = [];
    let index = RetrievalIndex::build(&empty, &empty, &[3, 4, 5], None).unwrap();
    assert_eq!(index.rows(), 0);
    let (rows, _) = index
        .audit(&["abc", ""], &[vec!["x"], vec![""]], Mode::Exact, None)
        .unwrap();
    assert!(rows
        .iter()
        .all(|r| r.source.row.is_none() && r.pair.row.is_none()));
}

/// Longer, templated texts so that pruning, early verification and the bound-ordered
/// verification all take part (most rows share many grams, a few are near copies).
fn templated(rng: &mut Rng) -> String {
    const WORDS: [&str; 8] = [
        "river", "market", "bread", "città", "garden", "né", "sun", "ﬁsh",
    ];
    let mut s = String::from("the ");
    for _ in 0..3 + rng.below(3) {
        s.push_str(WORDS[rng.below(WORDS.len())]);
        s.push(' ');
    }
    s.push_str(&rng.below(40).to_string());
    s
}

#[test]
fn exact_mode_equals_brute_force_on_templated_text() {
    for seed in 0..12u64 {
        let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
        let n = 150 + rng.below(100);
        let src: Vec<String> = (0..n).map(|_| templated(&mut rng)).collect();
        let tgt: Vec<String> = src.iter().map(|s| s.replace("the", "el")).collect();
        let orders: &[i64] = if seed % 2 == 0 { &[3, 4, 5] } else { &[2, 3] };
        let brute = Brute::new(orders, &src, &tgt);
        let dense = [None, Some(1), Some(20)][seed as usize % 3];
        let index = RetrievalIndex::build_with(&src, &tgt, orders, None, dense).unwrap();
        let queries: Vec<String> = (0..40)
            .map(|i| match i % 4 {
                0 => src[rng.below(n)].clone(),
                1 => format!("{} x", src[rng.below(n)]),
                _ => templated(&mut rng),
            })
            .collect();
        let refs: Vec<Vec<String>> = queries
            .iter()
            .map(|q| {
                let r = q.replace("the", "el");
                if rng.below(2) == 0 {
                    vec![r]
                } else {
                    vec![templated(&mut rng).replace("the", "el"), r]
                }
            })
            .collect();
        let (rows, stats) = index.audit(&queries, &refs, Mode::Exact, None).unwrap();
        assert!(stats.postings_visited <= stats.postings_total);
        brute.check_audit(&format!("seed {seed}"), &queries, &refs, &rows);
    }
}

#[test]
fn queries_with_too_many_grams_to_count_are_still_exact() {
    use std::collections::HashSet;
    let mut rng = Rng(99);
    let long: String = (0..70_000)
        .map(|_| char::from_u32(0x4E00 + rng.below(300) as u32).unwrap())
        .collect();
    let mut variant = long.clone();
    variant.truncate(variant.char_indices().nth(50_000).unwrap().0);
    let rows = vec![variant.clone(), long.clone(), "short".to_owned()];
    let index = RetrievalIndex::build(&rows, &rows, &[3], None).unwrap();
    let query = format!("{long}x");
    let (hits, _) = index
        .search_source(&[query.as_str()], Mode::Exact, None)
        .unwrap();
    let orders = Orders::new(&[3]).unwrap();
    let set = |t: &str| -> HashSet<String> {
        let mut out = Vec::new();
        distinct_grams(t, &orders, &mut Vec::new(), &mut out);
        out.into_iter().map(str::to_owned).collect()
    };
    let gq = set(&query);
    // More than u16::MAX known grams: the search counts in u32.
    assert!(gq.len() > usize::from(u16::MAX));
    // rows longer than u16::MAX grams use the exact offsets, not the compact sizes
    assert!(set(&long).len() > usize::from(u16::MAX));
    let mut best = Best::NONE;
    for (j, row) in rows.iter().enumerate() {
        let gr = set(row);
        let inter = gq.intersection(&gr).count() as u64;
        best.offer(
            Ratio::jaccard(inter, gq.len() as u64, gr.len() as u64),
            j as u32,
        );
    }
    assert_eq!(hits[0].row, best.row());
    assert_eq!(hits[0].score, best.score);
}

/// Sentences like the benchmark's: three of twelve words, a verb and a number, so many rows
/// share most grams and every phase of the search (seeding, extension by scanning and by
/// galloping, bound-ordered verification) takes part.
fn sentence(rng: &mut Rng) -> (String, String) {
    const EN: [&str; 12] = [
        "river", "market", "teacher", "window", "bread", "morning", "letter", "ticket", "garden",
        "station", "doctor", "city",
    ];
    const ES: [&str; 12] = [
        "río",
        "mercado",
        "maestra",
        "ventana",
        "pan",
        "mañana",
        "carta",
        "boleto",
        "jardín",
        "estación",
        "médico",
        "ciudad",
    ];
    const VERBS: [(&str, &str); 3] = [("sees", "ve"), ("buys", "compra"), ("needs", "necesita")];
    let (a, b, c) = (rng.below(12), rng.below(12), rng.below(12));
    let (ve, vs) = VERBS[rng.below(3)];
    let n = rng.below(300);
    (
        format!(
            "The {} {ve} the {} near the {} no. {n}.",
            EN[a], EN[b], EN[c]
        ),
        format!(
            "El {} {vs} el {} cerca del {} n.º {n}.",
            ES[a], ES[b], ES[c]
        ),
    )
}

#[test]
fn exact_mode_equals_brute_force_on_benchmark_like_sentences() {
    benchmark_like_case();
}

#[test]
fn the_portable_dense_kernel_counts_the_same() {
    super::kernels::with_portable_kernel(benchmark_like_case);
}

#[test]
fn the_avx2_dense_kernel_counts_the_same() {
    super::kernels::with_kernel(super::kernels::Kernel::Avx2, benchmark_like_case);
}

#[test]
fn wider_counters_count_the_same() {
    // The benchmark's sentences have under 256 grams, so they count in u8; force u16 and u32.
    super::counting::with_counters_for(256, benchmark_like_case);
    super::counting::with_counters_for(65_536, benchmark_like_case);
    super::counting::with_counters_for(256, || {
        super::kernels::with_portable_kernel(benchmark_like_case)
    });
    super::counting::with_counters_for(256, || {
        super::kernels::with_kernel(super::kernels::Kernel::Avx2, benchmark_like_case)
    });
}

#[test]
fn a_row_holding_every_query_gram_at_a_counters_limit_is_counted_exactly() {
    // Unigrams of distinct letters: a query of 255 known grams counts in u8, of 256 in u16
    // (whose postings go through 8-bit counters 255 lists at a time: 511 grams take three
    // groups); training rows hold all of them (the count reaches the limit) among other near
    // misses.
    let letters: Vec<char> = (0..600u32)
        .filter_map(|k| char::from_u32(0x4E00 + k))
        .collect();
    for n in [254usize, 255, 256, 257, 510, 511] {
        let query: String = letters[..n].iter().collect();
        let src: Vec<String> = vec![
            letters[1..n].iter().collect(),
            format!("{query}\u{3042}"),
            query.clone(),
            letters[..n / 2].iter().collect(),
        ];
        let tgt = src.clone();
        let brute = Brute::new(&[1], &src, &tgt);
        let queries = vec![format!("{query}\u{3044}"), query.clone()];
        let refs = vec![vec![query.clone()], vec![format!("{query}\u{3044}")]];
        // Postings only, and bitmaps only (the SIMD kernels at the counters' limit).
        for dense in [None, Some(1)] {
            let index = RetrievalIndex::build_with(&src, &tgt, &[1], None, dense).unwrap();
            let (rows, _) = index.audit(&queries, &refs, Mode::Exact, None).unwrap();
            brute.check_audit(
                &format!("{n} grams, dense {dense:?}"),
                &queries,
                &refs,
                &rows,
            );
        }
    }
}

/// 2,500 sentences (five tiles, the last partial), with both dense and sparse grams.
fn benchmark_like_case() {
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    let rows: Vec<(String, String)> = (0..2500).map(|_| sentence(&mut rng)).collect();
    let (src, tgt): (Vec<String>, Vec<String>) = rows.into_iter().unzip();
    let brute = Brute::new(&[3, 4, 5], &src, &tgt);
    let index = RetrievalIndex::build(&src, &tgt, &[3, 4, 5], None).unwrap();
    let mut queries = Vec::new();
    let mut refs = Vec::new();
    for i in 0..60 {
        let (s, t) = match i % 3 {
            0 => (
                src[rng.below(src.len())].clone(),
                tgt[rng.below(tgt.len())].clone(),
            ),
            1 => {
                let j = rng.below(src.len());
                (src[j].replacen('e', "a", 1), tgt[j].replacen('e', "a", 1))
            }
            _ => sentence(&mut rng),
        };
        let other = sentence(&mut rng).1;
        queries.push(s);
        refs.push(if i % 2 == 0 { vec![t] } else { vec![other, t] });
    }
    let (rows, stats) = index.audit(&queries, &refs, Mode::Exact, None).unwrap();
    // Every side of every segment counted, and every pair was read off the counts.
    assert!(stats.searches_counted >= 60, "{stats:?}");
    assert!(stats.pairs_counted >= 50, "{stats:?}");
    brute.check_audit("benchmark-like", &queries, &refs, &rows);
}

#[test]
fn a_tiny_dense_threshold_is_floored_so_the_index_stays_small() {
    // Random 40-letter rows: thousands of grams, each in a handful of rows. Taking every gram
    // as a bitmap would cost rows × grams / 8 bytes (1.4 GB here); the floor of 1/64 of
    // the rows keeps them as postings lists.
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let rows: Vec<String> = (0..6400)
        .map(|_| {
            (0..40)
                .map(|_| char::from(b'a' + rng.below(26) as u8))
                .collect()
        })
        .collect();
    let default = RetrievalIndex::build(&rows, &rows, &[3, 4, 5], None).unwrap();
    let tiny = RetrievalIndex::build_with(&rows, &rows, &[3, 4, 5], None, Some(1)).unwrap();
    assert!(
        tiny.heap_bytes() < 2 * default.heap_bytes(),
        "{} vs {}",
        tiny.heap_bytes(),
        default.heap_bytes()
    );
    let (a, _) = default
        .search_source(&rows[..20], Mode::Exact, None)
        .unwrap();
    let (b, _) = tiny.search_source(&rows[..20], Mode::Exact, None).unwrap();
    assert_eq!(a, b);
}

#[test]
fn exact_mode_equals_brute_force_across_postings_blocks() {
    // 70,000 rows: two postings blocks of 65,536 rows (the second partial); near copies of rows
    // on both sides of the boundary, so winners and ties sit in either block, and of rows just
    // past the boundaries of the counting windows (a whole block for u8 and u16 counters,
    // 32,768 rows for u32), whose counts come from postings read across a window's end.
    let mut rng = Rng(0xB10C_B10C_0000_0001);
    let rows: Vec<(String, String)> = (0..70_000).map(|_| sentence(&mut rng)).collect();
    let (src, tgt): (Vec<String>, Vec<String>) = rows.into_iter().unzip();
    let brute = Brute::new(&[3, 4, 5], &src, &tgt);
    let index = RetrievalIndex::build(&src, &tgt, &[3, 4, 5], None).unwrap();
    let mut queries = Vec::new();
    let mut refs = Vec::new();
    for j in [
        0usize, 65_535, 65_536, 69_999, 12_345, 66_000, 16_384, 32_768, 49_152,
    ] {
        queries.push(src[j].replacen('e', "o", 1));
        refs.push(vec![tgt[j].replacen('a', "u", 1)]);
    }
    queries.push(sentence(&mut rng).0);
    refs.push(vec![sentence(&mut rng).1]);
    // Segments long enough for 16-bit counters, counted together with short ones (8-bit), and
    // one whose source and reference are training texts (exact, not counted).
    queries.insert(3, [1, 65_540, 7].map(|j| src[j].as_str()).join(" "));
    refs.insert(
        3,
        vec![
            [2, 65_541, 8].map(|j| tgt[j].as_str()).join(" "),
            tgt[5].clone(),
        ],
    );
    queries.insert(6, src[40].clone());
    refs.insert(6, vec![tgt[40].clone()]);
    let (rows, _) = index.audit(&queries, &refs, Mode::Exact, None).unwrap();
    brute.check_audit("two blocks", &queries, &refs, &rows);
    // Counted one segment at a time (`fill`), the same as counted together (`fill_many`).
    let (sources, _) = index.search_source(&queries, Mode::Exact, None).unwrap();
    let (targets, _) = index.search_target(&refs, Mode::Exact, None).unwrap();
    for ((row, source), target) in rows.iter().zip(&sources).zip(&targets) {
        assert_eq!((&row.source, &row.target), (source, target));
    }
    let (wide, _) = super::counting::with_counters_for(256, || {
        index.audit(&queries, &refs, Mode::Exact, None).unwrap()
    });
    assert_eq!(wide, rows, "u16 counters");
    let (widest, _) = super::counting::with_counters_for(65_536, || {
        index.audit(&queries, &refs, Mode::Exact, None).unwrap()
    });
    assert_eq!(widest, rows, "u32 counters");
}
