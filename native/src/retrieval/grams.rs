//! Character n-gram extraction over Unicode code points (docs/exposure.md, n-gram sets).

use std::hash::Hasher;

use rustc_hash::FxHasher;

use super::error::{invalid, Result};

/// Validated n-gram orders: non-empty, each ≥ 1, sorted and deduplicated (the default, empty,
/// only stands in until an index is built).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Orders {
    orders: Vec<usize>,
}

impl Orders {
    /// Checks and normalises the orders (duplicates describe the same gram set).
    pub fn new(orders: &[i64]) -> Result<Self> {
        if orders.is_empty() {
            return Err(invalid("orders must contain at least one n-gram order"));
        }
        let mut out = Vec::with_capacity(orders.len());
        for &order in orders {
            if order < 1 {
                return Err(invalid(format!("n-gram orders must be >= 1, got {order}")));
            }
            let order = usize::try_from(order)
                .map_err(|_| invalid(format!("n-gram order {order} is too large")))?;
            out.push(order);
        }
        out.sort_unstable();
        out.dedup();
        Ok(Self { orders: out })
    }

    /// The orders, ascending.
    pub fn as_slice(&self) -> &[usize] {
        &self.orders
    }

    fn min(&self) -> usize {
        self.orders.first().copied().unwrap_or(1)
    }
}

/// Calls `f` once per gram occurrence of `text` (a gram occurring twice is reported twice).
///
/// Grams are code-point substrings of every order that fits, all orders together; a non-empty
/// text shorter than the smallest order is its own single gram; the empty text has none.
/// `bounds` is scratch space for the code-point boundaries.
pub fn for_each_gram<'a>(
    text: &'a str,
    orders: &Orders,
    bounds: &mut Vec<usize>,
    mut f: impl FnMut(&'a str),
) {
    for_each_gram_at(text, orders, bounds, |g, _, _| f(g));
}

/// Like `for_each_gram`, also passing each occurrence's code-point span `[start, end)`.
pub fn for_each_gram_at<'a>(
    text: &'a str,
    orders: &Orders,
    bounds: &mut Vec<usize>,
    mut f: impl FnMut(&'a str, usize, usize),
) {
    for_each_span(text, orders, bounds, |lo, hi, start, end| {
        if let Some(gram) = text.get(lo..hi) {
            f(gram, start, end);
        }
    });
}

/// Like `for_each_gram`, passing each occurrence as its `short_key` (0 for a gram of more
/// than 7 bytes) and its byte range `lo..hi` in `text`: the key is read straight from the bytes
/// (one 8-byte load where the text has room), and the gram's text is not made.
pub fn for_each_gram_key(
    text: &str,
    orders: &Orders,
    bounds: &mut Vec<usize>,
    mut f: impl FnMut(u64, usize, usize),
) {
    let bytes = text.as_bytes();
    let key = |lo: usize, len: usize| -> u64 {
        if len > 7 {
            return 0;
        }
        match bytes.get(lo..).and_then(|rest| rest.first_chunk::<8>()) {
            Some(word) => {
                let mask = (1u64 << (8 * len)) - 1;
                (u64::from_le_bytes(*word) & mask) | ((len as u64) << 56)
            }
            None => bytes.get(lo..lo + len).and_then(short_key).unwrap_or(0),
        }
    };
    for_each_span(text, orders, bounds, |lo, hi, _, _| {
        f(key(lo, hi - lo), lo, hi)
    });
}

/// The gram occurrences of `for_each_gram` as `f(lo, hi, start, end)`: byte range `lo..hi` and
/// code-point span `[start, end)`. ASCII text needs no code-point boundaries (`bounds` is
/// scratch space for them otherwise).
#[inline(always)]
fn for_each_span(
    text: &str,
    orders: &Orders,
    bounds: &mut Vec<usize>,
    mut f: impl FnMut(usize, usize, usize, usize),
) {
    let len = text.len();
    if len == 0 {
        return;
    }
    if text.is_ascii() {
        if len < orders.min() {
            f(0, len, 0, len);
            return;
        }
        for &n in orders.as_slice() {
            if n > len {
                break;
            }
            for lo in 0..=len - n {
                f(lo, lo + n, lo, lo + n);
            }
        }
        return;
    }
    bounds.clear();
    bounds.extend(text.char_indices().map(|(i, _)| i));
    bounds.push(len);
    let chars = bounds.len() - 1;
    if chars < orders.min() {
        f(0, len, 0, chars);
        return;
    }
    for &n in orders.as_slice() {
        if n > chars {
            break;
        }
        for (start, (&lo, &hi)) in bounds.iter().zip(bounds.iter().skip(n)).enumerate() {
            f(lo, hi, start, start + n);
        }
    }
}

