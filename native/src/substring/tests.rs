//! The lens against brute force: every answer recomputed by scanning the documents directly,
//! on generated corpora (Unicode, empty and very long documents, repeated text) split into
//! shards in every way.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use super::*;
use crate::testing::Rng;

const WORDS: &[&str] = &[
    "le",
    "chat",
    "noir",
    "dort",
    "été",
    "ça",
    "水",
    "中文字",
    "a",
    "ab",
    "b",
    "éa",
];

fn sentence(rng: &mut Rng, max_words: usize) -> String {
    let n = rng.below(max_words + 1);
    (0..n)
        .map(|_| WORDS[rng.below(WORDS.len())])
        .collect::<Vec<_>>()
        .join(" ")
}

/// Brute force: the lens of `seg` over `docs`, straight from the definitions.
fn brute(docs: &[String], seg: &str, orders: &[usize]) -> SegmentLens {
    let chars: Vec<char> = seg.chars().collect();
    let mut out = SegmentLens {
        chars: chars.len() as u64,
        ..SegmentLens::default()
    };
    // Longest: for each length from longest down, the earliest start that occurs anywhere.
    'outer: for len in (1..=chars.len()).rev() {
        for start in 0..=chars.len() - len {
            let piece: String = chars[start..start + len].iter().collect();
            for (d, doc) in docs.iter().enumerate() {
                if let Some(byte) = doc.find(&piece) {
                    out.longest = len as u64;
                    out.start = start as u64;
                    out.place = Some((d as u64, doc[..byte].chars().count() as u64));
                    break 'outer;
                }
            }
        }
    }
    if !seg.is_empty() {
        for doc in docs {
            let b = doc.as_bytes();
            out.count += (0..b.len())
                .filter(|&i| b[i..].starts_with(seg.as_bytes()))
                .count() as u64;
        }
    }
    let words: Vec<&str> = seg.split(' ').filter(|w| !w.is_empty()).collect();
    let doc_words: Vec<Vec<&str>> = docs.iter().map(|d| d.split(' ').collect()).collect();
    for &n in orders {
        let total = (words.len() + 1).saturating_sub(n);
        let hits: Vec<bool> = (0..total)
            .map(|j| {
                let gram = &words[j..j + n];
                doc_words.iter().any(|dw| dw.windows(n).any(|w| w == gram))
            })
            .collect();
        out.grams
            .push((hits.iter().filter(|&&h| h).count() as u64, total as u64));
        out.hits.push(hits);
    }
    out
}

fn shards_of(docs: &[String], cuts: &[usize]) -> Vec<(SuffixShard, u64)> {
    let mut bounds = vec![0];
    bounds.extend(cuts.iter().copied().filter(|&c| c > 0 && c < docs.len()));
    bounds.push(docs.len());
    bounds.dedup();
    bounds
        .windows(2)
        .map(|w| {
            let shard = SuffixShard::build(&docs[w[0]..w[1]]).expect("builds");
            (shard, w[0] as u64)
        })
        .collect()
}

fn check(docs: &[String], segments: &[String], cuts: &[usize]) {
    let orders = [1, 2, 3, 8];
    let shards = shards_of(docs, cuts);
    let segs: Vec<&str> = segments.iter().map(String::as_str).collect();
    let got = lens_of_segments(&shards, &segs, &orders).expect("lens");
    for (seg, lens) in segments.iter().zip(got) {
        assert_eq!(
            lens,
            brute(docs, seg, &orders),
            "segment {seg:?}, cuts {cuts:?}"
        );
    }
}

