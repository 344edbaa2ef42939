//! Training texts handed over as one newline-joined string (no per-row Python objects).

use std::borrow::Cow;

use rayon::prelude::*;

use super::error::{invalid, Result};
use crate::surface::is_py_space;

/// `text` with whitespace runs (Python's definition) collapsed to single spaces and the ends
/// stripped: Python's `" ".join(text.split())`.
pub fn collapse_whitespace(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split(is_py_space).filter(|w| !w.is_empty()) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// Whether `text` is its own `collapse_whitespace`: no whitespace but single spaces between
/// words.
fn is_collapsed(text: &str) -> bool {
    let mut after_space = true; // a space first is a leading one
    for c in text.chars() {
        if is_py_space(c) {
            if c != ' ' || after_space {
                return false;
            }
            after_space = true;
        } else {
            after_space = false;
        }
    }
    !after_space || text.is_empty()
}

/// `collapse_whitespace`, borrowing `text` when it is already collapsed (most rows are).
fn collapsed(text: &str) -> Cow<'_, str> {
    if is_collapsed(text) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(collapse_whitespace(text))
    }
}

/// The `rows` newline-separated rows of `joined`, each with its whitespace collapsed
/// (borrowed from `joined` where nothing changes).
pub fn rows_from_joined(joined: &str, rows: usize) -> Result<Vec<Cow<'_, str>>> {
    if rows == 0 {
        return if joined.is_empty() {
            Ok(Vec::new())
        } else {
            Err(invalid("0 rows given but the text is not empty"))
        };
    }
    let lines: Vec<&str> = joined.split('\n').collect();
    if lines.len() != rows {
        return Err(invalid(format!(
            "expected {rows} newline-separated rows, found {}",
            lines.len()
        )));
    }
    Ok(lines
        .par_iter()
        .with_min_len(1024)
        .map(|l| collapsed(l))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_split_on_newlines_and_collapsed_like_python() {
        let rows = rows_from_joined(" a \t b \n\n\u{1c}c\u{3000}d\u{a0}\na b", 4).unwrap();
        assert_eq!(rows, vec!["a b", "", "c d", "a b"]);
        assert!(matches!(rows[3], Cow::Borrowed(_)));
        assert!(rows_from_joined("a\nb", 3).is_err());
        assert!(rows_from_joined("", 0).unwrap().is_empty());
        assert_eq!(rows_from_joined("", 1).unwrap(), vec![""]);
    }

    #[test]
    fn a_row_is_borrowed_exactly_when_collapsing_keeps_it() {
        for text in [
            "",
            " ",
            "a",
            "a b",
            " a",
            "a ",
            "a  b",
            "a\tb",
            "a\u{a0}b",
            "\u{3000}",
            "a b c",
            "a\u{1c}",
            "\u{85}x",
            "x y\u{2028}",
        ] {
            let want = collapse_whitespace(text);
            assert_eq!(is_collapsed(text), want == text, "{text:?}");
            assert_eq!(collapsed(text), want, "{text:?}");
        }
    }
}