/// A gram of at most 7 bytes as an integer: its bytes (little-endian) and its length in the top
/// byte, so different grams never share a key and no key is 0.
#[inline]
pub fn short_key(gram: &[u8]) -> Option<u64> {
    let len = gram.len();
    if len == 0 || len > 7 {
        return None;
    }
    let mut word = [0u8; 8];
    word.get_mut(..len)?.copy_from_slice(gram);
    Some(u64::from_le_bytes(word) | ((len as u64) << 56))
}

/// Collects the distinct grams of `text` into `out` (sorted, deduplicated).
#[cfg(test)]
pub fn distinct_grams<'a>(
    text: &'a str,
    orders: &Orders,
    bounds: &mut Vec<usize>,
    out: &mut Vec<&'a str>,
) {
    out.clear();
    for_each_gram(text, orders, bounds, |g| out.push(g));
    out.sort_unstable();
    out.dedup();
}

/// The hash used for grams and texts.
#[inline]
pub fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write(bytes);
    h.finish()
}

/// The hash of a (source, target) pair of texts.
#[inline]
pub fn hash_pair(a: &[u8], b: &[u8]) -> u64 {
    let mut h = FxHasher::default();
    h.write_usize(a.len());
    h.write(a);
    h.write(b);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grams(text: &str, orders: &[i64]) -> Vec<String> {
        let orders = Orders::new(orders).unwrap();
        let mut out = Vec::new();
        distinct_grams(text, &orders, &mut Vec::new(), &mut out);
        out.into_iter().map(str::to_owned).collect()
    }

    #[test]
    fn orders_are_validated_and_normalised() {
        assert!(Orders::new(&[]).is_err());
        assert!(Orders::new(&[3, 0]).is_err());
        assert!(Orders::new(&[-1]).is_err());
        assert_eq!(Orders::new(&[5, 3, 3]).unwrap().as_slice(), &[3, 5]);
    }

    #[test]
    fn empty_text_has_no_grams() {
        assert!(grams("", &[3, 4, 5]).is_empty());
    }

    #[test]
    fn short_text_is_its_own_gram() {
        assert_eq!(grams("ab", &[3, 4, 5]), vec!["ab"]);
        assert_eq!(grams("é", &[2]), vec!["é"]);
    }

    #[test]
    fn grams_are_code_points_with_spaces_and_all_orders() {
        assert_eq!(grams("añb c", &[3, 5]), vec!["añb", "añb c", "b c", "ñb "]);
        // orders longer than the text are skipped, shorter ones still apply
        assert_eq!(grams("abc", &[2, 4]), vec!["ab", "bc"]);
    }

    #[test]
    fn spans_are_code_point_positions() {
        let orders = Orders::new(&[2]).unwrap();
        let mut out = Vec::new();
        for_each_gram_at("ñaña", &orders, &mut Vec::new(), |g, start, end| {
            out.push((g, start, end))
        });
        assert_eq!(out, vec![("ña", 0, 2), ("añ", 1, 3), ("ña", 2, 4)]);
    }

    #[test]
    fn gram_keys_are_the_short_keys_of_the_same_occurrences() {
        // ASCII and not, texts shorter than an order or than the 8-byte load, grams of more
        // than 7 bytes (key 0), orders above 7.
        let texts = [
            "",
            "a",
            "ab",
            "abc",
            "abcdefgh",
            "the cat sat",
            "ñ",
            "añb c",
            "ééééé ça",
            "日本語のテキスト",
            "x\u{1F600}y\u{1F600}z",
        ];
        for orders in [&[3, 4, 5][..], &[2][..], &[1, 8][..], &[6][..]] {
            let orders = Orders::new(orders).unwrap();
            for text in texts {
                let mut want = Vec::new();
                for_each_gram(text, &orders, &mut Vec::new(), |g| {
                    want.push((short_key(g.as_bytes()).unwrap_or(0), g))
                });
                let mut got = Vec::new();
                for_each_gram_key(text, &orders, &mut Vec::new(), |key, lo, hi| {
                    got.push((key, &text[lo..hi]))
                });
                assert_eq!(got, want, "{text:?} {orders:?}");
            }
        }
    }

    #[test]
    fn repeated_grams_are_one_set_element() {
        assert_eq!(grams("aaaa", &[3]), vec!["aaa"]);
        assert_eq!(grams("ababab", &[3]), vec!["aba", "bab"]);
    }
}