#[test]
fn generated_corpora_equal_brute_force_in_any_sharding() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..12 {
        let mut docs: Vec<String> = (0..1 + rng.below(30))
            .map(|_| sentence(&mut rng, 25))
            .collect();
        if round % 3 == 0 {
            docs.push(String::new()); // an empty document
        }
        if round % 4 == 1 {
            // A very long document made of repeats.
            docs.push(
                (0..400)
                    .map(|_| sentence(&mut rng, 6))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
        let mut segments: Vec<String> = (0..25).map(|_| sentence(&mut rng, 16)).collect();
        segments.push(String::new());
        segments.push(docs[rng.below(docs.len())].clone()); // a whole document
        let n = docs.len();
        for cuts in [vec![], vec![n / 2], vec![1, 2, n - 1], (1..n).collect()] {
            check(&docs, &segments, &cuts);
        }
    }
}

#[test]
fn a_segment_inside_a_document_is_found_whole_and_placed() {
    let docs: Vec<String> = ["abc abd", "xx le chat noir dort yy", "le chat noir dort"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let shards = shards_of(&docs, &[1]);
    let got = lens_of_segments(&shards, &["le chat noir dort"], &[2]).expect("lens");
    assert_eq!(got[0].longest, 17);
    assert_eq!(got[0].place, Some((1, 3)));
    assert_eq!(got[0].count, 2);
    assert_eq!(got[0].grams, vec![(3, 3)]);
}

#[test]
fn matches_never_cross_documents() {
    let docs = vec!["ab".to_string(), "cd".to_string()];
    let shards = shards_of(&docs, &[]);
    let got = lens_of_segments(&shards, &["abcd", "b c"], &[2]).expect("lens");
    assert_eq!((got[0].longest, got[0].count), (2, 0));
    assert_eq!(got[1].grams, vec![(0, 1)]); // "b c" spans two documents: not a word bigram
}

#[test]
fn word_grams_must_be_whole_words() {
    let docs = vec!["xle chat noirx".to_string(), "le chat noir".to_string()];
    let got = lens_of_segments(&shards_of(&docs[..1], &[]), &["le chat noir"], &[3]).expect("ok");
    assert_eq!(got[0].grams, vec![(0, 1)]);
    let got = lens_of_segments(&shards_of(&docs, &[]), &["le chat noir"], &[3]).expect("ok");
    assert_eq!(got[0].grams, vec![(1, 1)]);
}

#[test]
fn bad_arguments_are_refused() {
    assert!(SuffixShard::build(&["a\nb"]).is_err());
    assert!(SuffixShard::build(&[""]).is_ok()); // one empty document
    assert!(SuffixShard::build::<&str>(&[]).is_ok()); // no documents
    let shards = shards_of(&["a".to_string()], &[]);
    assert!(lens_of_segments(&shards, &["a\nb"], &[1]).is_err());
    assert!(lens_of_segments(&shards, &["a"], &[0]).is_err());
}

fn scratch(name: &str) -> PathBuf {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    std::env::temp_dir().join(format!("tame-sa-{name}-{}-{nanos}", std::process::id()))
}

#[test]
fn stored_shards_load_and_answer_alike_and_damage_is_refused() {
    let docs: Vec<String> = ["le chat noir", "ça été 水 中文字", "", "le chat"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let built = SuffixShard::build(&docs).expect("builds");
    let path = scratch("store");
    let bytes = built.save(&path, b"key").expect("saves");
    assert_eq!(bytes, std::fs::metadata(&path).expect("exists").len());
    let loaded = SuffixShard::load(&path, b"key").expect("loads");
    assert!(loaded.is_mapped());
    assert_eq!(loaded.text(), built.text());
    assert_eq!(loaded.suffix_array(), built.suffix_array());
    assert_eq!(loaded.checksum(), built.checksum());
    let segs = ["le chat", "水 中", "été"];
    let a = lens_of_segments(&[(built, 0)], &segs, &[1]).expect("lens");
    let b = lens_of_segments(&[(loaded, 0)], &segs, &[1]).expect("lens");
    assert_eq!(a, b);
    assert!(SuffixShard::load(&path, b"other").is_err());
    let mut raw = std::fs::read(&path).expect("reads");
    let last = raw.len() - 1;
    raw[last] ^= 1;
    std::fs::write(&path, &raw).expect("writes");
    let err = SuffixShard::load(&path, b"key").err().expect("refused");
    assert!(err.to_string().contains("checksum"), "{err}");
    std::fs::write(&path, &raw[..raw.len() - 4]).expect("writes");
    assert!(SuffixShard::load(&path, b"key").is_err());
    std::fs::remove_file(&path).expect("removes");
}

#[test]
fn stored_bytes_are_pinned() {
    let built = SuffixShard::build(&["le chat", "noir été"]).expect("builds");
    assert_eq!(built.suffix_array().len(), 19);
    assert_eq!(built.checksum(), 0xac1bdd65c36051b7);
    let path = scratch("pinned");
    let bytes = built.save(&path, b"k").expect("saves");
    // header 40 + key 8 + starts 16 + text 19 padded to 24 + suffix array 76
    assert_eq!(bytes, 164);
    std::fs::remove_file(&path).expect("removes");
}
